// The FlashAttention-2 forward on mma.sync, shared by the tensor-core rungs
// of the ladder (fwd_04_mma, fwd_05_mma_swizzle, fwd_06_mma_pipeline). Each
// rung is a Config that switches on its idea; this file is the common frame.
//
// Work split (FlashAttention-2): a CTA owns kBlockM query rows of one
// (batch, head); each warp owns 16 * kMTiles of them, so softmax statistics
// never leave the warp. Per K/V tile of kBlockN keys:
//   S = Q K^T        mma.sync, Q fragments from registers or shared memory,
//                    K fragments by ldmatrix from shared memory
//   scores, mask     ScoreMod and Mask (common/scores.h, common/mask.h); the
//                    softcap and ALiBi only in the kMods instantiation (as
//                    runtime branches they cost every call 2-6%, A/B against
//                    212efaf; as a template flag +-1.3%)
//   online softmax   exp2 with the scale folded in; O rows rescaled
//   O += P V         P taken straight from the S accumulators (mma.cuh),
//                    V fragments by ldmatrix.trans
// then O / row_sum and LSE are written, the sink folded in (add_sink: one
// expf and log1pf per row; the sinks cost 0.3-1.3% on the Hopper rungs).
// Sequences (kSeq): a dense batch, per-sequence rows and lengths from the
// device metadata (variable-length batches, seqused_k), or a paged KV cache
// whose K/V tile rows are read through the page table (paged prefill).
//
// Config (a struct with these members, see the rung files):
//   kHeadDim, kBlockM, kBlockN, kWarps, kMTiles   tile shape (kBlockM = kWarps * 16 * kMTiles)
//   Layout                                        RowMajorLayout<kHeadDim> or SwizzledLayout<kHeadDim>
//   kStages                                       K/V shared-memory stages (1: load, then compute)
//   kAsyncCopy                                    cp.async instead of loads through registers
//   kQInRegisters                                 Q fragments loaded once and kept in registers
//   kVectorEpilogue                               O staged in shared memory, 16-byte global stores
//   kMaskOnlyWhereNeeded                          mask only the tiles Mask says need it
//   kHeavyFirst                                   causal: launch the longest query blocks first
//   kEveryCall                                    varlen, paged, softcap and ALiBi calls (else dense ones only)
//
// Each rung launches a kernel named after it (FLASH_FA2_RUNG_KERNEL), so
// ncu and nsys name the rung; its body is fa2_forward().
//   kPrefetchFragments                            load step k+1's K/V fragments before step k's mma
#pragma once

#include <cstdint>
#include <string>

#include "common/copy.cuh"
#include "common/smem_layout.cuh"
#include "common/head_dims.h"
#include "common/launch_limits.h"
#include "common/mask.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/paged_kv.cuh"
#include "common/params.h"
#include "common/scores.h"
#include "common/variant.h"
#include "flash/variants.h"

