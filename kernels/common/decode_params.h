// DecodeParams and DecodeVariant: what a decode (KV-cache) kernel needs and
// what its translation unit tells the registry. Host-compilable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/params.h"
#include "common/variant.h"
#include "flash/tensor.h"

namespace flash::detail {

// Codes of the device-side metadata check (DecodeArgs::status[0]).
enum DecodeStatus : int {
  kDecodeOk = 0,
  kDecodeNegativeLength = 1,   // cache_seqlens[b] < 0
  kDecodeLengthPastEnd = 2,    // cache_seqlens[b] > capacity
  kDecodeAppendPastEnd = 3,    // cache_seqlens[b] + seqlen_new > capacity
  kDecodePageOutOfRange = 4,   // page_table[b][p] outside [0, num_pages)
  // Variable-length calls (DecodeArgs::cu_seqlens_q), the forward's rules
  // (common/varlen.h): status[1] is the entry of cu_seqlens_q (the sequence
  // for kDecodeQPastMax), status[2] -1, status[3] the value there (the
  // sequence's rows for kDecodeQPastMax).
  kDecodeCuSeqlensNotFromZero = 5,  // cu_seqlens_q[0] != 0
  kDecodeCuSeqlensDecreasing = 6,   // cu_seqlens_q[b + 1] < cu_seqlens_q[b]
  kDecodeCuSeqlensPastTotal = 7,    // cu_seqlens_q[batch] > total_q
  kDecodeQPastMax = 8,              // cu_seqlens_q[b + 1] - cu_seqlens_q[b] > max_seqlen_q
};

// AttnParams' k and v are the cache (k_batch_stride steps over its first
// dimension: the sequence, or the page of a paged cache, whose table is
// AttnParams' page fields); seqlen_k is the capacity of one sequence, each
// sequence's own length is cache_seqlens[b] (+ seqlen_new).
// Variable-length calls (AttnParams::cu_seqlens_q set; the kernels' kVarlen
// flag): q and o are packed rows with batch strides 0, sequence b's new
// tokens rows cu_seqlens_q[b] .. cu_seqlens_q[b + 1] - 1 of total_q, and
// seqlen_q is max_seqlen_q, the bound that sizes the grid.
struct DecodeParams : AttnParams {
  const void* k_new = nullptr;  // null: no append
  const void* v_new = nullptr;
  const int* cache_seqlens = nullptr;
  // AttnParams::status: 4 ints, written by the metadata check (0 first).

  std::int64_t kn_batch_stride = 0, kn_row_stride = 0, kn_head_stride = 0;
  std::int64_t vn_batch_stride = 0, vn_row_stride = 0, vn_head_stride = 0;
  std::int64_t seqlens_stride = 1;

  int seqlen_new = 0;
  // Chain the kernels with programmatic dependent launch (sm_90 and up).
  bool pdl = false;

  int num_splits = 1;
  // Split-KV partial results, partial_rows() per split: [num_splits][batch]
  // [heads_q][seqlen_q] rows, or [num_splits][heads_q][total_q] for a
  // variable-length call (a batch of one with total_q rows).
  float* lse_partial = nullptr;  // [num_splits][rows]
  float* o_partial = nullptr;    // [num_splits][rows][head_dim]

  // The cache, written by the append (an input of the attention after it).
  FLASH_HOST_DEVICE void* k_cache() const { return const_cast<void*>(k); }
  FLASH_HOST_DEVICE void* v_cache() const { return const_cast<void*>(v); }

  // Rows of one split's partial results (lse_partial, o_partial).
  template <bool kVarlen> FLASH_HOST_DEVICE std::int64_t partial_rows() const {
    if constexpr (kVarlen) return static_cast<std::int64_t>(heads_q) * total_q;
    else return static_cast<std::int64_t>(batch) * heads_q * seqlen_q;
  }
  std::int64_t partial_rows() const { return cu_seqlens_q != nullptr ? partial_rows<true>() : partial_rows<false>(); }
};

using DecodeVariant = Variant<DecodeParams>;

}  // namespace flash::detail
