// Tile copies for the tensor-core kernels (16-bit elements, 16-byte chunks).
#pragma once

#include <cstdint>

#include "common/mma.cuh"

namespace flash::detail {

// cp.async of 16 bytes, global -> shared, bypassing L1 (.cg). With
// src_bytes == 0 nothing is read and the 16 bytes are zero-filled: how the
// tails of K, V and Q tiles become zeros without a branch around the copy.
// cp_async_16_to takes the shared-window address (smem_addr) instead.
__device__ __forceinline__ void cp_async_16_to(std::uint32_t smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem, int src_bytes) {
  cp_async_16_to(smem_addr(smem), gmem, src_bytes);
}
// cp.async of 4 bytes (.ca: the only form this size has), zero-filled when
// src_bytes == 0: the decode kernel's page-table entries, copied ahead into
// shared memory (dec_01).
__device__ __forceinline__ void cp_async_4(void* smem, const void* gmem, int src_bytes) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem), "r"(src_bytes));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
// Waits until at most kPending of this thread's committed groups are in flight.
template <int kPending> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending));
}

// copy_g2s_tile for a loop that copies many tiles of one shape and global row
// stride (the backward's Q and dO steps): this thread's chunk offsets, global
// and shared, are computed once, so a tile costs one 64-bit add and one
// cp.async per chunk, and a full tile (the common case) needs no row checks.
// A thread's chunks sit kRowsPerPass rows apart, a multiple of 8, so the
// swizzle repeats and the shared offsets of later chunks are immediates.
template <class T, class Layout, int kRows, int kCols, int kThreads> struct TileCopier {
  static constexpr int kChunksPerRow = kCols / 8, kRowsPerPass = kThreads / kChunksPerRow;
  static constexpr int kPasses = kRows / kRowsPerPass;
  static_assert(kThreads % kChunksPerRow == 0 && kRows % kRowsPerPass == 0 && kRowsPerPass % 8 == 0,
                "whole passes of whole rows, 8-row aligned");
  std::int64_t g_off;   // elements from the tile origin to this thread's first chunk
  std::int64_t g_pass;  // elements between its chunks
  std::uint32_t s_off;  // bytes from the shared tile to its first chunk
  int row;              // its first chunk's row
  __device__ __forceinline__ explicit TileCopier(std::int64_t g_row_stride) {
    row = threadIdx.x / kChunksPerRow;
    const int col = (threadIdx.x % kChunksPerRow) * 8;
    g_off = row * g_row_stride + col;
    g_pass = kRowsPerPass * g_row_stride;
    s_off = Layout::offset(row, col) * sizeof(T);
  }
  // rows at or past rows_valid become zeros. s_tile: smem_addr of the tile.
  __device__ __forceinline__ void operator()(std::uint32_t s_tile, const T* g_tile, int rows_valid) const {
    const T* src = g_tile + g_off;
    if (rows_valid >= kRows) {
#pragma unroll
      for (int i = 0; i < kPasses; ++i)
        cp_async_16_to(s_tile + s_off + i * kRowsPerPass * kCols * sizeof(T), src + i * g_pass, 16);
    } else {
#pragma unroll
      for (int i = 0; i < kPasses; ++i) {
        const bool valid = row + i * kRowsPerPass < rows_valid;
        cp_async_16_to(s_tile + s_off + i * kRowsPerPass * kCols * sizeof(T), valid ? src + i * g_pass : g_tile,
                       valid ? 16 : 0);
      }
    }
  }
};

// copy_g2s_tile: kRows x kCols elements, global row stride g_row_stride,
// into a shared tile of the given Layout; rows at or past rows_valid become
// zeros. kAsync: cp.async (the caller commits and waits); otherwise a plain
// 16-byte load and store through registers. All kThreads threads take part.
template <class Layout, int kRows, int kCols, int kThreads, bool kAsync, class T>
__device__ __forceinline__ void copy_g2s_tile(T* __restrict__ s, const T* __restrict__ g, std::int64_t g_row_stride,
                                              int rows_valid) {
  constexpr int kChunks = kCols / 8;
  static_assert((kRows * kChunks) % kThreads == 0, "every thread copies the same number of chunks");
#pragma unroll
  for (int i = 0; i < kRows * kChunks / kThreads; ++i) {
    const int idx = i * kThreads + threadIdx.x;
    const int row = idx / kChunks, col = (idx % kChunks) * 8;
    const bool valid = row < rows_valid;
    T* dst = s + Layout::offset(row, col);
    const T* src = valid ? g + row * g_row_stride + col : g;  // never formed out of bounds
    if constexpr (kAsync) {
      cp_async_16(dst, src, valid ? 16 : 0);
    } else {
      *reinterpret_cast<uint4*>(dst) = valid ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
    }
  }
}

}  // namespace flash::detail
