// KV-cache building blocks of the decode kernels: cache addressing
// (contiguous or paged), the metadata check and the append (kv_cache.cu),
// and the combine of split-KV partial results.
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

// Combine (flash-decoding): each split s left O_s (normalized over its keys;
// zeros for a split with no key) and LSE_s; the row's LSE is logsumexp_s
// LSE_s and O = sum_s exp(LSE_s - LSE) O_s. One CTA of kCombineWarps warps
// per (batch, head, query) row: warp w takes splits w, w + kCombineWarps, ...
// eight at a time with all their loads in flight (the combine is a chain of
// memory round trips, not of bandwidth), each lane kHeadDim / 32 columns;
// the warps' sums meet in shared memory. kVarlen (cu_seqlens_q): a row is
// (head, packed query row) of a batch of one with total_q rows; the rows
// past cu_seqlens_q[batch] belong to no sequence and are left alone.
constexpr int kCombineWarps = 4;

template <class T, int kHeadDim, bool kVarlen>
__global__ void __launch_bounds__(kCombineWarps * 32) combine_splits_kernel(const __grid_constant__ DecodeParams p) {
  constexpr int kCols = kHeadDim / 32, kUnroll = 8;
  static_assert(kCols == 2 || kCols % 4 == 0, "lanes read float2 or float4 groups");
  __shared__ float partial[kCombineWarps - 1][kHeadDim];
  wait_for_previous_kernel();
  if (metadata_failed(p)) return;
  const int row = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int seqlen_q = kVarlen ? p.total_q : p.seqlen_q;
  const int i = row % seqlen_q, h = (row / seqlen_q) % p.heads_q, b = kVarlen ? 0 : row / (seqlen_q * p.heads_q);
  if (kVarlen && i >= p.cu_seqlens_q[p.batch]) return;  // the whole CTA: before any barrier
  const std::int64_t split_rows = p.partial_rows<kVarlen>();

  float lse_max = -INFINITY;
  for (int s = lane; s < p.num_splits; s += 32) lse_max = fmaxf(lse_max, p.lse_partial[s * split_rows + row]);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) lse_max = fmaxf(lse_max, __shfl_xor_sync(0xffffffffu, lse_max, off));
  float sum = 0.0f;
  if (lse_max != -INFINITY)
    for (int s = lane; s < p.num_splits; s += 32) sum += expf(p.lse_partial[s * split_rows + row] - lse_max);
#pragma unroll
  for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  const float lse = row_lse(lse_max, sum);

  float acc[kCols];
#pragma unroll
  for (int c = 0; c < kCols; ++c) acc[c] = 0.0f;
  if (lse != -INFINITY) {
    for (int s0 = warp; s0 < p.num_splits; s0 += kCombineWarps * kUnroll) {
      float w[kUnroll], x[kUnroll][kCols];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const int s = s0 + u * kCombineWarps;
        w[u] = 0.0f;
#pragma unroll
        for (int c = 0; c < kCols; ++c) x[u][c] = 0.0f;
        if (s >= p.num_splits) continue;
        w[u] = p.lse_partial[s * split_rows + row];
        const float* src = p.o_partial + (s * split_rows + row) * kHeadDim + lane * kCols;
        if constexpr (kCols == 2) {
          const float2 v = *reinterpret_cast<const float2*>(src);
          x[u][0] = v.x, x[u][1] = v.y;
        } else {
#pragma unroll
          for (int c = 0; c < kCols; c += 4) {
            const float4 v = *reinterpret_cast<const float4*>(src + c);
            x[u][c] = v.x, x[u][c + 1] = v.y, x[u][c + 2] = v.z, x[u][c + 3] = v.w;
          }
        }
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const float f = s0 + u * kCombineWarps < p.num_splits ? expf(w[u] - lse) : 0.0f;
#pragma unroll
        for (int c = 0; c < kCols; ++c) acc[c] += f * x[u][c];
      }
    }
  }
  if (warp > 0) {
#pragma unroll
    for (int c = 0; c < kCols; ++c) partial[warp - 1][lane * kCols + c] = acc[c];
  }
  __syncthreads();
  if (warp > 0) return;
#pragma unroll
  for (int w = 0; w < kCombineWarps - 1; ++w)
#pragma unroll
    for (int c = 0; c < kCols; ++c) acc[c] += partial[w][lane * kCols + c];
  // The sink joins the denominator once the splits are merged (add_sink).
  float lse_out = lse;
  const float sink_factor = add_sink(lse_out, ScoreMod::sink(p, h));
#pragma unroll
  for (int c = 0; c < kCols; ++c) acc[c] *= sink_factor;
  T* dst = static_cast<T*>(p.o) + b * p.o_batch_stride + i * p.o_row_stride + h * p.o_head_stride + lane * kCols;
  if constexpr (kCols == 2) {
    union { T e[2]; std::uint32_t raw; } u;
    u.e[0] = from_float<T>(acc[0]), u.e[1] = from_float<T>(acc[1]);
    *reinterpret_cast<std::uint32_t*>(dst) = u.raw;
  } else {
#pragma unroll
    for (int c = 0; c < kCols; c += 4) store4_from_float(dst + c, acc[c], acc[c + 1], acc[c + 2], acc[c + 3]);
  }
  if (p.lse != nullptr && lane == 0) p.lse[p.lse_offset(b, h, i)] = lse_out;
}

}  // namespace flash::detail
