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

// Per-lane ldmatrix row addresses into a tile of any of the layouts above,
// for a warp whose sub-tile starts at a run-time (row0, col0) (multiples of
// 8 and 16). The lane's row and column within the 8 x 8 matrices come from
// its role (LaneRole below). at(row_off, j) is the
// address for rows + row_off (a multiple of 8) and columns + 16 j, both
// compile-time in unrolled loops: four bases (j % 4) are computed once and
// whole 64-column groups add a constant, which holds for the swizzle too
// because it permutes chunks only within a 64-column group.
template <class Layout> struct FragAddr {
  std::uint32_t base[4];
  template <class T> __device__ __forceinline__ FragAddr(const T* tile, int row_lane, int col_lane) {
#pragma unroll
    for (int jj = 0; jj < 4; ++jj) base[jj] = smem_addr(tile + Layout::offset(row_lane, col_lane + 16 * jj));
  }
  __device__ __forceinline__ std::uint32_t at(int row_off, int j) const {
    return base[j % 4] + 2 * (row_off * Layout::kColumns + (j / 4) * 64);
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
