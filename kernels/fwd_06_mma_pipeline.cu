// fwd_06_mma_pipeline: cp.async pipeline, fragment double-buffering, causal
// scheduling and per-head-dim tiles.
//
// What changed from fwd_05_mma_swizzle:
// - K/V tiles arrive by cp.async into a ring of kStages shared-memory stages:
//   tile j + 1 is in flight while tile j computes, so the tensor cores no
//   longer wait for HBM at every tile.
// - ldmatrix for the next k-step (K) or the next dim pair (V) is issued
//   before the current mma, hiding shared-memory latency.
// - Causal: only the tiles that cross the diagonal (and the ragged tail) are
//   masked; the longest query blocks are launched first so the short ones
//   fill the tail of the grid.
// - Tile shapes per head dim (below), 128 query rows per CTA.
// Measured on the H200 (2026-11-21, bf16, 16k tokens), TFLOPS at seq 4096 /
// harmonic mean over seq 512-16k, and the share of PyTorch SDPA's flash
// backend (FlashAttention-2) measured in the same run:
//   hdim  64: 310.0 / 295.0 (107% / 104%), causal 280.2 / 247.1 (101% / 108%)
//   hdim 128: 307.5 / 294.0 ( 96% /  90%), causal 280.0 / 249.8 ( 93% /  98%)
//   hdim 256: 275.0 / 265.5 ( 90% /  87%), causal 238.1 / 220.0 ( 85% /  87%)
// ncu at hdim 128 (before the ldmatrix addressing change, at 299 TFLOPS):
// tensor pipe 46% busy, issue slots 44%, 8 warps per SM (registers and
// shared memory allow one 8-warp CTA).
// What did not help (docs/NOTES.md): issuing S of tile j + 1 before the
// softmax of tile j (a second S in registers spills; -17%), 128-key tiles at
// hdim 128 (-5%), 4-warp CTAs at hdim 128 (-6%).
// Registers: 237 / 225 / 244 (hdim 64 / 128 / 256), no spills; shared memory
// 48 / 96 / 128 KB; SASS: HMMA.16816, LDSM, LDGSTS, no local memory.
// 2026-11-23 (masks through common/mask.h): the frame's loop counts keys from
// the block's first visible key (an absolute tile index had cost 2-2.5% at
// every head dim); against e24b379's binary in the same call: d128 full 2k
// 297.7 -> 300.0, d256 causal 4k 236.2 -> 238.1, d64 causal 2k 262.7 -> 258.2.
// Run it: ./runner --kernel mma_pipeline ; ./bench --kernel mma_pipeline --seq 4096 --dhead 128
#include "fwd_06_mma_pipeline.h"

namespace flash::detail {
namespace {

FLASH_FA2_RUNG_KERNEL(fwd_06_mma_pipeline);

}  // namespace

const FwdVariant* variant_mma_pipeline() { return fa2_variant<MmaPipelineConfig, fwd_06_mma_pipeline_rung>(); }

}  // namespace flash::detail
