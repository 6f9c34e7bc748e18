// Hardware facts and math constants, named once: the host (src/) and every
// kernel read them from here. Host-compilable.
#pragma once

// Functions that run on both sides (params, mask ranges); plain inline on the
// host compiler.
#if defined(__CUDACC__)
#define FLASH_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FLASH_HOST_DEVICE inline
#endif
// #pragma unroll in code that the host compiler sees too.
#if defined(__CUDA_ARCH__)
#define FLASH_UNROLL _Pragma("unroll")
#else
#define FLASH_UNROLL
#endif

namespace flash::detail {

// log2(e): exp(x) = exp2(x * log2(e)), so the softmax runs on exp2.
inline constexpr double kLog2e = 1.4426950408889634;

inline constexpr int kWarpgroupThreads = 128;  // Hopper: four warps issue one wgmma together
inline constexpr int kMaxGridYZ = 65535;       // CUDA's limit on gridDim.y and gridDim.z
inline constexpr int kSmemReservedPerCta = 1024;  // shared memory the runtime keeps per CTA (sm_80, sm_90)

}  // namespace flash::detail
