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
  detail::check_attention({a.q, a.k, a.v, a.o, detail::view_or_null(a.lse)}, a.softmax_scale,
                          detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  detail::check_scores(a.softcap, detail::view_or_null(a.alibi_slopes), detail::view_or_null(a.sinks), p);
  check_no_self_overlap("o", a.o);
  detail::check_no_overlap({{"q", &a.q},
                            {"k", &a.k},
                            {"v", &a.v},
                            {"alibi_slopes", detail::view_or_null(a.alibi_slopes)},
                            {"sinks", detail::view_or_null(a.sinks)}},
                           {{"o", &a.o}, {"lse", detail::view_or_null(a.lse)}});
  return p;
}

// Why `v` cannot take this call (empty: it can), short of device checks.
std::string unsupported_reason(const RegisteredFwd& r, const FwdParams& p, const ForwardArgs& a) {
  const FwdVariant* v = r.impl;
  if (v == nullptr) return "not built (CMake option FLASH_VARIANTS)";
  if (std::string why = detail::feature_reason(v->features, p, p.lse != nullptr); !why.empty()) return why;
  return detail::variant_reason(*v, p.dtype, p.head_dim, {{"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"o", &a.o}});
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
