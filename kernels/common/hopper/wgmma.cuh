// wgmma (sm_90a): warpgroup matrix multiply-accumulate, issued by the 128
// threads of a warpgroup and run asynchronously by the tensor cores.
//
// Operands in shared memory are described by a 64-bit matrix descriptor
// (PTX ISA, "Matrix Descriptor Format"):
//   bits  0-13  start address >> 4
//   bits 16-29  leading-dimension byte offset (LBO) >> 4
//   bits 32-45  stride-dimension byte offset (SBO) >> 4
//   bits 62-63  swizzle mode (1 = 128-byte)
// flash keeps every tile in the layout TMA writes with 128-byte swizzle: a
// tile of R rows x 64 16-bit elements is R rows of 128 bytes, the sixteen
// bytes chunks of row r XOR-permuted by r % 8, and a wider tile is a row of
// such 64-column blocks. For that layout:
//   K-major (the reduction dim contiguous; Q and K in S = Q K^T):
//     SBO = 1024 (from one 8-row group to the next), LBO unused; the k-step
//     inside a 64-column block is a +32-byte start address, the next block
//     a +R * 128.
//   MN-major (the output dim contiguous; V in O += P V, "transposed B"):
//     SBO = 1024 (8 rows along the reduction dim), LBO = R * 128 (from one
//     64-column block of the output dim to the next); the k-step of 16 rows
//     is a +2048-byte start address. An A operand may be MN-major too (16-bit
//     types only; the backward's dS^T in dQ = dS K): the same descriptor,
//     with M in the place of the output dim.
// The swizzle is a function of address bits, so every tile starts at a
// multiple of 1024 bytes.
//
// Accumulators (m64nN, fp32): warp w of the warpgroup holds rows 16w..16w+15
// in exactly the mma.m16n8 layout of mma.cuh, n-tile after n-tile:
//   d[4j + 0, 1] = (row g, cols 8j + 2t, +1), d[4j + 2, 3] = (row g + 8, same cols)
// and the register A operand (64 x 16) is the mma.m16n8k16 A fragment. So, as
// in FlashAttention-2, the S accumulators of two neighbouring n-tiles are
// the P operand of O += P V once rounded to 16 bits.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "common/constants.h"
#include "common/mma.cuh"

// The sm_90a kernels exist only in the sm_90a pass; other passes compile
// empty bodies that the host never launches (their variants check compute
// capability 9.0).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FLASH_SM90A_DEVICE 1
#else
#define FLASH_SM90A_DEVICE 0
#endif

