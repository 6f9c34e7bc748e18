// DecodeParams and DecodeVariant: what a decode (KV-cache) kernel needs and
// what its translation unit tells the registry. Host-compilable.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

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
};

struct DecodeParams {
  const void* q = nullptr;
  void* k_cache = nullptr;
  void* v_cache = nullptr;
  const void* k_new = nullptr;  // null: no append
  const void* v_new = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // null: not requested
  const int* page_table = nullptr;  // null: contiguous cache
  const int* cache_seqlens = nullptr;
  int* status = nullptr;  // 4 ints, written by the metadata check (0 first)

  // Strides in elements (head_dim stride is 1). The cache's first dimension
  // is the batch (contiguous) or the page (paged).
  std::int64_t q_batch_stride = 0, q_row_stride = 0, q_head_stride = 0;
  std::int64_t kc_block_stride = 0, kc_row_stride = 0, kc_head_stride = 0;
  std::int64_t vc_block_stride = 0, vc_row_stride = 0, vc_head_stride = 0;
  std::int64_t kn_batch_stride = 0, kn_row_stride = 0, kn_head_stride = 0;
  std::int64_t vn_batch_stride = 0, vn_row_stride = 0, vn_head_stride = 0;
  std::int64_t o_batch_stride = 0, o_row_stride = 0, o_head_stride = 0;
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 0;
  std::int64_t page_table_stride = 0;  // between sequences
  std::int64_t seqlens_stride = 1;

  int batch = 0;
  int seqlen_q = 0;
  int seqlen_new = 0;
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  int group_size = 1;
  int capacity = 0;    // keys one sequence can hold: cache rows, or max_pages * page_size
  int page_size = 0;   // 0: contiguous
  int page_shift = 0;  // log2(page_size)
  int num_pages = 0;
  int max_pages = 0;   // page-table entries per sequence

  float scale = 1.0f;
  float scale_log2 = 1.0f;
  bool causal = false;
  DType dtype = DType::bf16;

  // Chain the kernels with programmatic dependent launch (sm_90 and up).
  bool pdl = false;

  int num_splits = 1;
  float* lse_partial = nullptr;  // [num_splits][batch][heads_q][seqlen_q]
  float* o_partial = nullptr;    // [num_splits][batch][heads_q][seqlen_q][head_dim]
};

struct DecodeVariant {
  int min_compute_capability = 80;
  int max_compute_capability = 0;
  std::uint32_t dtype_mask = 0;
  const int* head_dims = nullptr;
  int num_head_dims = 0;
  int alignment = 16;
  // Empty when the call can run on this device, else why not.
  std::string (*check)(const DecodeParams&, const DeviceInfo&) = nullptr;
  // The number of splits for num_splits = 0 (a heuristic).
  int (*choose_splits)(const DecodeParams&, const DeviceInfo&) = nullptr;
  // Scratch in bytes for p.num_splits splits (the status words included).
  std::size_t (*workspace_bytes)(const DecodeParams&) = nullptr;
  // Enqueues everything: the metadata check (which sets the status words),
  // the append, the attention and the combine. `workspace` is
  // workspace_bytes() long and 256-byte aligned.
  cudaError_t (*run)(DecodeParams, void* workspace, cudaStream_t) = nullptr;
};

}  // namespace flash::detail
