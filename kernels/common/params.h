// The params core: what every attention call is (the problem) and where its
// q/k/v/o/lse live (pointers and strides). FwdParams, BwdParams and
// DecodeParams extend it, as FlashAttention-2 chains its params structs, so
// an argument added here reaches forward, backward and decode at once.
// Passed by value (__grid_constant__); host-compilable: src/ fills it
// (src/validate.cpp: fill_attention_core), kernels/ read it.
#pragma once

#include <cstdint>

#include "common/constants.h"
#include "common/mask.h"
#include "flash/tensor.h"

namespace flash::detail {

// The score modifiers of one call (ForwardArgs::softcap, alibi_slopes,
// sinks): fp32 pointers into the caller's tensors, null when not given.
struct ScoreSpec {
  float softcap = 0.0f;  // 0: off
  const float* alibi = nullptr;  // slopes
  std::int64_t alibi_batch_stride = 0, alibi_head_stride = 0;  // batch stride 0: one slope per head
  const float* sinks = nullptr;  // one logit per query head
  std::int64_t sinks_stride = 0;
};

// Sizes, scale and mask of one call.
struct AttnProblem {
  int batch = 0;
  int seqlen_q = 0;
  int seqlen_k = 0;  // decode: the cache capacity; each sequence has its own length
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  int group_size = 1;  // heads_q / heads_kv: query heads per KV head

  float scale = 1.0f;       // softmax scale
  float scale_log2 = 1.0f;  // scale * log2(e): softmax in exp2
  ScoreSpec scores;
  // The units the kernels keep scores in, derived by derive_scores() (see
  // common/scores.h): raw q.k without a softcap, tanh(scale q.k / softcap)
  // with one. exp2 multiplies them by score_exp2; score_lse turns them into
  // natural-log units; softcap_in is scale / softcap.
  float score_exp2 = 1.0f;
  float score_lse = 1.0f;
  float softcap_in = 0.0f;
  MaskSpec mask;
  // Mask(mask, seqlen_q, seqlen_k), derived on the host by derive_mask() once
  // the sizes and the spec are final. Kernels read its fields as constant-bank
  // operands; deriving it in the kernel kept its sides, flags and diagonal in
  // registers across the key loop (bwd_02 at hdim 256: -5%, docs/NOTES.md).
  Mask call_mask;
  DType dtype = DType::bf16;

  void derive_mask() { call_mask = Mask(mask, seqlen_q, seqlen_k); }
  void derive_scores() {
    const bool cap = scores.softcap > 0.0f;
    softcap_in = cap ? scale / scores.softcap : 0.0f;
    score_lse = cap ? scores.softcap : scale;
    score_exp2 = static_cast<float>(static_cast<double>(score_lse) * kLog2e);
  }
  FLASH_HOST_DEVICE bool has_score_mods() const { return scores.softcap > 0.0f || scores.alibi != nullptr; }
};

// The attention tensors. Strides in elements; the head_dim stride is 1.
struct AttnParams : AttnProblem {
  const void* q = nullptr;
  const void* k = nullptr;  // decode: the cache, whose first dimension is the batch or the page
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // null when the caller asked for no LSE (the backward reads it: BwdParams)

  std::int64_t q_batch_stride = 0, q_row_stride = 0, q_head_stride = 0;
  std::int64_t k_batch_stride = 0, k_row_stride = 0, k_head_stride = 0;
  std::int64_t v_batch_stride = 0, v_row_stride = 0, v_head_stride = 0;
  std::int64_t o_batch_stride = 0, o_row_stride = 0, o_head_stride = 0;
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 0;

  // The device the call runs on, set by the dispatcher right before run().
  int compute_capability = 0;  // major * 10 + minor
  int sm_count = 0;

  // Variable-length batches (ForwardArgs::cu_seqlens_q): the packed rows of
  // each sequence; null for dense calls. seqlen_q and seqlen_k are then the
  // bounds max_seqlen_q / max_seqlen_k (the grid), each sequence has its own.
  const int* cu_seqlens_q = nullptr;
  const int* cu_seqlens_k = nullptr;
  const int* seqused_k = nullptr;
  int* status = nullptr;  // the device metadata check's 4 words (varlen calls)
  int total_q = 0, total_k = 0;  // rows of the packed tensors (varlen calls; the Hopper rungs' tensor maps)

  // Where sequence b lives: element offsets of its row 0 in q, k, v and o,
  // the LSE row of its row 0, and its lengths. Dense: b times the batch
  // strides and the call's lengths; variable-length: packed rows
  // cu_seqlens[b] on.
  struct SeqSpan {
    std::int64_t q, k, v, o;
    int lse_row0;
    int seqlen_q, seqlen_k;
  };
  FLASH_HOST_DEVICE SeqSpan seq_span(int b) const {
    if (cu_seqlens_q == nullptr)
      return {b * q_batch_stride, b * k_batch_stride, b * v_batch_stride, b * o_batch_stride, 0, seqlen_q, seqlen_k};
    const int q0 = cu_seqlens_q[b], k0 = cu_seqlens_k[b];
    const int sk = seqused_k != nullptr ? seqused_k[b] : cu_seqlens_k[b + 1] - k0;
    return {q0 * q_row_stride, k0 * k_row_stride, k0 * v_row_stride, q0 * o_row_stride, q0, cu_seqlens_q[b + 1] - q0, sk};
  }

  // The element offset of row `row` of head h of sequence b in the LSE.
  FLASH_HOST_DEVICE std::int64_t lse_offset(int b, int h, int row) const {
    return b * lse_batch_stride + h * lse_head_stride + row * lse_row_stride;
  }
  // The mask of a sequence with seqlen_q queries and seqlen_k keys (decode and
  // variable-length calls: one per sequence), and the one of the whole call.
  FLASH_HOST_DEVICE Mask mask_for(int seqlen_q_, int seqlen_k_) const { return Mask(mask, seqlen_q_, seqlen_k_); }
  FLASH_HOST_DEVICE const Mask& mask_for() const { return call_mask; }
};

// The forward needs nothing beyond the core (its workspace, if any, is run()'s
// argument).
struct FwdParams : AttnParams {};

}  // namespace flash::detail
