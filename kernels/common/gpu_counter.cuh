// Counters in global memory shared by CTAs (and by the kernels of one
// call): read with acquire semantics at GPU scope (the writes released
// before the value read are visible after it), and incremented with
// release semantics (this thread's earlier writes, and those ordered before
// them, are visible to whoever acquires the new value). Any sm_70+ target.
#pragma once

namespace flash::detail {

__device__ __forceinline__ int ld_acquire_gpu(const int* counter) {
  int value;
  asm volatile("ld.global.acquire.gpu.b32 %0, [%1];\n" : "=r"(value) : "l"(counter) : "memory");
  return value;
}
// Spins until *counter == target, then acquires as ld_acquire_gpu does. The
// spin's loads are relaxed and one fence after them acquires: on sm_90 an
// acquire load is LDG.E.STRONG.GPU plus CCTL.IVALL, an invalidation of the
// SM's whole L1, whose SRAM is also the shared memory of every CTA on the SM.
// Spinning on acquire loads put one in every round trip (bwd_03 / bwd_04's
// deterministic dQ writers, ~2 a step: hdim 128 0-3% slower than this, the
// most where the turns wait longest; four acquire loads in flight, ~10 a
// step: 15-17% slower; session 60); the fence puts one in a wait.
// fence.acquire needs sm_90 and PTX 8.6 (taken as nvcc 12.8, to be safe);
// elsewhere the spin on acquire loads.
__device__ __forceinline__ void wait_equal_acquire_gpu(const int* counter, int target) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900 && (__CUDACC_VER_MAJOR__ * 100 + __CUDACC_VER_MINOR__ >= 1208)
  for (;;) {
    int value;
    asm volatile("ld.global.relaxed.gpu.b32 %0, [%1];\n" : "=r"(value) : "l"(counter) : "memory");
    if (value == target) break;
  }
  asm volatile("fence.acquire.gpu;\n" ::: "memory");
#else
  while (ld_acquire_gpu(counter) != target) {
  }
#endif
}
__device__ __forceinline__ void red_release_gpu_add(int* counter, int value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(counter), "r"(value) : "memory");
}

}  // namespace flash::detail
