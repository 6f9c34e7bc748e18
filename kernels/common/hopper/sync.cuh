// Hopper synchronisation and data movement for warp-specialized kernels:
// mbarriers, TMA tile loads and stores, named barriers and setmaxnreg.
// mbarrier and TMA go through libcu++'s cuda::ptx; the rest is one PTX
// instruction each.
//
// An mbarrier counts arrivals (and, for TMA, transaction bytes) in phases.
// A waiter names the parity of the phase it waits for; a freshly
// initialised barrier is in phase 0, and a wait for parity 1 returns at once
// (that phase counts as complete), which is how a producer passes its first
// round of "stage empty" waits.
#pragma once

#include <cuda/ptx>

#include <cstdint>

#include "common/gpu_counter.cuh"  // ld_acquire_gpu, red_release_gpu_add

namespace flash::detail {

__device__ __forceinline__ void mbar_init(std::uint64_t* bar, std::uint32_t count) {
  cuda::ptx::mbarrier_init(bar, count);
}
// Makes the initialised barriers visible to the async proxy (TMA) and to
// other threads; follow with a CTA barrier.
__device__ __forceinline__ void mbar_init_fence() {
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
}
__device__ __forceinline__ void mbar_wait(std::uint64_t* bar, std::uint32_t parity) {
  while (!cuda::ptx::mbarrier_try_wait_parity(bar, parity)) {
  }
}
__device__ __forceinline__ void mbar_arrive(std::uint64_t* bar) {
  cuda::ptx::mbarrier_arrive(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, bar);
}
// One arrival plus the number of bytes TMA will deliver in this phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(std::uint64_t* bar, std::uint32_t bytes) {
  cuda::ptx::mbarrier_arrive_expect_tx(cuda::ptx::sem_release, cuda::ptx::scope_cta, cuda::ptx::space_shared, bar,
                                       bytes);
}

// One box of a 4-D tensor map (coordinates innermost first) into shared
// memory, completing on bar.
__device__ __forceinline__ void tma_load_4d(void* smem_dst, const void* tensor_map, int c0, int c1, int c2, int c3,
                                            std::uint64_t* bar) {
  const std::int32_t coords[4] = {c0, c1, c2, c3};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem_dst, tensor_map, coords, bar);
}
// The same for a 5-D tensor map.
__device__ __forceinline__ void tma_load_5d(void* smem_dst, const void* tensor_map, int c0, int c1, int c2, int c3,
                                            int c4, std::uint64_t* bar) {
  const std::int32_t coords[5] = {c0, c1, c2, c3, c4};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_cluster, cuda::ptx::space_global, smem_dst, tensor_map, coords, bar);
}
// Fetches a tensor map (a kernel parameter) into the cache TMA reads it
// from, so the first load through it does not wait for it.
__device__ __forceinline__ void tma_prefetch_map(const void* tensor_map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(tensor_map)) : "memory");
}
// `bytes` (a multiple of 16; both addresses 16-byte aligned) of contiguous
// global memory into shared memory, completing on bar: the non-tensor bulk
// copy, for rows of per-row arrays.
__device__ __forceinline__ void bulk_load(void* smem_dst, const void* src, std::uint32_t bytes, std::uint64_t* bar) {
  cuda::ptx::cp_async_bulk(cuda::ptx::space_cluster, cuda::ptx::space_global, smem_dst, src, bytes, bar);
}
// One box from shared memory to global memory; out-of-bounds rows are not
// written. Complete with tma_store_commit() and tma_store_wait_read().
__device__ __forceinline__ void tma_store_4d(const void* tensor_map, const void* smem_src, int c0, int c1, int c2,
                                             int c3) {
  const std::int32_t coords[4] = {c0, c1, c2, c3};
  cuda::ptx::cp_async_bulk_tensor(cuda::ptx::space_global, cuda::ptx::space_shared, tensor_map, coords, smem_src);
}
__device__ __forceinline__ void tma_store_commit() { cuda::ptx::cp_async_bulk_commit_group(); }
// Waits until the committed stores have read their shared memory.
__device__ __forceinline__ void tma_store_wait_read() { cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<0>{}); }
// Adds `bytes` (a multiple of 16) of fp32 values from shared memory to global
// memory, element by element, in the copy engine: one instruction instead of
// a vector atomic per thread and fragment. Both addresses 16-byte aligned.
// Complete with tma_store_commit() and tma_store_wait_read() (or
// bulk_wait_all()).
__device__ __forceinline__ void bulk_reduce_add_f32(float* gmem, const float* smem, std::uint32_t bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(gmem),
               "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(smem))), "r"(bytes)
               : "memory");
}
// The same bytes stored rather than added (the plain bulk copy): the first
// of a deterministic dQ tile's ordered additions (BwdDqOrder), so that the
// accumulator needs no zeros beforehand. Completes as bulk_reduce_add_f32.
__device__ __forceinline__ void bulk_store_f32(float* gmem, const float* smem, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(gmem),
               "r"(static_cast<std::uint32_t>(__cvta_generic_to_shared(smem))), "r"(bytes)
               : "memory");
}
// Waits until every committed bulk group but the kPending most recent ones
// has read its shared memory: bulk_wait_read<1>() after committing two
// groups waits for the first one's source reads only.
template <int kPending> __device__ __forceinline__ void bulk_wait_read() {
  cuda::ptx::cp_async_bulk_wait_group_read(cuda::ptx::n32_t<kPending>{});
}
// Waits until the committed bulk operations are complete (their global
// writes done, not only their shared-memory reads).
__device__ __forceinline__ void bulk_wait_all() { cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{}); }
// Orders global memory between the generic proxy and the async proxy (bulk
// copies and reductions) for this thread: after bulk_wait_all(), its
// completed bulk writes before its later generic accesses (a release that
// publishes them); after an acquire, what that acquire made visible before
// its later bulk operations.
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// Orders this thread's ordinary shared-memory writes before later reads by
// the async proxy (TMA stores, wgmma operands).
__device__ __forceinline__ void fence_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// x, through a move the compiler cannot see into: a value read afresh where
// keeping it live (or recomputing what it feeds) would cost more.
__device__ __forceinline__ std::uint32_t opaque(std::uint32_t x) {
  asm volatile("mov.u32 %0, %1;\n" : "=r"(x) : "r"(x));
  return x;
}

// Named barriers 1..15 (0 is __syncthreads): sync waits for `count` threads
// (arrivals included); arrive counts this thread and moves on.
__device__ __forceinline__ void named_barrier_sync(int id, int count) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void named_barrier_arrive(int id, int count) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(count) : "memory");
}

// setmaxnreg: a warpgroup gives back (dec) or takes (inc) registers so that
// the producer runs on few and the consumers on many. Takes effect only with
// a register cap at entry (__launch_bounds__(threads, 1)).
// setmaxnreg moves registers within what the CTA got at launch: the
// threads times the per-thread count of __launch_bounds__(threads, blocks)
// (65536 / (threads * blocks), a multiple of 8). Asking for more makes
// setmaxnreg.inc wait forever (a hang: 32 producer registers with two
// 240-register consumers, 2026-11-24). For one producer warpgroup and
// `consumer_wgs` consumer warpgroups, `blocks` CTAs per SM, whether a split fits:
constexpr bool setmaxnreg_fits(int producer_regs, int consumer_regs, int consumer_wgs, int blocks = 1) {
  const int launch_regs = 65536 / (128 * (1 + consumer_wgs) * blocks) / 8 * 8;
  return producer_regs + consumer_wgs * consumer_regs <= (1 + consumer_wgs) * launch_regs;
}
template <int kRegs> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

}  // namespace flash::detail
