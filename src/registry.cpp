// The registry: kernels/variants.def expanded into a table. A variant left
// out of the build (FLASH_VARIANTS) links a generated stub that returns null,
// so it is listed as "not built" instead of failing at link time.
#include <algorithm>
#include <vector>

#include "flash/variants.h"
#include "internal.h"

namespace flash::detail {

#define FLASH_FWD_VARIANT(name, file, description) const FwdVariant* variant_##name();
#define FLASH_DECODE_VARIANT(name, file, description) const DecodeVariant* variant_##name();
#define FLASH_BWD_VARIANT(name, file, description) const BwdVariant* variant_bwd_##name();
#include "variants.def"
#undef FLASH_FWD_VARIANT
#undef FLASH_DECODE_VARIANT
#undef FLASH_BWD_VARIANT

const std::vector<RegisteredFwd>& forward_registry() {
  static const std::vector<RegisteredFwd> registry = {
#define FLASH_FWD_VARIANT(name, file, description) {#name, description, variant_##name()},
#define FLASH_DECODE_VARIANT(name, file, description)
#define FLASH_BWD_VARIANT(name, file, description)
#include "variants.def"
#undef FLASH_FWD_VARIANT
#undef FLASH_DECODE_VARIANT
#undef FLASH_BWD_VARIANT
  };
  return registry;
}

const std::vector<RegisteredDecode>& decode_registry() {
  static const std::vector<RegisteredDecode> registry = {
#define FLASH_FWD_VARIANT(name, file, description)
#define FLASH_DECODE_VARIANT(name, file, description) {#name, description, variant_##name()},
#define FLASH_BWD_VARIANT(name, file, description)
#include "variants.def"
#undef FLASH_FWD_VARIANT
#undef FLASH_DECODE_VARIANT
#undef FLASH_BWD_VARIANT
  };
  return registry;
}

const std::vector<RegisteredBwd>& backward_registry() {
  static const std::vector<RegisteredBwd> registry = {
#define FLASH_FWD_VARIANT(name, file, description)
#define FLASH_DECODE_VARIANT(name, file, description)
#define FLASH_BWD_VARIANT(name, file, description) {#name, description, variant_bwd_##name()},
#include "variants.def"
#undef FLASH_FWD_VARIANT
#undef FLASH_DECODE_VARIANT
#undef FLASH_BWD_VARIANT
  };
  return registry;
}

}  // namespace flash::detail

namespace flash {

bool VariantInfo::supports(DType dtype, int head_dim) const {
  if (!built) return false;
  bool dtype_ok = false;
  for (DType t : dtypes) dtype_ok = dtype_ok || t == dtype;
  if (!dtype_ok || head_dim < 1 || head_dim > max_head_dim) return false;
  if (head_dims.empty()) return true;
  for (int d : head_dims)
    if (d == head_dim) return true;
  return false;
}

bool VariantInfo::runs_on(int cc) const {
  return built && cc >= min_compute_capability && (max_compute_capability == 0 || cc <= max_compute_capability);
}

namespace {

// The fields forward and decode variants share; the caller fills the rest.
template <class Registered> VariantInfo common_info(const Registered& r) {
  VariantInfo info;
  info.name = r.name;
  info.description = r.description;
  info.built = r.impl != nullptr;
  if (r.impl == nullptr) return info;
  info.min_compute_capability = r.impl->min_compute_capability;
  info.max_compute_capability = r.impl->max_compute_capability;
  for (DType t : {DType::f32, DType::f16, DType::bf16})
    if (r.impl->dtype_mask & detail::dtype_bit(t)) info.dtypes.push_back(t);
  info.head_dims.assign(r.impl->head_dims, r.impl->head_dims + r.impl->num_head_dims);
  info.alignment = r.impl->alignment;
  return info;
}

}  // namespace

std::vector<VariantInfo> forward_variants() {
  std::vector<VariantInfo> out;
  for (const auto& r : detail::forward_registry()) {
    VariantInfo info = common_info(r);
    if (r.impl != nullptr) {
      info.max_head_dim = r.impl->max_head_dim;
      info.features = r.impl->features;
    }
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<VariantInfo> backward_variants() {
  std::vector<VariantInfo> out;
  for (const auto& r : detail::backward_registry()) {
    VariantInfo info = common_info(r);
    for (int d : info.head_dims) info.max_head_dim = std::max(info.max_head_dim, d);
    if (r.impl != nullptr) info.features = kFeatureCausal | kFeatureGqa | kFeatureUnequalSeqlens;
    out.push_back(std::move(info));
  }
  return out;
}

std::vector<VariantInfo> decode_variants() {
  std::vector<VariantInfo> out;
  for (const auto& r : detail::decode_registry()) {
    VariantInfo info = common_info(r);
    for (int d : info.head_dims) info.max_head_dim = std::max(info.max_head_dim, d);
    if (r.impl != nullptr) info.features = kAllFeatures;
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace flash
