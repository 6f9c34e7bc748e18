// fwd_04_mma's Config, in a header so that the next rung derives from it.
#pragma once

#include "common/fa2_forward.cuh"

namespace flash::detail {

// fwd_04_mma's Config: the first tensor-core rung (kernels/fwd_04_mma.cu says
// what it does and measured). The later rungs derive from it.
template <int kHeadDim_> struct MmaConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kWarps = 4, kMTiles = 1, kBlockM = 64;
  static constexpr int kBlockN = kHeadDim <= 128 ? 64 : 32;
  using Layout = RowMajorLayout<kHeadDim>;
  static constexpr int kStages = 1;
  static constexpr bool kAsyncCopy = false;
  static constexpr bool kQInRegisters = kHeadDim <= 128;
  static constexpr bool kVectorEpilogue = false;
  static constexpr bool kMaskOnlyWhereNeeded = false;
  static constexpr bool kHeavyFirst = false;
  static constexpr bool kPrefetchFragments = false;
  // Dense calls only, without a softcap or ALiBi: variable-length batches,
  // paged caches and those two score modifiers are mma_pipeline's (issues 16
  // and 17 let the teaching rungs below it refuse them). Each took a kernel
  // per (dtype, head dim) more: 36 in this TU, 6 without (session 41, the
  // clean build's time). Masks, sinks, GQA and the LSE stay.
  static constexpr bool kEveryCall = false;
};

}  // namespace flash::detail
