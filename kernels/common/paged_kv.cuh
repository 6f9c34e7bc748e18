// Paged K/V for the forward kernels (ForwardArgs::page_table): key j of
// sequence b lives in page page_table[b][j >> page_shift], row j &
// (page_size - 1), of k and v [num_pages, page_size, heads_kv, head_dim]
// (AttnParams' page fields, which decode's cache addressing reads too). The
// metadata check (common/varlen.cu) has proven every entry that a
// sequence's keys reach to be a page of k before any kernel reads one, and
// no kernel looks up a key at or past the sequence's length.
#pragma once

#include <cstdint>

#include "common/copy.cuh"
#include "common/params.h"

namespace flash::detail {

// The page holding key `key` of sequence b.
__device__ __forceinline__ int page_of(const AttnParams& p, int b, int key) {
  return __ldg(p.page_table + b * p.page_table_stride + (key >> p.page_shift));
}

// The element offset of key `key` of sequence b in pages with these strides
// (the head's offset apart).
__device__ __forceinline__ std::int64_t paged_row_offset(const AttnParams& p, std::int64_t page_stride,
                                                         std::int64_t row_stride, int b, int key) {
  return page_of(p, b, key) * page_stride + (key & (p.page_size - 1)) * row_stride;
}

// copy_g2s_tile (common/copy.cuh) of kRows keys of one head from the pages:
// the same thread-to-chunk map (chunk i of a thread is row tid / kChunks +
// i * kRowStep, column (tid % kChunks) * 8) and the same zero-filled rows
// past rows_valid, each row's page looked up through the page table. The
// lookups of a tile are fetched into registers a tile ahead (fetch(), then
// copy()), so that their latency hides behind a tile's math instead of
// stalling the copy, as dec_01_splitkv does; K and V rows share them.
template <int kRows, int kCols, int kThreads> struct PagedTileRows {
  static constexpr int kChunks = kCols / 8, kRowStep = kThreads / kChunks, kRowsPerThread = kRows / kRowStep;
  static_assert(kThreads % kChunks == 0 && kRows % kRowStep == 0, "a thread keeps one column over whole passes");
  int page[kRowsPerThread];  // the pages of this thread's rows of the tile fetch() was last given

  // The pages of keys first_key + r for this thread's rows r < rows_valid
  // (the others are never read).
  __device__ __forceinline__ void fetch(const AttnParams& p, int b, int first_key, int rows_valid) {
    const int row0 = threadIdx.x / kChunks;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = row0 + i * kRowStep;
      page[i] = r < rows_valid ? page_of(p, b, first_key + r) : 0;
    }
  }

  // Keys first_key .. first_key + kRows - 1 from the pages at g (the head's
  // offset applied; page_stride and row_stride in elements) into shared
  // tile s of the given Layout, with the pages fetch() read for first_key.
  // kAsync: cp.async (the caller commits and waits), else through registers.
  template <class Layout, bool kAsync, class T>
  __device__ __forceinline__ void copy(T* __restrict__ s, const T* __restrict__ g, std::int64_t page_stride,
                                       std::int64_t row_stride, int row_mask, int first_key, int rows_valid) const {
    const int row0 = threadIdx.x / kChunks, col = (threadIdx.x % kChunks) * 8;
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = row0 + i * kRowStep;
      const bool valid = r < rows_valid;
      T* dst = s + Layout::offset(r, col);
      const T* src = valid ? g + page[i] * page_stride + ((first_key + r) & row_mask) * row_stride + col : g;
      if constexpr (kAsync) {
        cp_async_16(dst, src, valid ? 16 : 0);
      } else {
        *reinterpret_cast<uint4*>(dst) = valid ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
      }
    }
  }
};

}  // namespace flash::detail
