// fwd_07_wgmma's Config, in a header so that the next rung derives from it.
#pragma once

#include "common/fa3_forward.cuh"

namespace flash::detail {

// fwd_07_wgmma's Config: the first Hopper rung (kernels/fwd_07_wgmma.cu says
// what it does and measured). The later Hopper rungs derive from it.
template <int kHeadDim_> struct WgmmaConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kConsumerWGs = 2;  // 128 query rows per CTA
  static constexpr int kBlockN = kHeadDim <= 128 ? 128 : 64;
  static constexpr int kStages = 2;
  static constexpr int kProducerRegs = 24, kConsumerRegs = 240;
  static constexpr bool kIntraWGOverlap = false;
  static constexpr bool kPingpong = false;
  static constexpr bool kHeavyFirst = true;
  static constexpr bool kQInRegisters = false;
};

}  // namespace flash::detail
