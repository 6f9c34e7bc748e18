// The head dims this build instantiates (CMake option FLASH_HEAD_DIMS), and
// a switch from a run-time head dim to a compile-time one over the head dims
// a kernel family supports.
#pragma once

#include <array>
#include <type_traits>
#include <utility>

#include "flash_build_config.h"

namespace flash::detail {

template <int kHeadDim> using HeadDim = std::integral_constant<int, kHeadDim>;

constexpr bool head_dim_built(int d) {
  return (d == 32 && FLASH_HDIM_32) || (d == 64 && FLASH_HDIM_64) || (d == 96 && FLASH_HDIM_96) ||
         (d == 128 && FLASH_HDIM_128) || (d == 256 && FLASH_HDIM_256);
}

template <int kDim, class F> bool dispatch_one_head_dim(int d, F& f) {
  if constexpr (head_dim_built(kDim)) {
    if (d == kDim) {
      f(HeadDim<kDim>{});
      return true;
    }
  }
  return false;
}

// Calls f(HeadDim<d>{}) when d is one of kDims and built; false otherwise.
// Head dims that are not built are never instantiated.
template <int... kDims, class F> bool dispatch_head_dim_of(int d, F&& f) {
  return (dispatch_one_head_dim<kDims>(d, f) || ...);
}

// The built subset of kDims, for a variant's descriptor.
template <int... kDims> struct BuiltHeadDims {
  static constexpr std::pair<std::array<int, sizeof...(kDims)>, int> make() {
    std::array<int, sizeof...(kDims)> dims{};
    int n = 0;
    ((head_dim_built(kDims) ? (dims[n++] = kDims, 0) : 0), ...);
    return {dims, n};
  }
  static constexpr auto kList = make();
  static const int* data() { return kList.first.data(); }
  static constexpr int size() { return kList.second; }
};

// Every head dim the library knows: the CUDA-core kernels take them all.
template <class F> bool dispatch_head_dim(int d, F&& f) {
  return dispatch_head_dim_of<32, 64, 96, 128, 256>(d, static_cast<F&&>(f));
}
using AllHeadDims = BuiltHeadDims<32, 64, 96, 128, 256>;

// The head dims of the tensor-core kernels: multiples of 64 (the swizzle's
// 128-byte groups).
template <class F> bool dispatch_tc_head_dim(int d, F&& f) {
  return dispatch_head_dim_of<64, 128, 256>(d, static_cast<F&&>(f));
}
using TcHeadDims = BuiltHeadDims<64, 128, 256>;

}  // namespace flash::detail
