// fwd_06_mma_pipeline's Config, in a header so that the next rung derives from it.
#pragma once

#include "fwd_05_mma_swizzle.h"

namespace flash::detail {

// fwd_06_mma_pipeline's Config: fwd_05's plus the cp.async pipeline, fragment
// double-buffering, causal scheduling and per-head-dim tiles
// (kernels/fwd_06_mma_pipeline.cu says why and what each measured).
template <int kHeadDim_> struct MmaPipelineConfig : MmaSwizzleConfig<kHeadDim_> {
  // hdim 64: 4 warps x 32 rows (each K/V fragment feeds two m-tiles);
  // 128 and 256: 8 warps x 16 rows (the O accumulator leaves no room for two).
  static constexpr int kWarps = kHeadDim_ == 64 ? 4 : 8;
  static constexpr int kMTiles = kHeadDim_ == 64 ? 2 : 1;
  static constexpr int kBlockM = 128;
  static constexpr int kStages = 2;
  static constexpr bool kAsyncCopy = true;
  static constexpr bool kQInRegisters = kHeadDim_ == 128;  // hdim 64 spends them on its second m-tile
  static constexpr bool kMaskOnlyWhereNeeded = true;
  static constexpr bool kHeavyFirst = true;
  static constexpr bool kPrefetchFragments = true;
  static constexpr bool kEveryCall = true;  // varlen, paged, softcap and ALiBi calls too
};

}  // namespace flash::detail
