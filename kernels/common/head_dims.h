// The head dims this build instantiates (CMake option FLASH_HEAD_DIMS), and
// a switch from a run-time head dim to a compile-time one.
#pragma once

#include <type_traits>

#include "flash_build_config.h"

namespace flash::detail {

template <int kHeadDim> using HeadDim = std::integral_constant<int, kHeadDim>;

inline constexpr int kBuiltHeadDims[] = {
#if FLASH_HDIM_32
    32,
#endif
#if FLASH_HDIM_64
    64,
#endif
#if FLASH_HDIM_96
    96,
#endif
#if FLASH_HDIM_128
    128,
#endif
#if FLASH_HDIM_256
    256,
#endif
};
inline constexpr int kNumBuiltHeadDims = sizeof(kBuiltHeadDims) / sizeof(int);

// Calls f(HeadDim<d>{}) when d is built; returns false otherwise.
template <class F> bool dispatch_head_dim(int d, F&& f) {
  switch (d) {
#if FLASH_HDIM_32
    case 32: f(HeadDim<32>{}); return true;
#endif
#if FLASH_HDIM_64
    case 64: f(HeadDim<64>{}); return true;
#endif
#if FLASH_HDIM_96
    case 96: f(HeadDim<96>{}); return true;
#endif
#if FLASH_HDIM_128
    case 128: f(HeadDim<128>{}); return true;
#endif
#if FLASH_HDIM_256
    case 256: f(HeadDim<256>{}); return true;
#endif
    default: return false;
  }
}

}  // namespace flash::detail
