// flash::attention_decode: a few new query tokens per sequence attending to a
// KV cache (serving), with an optional append of the new keys and values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "flash/forward.h"
#include "flash/tensor.h"

namespace flash {

// Empty calls: batch 0 launches and writes nothing; seqlen_q 0 (or
// max_seqlen_q 0) runs the metadata check and the append only. A sequence
// with no key (cache_seqlens[b] + seqlen_new = 0) gets O = 0 and LSE = -inf
// (the sink, with sinks). Empty calls are validated like any other and need
// a current device.
struct DecodeArgs {
  // [batch, seqlen_q, heads_q, head_dim]: the new tokens' queries (seqlen_q
  // from 1 to a few, e.g. speculative tokens), or packed [total_q, heads_q,
  // head_dim] with cu_seqlens_q (below). Limits of the kernels' int grids:
  // seqlen_q (max_seqlen_q) * heads_q / heads_kv (the rows of one KV head)
  // at most 134217712 (16-row blocks times up to 256 splits in 2^31 - 1
  // CTAs), and batch * heads_q * seqlen_q (total_q * heads_q) at most
  // 2^31 - 1; beyond, a flash::Error.
  TensorView q;
  // The KV cache, same dtype as q. Contiguous: [batch, capacity, heads_kv,
  // head_dim]. Paged (page_table set): [num_pages, page_size, heads_kv,
  // head_dim], page_size a power of two from 1 to 2^30 (the kernels look up
  // each key's page on its own, so any power of two works; the GPU tests
  // cover 16 to 256). Another page_size is a flash::Error. Rows past a
  // sequence's keys (cache_seqlens[b] + seqlen_new) may hold anything, NaN
  // included: they do not reach the result.
  TensorView k_cache;
  TensorView v_cache;
  // Paged cache only: int32 [batch, max_pages_per_seq]; entry p of sequence b
  // is the page holding its keys [p * page_size, (p + 1) * page_size). Only
  // the entries a sequence's length reaches are read (the rest may be
  // anything, e.g. -1).
  std::optional<TensorView> page_table;
  // int32 [batch], on the device: keys already in each sequence's cache.
  TensorView cache_seqlens;
  // Optional, both or neither: [batch, seqlen_new, heads_kv, head_dim]. Written
  // into the cache at positions cache_seqlens[b] .. + seqlen_new - 1 before
  // the attention, which then sees cache_seqlens[b] + seqlen_new keys.
  // cache_seqlens itself is not changed (as flash_attn_with_kvcache).
  std::optional<TensorView> k_new;
  std::optional<TensorView> v_new;
  // Output: [batch, seqlen_q, heads_q, head_dim] (packed [total_q, heads_q,
  // head_dim] with cu_seqlens_q), same dtype as q.
  //
  // Outputs are o, lse, status and, when k_new / v_new append at least one
  // token, k_cache and v_cache; they may not overlap each other or any input
  // (q, k_new, v_new, cache_seqlens, page_table, cu_seqlens_q, and the
  // caches when nothing is appended); see flash/forward.h. K and V pages
  // interleaved in one buffer share no byte and are fine.
  TensorView o;
  // Optional fp32 [batch, heads_q, seqlen_q] ([heads_q, total_q] with
  // cu_seqlens_q), natural log; -inf (with O = 0) for rows that see no key
  // (sinks[h] with sinks).
  std::optional<TensorView> lse;
  // Defaults to 1 / sqrt(head_dim). Finite and > 0, as
  // ForwardArgs::softmax_scale.
  std::optional<float> softmax_scale;
  // Bottom-right causal mask over the new tokens: query i of L keys in all
  // sees key j iff j <= i + L - seqlen_q.
  bool causal = false;
  // Sliding window over the L keys of each sequence, as
  // ForwardArgs::window_left with seqlen_k = L: only the keys inside it are
  // read.
  int window_left = -1;
  int window_right = -1;
  // Score modifiers, as ForwardArgs::softcap, alibi_slopes and sinks (query
  // i of the seqlen_q new tokens sits at position i + L - seqlen_q for
  // ALiBi's distance; a row that sees no key gets LSE = sinks[h]).
  float softcap = 0.0f;
  std::optional<TensorView> alibi_slopes;
  std::optional<TensorView> sinks;
  // Splits of each sequence's keys (flash-decoding), in whole 64-key tiles:
  // 0 lets a heuristic fill the GPU from the SM count, batch, heads and
  // cache capacity; 1 to 256 is taken as given (splits past a sequence's
  // last tile get no keys and cost a little). Others are a flash::Error.
  int num_splits = 0;
  Stream stream = nullptr;
  // A variant name from flash::decode_variants(), or "auto": the last one
  // that is built, supports the call and runs on this device.
  std::string kernel = "auto";
  // Optional caller-owned device workspace (the status words and the
  // splits' partial results), sized by plan_decode(); when null the
  // library's own (see "Workspace and threads" in flash/forward.h).
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  // Speculative decoding: a different number of new tokens per sequence
  // (FlashAttention 3/4's flash_attn_with_kvcache with cu_seqlens_q), set by
  // cu_seqlens_q, int32 [batch + 1] on the device (batch = its size - 1):
  // q and o are then packed [total_q, heads_q, head_dim] (rank 3, any
  // strides with a contiguous last dimension) and lse fp32 [heads_q,
  // total_q]; sequence b's new tokens are rows cu_seqlens_q[b] ..
  // cu_seqlens_q[b + 1] - 1 (from 0, non-decreasing, the last at most
  // total_q; rows past it are neither read nor written), each sequence at
  // most max_seqlen_q of them (0 to total_q; it sizes the grid). Their keys
  // are the cache's first cache_seqlens[b], which already hold the new
  // tokens' own keys and values, so causal is bottom-right per sequence:
  // token i of n sees the cached prefix and the new tokens up to itself (key
  // j iff j <= i + cache_seqlens[b] - n; with fewer keys than tokens the
  // first rows see none). Windows, the score modifiers (ALiBi's distance per
  // sequence, slopes [batch, heads_q] per sequence), GQA/MQA, paged or
  // contiguous caches and the splits work as in a dense call. k_new / v_new
  // are refused with cu_seqlens_q (FlashAttention 3 takes them packed with
  // cu_seqlens_k_new; not built here): write the new tokens' keys into the
  // cache first. Without cu_seqlens_q, max_seqlen_q is not read.
  std::optional<TensorView> cu_seqlens_q;
  int max_seqlen_q = 0;
  // The metadata (cache_seqlens, page_table, cu_seqlens_q) lives on the
  // device, so it is checked there, by a small kernel before any other: when
  // it is bad (a negative length, a length or append past the capacity, a
  // page index out of range, cu_seqlens_q not from 0, decreasing, past
  // total_q or a sequence longer than max_seqlen_q) no kernel writes
  // anything. With sync_check (the default) the call then waits for the
  // stream and throws flash::Error naming the entry.
  // Without it the call is fully asynchronous (CUDA graphs, serving loops);
  // bad metadata is then reported only through `status`, if given.
  bool sync_check = true;
  // Optional int32 [4] on the device: {code, batch index, page index or -1,
  // value} (cu_seqlens_q's faults: {code, its entry, -1, the value}), code 0
  // when the metadata was valid (see describe_decode_status).
  std::optional<TensorView> status;
};

struct DecodePlan {
  std::string kernel;
  int num_splits = 1;
  std::size_t workspace_bytes = 0;
};

// Validates the host-side arguments (shapes, dtypes, strides, alignment)
// against the chosen variant and device; launches nothing.
DecodePlan plan_decode(const DecodeArgs& args);

// Validates, then enqueues the metadata check, the append (if any), the
// split-KV attention and the combine on args.stream.
void attention_decode(const DecodeArgs& args);

// The message for a status read back from DecodeArgs::status (empty for code 0).
std::string describe_decode_status(const int (&status)[4]);

}  // namespace flash
