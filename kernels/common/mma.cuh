// Tensor-core building blocks for sm_80 and up: mma.sync m16n8k16 with fp32
// accumulators, ldmatrix, and packing fp32 pairs into 16-bit operands.
//
// Fragment layouts of mma.m16n8k16 (g = lane / 4, t = lane % 4), from the PTX ISA:
//   A (16 x 16, row-major), 4 x 32-bit registers of two elements each:
//     a0 = (row g,     cols 2t, 2t+1)   a1 = (row g + 8, cols 2t, 2t+1)
//     a2 = (row g,     cols 2t+8, +9)   a3 = (row g + 8, cols 2t+8, +9)
//   B (16 x 8, "col-major": column n holds k = 0..15), 2 registers:
//     b0 = (k 2t, 2t+1, col g)          b1 = (k 2t+8, 2t+9, col g)
//   C/D (16 x 8, fp32), 4 floats:
//     c0, c1 = (row g, cols 2t, 2t+1)   c2, c3 = (row g + 8, cols 2t, 2t+1)
// So the accumulator of two neighbouring n-tiles of S = Q K^T is exactly the
// A fragment of P for P V: no shared-memory round trip (FlashAttention-2).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

namespace flash::detail {

// D = A * B + D for one m16n8k16 tile; T is __half or __nv_bfloat16. Not
// volatile: a pure register operation the compiler may schedule freely.
template <class T>
__device__ __forceinline__ void mma_16816(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  if constexpr (std::is_same_v<T, __half>) {
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  } else {
    asm(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
}

__device__ __forceinline__ std::uint32_t smem_addr(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

// Four 8 x 8 matrices of 16-bit elements from shared memory; lanes 8i..8i+7
// give the row addresses (shared-window addresses, see smem_addr) of matrix
// i, and register i receives matrix i in the "thread g holds row g, cols 2t,
// 2t+1" layout.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], std::uint32_t smem_row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_row_addr));
}

// The same, each matrix transposed: register i holds (rows 2t, 2t+1 of col g).
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], std::uint32_t smem_row_addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_row_addr));
}

// Two floats rounded to T and packed into one 32-bit operand register (low = a).
template <class T> __device__ __forceinline__ std::uint32_t pack2(float a, float b) {
  if constexpr (std::is_same_v<T, __half>) {
    const __half2 h = __floats2half2_rn(a, b);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  } else {
    const __nv_bfloat162 h = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<const std::uint32_t*>(&h);
  }
}

}  // namespace flash::detail