namespace flash::detail {

// The descriptor of the tile at shared address base + offset. Only base is
// masked and shifted: offset (a k-step's or a column block's constant) is
// added to the start-address field as offset >> 4, so once base's part is
// hoisted out of a k-loop each wgmma's descriptor costs one integer add (the
// address stays below 256 KB, so the field never carries into LBO's bits).
// Everything here should be warp-uniform (see warpgroup_index): the
// compiler then builds descriptors in uniform registers, next to the wgmma
// that reads them, instead of in vector registers copied over by R2UR.
//
// Where the add goes (DescAdd): kLowWord adds offset to the low word before
// the halves are joined, so each descriptor costs an add and two moves
// (UIADD3, UMOV x2); kWhole adds it to the joined 64-bit value (one
// UIADD3.64, as FlashAttention-4's SASS does). Session 59 (H200, two rounds
// of one call, docs/NOTES.md): kWhole in bwd_03 +0.5-1.3% non-deterministic,
// hdim 64 deterministic +4.8%; in bwd_04 -0.7 to -1.0% and in the forward
// -1.0 to 0% (hdim 128 8k), so those keep kLowWord.
enum class DescAdd { kLowWord, kWhole };

template <DescAdd kAdd = DescAdd::kLowWord>
__device__ __forceinline__ std::uint64_t wgmma_desc_sw128(std::uint32_t base, std::uint32_t offset,
                                                          std::uint32_t lbo_bytes, std::uint32_t sbo_bytes) {
  const std::uint32_t hi = (sbo_bytes >> 4) | 1u << 30;
  if constexpr (kAdd == DescAdd::kWhole) {
    const std::uint32_t lo = ((base & 0x3FFFF) >> 4) | (lbo_bytes >> 4) << 16;
    return (static_cast<std::uint64_t>(hi) << 32 | lo) + (offset >> 4);
  } else {
    const std::uint32_t lo = (((base & 0x3FFFF) >> 4) | (lbo_bytes >> 4) << 16) + (offset >> 4);
    return static_cast<std::uint64_t>(hi) << 32 | lo;
  }
}

// This thread's warpgroup, as a value the compiler knows is the same in
// every lane (threadIdx.x / kWarpgroupThreads is, but the compiler cannot prove it): a
// shuffle from lane 0. Shared addresses derived from it stay in uniform
// registers, so the descriptors built from them do too.
__device__ __forceinline__ int warpgroup_index() { return __shfl_sync(0xffffffffu, threadIdx.x / kWarpgroupThreads, 0); }

// Orders this thread's register writes before the next wgmma reads them
// (and is required before the first wgmma of a batch).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
// Closes the wgmmas issued so far into one group.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most kPending groups are still running.
template <int kPending> __device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}
// wgmma_wait, placed after the code that computes a and b. ptxas schedules
// a wait_group as early as its basic block allows: in the forward's
// overlapped loop it hoisted the wait for O += P V above the whole softmax
// (no MUFU between the two waits in the SASS), so the softmax never ran
// beside its own warpgroup's PV. A branch on a and b (never taken for
// values a softmax produces: both all-ones NaNs; taken, it only sleeps 0 ns)
// ends the block, and every instruction that a and b depend on must come
// before it.
template <int kPending> __device__ __forceinline__ void wgmma_wait_after(float a, float b) {
  if ((__float_as_uint(a) & __float_as_uint(b)) == 0xffffffffu) asm volatile("nanosleep.u32 0;");
  wgmma_wait<kPending>();
}
// wgmma_wait_after for every value of v: a branch on the AND of their bits
// (all ones only if every value is an all-ones NaN). With two of v's values
// ptxas still moved the exponentials that fed neither below the branch
// (bwd_03's dP^T wait: 19 of 40 before it).
template <int kPending, int kN> __device__ __forceinline__ void wgmma_wait_after_all(const float (&v)[kN]) {
  std::uint32_t bits = 0xffffffffu;
#pragma unroll
  for (int i = 0; i < kN; ++i) bits &= __float_as_uint(v[i]);
  if (bits == 0xffffffffu) asm volatile("nanosleep.u32 0;");
  wgmma_wait<kPending>();
}
// Keeps the compiler from moving accesses to these registers across the
// wgmma issue/wait points (the asm statements above do not name them).
template <int kN> __device__ __forceinline__ void fence_registers(float (&r)[kN]) {
#pragma unroll
  for (int i = 0; i < kN; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

// Accumulators (fp32, 64 x kN) to register A operands of k16 steps: n-tiles
// 2 kk and 2 kk + 1 rounded to 16 bits (the P of O += P V, the P^T and dS^T
// of the backward's dV and dK products).
template <class T, int kN>
__device__ __forceinline__ void to_a_operand(const float (&acc)[kN / 2], std::uint32_t (&a)[kN / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < kN / 16; ++kk) {
    a[kk][0] = pack2<T>(acc[8 * kk + 0], acc[8 * kk + 1]);
    a[kk][1] = pack2<T>(acc[8 * kk + 2], acc[8 * kk + 3]);
    a[kk][2] = pack2<T>(acc[8 * kk + 4], acc[8 * kk + 5]);
    a[kk][3] = pack2<T>(acc[8 * kk + 6], acc[8 * kk + 7]);
  }
}

// WgmmaOp<N>::ss<T>(d, desc_a, desc_b, scale_d): d = A B (+ d when scale_d != 0),
//   A 64 x 16 and B 16 x N both from shared memory, K-major.
// WgmmaOp<N>::rs<T>(d, a, desc_b, scale_d): the same with A from registers
//   and B N-major; rs_kmajor the same with B K-major.
// WgmmaOp<N>::ss_mn<T>(d, desc_a, desc_b, scale_d): A and B from shared
//   memory, A M-major and B N-major (both "transposed").
// WgmmaOp<N>::ss_a_mmajor<T>(d, desc_a, desc_b, scale_d): A M-major, B K-major.
// Four 8 x 8 matrices of 16-bit values stored transposed (stmatrix .trans):
// r[m] holds matrix m in the accumulator layout (lane l: row l / 4, columns
// 2 (l % 4), + 1), and lanes 8 m .. 8 m + 7 give the addresses of the rows
// of matrix m's transpose (lane 8 m + j: row j, i.e. column j of matrix m),
// 16 bytes each.
__device__ __forceinline__ void stmatrix_x4_trans(std::uint32_t addr, const std::uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]),
               "r"(r[1]), "r"(r[2]), "r"(r[3])
               : "memory");
}

// Four 8 x 8 matrices of 16-bit values (stmatrix): r[m] holds matrix m in
// the accumulator layout (lane l: row l / 4, columns 2 (l % 4), + 1), and
// lanes 8 m .. 8 m + 7 give the addresses of matrix m's rows, 16 bytes each.
__device__ __forceinline__ void stmatrix_x4(std::uint32_t addr, const std::uint32_t (&r)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(r[0]), "r"(r[1]),
               "r"(r[2]), "r"(r[3])
               : "memory");
}

template <int kN> struct WgmmaOp;
#include "common/hopper/wgmma_ops.inc"

}  // namespace flash::detail
