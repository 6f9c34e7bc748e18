// KV-cache building blocks of the decode kernels: cache addressing
// (contiguous or paged), the metadata check and the append (kv_cache.cu),
// and the combine of split-KV partial results.
#pragma once

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>

#include "common/decode_params.h"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"

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

// Combine (flash-decoding): each split s left O_s (normalized over its keys)
// and LSE_s; the row's LSE is logsumexp_s LSE_s and O = sum_s exp(LSE_s -
// LSE) O_s. One warp per (batch, head, query) row, each lane kHeadDim / 32
// columns; splits with no key (LSE_s = -inf) are skipped, so their O_s is
// never read.
template <class T, int kHeadDim>
__global__ void __launch_bounds__(128) combine_splits_kernel(const __grid_constant__ DecodeParams p) {
  constexpr int kCols = kHeadDim / 32;
  static_assert(kCols == 2 || kCols % 4 == 0, "lanes read float2 or float4 groups");
  if (metadata_failed(p)) return;
  const int rows = p.batch * p.heads_q * p.seqlen_q;
  const int row = blockIdx.x * 4 + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const int i = row % p.seqlen_q, h = (row / p.seqlen_q) % p.heads_q, b = row / (p.seqlen_q * p.heads_q);
  const std::int64_t split_rows = static_cast<std::int64_t>(rows);

  float lse_max = -INFINITY;
  for (int s = lane; s < p.num_splits; s += 32) lse_max = fmaxf(lse_max, p.lse_partial[s * split_rows + row]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) lse_max = fmaxf(lse_max, __shfl_xor_sync(0xffffffffu, lse_max, off));
  float sum = 0.0f;
  if (lse_max != -INFINITY)
    for (int s = lane; s < p.num_splits; s += 32) sum += expf(p.lse_partial[s * split_rows + row] - lse_max);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  const float lse = sum > 0.0f ? lse_max + logf(sum) : -INFINITY;

  float acc[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) acc[c] = 0.0f;
  if (lse != -INFINITY) {
    for (int s = 0; s < p.num_splits; ++s) {
      const float lse_s = p.lse_partial[s * split_rows + row];
      if (lse_s == -INFINITY) continue;
      const float w = expf(lse_s - lse);
      const float* src = p.o_partial + (s * split_rows + row) * kHeadDim + lane * kCols;
      if constexpr (kCols == 2) {
        const float2 x = *reinterpret_cast<const float2*>(src);
        acc[0] += w * x.x, acc[1] += w * x.y;
      } else {
#pragma unroll
        for (int c = 0; c < kCols; c += 4) {
          const float4 x = *reinterpret_cast<const float4*>(src + c);
          acc[c] += w * x.x, acc[c + 1] += w * x.y, acc[c + 2] += w * x.z, acc[c + 3] += w * x.w;
        }
      }
    }
  }
  T* dst = static_cast<T*>(p.o) + b * p.o_batch_stride + i * p.o_row_stride + h * p.o_head_stride + lane * kCols;
  if constexpr (kCols == 2) {
    union { T e[2]; std::uint32_t raw; } u;
    u.e[0] = from_float<T>(acc[0]), u.e[1] = from_float<T>(acc[1]);
    *reinterpret_cast<std::uint32_t*>(dst) = u.raw;
  } else {
#pragma unroll
    for (int c = 0; c < kCols; c += 4) store4_from_float(dst + c, acc[c], acc[c + 1], acc[c + 2], acc[c + 3]);
  }
  if (p.lse != nullptr && lane == 0) p.lse[b * p.lse_batch_stride + h * p.lse_head_stride + i * p.lse_row_stride] = lse;
}

}  // namespace flash::detail
