// fwd_05_mma_swizzle: XOR-swizzled shared memory and 16-byte global stores.
//
// What changed from fwd_04_mma: Layout = SwizzledLayout (common/smem_layout.cuh):
// the 16-byte chunk c of row r lives at chunk c ^ (r % 8). An ldmatrix 8 x 8
// matrix reads 8 rows at one logical chunk; unswizzled, rows of 128 bytes or
// a multiple all map to the same bank group (8-way conflict); swizzled, they
// map to 8 different groups, and so do the 16-byte stores of the tile copies.
// O is staged through each warp's own rows of the Q tile and written with
// 16-byte stores instead of 4-byte ones.
// Measured on the H200 (2026-11-21, bf16, 16k tokens, seq 4096): hdim 128
// 229.0 TFLOPS (4.2x fwd_04), 215.6 causal; hdim 64 211.9, hdim 256 191.4.
// Registers: 160 / 244 / 255 (hdim 64 / 128 / 256), no spills.
// Resources: as fwd_04_mma.
// Session 41: dense calls only, with masks, sinks, GQA and the LSE
// (kEveryCall, from MmaConfig); varlen, paged, softcap and ALiBi calls
// are mma_pipeline's, so this TU builds 6 kernels instead of 36. Dense calls
// run the kernel they ran before: H200 A/B (hdim 128, 4 x 4096) 231.5 -> 231.0.
// Run it: ./runner --kernel mma_swizzle ; ./bench --kernel mma_swizzle --seq 4096 --dhead 128
#include "fwd_05_mma_swizzle.h"

namespace flash::detail {
namespace {

FLASH_FA2_RUNG_KERNEL(fwd_05_mma_swizzle);

}  // namespace

const FwdVariant* variant_mma_swizzle() { return fa2_variant<MmaSwizzleConfig, fwd_05_mma_swizzle_rung>(); }

}  // namespace flash::detail
