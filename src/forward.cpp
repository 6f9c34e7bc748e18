// attention_forward: validate every argument, pick a variant, build FwdParams,
// launch. Everything that can be wrong is found before anything is launched.
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "common/no_keys.h"
#include "flash/forward.h"
#include "flash/variants.h"
#include "internal.h"
#include "validate.h"

namespace flash {
namespace {

using detail::FwdParams;
using detail::FwdVariant;
using detail::RegisteredFwd;
using detail::check_dim;
using detail::check_no_self_overlap;
using detail::check_same_dtype;
using detail::check_view;
using detail::fail;

// Arguments that do not depend on the variant.
FwdParams check_args(const ForwardArgs& a) {
  FwdParams p;
  detail::check_attention({a.q, a.k, a.v, a.o, detail::view_or_null(a.lse)}, a.softmax_scale, a.causal, p);
  check_no_self_overlap("o", a.o);
  detail::check_no_overlap({{"q", &a.q}, {"k", &a.k}, {"v", &a.v}},
                           {{"o", &a.o}, {"lse", detail::view_or_null(a.lse)}});
  return p;
}

// Why `v` cannot take this call (empty: it can), short of device checks.
std::string unsupported_reason(const RegisteredFwd& r, const FwdParams& p, const ForwardArgs& a) {
  const FwdVariant* v = r.impl;
  if (v == nullptr) return "not built (CMake option FLASH_VARIANTS)";
  if (!(v->dtype_mask & detail::dtype_bit(p.dtype))) return "dtype " + std::string(dtype_name(p.dtype)) + " is not supported";
  const struct { unsigned bit; bool used; const char* what; } features[] = {
      {kFeatureCausal, p.mask.causal, "the causal mask"},
      {kFeatureGqa, p.group_size > 1, "heads_q != heads_kv (GQA/MQA)"},
      {kFeatureLse, p.lse != nullptr, "the LSE output"},
      {kFeatureUnequalSeqlens, p.seqlen_q != p.seqlen_k, "seqlen_q != seqlen_k"},
  };
  for (const auto& f : features)
    if (f.used && !(v->features & f.bit)) return std::string(f.what) + " is not supported";
  bool hdim_ok = p.head_dim <= v->max_head_dim;
  if (hdim_ok && v->num_head_dims > 0) {
    hdim_ok = false;
    for (int i = 0; i < v->num_head_dims; ++i) hdim_ok = hdim_ok || v->head_dims[i] == p.head_dim;
  }
  if (!hdim_ok) {
    std::string dims;
    for (int i = 0; i < v->num_head_dims; ++i) dims += (i ? ", " : "") + std::to_string(v->head_dims[i]);
    if (dims.empty()) dims = "1 to " + std::to_string(v->max_head_dim);
    return "head_dim " + std::to_string(p.head_dim) + " is not supported (built: " + dims + ")";
  }
  if (v->alignment > 0) {
    const struct { const char* name; const TensorView* t; } views[] = {{"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"o", &a.o}};
    for (const auto& [name, t] : views) {
      const std::string why = detail::alignment_reason(name, *t, v->alignment);
      if (!why.empty()) return why;
    }
    if ((p.head_dim * dtype_size(p.dtype)) % v->alignment != 0)
      return "head_dim * element size is not a multiple of " + std::to_string(v->alignment) + " bytes";
  }
  const struct { const char* name; const TensorView* t; } views[] = {{"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"o", &a.o}};
  for (const auto& [name, t] : views) {
    const std::string why = detail::offset_reason(name, *t, v->max_offset);
    if (!why.empty()) return why;
  }
  return {};
}

struct Resolved {
  FwdParams params;
  const RegisteredFwd* variant = nullptr;
  std::size_t workspace_bytes = 0;
};

Resolved resolve(const ForwardArgs& a) {
  Resolved out;
  out.params = check_args(a);
  const FwdParams& p = out.params;
  const auto& registry = detail::forward_registry();

  out.variant = &detail::pick_variant(
      registry, a.kernel, "", [&](const RegisteredFwd& r) { return unsupported_reason(r, p, a); },
      [&](const RegisteredFwd& r) { return detail::device_reason(r, p, detail::current_device()); });
  const bool empty = p.batch == 0 || p.seqlen_q == 0 || p.seqlen_k == 0;
  if (!empty && out.variant->impl->workspace_bytes != nullptr) out.workspace_bytes = out.variant->impl->workspace_bytes(p);
  return out;
}

}  // namespace

ForwardPlan plan_forward(const ForwardArgs& args) {
  const Resolved r = resolve(args);
  return ForwardPlan{std::string(r.variant->name), r.workspace_bytes};
}

void attention_forward(const ForwardArgs& args) {
  Resolved r = resolve(args);
  FwdParams& p = r.params;
  if (p.batch == 0 || p.seqlen_q == 0) return;  // nothing to compute
  const cudaStream_t stream = reinterpret_cast<cudaStream_t>(args.stream);
  if (p.seqlen_k == 0) {
    detail::check_cuda(detail::fill_no_keys(p, stream), "launching the seqlen_k == 0 fill");
    return;
  }
  const detail::DeviceInfo& dev = detail::current_device();  // resolve() checked that it is usable
  p.compute_capability = dev.compute_capability;
  p.sm_count = dev.sm_count;
  const detail::WorkspaceLease workspace =
      detail::call_workspace(args.workspace, args.workspace_bytes, r.workspace_bytes, "plan_forward", dev.device, stream);
  detail::check_cuda(r.variant->impl->run(p, workspace.get(), stream),
                     "kernel '" + std::string(r.variant->name) + "' launch");
}

}  // namespace flash
