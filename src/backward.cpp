// attention_backward: validate every argument, pick a variant, build
// BwdParams, launch. Everything that can be wrong is found before anything
// is launched, so a rejected call writes nothing.
#include <cstdint>
#include <limits>
#include <string>
#include <utility>

#include "common/backward.h"
#include "common/varlen.h"
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
using detail::with_unit_batch;

using Named = detail::NamedView;

// The workspace pads each row array to whole 128-row tiles in int
// arithmetic: seqlen_q (total_q in a variable-length call) stays below this.
constexpr std::int64_t kMaxSeqlenQ = std::numeric_limits<int>::max() - detail::kBwdRowPad;

// The variable-length arguments (BackwardArgs::cu_seqlens_q): packed rank-3
// q, k, v, o (the gradients and dout: check_args) and a [heads_q, total_q]
// LSE, checked as one sequence of total rows; then batch, the bounds and the
// metadata pointers (check_varlen_args).
void check_varlen(const BackwardArgs& a, BwdParams& p) {
  if (!a.cu_seqlens_k) fail("cu_seqlens_q is set but cu_seqlens_k is not; a variable-length call needs both");
  const Named packed[] = {{"q", &a.q},       {"k", &a.k},   {"v", &a.v},   {"o", &a.o},
                          {"dout", &a.dout}, {"dq", &a.dq}, {"dk", &a.dk}, {"dv", &a.dv}};
  for (const auto& [name, t] : packed)
    if (t->rank != 3)
      fail(std::string(name) + ": expected a rank-3 packed view [total, heads, head_dim] with cu_seqlens_q, got rank " +
           std::to_string(t->rank));
  if (a.lse.rank != 2)
    fail("lse: expected a rank-2 packed view [heads_q, total_q] with cu_seqlens_q, got rank " + std::to_string(a.lse.rank));
  check_view("q", a.q, 3);
  if (a.q.shape[0] > kMaxSeqlenQ)
    fail("q.shape[0] (total_q) = " + std::to_string(a.q.shape[0]) + " exceeds the backward's limit of " +
         std::to_string(kMaxSeqlenQ));
  const TensorView q = with_unit_batch(a.q), k = with_unit_batch(a.k), v = with_unit_batch(a.v), o = with_unit_batch(a.o);
  const TensorView lse = with_unit_batch(a.lse);
  detail::packed_checks({"q", "k", "v", "o", "lse"}, true, [&] {
    detail::check_attention({q, k, v, o, &lse}, a.softmax_scale,
                            detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  });
  detail::check_varlen_args({*a.cu_seqlens_q, &*a.cu_seqlens_k, detail::view_or_null(a.seqused_k), a.max_seqlen_q,
                             a.max_seqlen_k, detail::view_or_null(a.status)},
                            p);
}

// The call's views (null: absent), the inputs and the outputs, for the
// overlap checks.
struct CallViews {
  detail::NamedView inputs[11], outputs[5];
};
CallViews call_views(const BackwardArgs& a) {
  const bool varlen = a.cu_seqlens_q.has_value();
  return {{{"q", &a.q},
           {"k", &a.k},
           {"v", &a.v},
           {"o", &a.o},
           {"lse", &a.lse},
           {"dout", &a.dout},
           {"alibi_slopes", detail::view_or_null(a.alibi_slopes)},
           {"sinks", detail::view_or_null(a.sinks)},
           {"cu_seqlens_q", detail::view_or_null(a.cu_seqlens_q)},
           {"cu_seqlens_k", detail::view_or_null(a.cu_seqlens_k)},
           {"seqused_k", detail::view_or_null(a.seqused_k)}},
          {{"dq", &a.dq},
           {"dk", &a.dk},
           {"dv", &a.dv},
           {"dsinks", detail::view_or_null(a.dsinks)},
           {"status", varlen ? detail::view_or_null(a.status) : nullptr}}};
}

BwdParams check_args(const BackwardArgs& a) {
  BwdParams p;
  const bool varlen = a.cu_seqlens_q.has_value();
  if (varlen) {
    check_varlen(a, p);
  } else {
    for (const auto& [name, t] : {std::pair{"cu_seqlens_k", &a.cu_seqlens_k}, std::pair{"seqused_k", &a.seqused_k}})
      if (t->has_value()) fail(std::string(name) + " is set but cu_seqlens_q is not");
    // The row arrays' limit first: the LSE's own checks would name it instead.
    check_view("q", a.q, 4);
    if (a.q.shape[1] > kMaxSeqlenQ)
      fail("q.shape[1] (seqlen_q) = " + std::to_string(a.q.shape[1]) + " exceeds the backward's limit of " +
           std::to_string(kMaxSeqlenQ));
    detail::check_attention({a.q, a.k, a.v, a.o, &a.lse}, a.softmax_scale,
                            detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  }
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
  // dO and the gradients: shaped like o (dout, dq) and k (dk, dv), in q's
  // dtype; packed rank-3 views in a variable-length call.
  const int rank = varlen ? 3 : 4;
  const Named q_like[] = {{"dout", &a.dout}, {"dq", &a.dq}};
  const Named k_like[] = {{"dk", &a.dk}, {"dv", &a.dv}};
  for (const auto& [name, t] : q_like) check_view(name, *t, rank);
  for (const auto& [name, t] : k_like) check_view(name, *t, rank);
  for (const auto& [name, t] : q_like) check_same_dtype(name, *t, p.dtype);
  for (const auto& [name, t] : k_like) check_same_dtype(name, *t, p.dtype);
  static const char* kQDims[] = {"batch", "seqlen_q", "heads_q", "head_dim"};
  static const char* kKDims[] = {"batch", "seqlen_k", "heads_kv", "head_dim"};
  static const char* kPackedQDims[] = {"total_q", "heads_q", "head_dim"};
  static const char* kPackedKDims[] = {"total_k", "heads_kv", "head_dim"};
  for (int d = 0; d < rank; ++d) {
    for (const auto& [name, t] : q_like)
      check_dim(name, *t, d, varlen ? kPackedQDims[d] : kQDims[d], a.q.shape[d], "q's shape");
    for (const auto& [name, t] : k_like)
      check_dim(name, *t, d, varlen ? kPackedKDims[d] : kKDims[d], a.k.shape[d], "k's shape");
  }
  const Named outputs[] = {{"dq", &a.dq}, {"dk", &a.dk}, {"dv", &a.dv}};
  for (const auto& [name, t] : outputs) check_no_self_overlap(name, *t);
  const CallViews views = call_views(a);
  detail::check_no_overlap(views.inputs, views.outputs);

  p.dout = a.dout.data;
  p.dq = a.dq.data, p.dk = a.dk.data, p.dv = a.dv.data;
  auto strides = [&](const TensorView& t, std::int64_t& b, std::int64_t& r, std::int64_t& h) {
    const TensorView v = varlen ? with_unit_batch(t) : t;  // packed: batch stride 0
    b = v.stride[0], r = v.stride[1], h = v.stride[2];
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
  const bool varlen = p.cu_seqlens_q != nullptr;
  if (varlen && !(v->features & kFeatureVarlen)) return "variable-length batches are not supported";
  if (p.deterministic && !(v->features & kFeatureDeterministic)) return "deterministic = true is not supported";
  // Packed views: their row, head and head_dim strides sit one dimension up.
  const auto view = [&](const TensorView& t) { return varlen ? with_unit_batch(t) : t; };
  const TensorView q = view(a.q), k = view(a.k), vv = view(a.v), o = view(a.o), dout = view(a.dout), dq = view(a.dq),
                   dk = view(a.dk), dv = view(a.dv);
  const std::string why = detail::variant_reason(*v, p.dtype, p.head_dim,
                                                 {{"q", &q},
                                                  {"k", &k},
                                                  {"v", &vv},
                                                  {"o", &o},
                                                  {"dout", &dout},
                                                  {"dq", &dq},
                                                  {"dk", &dk},
                                                  {"dv", &dv}});
  return varlen ? detail::packed_message(why, {"q", "k", "v", "o", "dout", "dq", "dk", "dv"}, true) : why;
}

struct Resolved {
  BwdParams params;
  const RegisteredBwd* variant = nullptr;
  std::size_t workspace_bytes = 0;
  detail::MetadataWorkspace metadata;  // variable-length calls: where the order and status words go
};

// A dense call with nothing to compute; a variable-length call only
// without sequences (its sequences' empty sides are its kernels' to write).
bool is_empty(const BwdParams& p) {
  if (p.cu_seqlens_q != nullptr) return p.batch == 0;
  return p.batch == 0 || p.seqlen_q == 0 || p.seqlen_k == 0;
}

Resolved resolve(const BackwardArgs& a) {
  Resolved out;
  out.params = check_args(a);
  const BwdParams& p = out.params;
  out.variant = &detail::pick_variant(
      detail::backward_registry(), a.kernel, "backward ",
      [&](const RegisteredBwd& r) { return unsupported_reason(r, p, a); },
      [&](const RegisteredBwd& r) { return detail::device_reason(r, p, detail::current_device()); });
  if (!is_empty(p)) out.workspace_bytes = out.variant->impl->workspace_bytes(p);
  // The sequences' order and the varlen metadata check's four status words
  // (unless the caller passes `status`), after the variant's workspace.
  if (p.cu_seqlens_q != nullptr && !is_empty(p)) {
    out.metadata = detail::metadata_workspace(out.workspace_bytes, true, !a.status);
    out.workspace_bytes = out.metadata.bytes;
  }
  const CallViews views = call_views(a);
  detail::check_workspace_overlap(a.workspace, out.workspace_bytes, views.inputs, views.outputs);
  return out;
}

// A variable-length call: the metadata check, then the variant (whose
// kernels do nothing when the check failed), then with sync_check the status.
void run_varlen(const BackwardArgs& args, Resolved& r, cudaStream_t stream) {
  BwdParams& p = r.params;
  const detail::DeviceInfo& dev = detail::current_device();  // resolve() checked that it is usable
  p.compute_capability = dev.compute_capability;
  p.sm_count = dev.sm_count;
  if (args.sync_check) detail::check_sync_check_allowed(stream);
  detail::WorkspaceLease workspace = detail::call_workspace(args.workspace, args.workspace_bytes, r.workspace_bytes,
                                                            "plan_backward", dev.device, stream);
  char* ws = static_cast<char*>(workspace.get());
  p.status = args.status ? static_cast<int*>(args.status->data) : reinterpret_cast<int*>(ws + r.metadata.status);
  // A backward key block walks its sequence's queries: longest first by queries.
  if (detail::varlen_ordered(true, p.batch)) p.seq_order = reinterpret_cast<int*>(ws + r.metadata.order);
  p.seq_order_by_queries = true;
  detail::check_cuda(detail::check_varlen_metadata(p, p.total_q, p.total_k, stream),
                     "launching the varlen metadata check");
  detail::check_cuda(r.variant->impl->run(p, ws, stream), "backward kernel '" + std::string(r.variant->name) + "' launch");
  if (!args.sync_check) return;
  int status[4] = {};
  detail::read_status_back(status, p.status, stream, workspace, "varlen");
  if (status[0] != detail::kVarlenOk) fail(detail::describe_varlen_status(status, p) + "; nothing was written");
}

}  // namespace

BackwardPlan plan_backward(const BackwardArgs& args) {
  const Resolved r = resolve(args);
  return BackwardPlan{std::string(r.variant->name), r.workspace_bytes};
}

void attention_backward(const BackwardArgs& args) {
  Resolved r = resolve(args);
  BwdParams& p = r.params;
  const cudaStream_t stream = reinterpret_cast<cudaStream_t>(args.stream);
  detail::check_stream_device(stream);
  if (is_empty(p)) {
    // No key: dQ = 0. No query: dK = dV = 0. No batch: nothing at all but
    // dsinks = 0 (no row: a zero gradient; no key: O = 0, so rowsum(dO * O) = 0).
    if (p.batch > 0) detail::check_cuda(detail::bwd_fill_zero(p, stream), "launching the empty-call zero fill");
    if (p.dsinks != nullptr) detail::check_cuda(detail::bwd_zero_dsinks(p, stream), "launching the dsinks zero fill");
    return;
  }
  if (p.cu_seqlens_q != nullptr) return run_varlen(args, r, stream);
  const detail::DeviceInfo& dev = detail::current_device();  // resolve() checked that it is usable
  p.compute_capability = dev.compute_capability;            // the kernels' per-architecture paths
  p.sm_count = dev.sm_count;
  const detail::WorkspaceLease ws = detail::call_workspace(args.workspace, args.workspace_bytes, r.workspace_bytes,
                                                          "plan_backward", dev.device, stream);
  detail::check_cuda(r.variant->impl->run(p, ws.get(), stream),
                     "backward kernel '" + std::string(r.variant->name) + "' launch");
}

}  // namespace flash
