// fwd_08_wgmma_pingpong's Config, in a header so that the next rung derives from it.
#pragma once

#include "fwd_07_wgmma.h"

namespace flash::detail {

// fwd_08_wgmma_pingpong's Config: fwd_07's plus FlashAttention-3's two
// overlaps and per-head-dim tiles (kernels/fwd_08_wgmma_pingpong.cu says why).
template <int kHeadDim_> struct WgmmaPingpongConfig : WgmmaConfig<kHeadDim_> {
  // hdim 64: three consumer warpgroups (192 rows) and three stages; their O
  // and S fit the 160 registers that leaves. 128 and 256: two (240 each).
  static constexpr int kConsumerWGs = kHeadDim_ == 64 ? 3 : 2;
  // 80-key tiles at hdim 256 are the widest that fit two stages in 227 KB.
  static constexpr int kBlockN = kHeadDim_ <= 128 ? 128 : 80;
  static constexpr int kStages = kHeadDim_ == 64 ? 3 : 2;
  static constexpr int kProducerRegs = kConsumerWGs == 2 ? 24 : 32;
  static constexpr int kConsumerRegs = kConsumerWGs == 2 ? 240 : 160;
  static constexpr bool kIntraWGOverlap = true;
  static constexpr bool kPingpong = true;
  static constexpr bool kQInRegisters = kHeadDim_ == 128;  // 32 registers; 64 and 256 have none to spare
};

}  // namespace flash::detail
