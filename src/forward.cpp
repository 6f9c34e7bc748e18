// attention_forward: validate every argument, pick a variant, build FwdParams,
// launch. Everything that can be wrong is found before anything is launched.
#include <cmath>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>

#include "common/no_keys.h"
#include "common/varlen.h"
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
using detail::check_i32;
using detail::with_unit_batch;

// The smallest page of a paged KV cache (ForwardArgs::page_table). Every
// key's page is looked up on its own, so smaller powers of two would work
// too; 16 is the smallest block of the serving engines, and the GPU tests
// cover 16 to 256.
constexpr int kMinPageSize = 16;

// With page_table, k and v are the cache's pages, rank 4.
void check_pages_rank(const ForwardArgs& a) {
  for (const auto& [name, t] : {std::pair{"k", &a.k}, std::pair{"v", &a.v}})
    if (t->rank != 4)
      fail(std::string(name) + ": expected the cache's pages, a rank-4 view [num_pages, page_size, heads_kv, head_dim], "
           "with page_table, got rank " + std::to_string(t->rank));
}

// The variable-length arguments (ForwardArgs::cu_seqlens_q): packed rank-3
// q/o (and k/v unless paged) and a [heads_q, total_q] LSE, checked as one
// sequence of total rows; then batch, the bounds and the metadata pointers.
// With page_table, k and v are pages and seqused_k gives each sequence's
// keys (cu_seqlens_k is not used: FlashAttention 4's rule).
void check_varlen(const ForwardArgs& a, FwdParams& p) {
  const bool paged = a.page_table.has_value();
  if (paged && a.cu_seqlens_k)
    fail("cu_seqlens_k is set with page_table: a paged call takes each sequence's keys from seqused_k, not from "
         "packed rows (leave cu_seqlens_k unset)");
  if (paged && !a.seqused_k)
    fail("seqused_k is not set: a variable-length call with page_table needs it (the keys of each sequence)");
  if (!paged && !a.cu_seqlens_k) fail("cu_seqlens_q is set but cu_seqlens_k is not; a variable-length call needs both");
  const struct { const char* name; const TensorView* t; } packed[] = {{"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"o", &a.o}};
  for (const auto& [name, t] : packed)
    if (t->rank != 3 && !(paged && (t == &a.k || t == &a.v)))
      fail(std::string(name) + ": expected a rank-3 packed view [total, heads, head_dim] with cu_seqlens_q, got rank " +
           std::to_string(t->rank));
  if (paged) check_pages_rank(a);
  if (a.lse && a.lse->rank != 2)
    fail("lse: expected a rank-2 packed view [heads_q, total_q] with cu_seqlens_q, got rank " + std::to_string(a.lse->rank));
  const TensorView q = with_unit_batch(a.q), o = with_unit_batch(a.o);
  const TensorView k = paged ? a.k : with_unit_batch(a.k), v = paged ? a.v : with_unit_batch(a.v);
  const TensorView lse = a.lse ? with_unit_batch(*a.lse) : TensorView{};
  const auto check = [&] {
    detail::check_attention({q, k, v, o, a.lse ? &lse : nullptr, "k", "v", !paged}, a.softmax_scale,
                            detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  };
  if (paged) detail::packed_checks({"q", "o", "lse"}, false, check);  // (k and v: rank-4 pages)
  else detail::packed_checks({"q", "k", "v", "o", "lse"}, true, check);
  // Paged, the keys of a sequence are bounded by the table: max_pages * page_size.
  check_i32("cu_seqlens_q", *a.cu_seqlens_q, 1);
  const std::int64_t batch = a.cu_seqlens_q->shape[0] - 1;
  const int keys_bound =
      paged && batch >= 0
          ? detail::check_page_table(*a.page_table, a.k, "k", batch, "cu_seqlens_q.shape[0] - 1", kMinPageSize, p)
          : -1;
  // (status: check_args, for every call with metadata)
  detail::check_varlen_args({*a.cu_seqlens_q, paged ? nullptr : &*a.cu_seqlens_k, detail::view_or_null(a.seqused_k),
                             a.max_seqlen_q, a.max_seqlen_k, nullptr, keys_bound,
                             paged ? "max_pages * page_size" : "total_k"},
                            p);
}

// A dense call (rank-4 q, k, v, o): k and v are the cache's pages with
// page_table, whose capacity (max_pages * page_size) is every sequence's
// keys unless seqused_k gives them (flash_attn_with_kvcache's cache_seqlens).
void check_dense(const ForwardArgs& a, FwdParams& p) {
  if (a.cu_seqlens_k) fail("cu_seqlens_k is set but cu_seqlens_q is not");
  const bool paged = a.page_table.has_value();
  if (paged) check_pages_rank(a);
  detail::check_attention({a.q, a.k, a.v, a.o, detail::view_or_null(a.lse), "k", "v", !paged}, a.softmax_scale,
                          detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  if (paged) {
    p.seqlen_k = detail::check_page_table(*a.page_table, a.k, "k", p.batch, "q.shape[0]", kMinPageSize, p);
    p.derive_mask();
  }
  if (a.seqused_k) {
    check_i32("seqused_k", *a.seqused_k, 1);
    check_dim("seqused_k", *a.seqused_k, 0, "batch", p.batch, "q.shape[0]");
    p.seqused_k = static_cast<const int*>(a.seqused_k->data);
  }
}

// Whether the call has metadata on the device (checked there, with status words).
bool has_metadata(const FwdParams& p) { return p.seq_layout() != detail::SeqLayout::dense; }

// The call's views (null: absent), the inputs and the outputs, for the
// overlap checks.
struct CallViews {
  detail::NamedView inputs[9], outputs[3];
};
CallViews call_views(const ForwardArgs& a, bool metadata) {
  return {{{"q", &a.q},
           {"k", &a.k},
           {"v", &a.v},
           {"alibi_slopes", detail::view_or_null(a.alibi_slopes)},
           {"sinks", detail::view_or_null(a.sinks)},
           {"cu_seqlens_q", detail::view_or_null(a.cu_seqlens_q)},
           {"cu_seqlens_k", detail::view_or_null(a.cu_seqlens_k)},
           {"seqused_k", detail::view_or_null(a.seqused_k)},
           {"page_table", detail::view_or_null(a.page_table)}},
          {{"o", &a.o}, {"lse", detail::view_or_null(a.lse)}, {"status", metadata ? detail::view_or_null(a.status) : nullptr}}};
}

// Arguments that do not depend on the variant.
FwdParams check_args(const ForwardArgs& a) {
  FwdParams p;
  if (a.cu_seqlens_q) check_varlen(a, p);
  else check_dense(a, p);
  const bool metadata = has_metadata(p);
  if (metadata && a.status) detail::check_status(*a.status);
  detail::check_scores(a.softcap, detail::view_or_null(a.alibi_slopes), detail::view_or_null(a.sinks), p);
  check_no_self_overlap("o", a.o);
  const CallViews views = call_views(a, metadata);
  detail::check_no_overlap(views.inputs, views.outputs);
  return p;
}

// Why `v` cannot take this call (empty: it can), short of device checks.
std::string unsupported_reason(const RegisteredFwd& r, const FwdParams& p, const ForwardArgs& a) {
  const FwdVariant* v = r.impl;
  if (v == nullptr) return "not built (CMake option FLASH_VARIANTS)";
  if (std::string why = detail::feature_reason(v->features, p, p.lse != nullptr); !why.empty()) return why;
  if (p.page_table != nullptr && !(v->features & kFeaturePaged)) return "a paged KV cache (page_table) is not supported";
  if (p.cu_seqlens_q != nullptr && !(v->features & kFeatureVarlen)) return "variable-length batches are not supported";
  if (p.seqused_k != nullptr && !(v->features & kFeatureVarlen)) return "seqused_k is not supported";
  if (p.cu_seqlens_q == nullptr)
    return detail::variant_reason(*v, p.dtype, p.head_dim, {{"q", &a.q}, {"k", &a.k}, {"v", &a.v}, {"o", &a.o}});
  // Packed views: their row, head and head_dim strides sit one dimension up
  // (paged k and v are rank-4 pages).
  const bool paged = p.page_table != nullptr;
  const TensorView q = with_unit_batch(a.q), o = with_unit_batch(a.o);
  const TensorView k = paged ? a.k : with_unit_batch(a.k), vv = paged ? a.v : with_unit_batch(a.v);
  const std::string why = detail::variant_reason(*v, p.dtype, p.head_dim, {{"q", &q}, {"k", &k}, {"v", &vv}, {"o", &o}});
  return paged ? detail::packed_message(why, {"q", "o"}, false) : detail::packed_message(why, {"q", "k", "v", "o"}, true);
}

struct Resolved {
  FwdParams params;
  const RegisteredFwd* variant = nullptr;
  std::size_t workspace_bytes = 0;
  detail::MetadataWorkspace metadata;  // calls with device metadata: where the order and status words go
};

Resolved resolve(const ForwardArgs& a) {
  Resolved out;
  out.params = check_args(a);
  const FwdParams& p = out.params;
  const auto& registry = detail::forward_registry();

  out.variant = &detail::pick_variant(
      registry, a.kernel, "", [&](const RegisteredFwd& r) { return unsupported_reason(r, p, a); },
      [&](const RegisteredFwd& r) { return detail::device_reason(r, p, detail::current_device()); });
  const bool metadata = has_metadata(p);
  const bool empty = p.batch == 0 || p.seqlen_q == 0 || (p.seqlen_k == 0 && !metadata);
  if (!empty && out.variant->impl->workspace_bytes != nullptr) out.workspace_bytes = out.variant->impl->workspace_bytes(p);
  // The sequences' order (packed queries) and the metadata check's four
  // status words (unless the caller passes `status`), after the variant's
  // workspace.
  if (metadata) {
    out.metadata = detail::metadata_workspace(out.workspace_bytes, p.cu_seqlens_q != nullptr, !a.status);
    out.workspace_bytes = out.metadata.bytes;
  }
  const CallViews views = call_views(a, metadata);
  detail::check_workspace_overlap(a.workspace, out.workspace_bytes, views.inputs, views.outputs);
  return out;
}

// A call with device metadata (cu_seqlens, seqused_k, page_table): the
// metadata check, then the kernel (which does nothing when the check
// failed), then with sync_check the status.
void run_with_metadata(const ForwardArgs& args, Resolved& r, cudaStream_t stream) {
  FwdParams& p = r.params;
  const detail::DeviceInfo& dev = detail::current_device();
  p.compute_capability = dev.compute_capability;
  p.sm_count = dev.sm_count;
  if (args.sync_check) detail::check_sync_check_allowed(stream);
  detail::WorkspaceLease workspace =
      detail::call_workspace(args.workspace, args.workspace_bytes, r.workspace_bytes, "plan_forward", dev.device, stream);
  char* ws = static_cast<char*>(workspace.get());
  p.status = args.status ? static_cast<int*>(args.status->data) : reinterpret_cast<int*>(ws + r.metadata.status);
  // The forward's tiles cost their keys: longest first by keys.
  if (detail::varlen_ordered(p.cu_seqlens_q != nullptr, p.batch)) p.seq_order = reinterpret_cast<int*>(ws + r.metadata.order);
  detail::check_cuda(detail::check_varlen_metadata(p, p.total_q, p.total_k, stream), "launching the metadata check");
  // Dense queries and no key anywhere (k with no rows, or a pool of no
  // pages: valid metadata then gives every sequence 0 keys): O = 0 and
  // LSE = -inf by the fill, which reads the check's status as the variants
  // do (they may assume keys).
  const bool no_keys = p.cu_seqlens_q == nullptr && (p.seqlen_k == 0 || (p.page_table != nullptr && p.num_pages == 0));
  if (p.seqlen_q > 0 && no_keys)
    detail::check_cuda(detail::fill_no_keys(p, stream), "launching the no-keys fill");
  else if (p.seqlen_q > 0)
    detail::check_cuda(r.variant->impl->run(p, ws, stream), "kernel '" + std::string(r.variant->name) + "' launch");
  if (!args.sync_check) return;
  int status[4] = {};
  detail::read_status_back(status, p.status, stream, workspace, "metadata");
  if (status[0] != detail::kVarlenOk) fail(detail::describe_varlen_status(status, p) + "; nothing was written");
}

}  // namespace

ForwardPlan plan_forward(const ForwardArgs& args) {
  const Resolved r = resolve(args);
  return ForwardPlan{std::string(r.variant->name), r.workspace_bytes};
}

void attention_forward(const ForwardArgs& args) {
  Resolved r = resolve(args);
  FwdParams& p = r.params;
  const bool metadata = has_metadata(p);
  if (p.batch == 0 || (p.seqlen_q == 0 && !metadata)) return;  // nothing to compute
  const cudaStream_t stream = reinterpret_cast<cudaStream_t>(args.stream);
  detail::check_stream_device(stream);
  if (metadata) return run_with_metadata(args, r, stream);
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
