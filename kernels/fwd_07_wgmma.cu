// fwd_07_wgmma: the Hopper forward's first step: TMA, wgmma and warp
// specialization (FlashAttention-3's structure, without its overlaps).
//
// What changed from fwd_06_mma_pipeline (kernels/common/fa3_forward.cuh):
// - wgmma instead of mma.sync: one warpgroup (4 warps) issues a 64 x N x 16
//   product with both operands read by the tensor cores straight from shared
//   memory (S = Q K^T) or A from registers (O += P V); no ldmatrix, no
//   fragments in registers for K and V.
// - TMA instead of cp.async: one producer thread asks the copy engine for a
//   whole tile, which lands already in the 128-byte-swizzled layout wgmma
//   reads; out-of-range rows arrive as zeros, so ragged tails need no code.
// - Warp specialization: a producer warpgroup (24 registers per thread after
//   setmaxnreg) and two consumer warpgroups (240), synchronised by mbarriers
//   per pipeline stage instead of __syncthreads.
// - The epilogue stores O by TMA from shared memory.
// Each consumer still runs S -> softmax -> PV in sequence: the tensor cores
// idle during its own softmax (the other warpgroup's GEMMs fill some of it,
// unordered). fwd_08 fills that gap.
// Measured on the H200 (2026-11-21, bf16, 16k tokens), TFLOPS at seq 4096 /
// harmonic mean over seq 512-16k, and the share of PyTorch SDPA's cuDNN
// backend measured in the same run:
//   hdim  64: 393.1 / 357.9 (82% / 81%), causal 353.6 / 287.2 (83% / 79%)
//   hdim 128: 531.0 / 486.9 (81% / 82%), causal 475.8 / 395.1 (83% / 84%)
//   hdim 256: 580.9 / 535.9 (81% / 83%), causal 497.4 / 430.7 (85% / 88%)
// against fwd_06_mma_pipeline's 305.1 at hdim 128: +74%, the largest step
// of the ladder. Prediction was ~+50% (wgmma's operand reads from shared
// memory free the registers and issue slots that ldmatrix took).
// Registers (setmaxnreg): producer 24, consumers 240, no spills; shared
// memory 80 / 160 / 192 KB (hdim 64 / 128 / 256; 128 x 128 tiles, 128 x 64
// at hdim 256, two stages); SASS: HGMMA.64x128x16 (S) and HGMMA with a
// register A operand (PV), UTMALDG / UTMASTG, SYNCS (mbarriers), no local
// memory.
// 2026-11-23 (masks through common/mask.h, the Hopper frame as objects):
// within 2% of e24b379 in the same call except causal hdim 128 at 1k
// (333.3 -> 322.6).
// Run it: ./runner --kernel wgmma ; ./bench --kernel wgmma --seq 4096 --dhead 128
#include "fwd_07_wgmma.h"

namespace flash::detail {
namespace {

FLASH_FA3_RUNG_KERNEL(fwd_07_wgmma);

}  // namespace

#if FLASH_HAS_SM90A
const FwdVariant* variant_wgmma() { return fa3_variant<WgmmaConfig, fwd_07_wgmma_rung>(); }
#else
const FwdVariant* variant_wgmma() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
