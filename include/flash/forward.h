// flash::attention_forward: O = softmax(scale * Q K^T [+ causal mask]) V.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "flash/tensor.h"

struct CUstream_st;

namespace flash {

// The same type as cudaStream_t, without including the CUDA headers:
// these headers compile in a plain C++ translation unit.
using Stream = CUstream_st*;

// Workspace and threads (forward, backward and decode alike). A call may
// need device scratch memory: plan_*().workspace_bytes. With `workspace`
// null the library supplies it from one buffer per (device, stream), which
// a call holds from before its first kernel is enqueued until its last is,
// so any number of host threads may call on one stream or on many. Warm, a
// call allocates nothing and does not synchronize, but for sync_check: a
// call with device metadata (cu_seqlens, seqused_k, page_table; decode's
// cache_seqlens) and sync_check = true (the default) waits for its stream,
// and while that stream is being captured it throws flash::Error naming
// sync_check before it enqueues anything: capture with sync_check = false.
// A buffer too small for a call is replaced by a new one of at least twice
// its size (memory permitting), and the old one is never freed:
// work already queued, or a CUDA graph captured with it, may still read it.
// So a stream's retired buffers add up to less than its current one; all
// of them live until the process exits. While the stream is being captured
// into a CUDA graph the buffer cannot grow, and a call that would need it
// to throws flash::Error: make the same call once before the capture, or
// pass a workspace. A graph captured with the library's buffer reads that
// stream's buffer: replay it on the stream it was captured on, and not while
// another thread makes a call on that stream (a call's launches share the
// buffer and a replay is not ordered between them: order the two yourself,
// or capture with a workspace of your own; the same holds for a call
// captured on a stream forked from the one the graph is launched on).
// Buffers are found by stream handle, and CUDA may give a new stream the
// handle of a destroyed one: let a stream's work finish before destroying
// it. A call runs on the current device, and its stream must be that
// device's (else flash::Error naming the stream, with CUDA 12.8 or newer);
// a null stream is the legacy default stream whatever the caller was
// compiled with (pass cudaStreamPerThread for the per-thread one).
// A caller's `workspace` must be at least workspace_bytes long (longer is
// fine; the call uses the first workspace_bytes) and 256-byte aligned (as
// cudaMalloc returns), else flash::Error before anything is launched; no
// other call may use it while this one's kernels may run.
//
// Outputs and inputs (forward, backward and decode alike): an output may
// not share a byte of memory with an input or with another output, and
// such a call throws flash::Error ("o overlaps q: ...") before anything is
// written. Inputs may share memory (k and v may even be one view). The check
// is exact, from each view's pointer, dtype, shape and strides: views that
// interleave without sharing a byte are fine, e.g. q, k, v and o as four
// parts of one [batch, seqlen, 4, heads, head_dim] buffer. Views whose
// strides interleave too intricately for the check to decide within a fixed
// amount of work are rejected as "may overlap"; the layouts in use (separate
// buffers, packed qkv or kv, BSHD or BHSD) are decided in a few steps.
//
// Empty calls: batch 0 or seqlen_q 0 launch and write nothing; seqlen_k 0
// writes O = 0 and LSE = -inf (sinks[h] with sinks). They are validated like any other call, and
// the variant is chosen for the current device (so one is needed).
//
// Limits (forward, backward and decode alike): batch (the sequences of a
// variable-length call) and heads_q are at most 65535 each, the grid's y and
// z limits; a larger call throws flash::Error naming the one it exceeds
// ("... batch = 70000 exceeds the grid limit of 65535"). Split such a call.
struct ForwardArgs {
  // [batch, seqlen_q, heads_q, head_dim]
  TensorView q;
  // [batch, seqlen_k, heads_kv, head_dim]; heads_q must be a multiple of heads_kv (GQA/MQA).
  TensorView k;
  TensorView v;
  // Output: [batch, seqlen_q, heads_q, head_dim], same dtype as q. It and
  // lse may not overlap q, k, v or each other.
  TensorView o;
  // Optional output: the log-sum-exp of each row of scale * Q K^T (natural
  // log), fp32, [batch, heads_q, seqlen_q]. Rows that see no key (seqlen_k
  // 0, or fully masked by the mask) get O = 0 and LSE = -inf (sinks[h]
  // with sinks, whose logit the LSE includes).
  std::optional<TensorView> lse;
  // Defaults to 1 / sqrt(head_dim). Must be finite and > 0 (the kernels take
  // each row's maximum of the unscaled scores): 0, negative, NaN and inf
  // are a flash::Error.
  std::optional<float> softmax_scale;
  // Causal mask aligned to the bottom-right corner: query i sees key j iff
  // j <= i + seqlen_k - seqlen_q (FlashAttention >= 2.1).
  bool causal = false;
  // Sliding window (FlashAttention's window_size = (window_left,
  // window_right)): query i sees key j iff
  //   i + seqlen_k - seqlen_q - window_left <= j <= i + seqlen_k - seqlen_q + window_right,
  // -1 leaving that side unbounded. causal is window_right = 0 (causal with
  // window_right > 0 is a flash::Error); values below -1 are one too. Key
  // tiles wholly outside the window are skipped, not computed and masked;
  // rows that see no key get O = 0 and LSE = -inf (or the sink).
  int window_left = -1;
  int window_right = -1;
  // Score modifiers (FlashAttention's semantics, so that users can switch).
  // The score of query i and key j is s = softmax_scale * q_i . k_j; then
  //   softcap > 0:   s = softcap * tanh(s / softcap)           (Gemma 2, Grok)
  //   alibi_slopes:  s -= slope * |i + seqlen_k - seqlen_q - j| (BLOOM, MPT)
  // then the mask, then the softmax, whose denominator has one more term,
  // exp(sinks[h]), when sinks are given (gpt-oss): a logit per query head
  // that carries no value. The LSE includes the sink, so a row that sees no
  // key gets O = 0 and LSE = sinks[h] (-inf without sinks).
  // softcap: 0 (off) or finite and > 0.
  float softcap = 0.0f;
  // Optional fp32 [heads_q] (one slope per query head) or [batch, heads_q].
  std::optional<TensorView> alibi_slopes;
  // Optional fp32 [heads_q]; a sink of -inf is no sink.
  std::optional<TensorView> sinks;
  // Variable-length batch (FlashAttention's flash_attn_varlen_func), set by
  // cu_seqlens_q: q and o are then packed [total_q, heads_q, head_dim] and k,
  // v [total_k, heads_kv, head_dim] (rank 3, any strides with a contiguous
  // last dimension); sequence b's queries are rows cu_seqlens_q[b] ..
  // cu_seqlens_q[b + 1] - 1 and its keys rows cu_seqlens_k[b] ..
  // cu_seqlens_k[b + 1] - 1 (the first seqused_k[b] of them when given).
  // int32 [batch + 1] on the device, starting at 0, non-decreasing, the last
  // at most total_q (total_k). The mask (causal bottom-right, window) and
  // ALiBi's distance apply per sequence. lse is packed fp32 [heads_q,
  // total_q]. max_seqlen_q and max_seqlen_k bound the lengths (the grid is
  // sized by them; a longer sequence, or seqused_k entry, is reported as bad
  // metadata); a dense call does not read them.
  std::optional<TensorView> cu_seqlens_q;
  std::optional<TensorView> cu_seqlens_k;
  // Optional int32 [batch] on the device (FlashAttention's seqused_k,
  // flash_attn_with_kvcache's cache_seqlens): the keys of each sequence, with
  // any call of a variant with kFeatureVarlen (tiled, mma_pipeline and the
  // Hopper rungs; the teaching rungs between them refuse it):
  // sequence b attends its first seqused_k[b] keys, which must lie in
  // [0, the keys it has]: its cu_seqlens_k length, k.shape[1] for a dense
  // call, max_pages * page_size with a page table. The mask and ALiBi's
  // distance take that length as the sequence's seqlen_k (causal: the last
  // query row sees the last attended key).
  std::optional<TensorView> seqused_k;
  // Paged KV cache (prefill of a chunk against a serving engine's cache;
  // FlashAttention's flash_attn_with_kvcache block_table, FA4's page_table):
  // int32 [batch, max_pages] on the device (a contiguous last dimension, any
  // stride between sequences), and k and v are then the cache's pages
  // [num_pages, page_size, heads_kv, head_dim] (any strides the dense API
  // accepts, head_dim stride 1), page_size a power of two from 16 to 2^30.
  // Key j of sequence b lives in page page_table[b][j / page_size], row j %
  // page_size. The keys of sequence b:
  //   dense q (rank 4, batch = q.shape[0]): seqused_k[b] when given, else
  //     every key the table holds, max_pages * page_size (as
  //     flash_attn_with_kvcache with cache_seqlens None);
  //   packed q (cu_seqlens_q): seqused_k[b], which is then required, and
  //     cu_seqlens_k must be unset (FA4's rule); max_seqlen_k bounds them.
  // Causal is bottom-right per sequence, so a chunk of seqlen_q queries at
  // the end of its sequence attends its cached prefix plus itself. Only the
  // entries that a sequence's keys reach are read (the rest may be anything,
  // e.g. -1); those must be pages of k, in [0, num_pages). Every mask and
  // score modifier, GQA/MQA and the LSE work as in a dense call. The
  // variants with kFeaturePaged take it (tiled, mma_pipeline,
  // wgmma_persistent and wgmma_window, which auto picks on sm_90); the others
  // refuse the call.
  std::optional<TensorView> page_table;
  int max_seqlen_q = 0;
  int max_seqlen_k = 0;
  // The metadata above (cu_seqlens_q, cu_seqlens_k, seqused_k, page_table)
  // lives on the device, so a small kernel checks it first, before anything
  // is written (cu_seqlens from 0 and non-decreasing, the last within the
  // packed rows; each length within its bound; each page index reached in
  // range), and when it is bad no kernel writes anything. As DecodeArgs'
  // (see flash/decode.h): with sync_check (the default) the call then waits
  // for the stream and throws flash::Error naming the entry, e.g.
  // "page_table[1][0] = 1000 is not a page of k (k has 19 pages); nothing
  // was written"; without it the call is asynchronous and an int32 status[4]
  // on the device, when given, receives {code, array or sequence, index,
  // value}, code 0 when the metadata was valid. A call without such
  // metadata ignores both. With cu_seqlens_q the same kernel also ranks the
  // sequences (longest first, the order the Hopper rungs schedule them in;
  // calls of up to 4096 sequences) into the call's workspace: 32 KB of
  // plan_forward()'s workspace_bytes, whatever the batch.
  bool sync_check = true;
  std::optional<TensorView> status;
  Stream stream = nullptr;
  // A variant name from flash::forward_variants(), or "auto": the last
  // variant in that (ladder) order that is built, supports the call and runs
  // on this device (see flash/variants.h for how that relates to speed).
  std::string kernel = "auto";
  // Optional caller-owned device workspace, sized by plan_forward(); when
  // null the library's own (see "Workspace and threads" above).
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// What attention_forward would run: the variant and the workspace it needs.
struct ForwardPlan {
  std::string kernel;
  std::size_t workspace_bytes = 0;
};

// Validates the call against the chosen variant and the current device and
// launches nothing. Throws flash::Error on any invalid argument.
ForwardPlan plan_forward(const ForwardArgs& args);

// Validates, then launches on args.stream (asynchronously). Throws
// flash::Error on invalid arguments (before anything is written) and on
// CUDA launch errors.
void attention_forward(const ForwardArgs& args);

}  // namespace flash