namespace flash::detail {

template <class Cfg> struct Fa2Smem {
  static constexpr int kQElems = Cfg::kBlockM * Cfg::kHeadDim;
  static constexpr int kKVElems = Cfg::kBlockN * Cfg::kHeadDim;  // one K or V stage
  static constexpr std::size_t kBytes = (kQElems + 2 * Cfg::kStages * kKVElems) * 2;
};

// kMods: the call has a softcap or ALiBi (dispatch_score_mods). kSeq
// (p.seq_layout()): dense, or per-sequence metadata (a variable-length batch,
// seqused_k): each sequence's rows, lengths and mask from seq_span(b); or
// paged: the same with the K/V tile rows read through the page table
// (PagedTileRows, its lookups a tile ahead). Template flags, so that dense
// calls keep their code.
template <class T, class Cfg, bool kMods, SeqLayout kSeq> __device__ __forceinline__ void fa2_forward(const FwdParams& p) {
  constexpr int kHeadDim = Cfg::kHeadDim, kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN;
  constexpr int kMTiles = Cfg::kMTiles, kThreads = Cfg::kWarps * 32, kStages = Cfg::kStages;
  constexpr int kNTilesS = kBlockN / 8;    // 8-key n-tiles of S
  constexpr int kNTilesO = kHeadDim / 8;   // 8-dim n-tiles of O
  constexpr int kKStepsQK = kHeadDim / 16;
  constexpr int kKStepsPV = kBlockN / 16;
  using Layout = typename Cfg::Layout;
  using Smem = Fa2Smem<Cfg>;
  static_assert(kBlockM == Cfg::kWarps * 16 * kMTiles, "each warp owns 16 * kMTiles rows");
  static_assert(kNTilesS % 2 == 0 && kNTilesO % 2 == 0, "ldmatrix.x4 loads n-tiles in pairs");
  constexpr bool kPerSequence = kSeq != SeqLayout::dense, kPaged = kSeq == SeqLayout::paged;

  extern __shared__ uint4 smem_u4[];  // uint4: 16-byte aligned for ldmatrix and cp.async
  T* sQ = reinterpret_cast<T*>(smem_u4);
  T* sK = sQ + Smem::kQElems;                       // [kStages][kBlockN][kHeadDim]
  T* sV = sK + kStages * Smem::kKVElems;            // [kStages][kBlockN][kHeadDim]

  const int m_block = Cfg::kHeavyFirst && p.mask.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
  const int h = blockIdx.y, b = blockIdx.z, h_kv = h / p.group_size;
  const int m0 = m_block * kBlockM;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int g = lane / 4, t = lane % 4;
  const int warp_row0 = warp * 16 * kMTiles;  // first row of this warp within the block

  // This sequence: offsets, lengths and mask (dense: the call's own).
  int seqlen_q = p.seqlen_q, seqlen_k = p.seqlen_k, lse_row0 = 0;
  std::int64_t q_off = b * p.q_batch_stride, k_off = b * p.k_batch_stride, v_off = b * p.v_batch_stride,
               o_off = b * p.o_batch_stride;
  if constexpr (kPerSequence) {
    if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
    const auto seq = p.seq_span(b);
    seqlen_q = seq.seqlen_q, seqlen_k = seq.seqlen_k, lse_row0 = seq.lse_row0;
    q_off = seq.q, k_off = seq.k, v_off = seq.v, o_off = seq.o;
    if (m0 >= seqlen_q) return;
  }
  const Mask seq_mask = kPerSequence ? p.mask_for(seqlen_q, seqlen_k) : Mask();
  const Mask& mask = kPerSequence ? seq_mask : p.mask_for();

  const T* gQ = static_cast<const T*>(p.q) + q_off + h * p.q_head_stride + m0 * p.q_row_stride;
  // The key tiles this block sees (Mask): tiles outside are never loaded.
  // The loop below counts them j = 0 .. n_blocks - 1 from key key0, where
  // gK and gV start. keys.all_begin / all_end bound the keys every row sees:
  // tiles inside need no mask, a test of two compares per tile. Loop
  // arithmetic is relative to key0, as it was from key 0 before the Mask
  // (an absolute tile index cost 2-3% at every head dim); the Mask itself
  // and ScoreMod are built where they are used, from the constant bank.
  RowBlockKeys keys = mask.row_block(m0, kBlockM);
  const TileRange tiles = keys.key_tiles<kBlockN>();
  const int key0 = tiles.begin * kBlockN, n_blocks = tiles.count();
  keys.all_begin -= key0, keys.all_end -= key0;
  const int keys_left = seqlen_k - key0;  // keys from gK on

  // Paged: gK and gV are head h_kv of page 0; every row goes through the page table.
  const T* gK = static_cast<const T*>(p.k) + k_off + h_kv * p.k_head_stride + (kPaged ? 0 : key0 * p.k_row_stride);
  const T* gV = static_cast<const T*>(p.v) + v_off + h_kv * p.v_head_stride + (kPaged ? 0 : key0 * p.v_row_stride);
  [[maybe_unused]] PagedTileRows<kBlockN, kHeadDim, kThreads> pages;  // kPaged: the pages of the next tile to load
  if constexpr (kPaged) {
    if (n_blocks > 0) pages.fetch(p, b, key0, keys_left);
  }

  auto load_kv = [&](int j) {
    const int stage = j % kStages, n0 = j * kBlockN;  // relative to key0
    if constexpr (kPaged) {
      const int row_mask = p.page_size - 1;
      pages.template copy<Layout, Cfg::kAsyncCopy>(sK + stage * Smem::kKVElems, gK, p.k_batch_stride, p.k_row_stride,
                                                   row_mask, key0 + n0, keys_left - n0);
      pages.template copy<Layout, Cfg::kAsyncCopy>(sV + stage * Smem::kKVElems, gV, p.v_batch_stride, p.v_row_stride,
                                                   row_mask, key0 + n0, keys_left - n0);
      // Tiles load in order: look up the next one's pages now, while this
      // tile and the one before it are in flight.
      if (j + 1 < n_blocks) pages.fetch(p, b, key0 + n0 + kBlockN, keys_left - n0 - kBlockN);
    } else {
      copy_g2s_tile<Layout, kBlockN, kHeadDim, kThreads, Cfg::kAsyncCopy>(sK + stage * Smem::kKVElems,
                                                                           gK + n0 * p.k_row_stride, p.k_row_stride,
                                                                           keys_left - n0);
      copy_g2s_tile<Layout, kBlockN, kHeadDim, kThreads, Cfg::kAsyncCopy>(sV + stage * Smem::kKVElems,
                                                                           gV + n0 * p.v_row_stride, p.v_row_stride,
                                                                           keys_left - n0);
    }
    if constexpr (Cfg::kAsyncCopy) cp_async_commit();
  };

  // Prologue: Q, then the first kStages - 1 K/V tiles (one commit group each;
  // Q rides in the first group).
  copy_g2s_tile<Layout, kBlockM, kHeadDim, kThreads, Cfg::kAsyncCopy>(sQ, gQ, p.q_row_stride, seqlen_q - m0);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_blocks) load_kv(s);
    else if constexpr (Cfg::kAsyncCopy) cp_async_commit();  // keep the group count uniform
  }

  // Fragment addresses: lane l gives one row address of an 8 x 8 matrix.
  // A (Q, 16 x 16):      row l % 16,                 col 8 * (l / 16)
  // B (K, 16 keys x 16): key l % 8 + 8 * (l / 16),   col 8 * ((l / 8) % 2)
  // B^T (V, 16 keys x 16 dims, .trans): key l % 8 + 8 * ((l / 8) % 2), dim 8 * (l / 16)
  const int a_row = lane % 16, a_col = 8 * (lane / 16);
  const int k_row = lane % 8 + 8 * (lane / 16), k_col = 8 * ((lane / 8) % 2);
  const int v_row = lane % 8 + 8 * ((lane / 8) % 2), v_col = 8 * (lane / 16);
  // Per-lane shared addresses of those rows for the four phases of a 16-column
  // step (smem_layout.cuh); K and V at stage 0.
  std::uint32_t q_addr[4], k_addr[4], v_addr[4];
