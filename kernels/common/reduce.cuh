// Warp reductions over the lanes that share a row.
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

}  // namespace flash::detail
