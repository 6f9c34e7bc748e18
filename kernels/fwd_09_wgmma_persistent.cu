// fwd_09_wgmma_persistent: fwd_08 + a persistent tile scheduler.
//
// What changed from fwd_08_wgmma_pingpong (kPersistent in
// kernels/common/fa3_forward.cuh): one CTA per SM loops over the tiles
// (query block, head, batch), query blocks fastest so CTAs running together
// share K/V in L2, and under a causal mask the longest blocks first. The
// producer runs ahead into the next tile: its Q and first K/V tiles load
// while the consumers still finish and store the current one, so the start
// of a tile (Q, the first K, the first S with nothing to overlap) stops
// costing a CTA launch and an idle pipeline. Q and O need separate buffers
// for that, which at hdim 256 (64 KB each next to 160 KB of K/V) do not fit:
// hdim 256 runs fwd_08's non-persistent schedule.
// Run it: ./runner --kernel wgmma_persistent ; ./bench --kernel wgmma_persistent --seq 4096 --dhead 128
#include "common/fa3_forward.cuh"

namespace flash::detail {
namespace {

template <int kHeadDim_> struct WgmmaPersistentConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kConsumerWGs = kHeadDim == 64 ? 3 : 2;
  static constexpr int kBlockN = kHeadDim <= 128 ? 128 : 80;
  static constexpr int kStages = kHeadDim == 64 ? 3 : 2;
  static constexpr int kProducerRegs = kConsumerWGs == 2 ? 24 : 32;
  static constexpr int kConsumerRegs = kConsumerWGs == 2 ? 240 : 160;
  static constexpr bool kIntraWGOverlap = true;
  static constexpr bool kPingpong = true;
  static constexpr bool kHeavyFirst = true;
  static constexpr bool kPersistent = kHeadDim <= 128;
};

}  // namespace

#if FLASH_HAS_SM90A
const FwdVariant* variant_wgmma_persistent() { return fa3_variant<WgmmaPersistentConfig>(); }
#else
const FwdVariant* variant_wgmma_persistent() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