#pragma unroll
  for (int ph = 0; ph < 4; ++ph) {
    q_addr[ph] = smem_addr(sQ + Layout::lane_offset(warp_row0 + a_row, a_col, ph));
    k_addr[ph] = smem_addr(sK + Layout::lane_offset(k_row, k_col, ph));
    v_addr[ph] = smem_addr(sV + Layout::lane_offset(v_row, v_col, ph));
  }
  constexpr std::uint32_t kStageBytes = Smem::kKVElems * sizeof(T);

  std::uint32_t rQ[Cfg::kQInRegisters ? kMTiles : 1][Cfg::kQInRegisters ? kKStepsQK : 1][4];
  float acc_o[kMTiles][kNTilesO][4];
#pragma unroll
  for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
    for (int nt = 0; nt < kNTilesO; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_o[mt][nt][e] = 0.0f;
  OnlineSoftmax<kMTiles> softmax;

  // Waits until tile j has landed in shared memory for every thread.
  // kAsyncCopy: the prologue commits tiles 0 .. kStages - 2 and each
  // issue_next() one more group, so when tile j is needed j + kStages groups
  // are committed and it is complete once at most kStages - 1 are pending.
  auto wait_tile = [&]() {
    if constexpr (Cfg::kAsyncCopy) cp_async_wait<kStages - 1>();
    __syncthreads();  // every thread's copies of the tile (and of Q, the first time) are visible
  };
  // Issues tile j + kStages - 1 (or an empty group) into the stage that the
  // previous iteration's closing barrier released.
  auto issue_next = [&](int j) {
    if (j + kStages - 1 < n_blocks) load_kv(j + kStages - 1);
    else if constexpr (Cfg::kAsyncCopy) cp_async_commit();
  };

  // S = Q K^T for tile j, raw (unscaled) scores.
  auto compute_s = [&](int j, float(&acc_s)[kMTiles][kNTilesS][4]) {
    const std::uint32_t stage_bytes = (j % kStages) * kStageBytes;
    if constexpr (Cfg::kQInRegisters) {
      if (j == 0) {
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
          for (int ks = 0; ks < kKStepsQK; ++ks)
            ldmatrix_x4(rQ[mt][ks], q_addr[ks % 4] + 2 * Layout::step_offset(mt * 16, ks));
      }
    }
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc_s[mt][nt][e] = 0.0f;
    std::uint32_t bK[2][kNTilesS / 2][4];  // [buffer][n-tile pair]: double buffer over k-steps
    auto load_k_frags = [&](int ks, std::uint32_t(&dst)[kNTilesS / 2][4]) {
#pragma unroll
      for (int np = 0; np < kNTilesS / 2; ++np)
        ldmatrix_x4(dst[np], k_addr[ks % 4] + stage_bytes + 2 * Layout::step_offset(np * 16, ks));
    };
    if constexpr (Cfg::kPrefetchFragments) load_k_frags(0, bK[0]);
#pragma unroll
    for (int ks = 0; ks < kKStepsQK; ++ks) {
      const int buf = Cfg::kPrefetchFragments ? ks % 2 : 0;
      if constexpr (Cfg::kPrefetchFragments) {
        if (ks + 1 < kKStepsQK) load_k_frags(ks + 1, bK[(ks + 1) % 2]);
      } else {
        load_k_frags(ks, bK[0]);
      }
      std::uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        if constexpr (Cfg::kQInRegisters) {
#pragma unroll
          for (int e = 0; e < 4; ++e) a[mt][e] = rQ[mt][ks][e];
        } else {
          ldmatrix_x4(a[mt], q_addr[ks % 4] + 2 * Layout::step_offset(mt * 16, ks));
        }
      }
#pragma unroll
      for (int np = 0; np < kNTilesS / 2; ++np) {
        const std::uint32_t b0[2] = {bK[buf][np][0], bK[buf][np][1]};
        const std::uint32_t b1[2] = {bK[buf][np][2], bK[buf][np][3]};
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_16816<T>(acc_s[mt][2 * np], a[mt], b0);
          mma_16816<T>(acc_s[mt][2 * np + 1], a[mt], b1);
        }
      }
    }
  };

  // The score rule, then -inf for the keys the Mask hides (kMaskOnlyWhereNeeded:
  // only on the tiles that hold such keys for some row of the block).
  const ScoreMod scores = kMods ? ScoreMod(p, b, h, mask.diag) : ScoreMod(p);
  auto mask_s = [&](int j, float(&acc_s)[kMTiles][kNTilesS][4]) {
    const int n0 = j * kBlockN;  // relative to key0
    if constexpr (kMods) scores.apply(acc_s, m0 + warp_row0, key0 + n0, lane);
    if (Cfg::kMaskOnlyWhereNeeded && !keys.needs_mask(n0, kBlockN)) return;
    mask.apply(acc_s, m0 + warp_row0, key0 + n0, lane);
  };

  // O += P V for tile j, P converted from the S accumulators in registers.
  // V fragments come per pair of 8-dim n-tiles; with kPrefetchFragments the
  // next pair's ldmatrix is issued before this pair's mma.
  auto accumulate_pv = [&](int j, const float(&acc_s)[kMTiles][kNTilesS][4]) {
    const std::uint32_t stage_bytes = (j % kStages) * kStageBytes;
    auto load_v_frags = [&](int kk, int dp, std::uint32_t(&dst)[4]) {
      ldmatrix_x4_trans(dst, v_addr[dp % 4] + stage_bytes + 2 * Layout::step_offset(kk * 16, dp));
    };
#pragma unroll
    for (int kk = 0; kk < kKStepsPV; ++kk) {
      std::uint32_t a[kMTiles][4];
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt) {
        a[mt][0] = pack2<T>(acc_s[mt][2 * kk][0], acc_s[mt][2 * kk][1]);
        a[mt][1] = pack2<T>(acc_s[mt][2 * kk][2], acc_s[mt][2 * kk][3]);
        a[mt][2] = pack2<T>(acc_s[mt][2 * kk + 1][0], acc_s[mt][2 * kk + 1][1]);
        a[mt][3] = pack2<T>(acc_s[mt][2 * kk + 1][2], acc_s[mt][2 * kk + 1][3]);
      }
      std::uint32_t bV[2][4];
      if constexpr (Cfg::kPrefetchFragments) load_v_frags(kk, 0, bV[0]);
#pragma unroll
      for (int dp = 0; dp < kNTilesO / 2; ++dp) {
        const int buf = Cfg::kPrefetchFragments ? dp % 2 : 0;
        if constexpr (Cfg::kPrefetchFragments) {
          if (dp + 1 < kNTilesO / 2) load_v_frags(kk, dp + 1, bV[(dp + 1) % 2]);
        } else {
          load_v_frags(kk, dp, bV[0]);
        }
        const std::uint32_t b0[2] = {bV[buf][0], bV[buf][1]};
        const std::uint32_t b1[2] = {bV[buf][2], bV[buf][3]};
#pragma unroll
        for (int mt = 0; mt < kMTiles; ++mt) {
          mma_16816<T>(acc_o[mt][2 * dp], a[mt], b0);
          mma_16816<T>(acc_o[mt][2 * dp + 1], a[mt], b1);
        }
      }
    }
  };

  for (int j = 0; j < n_blocks; ++j) {
    issue_next(j);
    wait_tile();
    float acc_s[kMTiles][kNTilesS][4];
    compute_s(j, acc_s);
    mask_s(j, acc_s);
    softmax.update(acc_s, acc_o, ScoreMod(p).exp2_scale());
    accumulate_pv(j, acc_s);
    __syncthreads();  // every warp is done reading this stage before a later load overwrites it
  }
  if constexpr (Cfg::kAsyncCopy) {
    cp_async_commit();  // Q of a block with no K/V tile may be uncommitted still
    cp_async_wait<0>();  // no copy may land after this point
  }

  float lse[2 * kMTiles];
  softmax.finalize(acc_o, ScoreMod(p).lse_scale(), lse, ScoreMod::sink(p, h));

  T* gO = static_cast<T*>(p.o) + o_off + h * p.o_head_stride;
  if constexpr (Cfg::kVectorEpilogue) {
    // Stage O in this warp's own rows of sQ (no other warp reads them, and
    // with Q in registers or after the last barrier above this warp is done
    // with Q), then write whole 16-byte chunks per lane.
    if (n_blocks == 0) __syncthreads();  // Q copies may still be landing: they were never waited on
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int nt = 0; nt < kNTilesO; ++nt)
#pragma unroll
        for (int half = 0; half < 2; ++half) {
          const int row = warp_row0 + mt * 16 + g + 8 * half;
          *reinterpret_cast<std::uint32_t*>(sQ + Layout::offset(row, nt * 8 + 2 * t)) =
              pack2<T>(acc_o[mt][nt][2 * half], acc_o[mt][nt][2 * half + 1]);
        }
    __syncwarp();  // the warp's O rows are complete before lanes read each other's chunks
    constexpr int kChunksPerRow = kHeadDim / 8, kWarpRows = 16 * kMTiles;
