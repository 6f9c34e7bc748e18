// Shared-memory layouts for tiles of 16-bit elements with kCols columns,
// addressed in 16-byte chunks of 8 elements (one ldmatrix row, one cp.async).
#pragma once

#include <cstdint>

#include "common/mma.cuh"

namespace flash::detail {

// Row-major, unpadded. With rows of 128 bytes or a multiple of it, the 8 row
// addresses of one ldmatrix 8x8 matrix all fall in the same 16-byte bank
// group: an 8-way bank conflict on every fragment load.
//
// ldmatrix addressing (both layouts): a lane's row address for the 8x8
// matrix at (row_off + row_lane, 16 * j + col_lane), with row_off a multiple
// of 8, col_lane 0 or 8 and j a compile-time 16-column step, is
//   lane_offset(row_lane, col_lane, j % 4) + step_offset(row_off, j):
// four per-lane bases computed once, plus a compile-time immediate, so the
// fragment loads of the main loop need no address arithmetic.
template <int kCols> struct RowMajorLayout {
  static_assert(kCols % 8 == 0, "rows are whole 16-byte chunks");
  static constexpr int kColumns = kCols;
  static constexpr bool kSwizzled = false;
  __device__ __forceinline__ static int offset(int row, int col) { return row * kCols + col; }
  __device__ __forceinline__ static int lane_offset(int row_lane, int col_lane, int /*phase*/) {
    return row_lane * kCols + col_lane;
  }
  static constexpr int step_offset(int row_off, int j) { return row_off * kCols + 16 * j; }
};

// XOR swizzle: chunk c of row r is stored at chunk c ^ (r % 8) within its
// aligned group of 8 chunks (128 bytes). Any 8 consecutive rows at the same
// logical chunk then land in 8 different bank groups, so ldmatrix and the
// 16-byte copies are conflict-free, with no padding. Needs kCols % 64 == 0.
template <int kCols> struct SwizzledLayout {
  static_assert(kCols % 64 == 0, "the swizzle permutes groups of 8 chunks (64 elements)");
  static constexpr int kColumns = kCols;
  static constexpr bool kSwizzled = true;
  __device__ __forceinline__ static int offset(int row, int col) {
    return row * kCols + ((((col >> 3) ^ row) & 7) | ((col >> 3) & ~7)) * 8 + (col & 7);
  }
  // Step j moves the chunk by 2j: its low bits (2j & 6) XOR into the lane's
  // swizzled chunk (phase = j % 4), its high bits add whole 8-chunk groups.
  __device__ __forceinline__ static int lane_offset(int row_lane, int col_lane, int phase) {
    return (row_lane * kCols + (((col_lane >> 3) ^ (row_lane & 7)) << 3)) ^ (phase << 4);
  }
  static constexpr int step_offset(int row_off, int j) { return row_off * kCols + (j >> 2) * 64; }
};

}  // namespace flash::detail

namespace flash::detail {

// Row-major with kPad extra elements per row (the wmma rung): rows shift by
// kPad * 2 bytes across banks, at the cost of unused shared memory.
template <int kCols, int kPad> struct PaddedLayout {
  static constexpr int kStride = kCols + kPad;
  __device__ __forceinline__ static int offset(int row, int col) { return row * kStride + col; }
};

}  // namespace flash::detail

namespace flash::detail {

// Per-lane ldmatrix row addresses into a tile of either layout above for
// a warp whose sub-tile starts at row0 (in row_lane, a multiple of 8) and
// column col0 (a multiple of 16). at(row_off, j) is the address for rows +
// row_off (a multiple of 8) and columns + 16 j. One register per operand:
// with the tile 128-byte aligned in shared memory, the swizzle of 16-column
// step J = col0 / 16 + j is an XOR of (J % 4) into bits 5-6 of the lane's
// step-0 address, and whole 64-column groups (J / 4) add 128 bytes, since
// the swizzle permutes 16-byte chunks only within a row's 128-byte group.
template <class Layout> struct FragAddr {
  std::uint32_t base;  // byte address of (row_lane, col_lane) at step 0
  int col16;           // col0 / 16
  template <class T>
  __device__ __forceinline__ FragAddr(const T* tile, int row_lane, int col_lane, int col0 = 0)
      : base(smem_addr(tile + Layout::offset(row_lane, col_lane))), col16(col0 / 16) {}
  // The same lanes, `cols` (a multiple of 16) further right.
  __device__ __forceinline__ FragAddr shifted(int cols) const {
    FragAddr f = *this;
    f.col16 += cols / 16;
    return f;
  }
  __device__ __forceinline__ std::uint32_t at(int row_off, int j) const {
    const int J = col16 + j;
    if constexpr (Layout::kSwizzled)
      return (base ^ ((J & 3) << 5)) + 2 * row_off * Layout::kColumns + (J >> 2) * 128;
    else
      return base + 2 * row_off * Layout::kColumns + J * 32;
  }
};

// Which row and column of a 16 x 16 operand block a lane addresses for
// ldmatrix.x4, by operand role (mma.cuh gives the fragment layouts):
//   A from [m][k] storage (ldmatrix):        row lane % 16,                  col 8 (lane / 16)
//   A from [k][m] storage (ldmatrix.trans):  row lane % 8 + 8 (lane / 16),   col 8 ((lane / 8) % 2)
//   B from [n][k] storage (ldmatrix):        the same as A from [k][m]
//   B from [k][n] storage (ldmatrix.trans):  row lane % 8 + 8 ((lane / 8) % 2), col 8 (lane / 16)
// B loads cover two 8-column n-tiles: registers 0-1 the first, 2-3 the second.
enum class LaneRole { kRowMajorA, kTransposedA, kRowMajorB, kTransposedB };

template <LaneRole kRole> __device__ __forceinline__ int lane_row(int lane) {
  if constexpr (kRole == LaneRole::kRowMajorA) return lane % 16;
  else if constexpr (kRole == LaneRole::kTransposedB) return lane % 8 + 8 * ((lane / 8) % 2);
  else return lane % 8 + 8 * (lane / 16);
}
template <LaneRole kRole> __device__ __forceinline__ int lane_col(int lane) {
  if constexpr (kRole == LaneRole::kRowMajorA || kRole == LaneRole::kTransposedB) return 8 * (lane / 16);
  else return 8 * ((lane / 8) % 2);
}

}  // namespace flash::detail
