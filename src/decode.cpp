// attention_decode: validate the host-side arguments, pick a variant and the
// number of splits, then enqueue the device-side metadata check and the
// kernels. The metadata (lengths, page table) is on the device, so it is
// checked there; see DecodeArgs::sync_check.
#include <cmath>
#include <cstdint>
#include <string>

#include "common/varlen.h"
#include "flash/decode.h"
#include "flash/variants.h"
#include "internal.h"
#include "validate.h"

namespace flash {
namespace {

using detail::check_dim;
using detail::check_i32;
using detail::check_no_self_overlap;
using detail::check_same_dtype;
using detail::check_view;
using detail::DecodeParams;
using detail::fail;
using detail::RegisteredDecode;
using detail::with_unit_batch;

constexpr int kMaxSplits = 256;

// Shape [batch, rows, heads, head_dim] of an optional k_new / v_new.
void check_new(const char* name, const TensorView& t, const DecodeParams& p, DType dtype) {
  check_view(name, t, 4);
  check_same_dtype(name, t, dtype);
  check_dim(name, t, 0, "batch", p.batch, "q.shape[0]");
  check_dim(name, t, 2, "heads_kv", p.heads_kv, "k_cache.shape[2]");
  check_dim(name, t, 3, "head_dim", p.head_dim, "q.shape[3]");
}

// The queries of a variable-length call (DecodeArgs::cu_seqlens_q): q and o
// packed [total_q, heads_q, head_dim] and lse [heads_q, total_q], checked
// as one sequence of total_q rows (a batch of one, batch strides 0); then
// batch, max_seqlen_q (p.seqlen_q, the grid's bound), total_q and the
// pointer, by the forward's check_varlen_args. The cache's checks follow in
// check_args, as for a dense call.
void check_varlen_queries(const DecodeArgs& a, DecodeParams& p) {
  if (a.k_new || a.v_new)
    fail(std::string(a.k_new ? "k_new" : "v_new") +
         " is set with cu_seqlens_q: a variable-length decode call attends the keys already in the cache "
         "(cache_seqlens[b] of them, the new tokens' own included); write the new tokens' keys and values into "
         "k_cache and v_cache first (appending k_new / v_new with cu_seqlens_q is not supported)");
  for (const auto& [name, t] : {std::pair{"q", &a.q}, std::pair{"o", &a.o}})
    if (t->rank != 3)
      fail(std::string(name) + ": expected a rank-3 packed view [total_q, heads_q, head_dim] with cu_seqlens_q, got rank " +
           std::to_string(t->rank));
  if (a.lse && a.lse->rank != 2)
    fail("lse: expected a rank-2 packed view [heads_q, total_q] with cu_seqlens_q, got rank " +
         std::to_string(a.lse->rank));
  const TensorView q = with_unit_batch(a.q), o = with_unit_batch(a.o);
  const TensorView lse = a.lse ? with_unit_batch(*a.lse) : TensorView{};
  detail::packed_checks({"q", "o", "lse"}, false, [&] {
    detail::check_attention({q, a.k_cache, a.v_cache, o, a.lse ? &lse : nullptr, "k_cache", "v_cache", false},
                            a.softmax_scale, detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  });
  // No key arrays: max_seqlen_k 0 (the capacity is set by check_args).
  detail::check_varlen_args({*a.cu_seqlens_q, nullptr, nullptr, a.max_seqlen_q, 0, nullptr}, p);
}

// The call's views (null: absent), the inputs and the outputs, for the
// overlap checks. An append writes the caches; without one they are inputs
// like the rest.
struct CallViews {
  detail::NamedView inputs[10], outputs[5];
};
CallViews call_views(const DecodeArgs& a, bool appends) {
  const detail::NamedView k_cache{"k_cache", &a.k_cache}, v_cache{"v_cache", &a.v_cache}, none{"", nullptr};
  return {{{"q", &a.q},
           {"k_new", detail::view_or_null(a.k_new)},
           {"v_new", detail::view_or_null(a.v_new)},
           {"cache_seqlens", &a.cache_seqlens},
           {"page_table", detail::view_or_null(a.page_table)},
           {"cu_seqlens_q", detail::view_or_null(a.cu_seqlens_q)},
           {"alibi_slopes", detail::view_or_null(a.alibi_slopes)},
           {"sinks", detail::view_or_null(a.sinks)},
           appends ? none : k_cache,
           appends ? none : v_cache},
          {{"o", &a.o},
           {"lse", detail::view_or_null(a.lse)},
           {"status", detail::view_or_null(a.status)},
           appends ? k_cache : none,
           appends ? v_cache : none}};
}

DecodeParams check_args(const DecodeArgs& a) {
  DecodeParams p;
  const bool varlen = a.cu_seqlens_q.has_value();
  // The cache's first dimension is the batch or the page (checked below);
  // its second, the capacity or the page size, becomes seqlen_k below.
  if (varlen) {
    check_varlen_queries(a, p);
  } else {
    detail::check_attention({a.q, a.k_cache, a.v_cache, a.o, detail::view_or_null(a.lse), "k_cache", "v_cache", false},
                            a.softmax_scale, detail::mask_spec(a.causal, a.window_left, a.window_right), p);
  }
  // Where the batch comes from, for messages.
  const char* batch_from = varlen ? "cu_seqlens_q.shape[0] - 1" : "q.shape[0]";
  detail::check_scores(a.softcap, detail::view_or_null(a.alibi_slopes), detail::view_or_null(a.sinks), p);
  const DType dtype = p.dtype;
  // The kernels index rows in int grid dimensions: the attention's x is
  // 16-row blocks of seqlen_q * group_size rows times up to kMaxSplits
  // splits, the combine's x one CTA per (batch, head, query) row
  // (variable-length: per (head, packed row)).
  constexpr std::int64_t kMaxRowsPerKvHead = std::int64_t{INT32_MAX} / kMaxSplits * 16;
  if (std::int64_t{p.seqlen_q} * p.group_size > kMaxRowsPerKvHead)
    fail(std::string(varlen ? "max_seqlen_q" : "q.shape[1] (seqlen_q)") + " * heads_q / heads_kv = " +
         std::to_string(std::int64_t{p.seqlen_q} * p.group_size) + " exceeds the decode limit of " +
         std::to_string(kMaxRowsPerKvHead) + " query rows per KV head");
  std::int64_t rows = 0;
  if (varlen) {
    if (std::int64_t{p.total_q} * p.heads_q > INT32_MAX)
      fail("q: total_q * heads_q exceeds the decode limit of 2^31 - 1 query rows");
  } else if (__builtin_mul_overflow(std::int64_t{p.batch} * p.heads_q, p.seqlen_q, &rows) || rows > INT32_MAX) {
    fail("q: batch * heads_q * seqlen_q exceeds the decode limit of 2^31 - 1 query rows");
  }
  check_no_self_overlap("o", a.o);

  check_i32("cache_seqlens", a.cache_seqlens, 1);
  check_dim("cache_seqlens", a.cache_seqlens, 0, "batch", p.batch, batch_from);
  p.cache_seqlens = static_cast<const int*>(a.cache_seqlens.data);
  p.seqlens_stride = a.cache_seqlens.stride[0];

  std::int64_t capacity = 0;
  if (a.page_table) {
    capacity = detail::check_page_table(*a.page_table, a.k_cache, "k_cache", p.batch, batch_from, 1, p);
  } else {
    const std::string from = std::string(batch_from) + " (a contiguous cache has one row per sequence; "
                             "set page_table for a paged one)";
    check_dim("k_cache", a.k_cache, 0, "batch", p.batch, from.c_str());
    capacity = a.k_cache.shape[1];
  }
  if (capacity > INT32_MAX)
    fail("the cache capacity (" + std::to_string(capacity) + " keys per sequence) exceeds 2^31 - 1");
  p.seqlen_k = static_cast<int>(capacity);
  p.derive_mask();  // per sequence in the kernel (mask_for(seqlen_q, keys)); kept consistent

  if (a.k_new.has_value() != a.v_new.has_value())
    fail(std::string(a.k_new ? "k_new is set but v_new is not" : "v_new is set but k_new is not") +
         "; an append needs both");
  if (a.k_new) {
    check_new("k_new", *a.k_new, p, dtype);
    check_new("v_new", *a.v_new, p, dtype);
    check_dim("v_new", *a.v_new, 1, "seqlen_new", a.k_new->shape[1], "k_new.shape[1]");
    p.seqlen_new = static_cast<int>(a.k_new->shape[1]);
    if (p.seqlen_new > p.seqlen_k)
      fail("k_new.shape[1] (seqlen_new) = " + std::to_string(p.seqlen_new) + " exceeds the cache capacity of " +
           std::to_string(p.seqlen_k) + " keys per sequence");
    if (p.seqlen_new > 0) {
      check_no_self_overlap("k_cache", a.k_cache);  // the append writes it
      check_no_self_overlap("v_cache", a.v_cache);
    }
    p.k_new = a.k_new->data;
    p.v_new = a.v_new->data;
    p.kn_batch_stride = a.k_new->stride[0], p.kn_row_stride = a.k_new->stride[1], p.kn_head_stride = a.k_new->stride[2];
    p.vn_batch_stride = a.v_new->stride[0], p.vn_row_stride = a.v_new->stride[1], p.vn_head_stride = a.v_new->stride[2];
  }

  if (a.status) detail::check_status(*a.status);
  if (a.num_splits < 0 || a.num_splits > kMaxSplits)
    fail("num_splits = " + std::to_string(a.num_splits) + "; expected 0 (choose) to " + std::to_string(kMaxSplits));

  const CallViews views = call_views(a, p.seqlen_new > 0);
  detail::check_no_overlap(views.inputs, views.outputs);

  p.num_splits = a.num_splits;
  return p;
}

std::string unsupported_reason(const RegisteredDecode& r, const DecodeParams& p, const DecodeArgs& a) {
  const detail::DecodeVariant* v = r.impl;
  if (v == nullptr) return "not built (CMake option FLASH_VARIANTS)";
  if (std::string why = detail::feature_reason(v->features, p, p.lse != nullptr); !why.empty()) return why;
  const bool varlen = p.cu_seqlens_q != nullptr;
  if (varlen && !(v->features & kFeatureVarlen)) return "variable-length batches (cu_seqlens_q) are not supported";
  // Packed q and o: their row and head strides sit one dimension up.
  const TensorView q = varlen ? with_unit_batch(a.q) : a.q, o = varlen ? with_unit_batch(a.o) : a.o;
  const std::string why = detail::variant_reason(*v, p.dtype, p.head_dim,
                                                 {{"q", &q},
                                                  {"k_cache", &a.k_cache},
                                                  {"v_cache", &a.v_cache},
                                                  {"o", &o},
                                                  {"k_new", detail::view_or_null(a.k_new)},
                                                  {"v_new", detail::view_or_null(a.v_new)}});
  return varlen ? detail::packed_message(why, {"q", "o"}, false) : why;
}

struct Resolved {
  DecodeParams params;
  const RegisteredDecode* variant = nullptr;
  std::size_t workspace_bytes = 0;
};

Resolved resolve(const DecodeArgs& a) {
  Resolved out;
  out.params = check_args(a);
  DecodeParams& p = out.params;
  const auto& registry = detail::decode_registry();
  out.variant = &detail::pick_variant(
      registry, a.kernel, "decode ", [&](const RegisteredDecode& r) { return unsupported_reason(r, p, a); },
      [&](const RegisteredDecode& r) { return detail::device_reason(r, p, detail::current_device()); });
  const detail::DeviceInfo* dev = &detail::current_device();
  if (p.num_splits == 0) p.num_splits = out.variant->impl->choose_splits(p, *dev);
  p.pdl = dev->compute_capability >= 90;
  p.compute_capability = dev->compute_capability;
  p.sm_count = dev->sm_count;
  out.workspace_bytes = out.variant->impl->workspace_bytes(p);
  const CallViews views = call_views(a, p.seqlen_new > 0);
  detail::check_workspace_overlap(a.workspace, out.workspace_bytes, views.inputs, views.outputs);
  return out;
}

// describe_decode_status hands cu_seqlens_q's faults to the forward's words.
static_assert(detail::kDecodeCuSeqlensDecreasing - detail::kDecodeCuSeqlensNotFromZero ==
                      detail::kVarlenDecreasing - detail::kVarlenNotFromZero &&
                  detail::kDecodeCuSeqlensPastTotal - detail::kDecodeCuSeqlensNotFromZero ==
                      detail::kVarlenPastTotal - detail::kVarlenNotFromZero &&
                  detail::kDecodeQPastMax - detail::kDecodeCuSeqlensNotFromZero ==
                      detail::kVarlenPastMax - detail::kVarlenNotFromZero,
              "decode's cu_seqlens_q codes follow the forward's order");

std::string status_message(const int (&s)[4], const DecodeParams& p) {
  std::string msg = describe_decode_status(s);
  switch (s[0]) {
    case detail::kDecodeLengthPastEnd:
    case detail::kDecodeAppendPastEnd:
      msg += " (capacity " + std::to_string(p.seqlen_k) + " keys per sequence" +
             (p.seqlen_new > 0 ? ", appending " + std::to_string(p.seqlen_new) : std::string()) + ")";
      break;
    case detail::kDecodePageOutOfRange: msg += " (k_cache has " + std::to_string(p.num_pages) + " pages)"; break;
    case detail::kDecodeCuSeqlensPastTotal: msg += " (total_q = " + std::to_string(p.total_q) + ")"; break;
    case detail::kDecodeQPastMax: msg += " = " + std::to_string(p.seqlen_q); break;
    default: break;
  }
  return msg + "; nothing was written";
}

}  // namespace

std::string describe_decode_status(const int (&s)[4]) {
  const std::string entry = "cache_seqlens[" + std::to_string(s[1]) + "] = " + std::to_string(s[3]);
  switch (s[0]) {
    case detail::kDecodeOk: return {};
    case detail::kDecodeNegativeLength: return entry + " is negative";
    case detail::kDecodeLengthPastEnd: return entry + " exceeds the cache capacity";
    case detail::kDecodeAppendPastEnd: return entry + ": appending k_new past the end of the cache";
    case detail::kDecodePageOutOfRange:
      return "page_table[" + std::to_string(s[1]) + "][" + std::to_string(s[2]) + "] = " + std::to_string(s[3]) +
             " is not a page of k_cache";
    case detail::kDecodeCuSeqlensNotFromZero:
    case detail::kDecodeCuSeqlensDecreasing:
    case detail::kDecodeCuSeqlensPastTotal:
    case detail::kDecodeQPastMax: {
      // The forward's words for cu_seqlens_q (common/varlen.h): its codes
      // 1-4 in the same order, array 0.
      const int varlen[4] = {s[0] - detail::kDecodeCuSeqlensNotFromZero + detail::kVarlenNotFromZero, 0, s[1], s[3]};
      return detail::describe_varlen_status(varlen, detail::AttnParams{});
    }
    default: return "unknown decode status " + std::to_string(s[0]);
  }
}

DecodePlan plan_decode(const DecodeArgs& args) {
  const Resolved r = resolve(args);
  return DecodePlan{std::string(r.variant->name), r.params.num_splits, r.workspace_bytes};
}

void attention_decode(const DecodeArgs& args) {
  Resolved r = resolve(args);
  DecodeParams& p = r.params;
  if (p.batch == 0) return;  // nothing to check, append or compute
  const cudaStream_t stream = reinterpret_cast<cudaStream_t>(args.stream);
  detail::check_stream_device(stream);
  if (args.sync_check) detail::check_sync_check_allowed(stream);
  // Held until the status words' copy is enqueued (read_status_back), before
  // any later call on this stream can rewrite them.
  detail::WorkspaceLease workspace = detail::call_workspace(
      args.workspace, args.workspace_bytes, r.workspace_bytes, "plan_decode", detail::current_device().device, stream);
  p.status = args.status ? static_cast<int*>(args.status->data) : static_cast<int*>(workspace.get());
  detail::check_cuda(r.variant->impl->run(p, workspace.get(), stream),
                     "decode kernel '" + std::string(r.variant->name) + "' launch");
  if (!args.sync_check) return;
  int status[4] = {};
  detail::read_status_back(status, p.status, stream, workspace, "decode");
  if (status[0] != detail::kDecodeOk) fail(status_message(status, p));
}

}  // namespace flash
