// Warp reductions over the lanes that share a row, and a float4 addition to
// global memory.
#pragma once

namespace flash::detail {

// Max / sum across kLanes consecutive lanes (a power of two <= 32) by
// butterfly shuffles; every participating lane ends with the result.
template <int kLanes> __device__ __forceinline__ float group_max(float x) {
#pragma unroll
  for (int off = kLanes / 2; off > 0; off /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, off));
  return x;
}

template <int kLanes> __device__ __forceinline__ float group_sum(float x) {
#pragma unroll
  for (int off = kLanes / 2; off > 0; off /= 2) x += __shfl_xor_sync(0xffffffffu, x, off);
  return x;
}

// dst[0..3] += v without a return value (a vector reduction on sm_90, four
// scalar ones before); dst 16-byte aligned.
__device__ __forceinline__ void atomic_add4(float* dst, float4 v) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float4*>(dst), v);
#else
  atomicAdd(dst, v.x);
  atomicAdd(dst + 1, v.y);
  atomicAdd(dst + 2, v.z);
  atomicAdd(dst + 3, v.w);
#endif
}

}  // namespace flash::detail
