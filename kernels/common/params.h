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

// How the forward's kernels find each sequence's rows and lengths (a
// template flag of the kernels that take per-sequence metadata, so that
// dense calls keep their code): dense, the call's lengths at the batch
// strides; per_sequence, seq_span(b) (cu_seqlens_q / cu_seqlens_k /
// seqused_k); paged, seq_span(b) with K/V rows through the page table.
enum class SeqLayout : int { dense, per_sequence, paged };

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

  // Per-sequence metadata of the forward, on the device (null when not
  // given). Variable-length batches (ForwardArgs::cu_seqlens_q): the packed
  // rows of each sequence; seqlen_q and seqlen_k are then the bounds
  // max_seqlen_q / max_seqlen_k (the grid), each sequence has its own.
  // seqused_k: the keys of each sequence (any forward call).
  const int* cu_seqlens_q = nullptr;
  const int* cu_seqlens_k = nullptr;
  const int* seqused_k = nullptr;
  int* status = nullptr;  // the device metadata check's 4 words (calls with metadata; decode's own check)
  // Packed-query calls (cu_seqlens_q), from the forward's and backward's
  // dispatch: the metadata check writes here the order in which the Hopper
  // rungs schedule the sequences, longest first within each group of 32
  // (check_varlen_metadata): entry r, two ints, is {sequence, its query
  // rows}. Longest: most keys (seqused_k / cu_seqlens_k; a forward tile
  // costs its keys) or, with seq_order_by_queries, most queries (a backward
  // key block walks them). Null: the caller's order (calls of more than
  // kVarlenOrderMaxSequences sequences, common/varlen.h, and direct launches).
  int* seq_order = nullptr;
  bool seq_order_by_queries = false;
  int total_q = 0, total_k = 0;  // rows of the packed tensors (varlen calls; the Hopper rungs' tensor maps)

  // A paged KV cache (ForwardArgs::page_table, DecodeArgs::page_table): k
  // and v are pages [num_pages, page_size, heads_kv, head_dim], the batch
  // strides step over pages, and key j of sequence b lives in page
  // page_table[b * page_table_stride + (j >> page_shift)], row j &
  // (page_size - 1). Null: contiguous K/V. seqlen_k is then the table's
  // capacity, max_pages * page_size (a variable-length forward: max_seqlen_k).
  const int* page_table = nullptr;
  std::int64_t page_table_stride = 0;  // between sequences
  int page_size = 0;   // a power of two; 0: not paged
  int page_shift = 0;  // log2(page_size)
  int num_pages = 0;
  int max_pages = 0;   // page-table entries per sequence

  // Page-table entries that keys [0, keys) reach.
  FLASH_HOST_DEVICE int pages_for(int keys) const {
    return static_cast<int>((static_cast<std::int64_t>(keys) + page_size - 1) >> page_shift);
  }
  // How the forward's kernels find each sequence (template flag SeqLayout).
  FLASH_HOST_DEVICE SeqLayout seq_layout() const {
    if (page_table != nullptr) return SeqLayout::paged;
    return cu_seqlens_q != nullptr || seqused_k != nullptr ? SeqLayout::per_sequence : SeqLayout::dense;
  }

  // Where sequence b lives: element offsets of its row 0 in q, k, v and o,
  // the LSE row of its row 0, and its lengths. Queries: b times the batch
  // strides (dense) or packed rows cu_seqlens_q[b] on. Keys: the same with
  // cu_seqlens_k, or offset 0 when paged (each row through the page table);
  // seqused_k[b] keys when given, else the packed sequence's or the call's
  // seqlen_k (paged: the table's capacity).
  struct SeqSpan {
    std::int64_t q, k, v, o;
    int lse_row0;
    int seqlen_q, seqlen_k;
  };
  FLASH_HOST_DEVICE SeqSpan seq_span(int b) const {
    SeqSpan s{b * q_batch_stride, b * k_batch_stride, b * v_batch_stride, b * o_batch_stride, 0, seqlen_q, seqlen_k};
    if (cu_seqlens_q != nullptr) {
      const int q0 = cu_seqlens_q[b];
      s.q = q0 * q_row_stride, s.o = q0 * o_row_stride, s.lse_row0 = q0, s.seqlen_q = cu_seqlens_q[b + 1] - q0;
    }
    if (page_table != nullptr) {
      s.k = s.v = 0;
    } else if (cu_seqlens_k != nullptr) {
      const int k0 = cu_seqlens_k[b];
      s.k = k0 * k_row_stride, s.v = k0 * v_row_stride, s.seqlen_k = cu_seqlens_k[b + 1] - k0;
    }
    if (seqused_k != nullptr) s.seqlen_k = seqused_k[b];
    return s;
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
struct FwdParams : AttnParams {
  // The Hopper frame's causal tile counter (Fa3DynamicScheduler): one int in
  // the call's workspace, zeroed on the stream before the kernel.
  int* tile_counter = nullptr;
};

}  // namespace flash::detail
