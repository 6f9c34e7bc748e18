// Tile copies between global and shared memory for the CUDA-core kernels.
#pragma once

#include <cstdint>

#include "common/numeric.cuh"

namespace flash::detail {

// copy_g2s_rows_as_float: kRows x kCols elements of T, row r read from
// row_ptr(r) (called only for r < rows_valid), into shared floats with row
// stride kSmemStride. Rows at or past rows_valid are zero-filled, so masked
// keys contribute 0 * 0 and never NaN. Loads are 16 bytes wide and
// coalesced along a row; every thread of the CTA takes part. The caller
// synchronizes before reading the tile.
template <class T, int kRows, int kCols, int kSmemStride, int kThreads, class RowPtr>
__device__ __forceinline__ void copy_g2s_rows_as_float(RowPtr&& row_ptr, int rows_valid, float* __restrict__ s) {
  constexpr int kVec = kVec16<T>;
  static_assert(kCols % kVec == 0, "rows must be whole 16-byte vectors");
  static_assert(kSmemStride % 4 == 0, "shared rows must keep float4 alignment");
  constexpr int kVecsPerRow = kCols / kVec;
  constexpr int kVecs = kRows * kVecsPerRow;
  for (int idx = threadIdx.x; idx < kVecs; idx += kThreads) {
    const int row = idx / kVecsPerRow;
    const int col = (idx % kVecsPerRow) * kVec;
    float v[kVec];
    if (row < rows_valid) {
      load16_as_float(row_ptr(row) + col, v);
    } else {
#pragma unroll
      for (int i = 0; i < kVec; ++i) v[i] = 0.0f;
    }
    float* dst = s + row * kSmemStride + col;
#pragma unroll
    for (int i = 0; i < kVec; i += 4) {
      *reinterpret_cast<float4*>(dst + i) = make_float4(v[i], v[i + 1], v[i + 2], v[i + 3]);
    }
  }
}

// copy_g2s_as_float: the same from rows g_row_stride elements apart (row r at g + r * g_row_stride).
template <class T, int kRows, int kCols, int kSmemStride, int kThreads>
__device__ __forceinline__ void copy_g2s_as_float(const T* __restrict__ g, std::int64_t g_row_stride,
                                                  int rows_valid, float* __restrict__ s) {
  copy_g2s_rows_as_float<T, kRows, kCols, kSmemStride, kThreads>([&](int row) { return g + row * g_row_stride; },
                                                                  rows_valid, s);
}

}  // namespace flash::detail