#pragma unroll
    for (int i = 0; i < kWarpRows * kChunksPerRow / 32; ++i) {
      const int idx = i * 32 + lane;
      const int row = warp_row0 + idx / kChunksPerRow, col = (idx % kChunksPerRow) * 8;
      if (m0 + row < seqlen_q)
        *reinterpret_cast<uint4*>(gO + (m0 + row) * p.o_row_stride + col) =
            *reinterpret_cast<const uint4*>(sQ + Layout::offset(row, col));
    }
  } else {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_row0 + mt * 16 + g + 8 * half;
        if (row >= seqlen_q) continue;
#pragma unroll
        for (int nt = 0; nt < kNTilesO; ++nt)
          *reinterpret_cast<std::uint32_t*>(gO + row * p.o_row_stride + nt * 8 + 2 * t) =
              pack2<T>(acc_o[mt][nt][2 * half], acc_o[mt][nt][2 * half + 1]);
      }
  }
  if (p.lse != nullptr && t == 0) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + warp_row0 + mt * 16 + g + 8 * half;
        if (row < seqlen_q) p.lse[p.lse_offset(b, h, lse_row0 + row)] = lse[2 * mt + half];
      }
  }
}

// A rung's kernel, named after the rung, and `name##_rung`, which hands it
// to the launcher: Rung::kernel<T, Cfg>() is the __global__ of that T and Config.
#define FLASH_FA2_RUNG_KERNEL(name)                                                                      \
  template <class T, class Cfg, bool kMods, SeqLayout kSeq>                                              \
  __global__ void __launch_bounds__(Cfg::kWarps * 32) name##_kernel(const __grid_constant__ FwdParams p) { \
    fa2_forward<T, Cfg, kMods, kSeq>(p);                                                                 \
  }                                                                                                      \
  struct name##_rung {                                                                                   \
    template <class T, class Cfg, bool kMods, SeqLayout kSeq> static auto kernel() {                     \
      return name##_kernel<T, Cfg, kMods, kSeq>;                                                         \
    }                                                                                                    \
  }

