// KV-cache building blocks of the decode kernels: cache addressing
// (contiguous or paged), the metadata check and the append (kv_cache.cu),
// (the combine of split-KV partial results is in dec_01_splitkv).
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "common/decode_params.h"
#include "common/pdl.cuh"  // launch_after, wait_for_previous_kernel, let_next_kernel_start
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/scores.h"

namespace flash::detail {

// Element offset of key `pos` of sequence b, head h, in a cache with the
// given strides: through the page table when paged, else straight. The
// metadata check has already proven every page index it can meet in range.
__device__ __forceinline__ std::int64_t cache_row_offset(const DecodeParams& p, std::int64_t block_stride,
                                                         std::int64_t row_stride, std::int64_t head_stride, int b,
                                                         int h, int pos) {
  std::int64_t block = b;
  if (p.page_table != nullptr) {
    block = __ldg(p.page_table + b * p.page_table_stride + (pos >> p.page_shift));
    pos &= p.page_size - 1;
  }
  return block * block_stride + static_cast<std::int64_t>(pos) * row_stride + h * head_stride;
}

// Keys sequence b holds once the append is done.
__device__ __forceinline__ int total_keys(const DecodeParams& p, int b) {
  return __ldg(p.cache_seqlens + b * p.seqlens_stride) + p.seqlen_new;
}

// True when the metadata check found an error: every writing kernel returns
// before its first store, so a bad call writes nothing.
__device__ __forceinline__ bool metadata_failed(const DecodeParams& p) {
  return *reinterpret_cast<const volatile int*>(p.status) != kDecodeOk;
}

// Host launchers (kv_cache.cu).
cudaError_t launch_check_metadata(const DecodeParams& p, cudaStream_t stream);
cudaError_t launch_append_kv(const DecodeParams& p, cudaStream_t stream);

}  // namespace flash::detail
