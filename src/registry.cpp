// The registry: kernels/variants.def expanded into a table. A variant left
// out of the build (FLASH_VARIANTS) links a generated stub that returns null,
// so it is listed as "not built" instead of failing at link time.
#include <algorithm>
#include <type_traits>
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

namespace {
// Adds the variant to `out` when it is of the registry's kind.
template <class V, class W> void add(std::vector<Registered<V>>& out, const char* name, const char* description,
                                     const W* (*get)()) {
  if constexpr (std::is_same_v<V, W>) out.push_back({name, description, get()});
}
}  // namespace

template <class V> const std::vector<Registered<V>>& registry() {
  static const std::vector<Registered<V>> list = [] {
    std::vector<Registered<V>> out;
#define FLASH_FWD_VARIANT(name, file, description) add<V, FwdVariant>(out, #name, description, variant_##name);
#define FLASH_DECODE_VARIANT(name, file, description) add<V, DecodeVariant>(out, #name, description, variant_##name);
#define FLASH_BWD_VARIANT(name, file, description) add<V, BwdVariant>(out, #name, description, variant_bwd_##name);
#include "variants.def"
#undef FLASH_FWD_VARIANT
#undef FLASH_DECODE_VARIANT
#undef FLASH_BWD_VARIANT
    return out;
  }();
  return list;
}
template const std::vector<RegisteredFwd>& registry<FwdVariant>();
template const std::vector<RegisteredBwd>& registry<BwdVariant>();
template const std::vector<RegisteredDecode>& registry<DecodeVariant>();

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

template <class V> std::vector<VariantInfo> infos() {
  std::vector<VariantInfo> out;
  for (const auto& r : detail::registry<V>()) {
    VariantInfo info;
    info.name = r.name;
    info.description = r.description;
    info.built = r.impl != nullptr;
    if (r.impl != nullptr) {
      info.min_compute_capability = r.impl->min_compute_capability;
      info.max_compute_capability = r.impl->max_compute_capability;
      for (DType t : {DType::f32, DType::f16, DType::bf16})
        if (r.impl->dtype_mask & detail::dtype_bit(t)) info.dtypes.push_back(t);
      info.head_dims.assign(r.impl->head_dims, r.impl->head_dims + r.impl->num_head_dims);
      info.max_head_dim = r.impl->max_head_dim;
      for (int d : info.head_dims) info.max_head_dim = std::max(info.max_head_dim, d);
      info.alignment = r.impl->alignment;
      info.features = r.impl->features;
    }
    out.push_back(std::move(info));
  }
  return out;
}

}  // namespace

std::vector<VariantInfo> forward_variants() { return infos<detail::FwdVariant>(); }
std::vector<VariantInfo> backward_variants() { return infos<detail::BwdVariant>(); }
std::vector<VariantInfo> decode_variants() { return infos<detail::DecodeVariant>(); }

}  // namespace flash
