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
__device__ __forceinline__ void red_release_gpu_add(int* counter, int value) {
  asm volatile("red.release.gpu.global.add.s32 [%0], %1;\n" ::"l"(counter), "r"(value) : "memory");
}

}  // namespace flash::detail
