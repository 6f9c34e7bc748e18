// One warp's tile product from shared memory: acc[kMT][kNT] += A B over
// kKSteps 16-wide k-steps, with A and B fragments loaded by ldmatrix through
// FragAddr (smem_layout.cuh). Either operand may be stored transposed, which
// is what the backward needs: S = Q K^T and dP = dO V^T read K and V as
// [n][k]; dV = P^T dO and dK = dS^T Q read P, dS as [k][m] and dO, Q as
// [k][n]; dQ = dS K reads K as [k][n].
#pragma once

#include <cstdint>

#include "common/mma.cuh"
#include "common/smem_layout.cuh"

namespace flash::detail {

// kATransposed: A is stored [k][m] (ldmatrix.trans), else [m][k].
// kBTransposed: B is stored [k][n] (ldmatrix.trans), else [n][k].
// a_off / b_off: bytes added to every address (a pipeline stage).
template <class T, bool kATransposed, bool kBTransposed, int kMT, int kNT, int kKSteps, class LayoutA, class LayoutB>
__device__ __forceinline__ void warp_mma(float (&acc)[kMT][kNT][4], const FragAddr<LayoutA>& a, std::uint32_t a_off,
                                         const FragAddr<LayoutB>& b, std::uint32_t b_off) {
  static_assert(kNT % 2 == 0, "B fragments come in pairs of n-tiles");
  constexpr int kPairs = kNT / 2;
  auto load_a = [&](int ks, std::uint32_t(&fa)[kMT][4]) {
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      if constexpr (kATransposed) ldmatrix_x4_trans(fa[mt], a.at(16 * ks, mt) + a_off);
      else ldmatrix_x4(fa[mt], a.at(16 * mt, ks) + a_off);
    }
  };
  auto load_b = [&](int ks, int np, std::uint32_t(&fb)[4]) {
    if constexpr (kBTransposed) ldmatrix_x4_trans(fb, b.at(16 * ks, np) + b_off);
    else ldmatrix_x4(fb, b.at(16 * np, ks) + b_off);
  };
  // Fragments double-buffered: the next B pair (or the next k-step's first
  // pair and its A) is requested before this pair's mma, hiding the
  // shared-memory latency behind tensor-core work.
  std::uint32_t fa[2][kMT][4], fb[2][4];
  load_a(0, fa[0]);
  load_b(0, 0, fb[0]);
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks) {
#pragma unroll
    for (int np = 0; np < kPairs; ++np) {
      const int i = ks * kPairs + np;  // flat step: buffers alternate on it
      if (np + 1 < kPairs) {
        load_b(ks, np + 1, fb[(i + 1) % 2]);
      } else if (ks + 1 < kKSteps) {
        load_a(ks + 1, fa[(ks + 1) % 2]);
        load_b(ks + 1, 0, fb[(i + 1) % 2]);
      }
      const std::uint32_t b0[2] = {fb[i % 2][0], fb[i % 2][1]}, b1[2] = {fb[i % 2][2], fb[i % 2][3]};
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        mma_16816<T>(acc[mt][2 * np], fa[ks % 2][mt], b0);
        mma_16816<T>(acc[mt][2 * np + 1], fa[ks % 2][mt], b1);
      }
    }
  }
}

template <int kMT, int kNT> __device__ __forceinline__ void zero(float (&acc)[kMT][kNT][4]) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[mt][nt][e] = 0.0f;
}

}  // namespace flash::detail
