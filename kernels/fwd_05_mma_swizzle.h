// fwd_05_mma_swizzle's Config, in a header so that the next rung derives from it.
#pragma once

#include "fwd_04_mma.h"

namespace flash::detail {

// fwd_05_mma_swizzle's Config: fwd_04_mma's plus the swizzle and the 16-byte
// O stores (kernels/fwd_05_mma_swizzle.cu says why).
template <int kHeadDim_> struct MmaSwizzleConfig : MmaConfig<kHeadDim_> {
  using Layout = SwizzledLayout<kHeadDim_>;
  static constexpr bool kVectorEpilogue = true;
};

}  // namespace flash::detail
