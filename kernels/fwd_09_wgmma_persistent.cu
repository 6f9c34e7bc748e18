// fwd_09_wgmma_persistent: fwd_08 + a persistent tile scheduler (non-causal).
//
// What changed from fwd_08_wgmma_pingpong (kPersistent in
// kernels/common/fa3_forward.cuh): one CTA per SM loops over the tiles
// (query block fastest, so CTAs running together share a head's K/V in L2).
// The producer runs ahead into the next tile: its Q and first K/V tiles load
// while the consumers still finish and store the current one, so a tile's
// start no longer waits for a CTA launch, a Q load from memory and an empty
// pipeline. Q and O need separate buffers for that; at hdim 256 (64 KB each
// beside 160 KB of K/V) they do not fit, so hdim 256 keeps fwd_08's schedule,
// and so do causal calls (static round-robin gives each CTA a random mix of
// long and short causal tiles; the hardware's block scheduler balances them).
// The first try was slower (docs/NOTES.md): its stage arithmetic moved the
// wgmma descriptors off the uniform datapath. Here each tile restarts the
// K/V ring at stage 0 and the loop is unrolled by the stage count, so every
// descriptor is a uniform base plus a constant.
// Run it: ./runner --kernel wgmma_persistent ; ./bench --kernel wgmma_persistent --seq 4096 --dhead 128
#include "common/fa3_forward.cuh"

namespace flash::detail {
namespace {

template <int kHeadDim_> struct WgmmaPersistentConfig {
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
  static constexpr bool kPersistent = kHeadDim <= 128;  // hdim 256: Q, O and two stages exceed 227 KB
};

}  // namespace

#if FLASH_HAS_SM90A
const FwdVariant* variant_wgmma_persistent() { return fa3_variant<WgmmaPersistentConfig>(); }
#else
const FwdVariant* variant_wgmma_persistent() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
