// fwd_08_wgmma_pingpong: fwd_07 + the two overlaps of FlashAttention-3.
//
// What changed from fwd_07_wgmma (switches in kernels/common/fa3_forward.cuh):
// - Intra-warpgroup overlap: S(j) = Q K(j)^T and O += P(j-1) V(j-1) are
//   issued together; the softmax of tile j runs while the PV product is still
//   on the tensor cores, and O is rescaled once it lands.
// - Pingpong: named barriers hand the tensor cores to the two consumer
//   warpgroups in turn, so one warpgroup's softmax runs under the other's
//   GEMMs.
// - Per head dim: hdim 64 runs three consumer warpgroups (192 rows) with
//   three stages (+5-10% over two); hdim 256 80-key tiles (+4-7% over 64);
//   hdim 128 keeps Q in registers as the A operand of S = Q K^T (+0.3-2%,
//   shared memory then feeds only K to that GEMM).
// Measured on the H200 (2026-11-21, bf16, 16k tokens), TFLOPS at seq 4096 /
// harmonic mean over seq 512-16k, and the share of PyTorch SDPA's cuDNN
// backend (cuDNN 9.19) measured in the same run:
//   hdim  64: 467.3 / 417.6 (98% / 95%), causal 395.4 / 305.3 (93% / 84%)
//   hdim 128: 593.6 / 532.9 (90% / 90%), causal 518.3 / 423.4 (91% / 90%)
//   hdim 256: 614.2 / 563.6 (85% / 87%), causal 529.2 / 445.1 (90% / 91%)
// At seq 16k: 509 / 623 / 641 TFLOPS (110% / 98% / 88% of cuDNN), causal
// 474 / 600 / 639 (102% / 98% / 98%). Over fwd_07: +12% at hdim 128
// (predicted +15-20%: the softmax is about half the GEMM time, so full
// overlap would hide it all; the per-tile start, where S(0) has nothing to
// overlap, and the tail remain). ncu at hdim 128, seq 4096: tensor pipe 71%
// busy, issue slots 40%, SMs active 96% of the time, no spills.
// Tried and dropped (docs/NOTES.md): 176- and 192-key tiles at hdim 128 (+2%
// at 8k, -2% at 2k), three stages at hdim 128, softmax row max/sum split into
// 2 or 4 partial chains (+-1%, -2% at hdim 256).
// Registers (setmaxnreg): producer 24 / consumers 240 (hdim 64: 32 / 160), no
// spills; shared memory 120 / 160 / 224 KB (hdim 64 / 128 / 256); SASS:
// HGMMA, UTMALDG / UTMASTG, LDSM (Q fragments at 128), no local memory.
// 2026-11-23 (masks through common/mask.h, the Hopper frame as objects):
// within 2% of e24b379 in the same call, seq 1k / 4k / 16k.
// Run it: ./runner --kernel wgmma_pingpong ; ./bench --kernel wgmma_pingpong --seq 4096 --dhead 128
#include "fwd_08_wgmma_pingpong.h"

namespace flash::detail {
namespace {

FLASH_FA3_RUNG_KERNEL(fwd_08_wgmma_pingpong);

}  // namespace

#if FLASH_HAS_SM90A
const FwdVariant* variant_wgmma_pingpong() { return fa3_variant<WgmmaPingpongConfig, fwd_08_wgmma_pingpong_rung>(); }
#else
const FwdVariant* variant_wgmma_pingpong() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
