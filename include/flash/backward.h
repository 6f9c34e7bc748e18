// flash::attention_backward: the gradients of attention.
//
// Given the forward's inputs, its output O and log-sum-exp, and dO = dL/dO,
// computes dQ, dK and dV. The forward is recomputed tile by tile (P from Q,
// K and the LSE), so no N x N matrix is ever stored:
//   P = exp(scale * Q K^T - LSE)      dV = P^T dO
//   dP = dO V^T                       dS = P * (dP - rowsum(dO * O))
//   dQ = scale * dS K                 dK = scale * dS^T Q
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "flash/forward.h"
#include "flash/tensor.h"

namespace flash {

// Empty calls: batch 0 writes nothing but dsinks = 0 (when given); seqlen_k
// 0 writes dq = 0, seqlen_q 0 writes dk = dv = 0 (and dsinks = 0 in both).
// As for the forward, they are validated like any other call and need a
// current device. In a variable-length call (cu_seqlens_q) the same holds
// per sequence: a sequence without keys gets dq = 0, one without queries
// dk = dv = 0.
struct BackwardArgs {
  // The forward's inputs: q [batch, seqlen_q, heads_q, head_dim]; k and v
  // [batch, seqlen_k, heads_kv, head_dim], heads_q a multiple of heads_kv.
  TensorView q;
  TensorView k;
  TensorView v;
  // The forward's output [batch, seqlen_q, heads_q, head_dim] and its LSE,
  // fp32 [batch, heads_q, seqlen_q] (ForwardArgs::lse; -inf, or the sink,
  // for rows that see no key, which get dQ = 0).
  TensorView o;
  TensorView lse;
  // The incoming gradient dL/dO, shaped like o.
  TensorView dout;
  // Outputs, in the dtype of q: dq shaped like q, dk and dv like k. With
  // GQA/MQA, dk and dv sum over the query heads that share a KV head. They
  // may not overlap each other or any input (q, k, v, o, lse, dout); see
  // flash/forward.h. Interleaved views into one [batch, seqlen, 3, heads,
  // head_dim] buffer (FlashAttention's qkv-packed backward) share no byte
  // and are fine.
  TensorView dq;
  TensorView dk;
  TensorView dv;
  // The forward's scale; defaults to 1 / sqrt(head_dim). Finite and > 0, as
  // ForwardArgs::softmax_scale.
  std::optional<float> softmax_scale;
  // The forward's bottom-right causal mask and sliding window (see
  // ForwardArgs::window_left).
  bool causal = false;
  int window_left = -1;
  int window_right = -1;
  // The forward's score modifiers (see ForwardArgs::softcap). With a softcap,
  // dS carries the cap's derivative, 1 - tanh^2.
  float softcap = 0.0f;
  std::optional<TensorView> alibi_slopes;
  std::optional<TensorView> sinks;
  // Optional output, only with sinks: fp32 [heads_q], dL/dsinks[h] =
  // -sum over the batch and the rows of head h of exp(sinks[h] - LSE) *
  // rowsum(dO * O). Overwritten, not accumulated into; bit-identical from
  // run to run in either mode (a fixed-order sum per head, no atomics). It
  // may not overlap any input or dq, dk, dv.
  std::optional<TensorView> dsinks;
  // true: dq, dk and dv are bit-identical from run to run (no floating-point
  // atomics); may be slower. Only variants with kFeatureDeterministic take
  // it (tiled, mma and wgmma): "auto" picks among those, and a named variant
  // without it throws flash::Error.
  bool deterministic = false;
  // Variable-length batch (FlashAttention's flash_attn_varlen_func
  // backward), set by cu_seqlens_q, with ForwardArgs' meaning: q, o, dout and
  // dq are packed [total_q, heads_q, head_dim], k, v, dk and dv [total_k,
  // heads_kv, head_dim] (rank 3, any strides with a contiguous last
  // dimension), lse is packed fp32 [heads_q, total_q]; sequence b's queries
  // are rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 and its keys rows
  // cu_seqlens_k[b] .. cu_seqlens_k[b + 1] - 1, of which it attends the
  // first seqused_k[b] when given. The mask (causal bottom-right, window)
  // and ALiBi's distance apply per sequence, [batch, heads_q] ALiBi slopes
  // per sequence (batch = cu_seqlens_q.shape[0] - 1); dsinks sums over
  // every sequence. dk and dv are written on every key row of every sequence:
  // zeros on the rows past seqused_k[b] (as FlashAttention). Rows past
  // cu_seqlens_q[batch] (cu_seqlens_k[batch]) of the packed gradients are
  // not written. max_seqlen_q / max_seqlen_k bound the lengths (the grids
  // are sized by them; a longer sequence is reported as bad metadata). The
  // metadata is checked on the device before anything is written, as
  // ForwardArgs' is (sync_check, status: see flash/decode.h); with bad
  // metadata nothing is written, dsinks included.
  std::optional<TensorView> cu_seqlens_q;
  std::optional<TensorView> cu_seqlens_k;
  std::optional<TensorView> seqused_k;
  int max_seqlen_q = 0;
  int max_seqlen_k = 0;
  bool sync_check = true;
  std::optional<TensorView> status;
  Stream stream = nullptr;
  // A variant name from flash::backward_variants(), or "auto": the last
  // variant in that (ladder) order that is built, supports the call and runs
  // on this device.
  std::string kernel = "auto";
  // Optional caller-owned device workspace (rowsum(dO * O), the LSE in log2
  // units, the fp32 dQ accumulator (mma only when not deterministic; wgmma
  // always, plus a counter per 64-row dQ tile when deterministic, and in
  // dense calls whose window spans few keys, which wgmma sums in the
  // deterministic order for speed at hdims 128 and 256); a
  // variable-length call's order of its sequences, 32 KB whatever the batch,
  // and its status words unless `status` is given), sized by
  // plan_backward(); when null the library's own (see "Workspace and
  // threads" in flash/forward.h).
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

struct BackwardPlan {
  std::string kernel;
  std::size_t workspace_bytes = 0;
};

// Validates the call against the chosen variant and the current device and
// launches nothing. Throws flash::Error on any invalid argument.
BackwardPlan plan_backward(const BackwardArgs& args);

// Validates, then launches on args.stream (asynchronously). Throws
// flash::Error on invalid arguments (before anything is written) and on
// CUDA launch errors.
void attention_backward(const BackwardArgs& args);

}  // namespace flash