// Host side: the launch and the limits check for one Config family.
// ConfigFor<kHeadDim> names the Config of each head dim; Rung names the kernel.
template <template <int> class ConfigFor, class Rung> struct Fa2Launcher {
  static std::string check(const FwdParams& p, const DeviceInfo& dev) {
    std::string err;
    dispatch_tc_head_dim(p.head_dim, [&](auto hd) {
      err = check_head_batch_grid(p, dev, Fa2Smem<ConfigFor<decltype(hd)::value>>::kBytes);
    });
    return err;
  }

  static cudaError_t run(const FwdParams& p, void*, cudaStream_t stream) {
    cudaError_t err = cudaErrorInvalidValue;
    const auto launch = [&](auto tag, auto hd) {
      using T = typename decltype(tag)::type;
      using Cfg = ConfigFor<decltype(hd)::value>;
      auto kernel = Rung::template kernel<T, Cfg, false, SeqLayout::dense>();
      if constexpr (Cfg::kEveryCall) {
        kernel = dispatch_score_mods(p, [&](auto mods) {
          constexpr bool kMods = decltype(mods)::value;
          switch (p.seq_layout()) {
            case SeqLayout::paged: return Rung::template kernel<T, Cfg, kMods, SeqLayout::paged>();
            case SeqLayout::per_sequence: return Rung::template kernel<T, Cfg, kMods, SeqLayout::per_sequence>();
            default: return Rung::template kernel<T, Cfg, kMods, SeqLayout::dense>();
          }
        });
      }
      constexpr std::size_t smem = Fa2Smem<Cfg>::kBytes;
      err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      if (err != cudaSuccess) return;
      const dim3 grid((p.seqlen_q + Cfg::kBlockM - 1) / Cfg::kBlockM, p.heads_q, p.batch);
      kernel<<<grid, Cfg::kWarps * 32, smem, stream>>>(p);
      err = cudaGetLastError();
    };
    if (p.dtype == DType::f16) dispatch_tc_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__half>{}, hd); });
    else dispatch_tc_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__nv_bfloat16>{}, hd); });
    return err;
  }
};

