// fwd_08_wgmma_pingpong: fwd_07 + the two overlaps of FlashAttention-3.
//
// What changed from fwd_07_wgmma (switches in kernels/common/fa3_forward.cuh):
// - Intra-warpgroup overlap: S(j) = Q K(j)^T and O += P(j-1) V(j-1) are
//   issued together; the softmax of tile j runs while the PV product is still
//   on the tensor cores, and O is rescaled once it lands.
// - Pingpong: named barriers hand the tensor cores to the two consumer
//   warpgroups in turn, so one warpgroup's softmax runs under the other's
//   GEMMs.
// Run it: ./runner --kernel wgmma_pingpong ; ./bench --kernel wgmma_pingpong --seq 4096 --dhead 128
#include "common/fa3_forward.cuh"

namespace flash::detail {
namespace {

template <int kHeadDim_> struct WgmmaPingpongConfig {
  static constexpr int kHeadDim = kHeadDim_;
  // hdim 64: three consumer warpgroups (192 rows) and three stages; their O
  // and S fit the 160 registers that leaves. 128 and 256: two (240 each).
  static constexpr int kConsumerWGs = kHeadDim == 64 ? 3 : 2;
  // 80-key tiles at hdim 256 are the widest that fit two stages in 227 KB.
  static constexpr int kBlockN = kHeadDim <= 128 ? 128 : 80;
  static constexpr int kStages = kHeadDim == 64 ? 3 : 2;
  static constexpr int kProducerRegs = kConsumerWGs == 2 ? 24 : 32;
  static constexpr int kConsumerRegs = kConsumerWGs == 2 ? 240 : 160;
  static constexpr bool kIntraWGOverlap = true;
  static constexpr bool kPingpong = true;
  static constexpr bool kHeavyFirst = true;
  static constexpr bool kQInRegisters = kHeadDim == 128;  // 32 registers; 64 and 256 have none to spare
};

}  // namespace

#if FLASH_HAS_SM90A
const FwdVariant* variant_wgmma_pingpong() { return fa3_variant<WgmmaPingpongConfig>(); }
#else
const FwdVariant* variant_wgmma_pingpong() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
