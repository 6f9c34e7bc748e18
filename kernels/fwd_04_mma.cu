// fwd_04_mma: tensor cores through mma.sync, FlashAttention-2's work split.
//
// What changed from fwd_03_wmma: the m16n8k16 fragment layouts are explicit
// (inline PTX mma.sync, ldmatrix), so the softmax runs on the S accumulators
// in registers and P goes straight back in as the A operand of P V: no
// shared-memory round trip for S, P or O. Each warp owns 16 query rows, so
// row max and row sum are two quad shuffles, and the scale is folded into
// exp2. Q is loaded into registers once (head dim <= 128; at 256 it would
// crowd out the O accumulator, so it is re-read from shared memory).
// What it leaves for the next rungs: shared tiles are plain row-major, so
// every ldmatrix is an 8-way bank conflict (fwd_05); loads are synchronous,
// so the tensor cores idle while K and V arrive (fwd_06).
// Measured on the H200 (2026-11-21, bf16, 16k tokens, seq 4096): hdim 128
// 54.4 TFLOPS, 51.7 causal: slower than fwd_03_wmma, whose padded tiles have
// no bank conflicts. The layout, not the instruction, is the bottleneck here.
// Registers: 160 / 248 / 255 (hdim 64 / 128 / 256; 8 bytes of stack at 256).
// Resources: 64 x 64 (hdim <= 128) or 64 x 32 (256) tiles, 4 warps;
// shared memory 2 * (64 + 2 * kBlockN) * hdim bytes.
// Session 41: dense calls only, with masks, sinks, GQA and the LSE
// (MmaConfig::kEveryCall = false); varlen, paged, softcap and ALiBi calls
// are mma_pipeline's, so this TU builds 6 kernels instead of 36. Dense calls
// run the kernel they ran before: H200 A/B (hdim 128, 4 x 4096) 54.8 -> 54.9.
// Run it: ./runner --kernel mma ; ./bench --kernel mma --seq 4096 --dhead 128
#include "fwd_04_mma.h"

namespace flash::detail {
namespace {

FLASH_FA2_RUNG_KERNEL(fwd_04_mma);

}  // namespace

const FwdVariant* variant_mma() { return fa2_variant<MmaConfig, fwd_04_mma_rung>(); }

}  // namespace flash::detail