// The registry entry of a tensor-core variant: f16/bf16, head dims
// 64/128/256, every forward feature, sm_80 and up.
inline FwdVariant tensor_core_variant(std::string (*check)(const FwdParams&, const DeviceInfo&),
                                      cudaError_t (*run)(const FwdParams&, void*, cudaStream_t)) {
  FwdVariant v;
  v.min_compute_capability = 80;
  v.dtype_mask = dtype_bit(DType::f16) | dtype_bit(DType::bf16);
  v.head_dims = TcHeadDims::data();
  v.num_head_dims = TcHeadDims::size();
  v.max_head_dim = 256;
  v.alignment = 16;  // 16-byte copies of every row
  v.features = kAllFeatures;
  v.check = check;
  v.run = run;
  return v;
}

template <template <int> class ConfigFor, class Rung> const FwdVariant* fa2_variant() {
  static const FwdVariant v = [] {
    FwdVariant r = tensor_core_variant(Fa2Launcher<ConfigFor, Rung>::check, Fa2Launcher<ConfigFor, Rung>::run);
    if constexpr (ConfigFor<64>::kEveryCall) r.features |= kFeatureVarlen | kFeaturePaged;
    else r.features &= ~(kFeatureSoftcap | kFeatureAlibi);
    return r;
  }();
  return &v;
}

}  // namespace flash::detail
