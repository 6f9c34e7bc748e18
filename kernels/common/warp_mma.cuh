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
#pragma unroll
  for (int ks = 0; ks < kKSteps; ++ks) {
    std::uint32_t fa[kMT][4];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      if constexpr (kATransposed) ldmatrix_x4_trans(fa[mt], a.at(16 * ks, mt) + a_off);
      else ldmatrix_x4(fa[mt], a.at(16 * mt, ks) + a_off);
    }
#pragma unroll
    for (int np = 0; np < kNT / 2; ++np) {
      std::uint32_t fb[4];
      if constexpr (kBTransposed) ldmatrix_x4_trans(fb, b.at(16 * ks, np) + b_off);
      else ldmatrix_x4(fb, b.at(16 * np, ks) + b_off);
      const std::uint32_t b0[2] = {fb[0], fb[1]}, b1[2] = {fb[2], fb[3]};
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) {
        mma_16816<T>(acc[mt][2 * np], fa[mt], b0);
        mma_16816<T>(acc[mt][2 * np + 1], fa[mt], b1);
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
