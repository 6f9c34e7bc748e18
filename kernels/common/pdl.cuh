// Programmatic dependent launch (sm_90): a kernel launched with
// launch_after(true, ...) may start its CTAs once every CTA of the kernel
// before it in the stream has called let_next_kernel_start() (or exited),
// instead of once that kernel has finished. What it reads of the previous
// kernel's writes it must wait for itself: wait_for_previous_kernel() (the
// whole previous kernel finished and its writes visible; the decode path),
// or a counter that the previous kernel's CTAs release (the backward's dQ
// convert, common/hopper/bwd_tma.cuh). Both device calls are no-ops before
// sm_90, where launch_after() launches normally.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>

namespace flash::detail {

__device__ __forceinline__ void wait_for_previous_kernel() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
__device__ __forceinline__ void let_next_kernel_start() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

template <class... KernelArgs, class... Args>
cudaError_t launch_after(bool pdl, void (*kernel)(KernelArgs...), dim3 grid, dim3 block, std::size_t smem,
                         cudaStream_t stream, Args&&... args) {
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr[0].val.programmaticStreamSerializationAllowed = 1;
  cudaLaunchConfig_t cfg = {};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = pdl ? 1 : 0;
  return cudaLaunchKernelEx(&cfg, kernel, static_cast<Args&&>(args)...);
}

}  // namespace flash::detail
