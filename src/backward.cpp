// attention_backward: validate every argument, pick a variant, build
// BwdParams, launch. Everything that can be wrong is found before anything
// is launched, so a rejected call writes nothing.
#include <cstdint>
#include <limits>
#include <string>

#include "common/backward.h"
#include "flash/backward.h"
#include "flash/variants.h"
#include "internal.h"
#include "validate.h"

namespace flash {
namespace {

using detail::BwdParams;
using detail::BwdVariant;
using detail::RegisteredBwd;
using detail::check_dim;
using detail::check_no_self_overlap;
using detail::check_same_dtype;
using detail::check_view;
using detail::fail;

using Named = detail::NamedView;

BwdParams check_args(const BackwardArgs& a) {
  // The workspace pads each row array to whole 128-row tiles in int
  // arithmetic (checked first: the LSE's own checks would name it instead).
  constexpr std::int64_t kMaxSeqlenQ = std::numeric_limits<int>::max() - detail::kBwdRowPad;
  check_view("q", a.q, 4);
  if (a.q.shape[1] > kMaxSeqlenQ)
    fail("q.shape[1] (seqlen_q) = " + std::to_string(a.q.shape[1]) + " exceeds the backward's limit of " +
         std::to_string(kMaxSeqlenQ));
  BwdParams p;
  detail::check_attention({a.q, a.k, a.v, a.o, &a.lse}, a.softmax_scale,
                          detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  detail::check_scores(a.softcap, detail::view_or_null(a.alibi_slopes), detail::view_or_null(a.sinks), p);
  if (a.dsinks) {
    if (!a.sinks) fail("dsinks is set but sinks is not; dsinks is the gradient of sinks");
    check_view("dsinks", *a.dsinks, 1);
    if (a.dsinks->dtype != DType::f32) fail("dsinks.dtype is " + std::string(dtype_name(a.dsinks->dtype)) + "; expected f32");
    check_dim("dsinks", *a.dsinks, 0, "heads_q", p.heads_q, "q.shape[2]");
    check_no_self_overlap("dsinks", *a.dsinks);
    p.dsinks = static_cast<float*>(a.dsinks->data);
    p.dsinks_stride = a.dsinks->stride[0];
  }
  // dO and the gradients: shaped like o (dout, dq) and k (dk, dv), in q's dtype.
  const Named q_like[] = {{"dout", &a.dout}, {"dq", &a.dq}};
  const Named k_like[] = {{"dk", &a.dk}, {"dv", &a.dv}};
  for (const auto& [name, t] : q_like) check_view(name, *t, 4);
  for (const auto& [name, t] : k_like) check_view(name, *t, 4);
  for (const auto& [name, t] : q_like) check_same_dtype(name, *t, p.dtype);
  for (const auto& [name, t] : k_like) check_same_dtype(name, *t, p.dtype);
  static const char* kQDims[] = {"batch", "seqlen_q", "heads_q", "head_dim"};
  static const char* kKDims[] = {"batch", "seqlen_k", "heads_kv", "head_dim"};
  for (int d = 0; d < 4; ++d) {
    for (const auto& [name, t] : q_like) check_dim(name, *t, d, kQDims[d], a.q.shape[d], "q's shape");
    for (const auto& [name, t] : k_like) check_dim(name, *t, d, kKDims[d], a.k.shape[d], "k's shape");
  }
  const Named outputs[] = {{"dq", &a.dq}, {"dk", &a.dk}, {"dv", &a.dv}};
  for (const auto& [name, t] : outputs) check_no_self_overlap(name, *t);
  detail::check_no_overlap({{"q", &a.q},
                            {"k", &a.k},
                            {"v", &a.v},
                            {"o", &a.o},
                            {"lse", &a.lse},
                            {"dout", &a.dout},
                            {"alibi_slopes", detail::view_or_null(a.alibi_slopes)},
                            {"sinks", detail::view_or_null(a.sinks)}},
                           {{"dq", &a.dq}, {"dk", &a.dk}, {"dv", &a.dv}, {"dsinks", detail::view_or_null(a.dsinks)}});

  p.dout = a.dout.data;
  p.dq = a.dq.data, p.dk = a.dk.data, p.dv = a.dv.data;
  auto strides = [](const TensorView& t, std::int64_t& b, std::int64_t& r, std::int64_t& h) {
    b = t.stride[0], r = t.stride[1], h = t.stride[2];
  };
  strides(a.dout, p.do_batch_stride, p.do_row_stride, p.do_head_stride);
  strides(a.dq, p.dq_batch_stride, p.dq_row_stride, p.dq_head_stride);
  strides(a.dk, p.dk_batch_stride, p.dk_row_stride, p.dk_head_stride);
  strides(a.dv, p.dv_batch_stride, p.dv_row_stride, p.dv_head_stride);
  p.deterministic = a.deterministic;
  return p;
}

// Why `r` cannot take this call (empty: it can), short of device checks.
std::string unsupported_reason(const RegisteredBwd& r, const BwdParams& p, const BackwardArgs& a) {
  const BwdVariant* v = r.impl;
  if (v == nullptr) return "not built (CMake option FLASH_VARIANTS)";
  if (std::string why = detail::feature_reason(v->features, p, false); !why.empty()) return why;
  return detail::variant_reason(*v, p.dtype, p.head_dim,
                                {{"q", &a.q},
                                 {"k", &a.k},
                                 {"v", &a.v},
                                 {"o", &a.o},
                                 {"dout", &a.dout},
                                 {"dq", &a.dq},
                                 {"dk", &a.dk},
                                 {"dv", &a.dv}});
}

struct Resolved {
  BwdParams params;
  const RegisteredBwd* variant = nullptr;
  std::size_t workspace_bytes = 0;
};

bool is_empty(const BwdParams& p) { return p.batch == 0 || p.seqlen_q == 0 || p.seqlen_k == 0; }

Resolved resolve(const BackwardArgs& a) {
  Resolved out;
  out.params = check_args(a);
  const BwdParams& p = out.params;
  out.variant = &detail::pick_variant(
      detail::backward_registry(), a.kernel, "backward ",
      [&](const RegisteredBwd& r) { return unsupported_reason(r, p, a); },
      [&](const RegisteredBwd& r) { return detail::device_reason(r, p, detail::current_device()); });
  if (!is_empty(p)) out.workspace_bytes = out.variant->impl->workspace_bytes(p);
  return out;
}

}  // namespace

BackwardPlan plan_backward(const BackwardArgs& args) {
  const Resolved r = resolve(args);
  return BackwardPlan{std::string(r.variant->name), r.workspace_bytes};
}

void attention_backward(const BackwardArgs& args) {
  const Resolved r = resolve(args);
  BwdParams p = r.params;
  const cudaStream_t stream = reinterpret_cast<cudaStream_t>(args.stream);
  if (is_empty(p)) {
    // No key: dQ = 0. No query: dK = dV = 0. No batch: nothing at all but
    // dsinks = 0 (no row: a zero gradient; no key: O = 0, so rowsum(dO * O) = 0).
    if (p.batch > 0) detail::check_cuda(detail::bwd_fill_zero(p, stream), "launching the empty-call zero fill");
    if (p.dsinks != nullptr) detail::check_cuda(detail::bwd_zero_dsinks(p, stream), "launching the dsinks zero fill");
    return;
  }
  const detail::DeviceInfo& dev = detail::current_device();  // resolve() checked that it is usable
  p.compute_capability = dev.compute_capability;            // the kernels' per-architecture paths
  p.sm_count = dev.sm_count;
  const detail::WorkspaceLease ws = detail::call_workspace(args.workspace, args.workspace_bytes, r.workspace_bytes,
                                                          "plan_backward", dev.device, stream);
  detail::check_cuda(r.variant->impl->run(p, ws.get(), stream),
                     "backward kernel '" + std::string(r.variant->name) + "' launch");
}

}  // namespace flash
