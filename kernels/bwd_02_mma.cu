// bwd_02_mma: the FlashAttention-2 backward on mma.sync tensor cores.
//
// What changed from bwd_01_tiled: every tile product runs on tensor cores
// (mma.sync m16n8k16, fp32 accumulators) from 16-bit tiles in XOR-swizzled
// shared memory, and dQ is no longer recomputed in a second kernel:
//   preprocess  dpsum = rowsum(dO * O), LSE * log2(e), dQ accumulator zeroed
//   dkv kernel  a CTA owns kBlockN keys of one (batch, KV head) with K and V
//               resident in shared memory and dK, dV in registers; it walks
//               the query tiles (of every head of the GQA group) with Q, dO,
//               LSE and dpsum double-buffered by cp.async, and per tile
//                 S = Q K^T                     (warps tile kBlockM x kBlockN)
//                 P = exp2(S scale log2e - LSE log2e) -> shared memory
//                 dP = dO V^T (P's exp2s and stores overlap these products)
//                 dS = P (dP - dpsum) -> shared memory
//                 dV += P^T dO, dK += dS^T Q   (warps tile kBlockN x head_dim)
//                 dQ = dS K -> fp32 accumulator (warps tile kBlockM x head_dim)
//   convert     dQ = scale * accumulator, rounded to the dtype.
// dQ leaves a warp as one contiguous block in fragment order (DqMode): on
// sm_90 the warp stages it in shared memory and one lane adds it with a bulk
// reduction (cp.reduce.async.bulk) where the staging fits (hdim 64, 128),
// otherwise float4 atomics.
// Causal: query tiles above the diagonal of the key block are skipped, and
// only tiles crossing the diagonal or the ragged key tail are masked.
// deterministic = true: the dkv kernel skips dQ, and a dq kernel (parallel
// over query tiles, K and V double-buffered, dS kept in registers as the A
// operand of dS K) sums dQ in a fixed order: three more tile products per
// tile pair, no atomics.
// Why it is faster than tiled: tensor cores instead of FMAs (16x the math
// rate), 16-bit tiles (half the shared memory traffic), and five tile
// products per (query tile, key block) instead of seven.
// Measured on the H200 (2026-11-21, bf16, 16k tokens, heads = 2048 / dhead),
// TFLOPS at seq 8k / 16k and the ratio to PyTorch SDPA's flash backward
// (FlashAttention-2) measured in the same call:
//   hdim  64: 283.4 / 291.4 (1.03 / 1.03), deterministic 212.5 / 215.4
//   hdim 128: 325.2 / 333.6 (1.10 / 1.09), deterministic 239.7 / 244.0
//   hdim 256: 270.3 / 274.0 (1.09 / 1.06), deterministic 189.3 / 190.9
//   causal: 1.06 - 1.14 (hdim 128 seq 16k: 333.1 against 299.9).
// How it passed FlashAttention-2 with the same tiles (ncu on both kernels,
// docs/NOTES.md): the mask test once per tile instead of a branch per element
// (hdim 128: 1160 -> 885 instructions per warp and step; FA2: 1009), dQ by
// bulk reduction (stalls on the memory-instruction queue 22% -> 8% of
// samples, FA2 7%: ldmatrix queued behind 16 vector atomics per lane), and
// P's exp2s overlapping the dP products instead of following both (+3%).
// Registers: 255, no spills
// (hdim 256's deterministic dq kernel 4 bytes); shared memory 194 / 193 /
// 209 KB (hdim 64 / 128 / 256, with the dQ staging on sm_90).
// Score modifiers (2026-11-23): softcap and ALiBi in their own kernels
// (kMods; dQ by float4 atomics there), dS times the cap's derivative
// recovered from P (ScoreMod::apply_grad: no second S fragment live).
// Softcap 30: 194 / 251 TFLOPS at hdim 64 / 128 against 267 / 328 causal;
// the kMods hdim-256 dq kernel spills 8 bytes; calls without them run the
// same kernels as before (A/B +0.0% at hdim 128 causal 8k).
// What did not help (docs/NOTES.md): two 4-warp CTAs per SM (-19%), M = 64
// at hdim 64 (-6%), fragment double-buffering of A in the S/dP loop (0%),
// issuing the next tile's copies after the P/dS barrier (-1 to -4%).
// 2026-11-23 (masks through common/mask.h, the call's Mask read from the
// constant bank): within 1.4% of e24b379 in the same call at 8k: d128
// 327.5 -> 326.5 full, 304.2 -> 300.0 causal; d256 270.1 -> 268.6, 268.1 ->
// 267.4 (a Mask derived in the kernel had cost d256 5%; docs/NOTES.md).
// Variable-length batches (kVarlen, 2026-11-24): each CTA takes its
// sequence's offsets, lengths and Mask from seq_span(b) (SeqRows,
// common/bwd_seq.cuh) and exits past its sequence's keys (dkv) or rows
// (dq); the row arrays and the dQ accumulator hold each sequence's rows
// from a whole tile on (ws_row0), so the fragment-order blocks, the bulk
// reductions and the padding rows are those of a dense call, and a
// per-tile convert kernel (bwd_convert_dq_kernel, shared with
// bwd_03) stores each sequence's rows. As a template flag: dense calls run
// the kernels they ran before. Not yet measured on a GPU. (Since session 24
// dense calls take the same convert, through shared memory with 16-byte
// row stores, for the grid-stride one of scattered 4-byte stores that this
// rung had; the same change measured 87 -> 65 us for bwd_03.)
// Run it: ./runner --bwd --kernel mma ; ./bench --bwd --kernel mma --seq 4096 --dhead 128
#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>

#include "common/backward.h"
#include "common/bwd_params.h"
#include "common/bwd_seq.cuh"
#include "common/copy.cuh"
#include "common/head_dims.h"
#include "common/hopper/sync.cuh"
#include "common/mask.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/reduce.cuh"
#include "common/scores.h"
#include "common/smem_layout.cuh"
#include "common/warp_mma.cuh"

namespace flash::detail {
namespace {

constexpr int kWarps = 8;
constexpr int kThreads = kWarps * 32;

// Tile shapes per head dim and how the 8 warps split each product
// (FlashAttention-2's sm80 choices): S/dP tiles kSdpWarpsM x (8 / kSdpWarpsM),
// dK/dV kKvWarpsN x (8 / kKvWarpsN), dQ kDqWarpsM x (8 / kDqWarpsM).
template <int kHeadDim_> struct MmaBwdConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = kHeadDim == 64 ? 128 : 64;  // query rows per step
  static constexpr int kBlockN = kHeadDim <= 128 ? 128 : 64;  // keys per CTA
  static constexpr int kSdpWarpsM = kHeadDim == 128 ? 2 : 4;  // hdim 64: 4 x 2 beat 2 x 4 by 3%
  static constexpr int kKvWarpsN = kHeadDim == 256 ? 2 : 4;
  static constexpr int kDqWarpsM = kHeadDim == 64 ? 4 : 2;
  using Layout = SwizzledLayout<kHeadDim>;   // Q, dO, K, V tiles
  using PLayout = SwizzledLayout<kBlockN>;   // P and dS tiles

  // Shared memory, in elements: K, V; two stages of Q and dO; P, dS; then
  // two stages of LSE and dpsum (floats).
  static constexpr int kKVElems = kBlockN * kHeadDim;
  static constexpr int kQElems = kBlockM * kHeadDim;
  static constexpr int kPElems = kBlockM * kBlockN;
  static constexpr std::size_t kBytes = (2 * kKVElems + 4 * kQElems + 2 * kPElems) * 2 + 4 * kBlockM * sizeof(float);
  // dQ warp tiles, and one warp's dQ fragments: the unit of the accumulator's
  // fragment order (see DqMode).
  static constexpr int kDqRows = kBlockM / kDqWarpsM, kDqCols = kHeadDim / (kWarps / kDqWarpsM);
  static constexpr int kDqMT = kDqRows / 16, kDqNT = kDqCols / 8;
  static constexpr int kDqWarpFloats = kDqMT * kDqNT * 4 * 32;
  // sm_90 stages a step's dQ tile in shared memory after the rest, where it
  // fits in the 227 KB a block may have (hdim 64 and 128).
  static constexpr std::size_t kDqBytes = std::size_t{kBlockM} * kHeadDim * sizeof(float);
  static constexpr bool kCanStageDq = kBytes + kDqBytes <= 227 * 1024;
  static std::size_t smem_bytes(bool stage_dq) { return kBytes + (stage_dq ? kDqBytes : 0); }
  // 9.0 only: the sm_90a machine code has the bulk path; a GPU past 9.0 runs
  // the compute_80 PTX (JIT), whose kBulk kernel traps.
  static bool stage_dq(int compute_capability) { return kCanStageDq && compute_capability == 90; }
};

// The deterministic dQ pass: each warp owns 16 query rows.
template <int kHeadDim_> struct MmaBwdDqConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kWarpsQ = kHeadDim == 256 ? 4 : 8;
  static constexpr int kBlockM = 16 * kWarpsQ;
  static constexpr int kBlockN = kHeadDim == 256 ? 32 : 64;
  using Layout = SwizzledLayout<kHeadDim>;
  static constexpr int kQElems = kBlockM * kHeadDim;
  static constexpr int kKVElems = kBlockN * kHeadDim;
  static constexpr std::size_t kBytes = (2 * kQElems + 4 * kKVElems) * 2;
};

// How the dkv kernel sends dQ += dS K to the fp32 accumulator. The
// accumulator keeps the kernel's fragment order: per (batch, head, query
// tile), warp w's fragments form block w of Cfg::kDqWarpFloats floats, in
// which lane l's float4 for fragment (mt, nt) sits at ((mt * kDqNT + nt) * 32
// + l) * 4. A lane's four values are then contiguous (one 16-byte vector) and a
// warp's whole tile is one contiguous block; MmaDqOrder maps the order back
// to rows for the convert (common/bwd_seq.cuh).
//   kNone    deterministic mode: the dq kernel computes dQ instead.
//   kAtomic  one float4 atomic per lane and fragment (four scalar ones
//            before sm_90).
//   kBulk    sm_90: the warp stores its fragments to shared memory and one
//            lane adds the block to the accumulator with one bulk reduction
//            in the copy engine (cp.reduce.async.bulk), instead of the
//            16 vector atomics per lane that queued with ldmatrix in the
//            memory-instruction pipe (ncu: 22% of stall samples on that queue
//            against FlashAttention-2's 7%).
enum class DqMode { kNone, kAtomic, kBulk };

// kBulk's steps, sm_90 only (the host picks kBulk only there). Before the
// warp rewrites its staging block: the previous reduction has read it.
__device__ __forceinline__ void dq_stage_acquire(int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (lane == 0) tma_store_wait_read();
  __syncwarp();
#else
  __trap();
#endif
}
// After the warp's stores: make them visible to the copy engine, then add.
__device__ __forceinline__ void dq_stage_send(int lane, float* dq, const float* sdq, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  fence_async_shared();
  __syncwarp();
  if (lane == 0) {
    bulk_reduce_add_f32(dq, sdq, bytes);
    tma_store_commit();
  }
#else
  __trap();
#endif
}
__device__ __forceinline__ void dq_stage_drain(int lane) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (lane == 0) bulk_wait_all();
#else
  __trap();
#endif
}

// kMods: the call has a softcap or ALiBi (dispatch_score_mods). kVarlen: a
// variable-length batch (cu_seqlens_q; SeqRows), as a template flag so that
// dense calls keep their code.
template <class T, class Cfg, DqMode kDq, bool kMods, bool kVarlen>
__global__ void __launch_bounds__(kThreads, 1) bwd_02_mma_dkv_kernel(const __grid_constant__ BwdParams p) {
  constexpr int kHeadDim = Cfg::kHeadDim, kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN;
  using Layout = typename Cfg::Layout;
  using PLayout = typename Cfg::PLayout;
  // Warp tiles of the three kinds of product.
  constexpr int kSdpRows = kBlockM / Cfg::kSdpWarpsM, kSdpCols = kBlockN / (kWarps / Cfg::kSdpWarpsM);
  constexpr int kKvRows = kBlockN / Cfg::kKvWarpsN, kKvCols = kHeadDim / (kWarps / Cfg::kKvWarpsN);
  constexpr int kDqRows = Cfg::kDqRows, kDqCols = Cfg::kDqCols;

  extern __shared__ __align__(128) uint4 smem_u4[];  // 128-byte aligned tiles: FragAddr
  T* sK = reinterpret_cast<T*>(smem_u4);
  T* sV = sK + Cfg::kKVElems;
  T* sQ = sV + Cfg::kKVElems;        // [2][kBlockM][kHeadDim]
  T* sdO = sQ + 2 * Cfg::kQElems;    // [2][kBlockM][kHeadDim]
  T* sP = sdO + 2 * Cfg::kQElems;    // [kBlockM][kBlockN]
  T* sdS = sP + Cfg::kPElems;        // [kBlockM][kBlockN]
  float* sLse = reinterpret_cast<float*>(sdS + Cfg::kPElems);  // [2][kBlockM]
  float* sDpsum = sLse + 2 * kBlockM;                         // [2][kBlockM]
  float* sDq = sDpsum + 2 * kBlockM;  // kBulk: [8 warps][kDqWarpFloats], fragment order

  const int n_block = blockIdx.x, h_kv = blockIdx.y, b = blockIdx.z;
  const int n0 = n_block * kBlockN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

  if constexpr (kVarlen)
    if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
  const SeqRows<kVarlen> seq(p, b);
  if constexpr (kVarlen)
    if (n0 >= seq.seqlen_k()) return;  // past this sequence's keys (the grid covers max_seqlen_k)

  // The query tiles that see some key of this block (common/mask.h). Steps
  // walk (head in group, tile).
  const TileRange q_tiles = seq.mask().template query_tiles<kBlockM>(n0, kBlockN);
  const int m_begin = q_tiles.begin, steps = q_tiles.count() * p.group_size;

  const T* gK = static_cast<const T*>(p.k) + seq.k() + h_kv * p.k_head_stride + n0 * p.k_row_stride;
  const T* gV = static_cast<const T*>(p.v) + seq.v() + h_kv * p.v_head_stride + n0 * p.v_row_stride;
  copy_g2s_tile<Layout, kBlockN, kHeadDim, kThreads, true>(sK, gK, p.k_row_stride, seq.seqlen_k() - n0);
  copy_g2s_tile<Layout, kBlockN, kHeadDim, kThreads, true>(sV, gV, p.v_row_stride, seq.seqlen_k() - n0);

  // Q, dO, LSE and dpsum of query head h, rows m0.., into stage `stage`.
  const TileCopier<T, Layout, kBlockM, kHeadDim, kThreads> copy_q(p.q_row_stride), copy_do(p.do_row_stride);
  const std::uint32_t sQ_addr = smem_addr(sQ), sdO_addr = smem_addr(sdO);
  auto load_step = [&](int h, int m0, int stage) {
    const T* gQ = static_cast<const T*>(p.q) + seq.q() + h * p.q_head_stride + m0 * p.q_row_stride;
    const T* gdO = static_cast<const T*>(p.dout) + seq.dout() + h * p.do_head_stride + m0 * p.do_row_stride;
    copy_q(sQ_addr + stage * Cfg::kQElems * sizeof(T), gQ, seq.seqlen_q() - m0);
    copy_do(sdO_addr + stage * Cfg::kQElems * sizeof(T), gdO, seq.seqlen_q() - m0);
    // The row arrays are padded to a multiple of 128 rows: whole 16-byte
    // chunks, copied by the last warp (LSE chunks, then dpsum chunks).
    constexpr int kChunks = kBlockM / 4;
    static_assert((2 * kChunks) % 32 == 0, "the last warp copies whole rounds of chunks");
    const std::int64_t row0 = seq.ws_row0(h) + m0;
    if (warp == kWarps - 1) {
#pragma unroll
      for (int i = lane; i < 2 * kChunks; i += 32) {
        const bool lse = i < kChunks;
        const int c = lse ? i : i - kChunks;
        cp_async_16((lse ? sLse : sDpsum) + stage * kBlockM + 4 * c, (lse ? p.lse_log2 : p.dpsum) + row0 + 4 * c, 16);
      }
    }
  };
  // Steps walk the query tiles of each head of the group in turn.
  int h = h_kv * p.group_size, m0 = m_begin * kBlockM;
  auto next_tile = [&](int& hh, int& mm) {
    mm += kBlockM;
    // Past the last query tile: seqlen_q, or earlier under a window's left
    // side (recomputed from the params there: a live register less here).
    const bool past = mm >= seq.seqlen_q() ||
                      (seq.mask().has_left && mm >= seq.mask().template query_tiles<kBlockM>(n0, kBlockN).end * kBlockM);
    if (past) mm = m_begin * kBlockM, ++hh;
  };
  if (steps > 0) load_step(h, m0, 0);
  cp_async_commit();  // K, V and the first step

  // Warp coordinates and fragment addresses of each product.
  const int sdp_m = warp % Cfg::kSdpWarpsM, sdp_n = warp / Cfg::kSdpWarpsM;
  const int kv_n = warp % Cfg::kKvWarpsN, kv_d = warp / Cfg::kKvWarpsN;
  const int dq_m = warp % Cfg::kDqWarpsM, dq_d = warp / Cfg::kDqWarpsM;
  using R = LaneRole;
  // S = Q K^T and dP = dO V^T: A rows sdp_m, B rows (keys) sdp_n. dO, V, dS
  // and Q sit a fixed distance from Q, K, P and dO with the same layout, so
  // one set of lane addresses serves both (fewer live registers).
  const FragAddr<Layout> a_q(sQ, sdp_m * kSdpRows + lane_row<R::kRowMajorA>(lane), lane_col<R::kRowMajorA>(lane));
  const FragAddr<Layout> b_k(sK, sdp_n * kSdpCols + lane_row<R::kRowMajorB>(lane), lane_col<R::kRowMajorB>(lane));
  constexpr std::uint32_t kDoFromQ = 2 * Cfg::kQElems * sizeof(T), kVFromK = Cfg::kKVElems * sizeof(T);
  // dV = P^T dO and dK = dS^T Q: A = P^T, dS^T (keys kv_n), B = dO, Q (dims kv_d).
  const FragAddr<PLayout> at_p(sP, lane_row<R::kTransposedA>(lane), lane_col<R::kTransposedA>(lane), kv_n * kKvRows);
  const FragAddr<Layout> bt_q(sQ, lane_row<R::kTransposedB>(lane), lane_col<R::kTransposedB>(lane), kv_d * kKvCols);
  constexpr std::uint32_t kDsFromP = Cfg::kPElems * sizeof(T);
  // dQ = dS K: A = dS (rows dq_m), B = K as [key][dim] (dims dq_d).
  const FragAddr<PLayout> a_ds(sdS, dq_m * kDqRows + lane_row<R::kRowMajorA>(lane), lane_col<R::kRowMajorA>(lane));
  const FragAddr<Layout> bt_k(sK, lane_row<R::kTransposedB>(lane), lane_col<R::kTransposedB>(lane), dq_d * kDqCols);
  constexpr std::uint32_t kStageBytes = Cfg::kQElems * sizeof(T);

  constexpr int kSdpMT = kSdpRows / 16, kSdpNT = kSdpCols / 8;
  constexpr int kKvMT = kKvRows / 16, kKvNT = kKvCols / 8;
  constexpr int kDqMT = Cfg::kDqMT, kDqNT = Cfg::kDqNT;
  float acc_dk[kKvMT][kKvNT][4], acc_dv[kKvMT][kKvNT][4];
  zero(acc_dk);
  zero(acc_dv);

  for (int step = 0; step < steps; ++step) {
    const int stage = step % 2;
    cp_async_wait<0>();  // this step's group (and K, V) landed
    // Every thread's copies are visible, and every warp is done with step - 1:
    // its stage may be refilled and P, dS overwritten (no barrier at the end
    // of a step).
    __syncthreads();
    int h_next = h, m0_next = m0;
    next_tile(h_next, m0_next);
    if (step + 1 < steps) load_step(h_next, m0_next, (step + 1) % 2);
    cp_async_commit();
    const std::uint32_t stage_off = stage * kStageBytes;

    float acc_s[kSdpMT][kSdpNT][4], acc_dp[kSdpMT][kSdpNT][4];
    const bool need_mask = seq.mask().row_block(m0, kBlockM).needs_mask(n0, kBlockN);
    // P and dS go to shared memory. The lane's n-tile nt lands at its nt = 0
    // offset with the chunk bits XORed by nt (the warp's first chunk is a
    // multiple of kSdpNT, so the swizzle stays an XOR), and row steps add
    // immediates: one live offset instead of one per store.
    static_assert(kSdpNT == 4 || kSdpNT == 8, "n-tiles XOR into the 3 chunk bits of the swizzle");
    const int p_off = PLayout::offset(sdp_m * kSdpRows + g, sdp_n * kSdpCols + 2 * t) * sizeof(T);
    const auto store_tile = [&](T* tile, const float(&acc)[kSdpMT][kSdpNT][4]) {
#pragma unroll
      for (int nt = 0; nt < kSdpNT; ++nt) {
        char* const dst = reinterpret_cast<char*>(tile) + (p_off ^ (nt << 4));
#pragma unroll
        for (int mt = 0; mt < kSdpMT; ++mt)
#pragma unroll
          for (int half = 0; half < 2; ++half)
            *reinterpret_cast<std::uint32_t*>(dst + (mt * 16 + 8 * half) * kBlockN * sizeof(T)) =
                pack2<T>(acc[mt][nt][2 * half], acc[mt][nt][2 * half + 1]);
      }
    };
    // S = Q K^T; masked pairs get S = -inf, so P = 0 (a branch once per
    // tile, taken only on the diagonal and the key tail).
    zero(acc_s);
    warp_mma<T, false, false, kSdpMT, kSdpNT, kHeadDim / 16>(acc_s, a_q, stage_off, b_k, 0);
    const ScoreMod scores = kMods ? ScoreMod(p, b, h, seq.mask().diag) : ScoreMod(p);
    if constexpr (kMods) scores.apply(acc_s, m0 + sdp_m * kSdpRows, n0 + sdp_n * kSdpCols, lane);
    if (need_mask) seq.mask().apply(acc_s, m0 + sdp_m * kSdpRows, n0 + sdp_n * kSdpCols, lane);
    // P = exp2(S scale log2e - LSE log2e), stored; its exp2s and stores
    // overlap the dP products below (one basic block).
#pragma unroll
    for (int mt = 0; mt < kSdpMT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float lse2 = sLse[stage * kBlockM + sdp_m * kSdpRows + mt * 16 + g + 8 * half];
#pragma unroll
        for (int nt = 0; nt < kSdpNT; ++nt)
#pragma unroll
          for (int e = 2 * half; e < 2 * half + 2; ++e)
            acc_s[mt][nt][e] = fast_exp2(acc_s[mt][nt][e] * ScoreMod(p).exp2_scale() - lse2);
      }
    store_tile(sP, acc_s);
    // dP = dO V^T, then dS = P (dP - dpsum).
    zero(acc_dp);
    warp_mma<T, false, false, kSdpMT, kSdpNT, kHeadDim / 16>(acc_dp, a_q, kDoFromQ + stage_off, b_k, kVFromK);
#pragma unroll
    for (int mt = 0; mt < kSdpMT; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const float dpsum = sDpsum[stage * kBlockM + sdp_m * kSdpRows + mt * 16 + g + 8 * half];
#pragma unroll
        for (int nt = 0; nt < kSdpNT; ++nt)
#pragma unroll
          for (int e = 2 * half; e < 2 * half + 2; ++e)
            acc_dp[mt][nt][e] = acc_s[mt][nt][e] * (acc_dp[mt][nt][e] - dpsum);
      }
    if constexpr (kMods)
      scores.apply_grad(acc_dp, acc_s, m0 + sdp_m * kSdpRows, n0 + sdp_n * kSdpCols, lane, [&](int mt, int half) {
        return sLse[stage * kBlockM + sdp_m * kSdpRows + mt * 16 + g + 8 * half];
      });
    store_tile(sdS, acc_dp);
    __syncthreads();  // P and dS complete

    // FlashAttention-2's order: dV, then dQ and its atomics, then dK, whose
    // tensor-core work covers the atomics' latency before their registers
    // are needed again.
    warp_mma<T, true, true, kKvMT, kKvNT, kBlockM / 16>(acc_dv, at_p, 0, bt_q, kDoFromQ + stage_off);
    if constexpr (kDq != DqMode::kNone) {
      // dQ += dS K in column chunks of at most 32 dims, each sent before the
      // next is computed: fewer live registers (dS fragments are reloaded per
      // chunk, a small cost).
      constexpr int kChunkNT = kDqNT < 4 ? kDqNT : 4, kChunks = kDqNT / kChunkNT;
      float* dq = p.dq_accum + (seq.ws_row0(h) + m0) * kHeadDim + warp * Cfg::kDqWarpFloats;
      float* sdq = sDq + warp * Cfg::kDqWarpFloats;
      if constexpr (kDq == DqMode::kBulk) dq_stage_acquire(lane);
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        float acc_dq[kDqMT][kChunkNT][4];
        zero(acc_dq);
        warp_mma<T, false, true, kDqMT, kChunkNT, kBlockN / 16>(acc_dq, a_ds, 0, bt_k.shifted(c * kChunkNT * 8), 0);
        // No row check: the accumulator is padded to whole tiles and rows
        // past the sequence's seqlen_q add exact zeros (their P is 0).
#pragma unroll
        for (int mt = 0; mt < kDqMT; ++mt)
#pragma unroll
          for (int nt = 0; nt < kChunkNT; ++nt) {
            const int at = ((mt * kDqNT + c * kChunkNT + nt) * 32 + lane) * 4;
            const float4 v = make_float4(acc_dq[mt][nt][0], acc_dq[mt][nt][1], acc_dq[mt][nt][2], acc_dq[mt][nt][3]);
            if constexpr (kDq == DqMode::kBulk) *reinterpret_cast<float4*>(sdq + at) = v;
            else atomic_add4(dq + at, v);
          }
      }
      if constexpr (kDq == DqMode::kBulk) dq_stage_send(lane, dq, sdq, Cfg::kDqWarpFloats * sizeof(float));
    }
    warp_mma<T, true, true, kKvMT, kKvNT, kBlockM / 16>(acc_dk, at_p, kDsFromP, bt_q, stage_off);
    h = h_next, m0 = m0_next;
  }
  cp_async_wait<0>();  // with no step, K and V may still be landing
  if constexpr (kDq == DqMode::kBulk) dq_stage_drain(lane);  // shared memory stays until the reductions read it

  // dK = scale * dS^T Q and dV, rounded to the dtype; keys past seqlen_k are not stored.
  T* gdK = static_cast<T*>(p.dk) + seq.dk() + h_kv * p.dk_head_stride;
  T* gdV = static_cast<T*>(p.dv) + seq.dv() + h_kv * p.dv_head_stride;
#pragma unroll
  for (int mt = 0; mt < kKvMT; ++mt)
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int key = n0 + kv_n * kKvRows + mt * 16 + g + 8 * half;
      if (key >= seq.seqlen_k()) continue;
#pragma unroll
      for (int nt = 0; nt < kKvNT; ++nt) {
        const int col = kv_d * kKvCols + nt * 8 + 2 * t;
        *reinterpret_cast<std::uint32_t*>(gdK + key * p.dk_row_stride + col) =
            pack2<T>(acc_dk[mt][nt][2 * half] * p.scale, acc_dk[mt][nt][2 * half + 1] * p.scale);
        *reinterpret_cast<std::uint32_t*>(gdV + key * p.dv_row_stride + col) =
            pack2<T>(acc_dv[mt][nt][2 * half], acc_dv[mt][nt][2 * half + 1]);
      }
    }
}

// The deterministic dQ pass: a CTA owns kBlockM query rows of one (batch,
// head), each warp 16 of them, and walks the key tiles with K and V
// double-buffered. dS stays in registers and feeds dS K as its A operand
// (the accumulator layout of S is the A layout, as P is in the forward).
template <class T, class Cfg, bool kMods, bool kVarlen>
__global__ void __launch_bounds__(Cfg::kWarpsQ * 32) bwd_02_mma_dq_kernel(const __grid_constant__ BwdParams p) {
  constexpr int kHeadDim = Cfg::kHeadDim, kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN;
  constexpr int kThreadsQ = Cfg::kWarpsQ * 32;
  constexpr int kNT = kBlockN / 8, kDT = kHeadDim / 8;
  using Layout = typename Cfg::Layout;
  extern __shared__ __align__(128) uint4 smem_u4[];  // 128-byte aligned tiles: FragAddr
  T* sQ = reinterpret_cast<T*>(smem_u4);
  T* sdO = sQ + Cfg::kQElems;
  T* sK = sdO + Cfg::kQElems;        // [2][kBlockN][kHeadDim]
  T* sV = sK + 2 * Cfg::kKVElems;    // [2][kBlockN][kHeadDim]

  const int m0 = blockIdx.x * kBlockM, h = blockIdx.y, b = blockIdx.z, h_kv = h / p.group_size;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  if constexpr (kVarlen)
    if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
  const SeqRows<kVarlen> seq(p, b);
  if constexpr (kVarlen)
    if (m0 >= seq.seqlen_q()) return;  // past this sequence's rows (the grid covers max_seqlen_q)
  // The key tiles this block sees (common/mask.h), counted from n_begin.
  const TileRange tiles = seq.mask().template key_tiles<kBlockN>(m0, kBlockM);
  const int n_begin = tiles.begin, n_blocks = tiles.count();

  const T* gK = static_cast<const T*>(p.k) + seq.k() + h_kv * p.k_head_stride;
  const T* gV = static_cast<const T*>(p.v) + seq.v() + h_kv * p.v_head_stride;
  copy_g2s_tile<Layout, kBlockM, kHeadDim, kThreadsQ, true>(
      sQ, static_cast<const T*>(p.q) + seq.q() + h * p.q_head_stride + m0 * p.q_row_stride, p.q_row_stride,
      seq.seqlen_q() - m0);
  copy_g2s_tile<Layout, kBlockM, kHeadDim, kThreadsQ, true>(
      sdO, static_cast<const T*>(p.dout) + seq.dout() + h * p.do_head_stride + m0 * p.do_row_stride, p.do_row_stride,
      seq.seqlen_q() - m0);
  auto load_kv = [&](int j, int stage) {
    const int n0 = (n_begin + j) * kBlockN;
    copy_g2s_tile<Layout, kBlockN, kHeadDim, kThreadsQ, true>(sK + stage * Cfg::kKVElems, gK + n0 * p.k_row_stride,
                                                              p.k_row_stride, seq.seqlen_k() - n0);
    copy_g2s_tile<Layout, kBlockN, kHeadDim, kThreadsQ, true>(sV + stage * Cfg::kKVElems, gV + n0 * p.v_row_stride,
                                                              p.v_row_stride, seq.seqlen_k() - n0);
  };
  if (n_blocks > 0) load_kv(0, 0);
  cp_async_commit();

  // This lane's rows: warp * 16 + g and + 8 (padded arrays: no bounds check).
  const std::int64_t row0 = seq.ws_row0(h) + m0 + warp * 16 + g;
  const float lse2[2] = {p.lse_log2[row0], p.lse_log2[row0 + 8]};
  const float dpsum[2] = {p.dpsum[row0], p.dpsum[row0 + 8]};

  using R = LaneRole;
  const FragAddr<Layout> a_q(sQ, warp * 16 + lane_row<R::kRowMajorA>(lane), lane_col<R::kRowMajorA>(lane));
  const FragAddr<Layout> b_k(sK, lane_row<R::kRowMajorB>(lane), lane_col<R::kRowMajorB>(lane));
  constexpr std::uint32_t kDoFromQ = Cfg::kQElems * sizeof(T), kVFromK = 2 * Cfg::kKVElems * sizeof(T);
  const FragAddr<Layout> bt_k(sK, lane_row<R::kTransposedB>(lane), lane_col<R::kTransposedB>(lane));
  constexpr std::uint32_t kStageBytes = Cfg::kKVElems * sizeof(T);

  float acc_dq[1][kDT][4];
  zero(acc_dq);
  for (int j = 0; j < n_blocks; ++j) {
    const int stage = j % 2, n0 = (n_begin + j) * kBlockN;
    cp_async_wait<0>();
    __syncthreads();  // the tile landed for every thread, and every warp is done with the previous one
    if (j + 1 < n_blocks) load_kv(j + 1, (j + 1) % 2);
    cp_async_commit();
    const std::uint32_t stage_off = stage * kStageBytes;
    float acc_s[1][kNT][4], acc_dp[1][kNT][4];
    const bool need_mask = seq.mask().row_block(m0, kBlockM).needs_mask(n0, kBlockN);
    // As in the dkv kernel: S, its mask (S = -inf) and P = exp2(...), whose
    // exp2s overlap the dP products; then dS = P (dP - dpsum).
    zero(acc_s);
    warp_mma<T, false, false, 1, kNT, kHeadDim / 16>(acc_s, a_q, 0, b_k, stage_off);
    const ScoreMod scores = kMods ? ScoreMod(p, b, h, seq.mask().diag) : ScoreMod(p);
    if constexpr (kMods) scores.apply(acc_s, m0 + warp * 16, n0, lane);
    if (need_mask) seq.mask().apply(acc_s, m0 + warp * 16, n0, lane);
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_s[0][nt][e] = fast_exp2(acc_s[0][nt][e] * ScoreMod(p).exp2_scale() - lse2[e / 2]);
    zero(acc_dp);
    warp_mma<T, false, false, 1, kNT, kHeadDim / 16>(acc_dp, a_q, kDoFromQ, b_k, kVFromK + stage_off);
#pragma unroll
    for (int nt = 0; nt < kNT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_dp[0][nt][e] = acc_s[0][nt][e] * (acc_dp[0][nt][e] - dpsum[e / 2]);
    if constexpr (kMods) scores.apply_grad(acc_dp, acc_s, m0 + warp * 16, n0, lane, [&](int, int half) { return lse2[half]; });
    // dQ += dS K: dS packed from the accumulators into A fragments.
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      const std::uint32_t a[4] = {pack2<T>(acc_dp[0][2 * kk][0], acc_dp[0][2 * kk][1]),
                                  pack2<T>(acc_dp[0][2 * kk][2], acc_dp[0][2 * kk][3]),
                                  pack2<T>(acc_dp[0][2 * kk + 1][0], acc_dp[0][2 * kk + 1][1]),
                                  pack2<T>(acc_dp[0][2 * kk + 1][2], acc_dp[0][2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < kDT / 2; ++dp) {
        std::uint32_t fb[4];
        ldmatrix_x4_trans(fb, bt_k.at(16 * kk, dp) + stage_off);
        const std::uint32_t b0[2] = {fb[0], fb[1]}, b1[2] = {fb[2], fb[3]};
        mma_16816<T>(acc_dq[0][2 * dp], a, b0);
        mma_16816<T>(acc_dq[0][2 * dp + 1], a, b1);
      }
    }
  }
  cp_async_wait<0>();

  T* gdQ = static_cast<T*>(p.dq) + seq.dq() + h * p.dq_head_stride;
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int row = m0 + warp * 16 + g + 8 * half;
    if (row >= seq.seqlen_q()) continue;
#pragma unroll
    for (int nt = 0; nt < kDT; ++nt)
      *reinterpret_cast<std::uint32_t*>(gdQ + row * p.dq_row_stride + nt * 8 + 2 * t) =
          pack2<T>(acc_dq[0][nt][2 * half] * p.scale, acc_dq[0][nt][2 * half + 1] * p.scale);
  }
}

// The dkv kernel's accumulator order within one query tile (DqMode: one
// block of kBlockM * kHeadDim floats per tile), for the convert
// (common/bwd_seq.cuh): the float4 at float in_tile holds dQ[row][col, col +
// 1] and dQ[row + 8][col, col + 1].
template <class Cfg> struct MmaDqOrder {
  static constexpr int kTileRows = Cfg::kBlockM, kHeadDim = Cfg::kHeadDim;
  __device__ __forceinline__ static void position(int in_tile, int& row, int& col) {
    const int warp = in_tile / Cfg::kDqWarpFloats;
    const int frag = in_tile % Cfg::kDqWarpFloats / 128, lane = in_tile % 128 / 4;
    const int mt = frag / Cfg::kDqNT, nt = frag % Cfg::kDqNT;
    row = warp % Cfg::kDqWarpsM * Cfg::kDqRows + mt * 16 + lane / 4;
    col = warp / Cfg::kDqWarpsM * Cfg::kDqCols + nt * 8 + 2 * (lane % 4);
  }
};

std::string check(const BwdParams& p, const DeviceInfo& dev) {
  std::size_t smem = 0;
  dispatch_tc_head_dim(p.head_dim, [&](auto hd) {
    using Cfg = MmaBwdConfig<decltype(hd)::value>;
    smem = std::max(Cfg::smem_bytes(!p.deterministic && Cfg::stage_dq(dev.compute_capability)),
                    MmaBwdDqConfig<decltype(hd)::value>::kBytes);
  });
  return check_head_batch_grid(p, dev, smem);
}

std::size_t workspace_bytes(const BwdParams& p) { return bwd_workspace_bytes(p, !p.deterministic); }

cudaError_t run(const BwdParams& params, void* workspace, cudaStream_t stream) {
  BwdParams p = params;
  bind_bwd_workspace(p, workspace, /*with_dq_accum=*/!p.deterministic);
  cudaError_t err = bwd_preprocess(p, stream);
  if (err != cudaSuccess) return err;
  err = cudaErrorInvalidValue;
  const auto go = [&](auto tag, auto hd, auto varlen) {
    using T = typename decltype(tag)::type;
    using Cfg = MmaBwdConfig<decltype(hd)::value>;
    using DqCfg = MmaBwdDqConfig<decltype(hd)::value>;
    constexpr bool kVarlen = decltype(varlen)::value;
    // A variable-length call's grids are sized by max_seqlen_k and
    // max_seqlen_q, either of which may be 0 (every sequence empty on that
    // side): a grid without CTAs is not launched.
    const dim3 grid((p.seqlen_k + Cfg::kBlockN - 1) / Cfg::kBlockN, p.heads_kv, p.batch);
    err = cudaSuccess;
    // With a softcap or ALiBi: their own kernels (kMods), and the float4
    // atomics for dQ rather than the bulk reductions (fewer instantiations).
    const bool mods = p.has_score_mods();
    if (!p.deterministic) {
      bool bulk = false;  // kBulk is instantiated only where its staging fits
      if constexpr (Cfg::kCanStageDq) bulk = !mods && Cfg::stage_dq(p.compute_capability);
      if (grid.x > 0) {
        if constexpr (Cfg::kCanStageDq)
          if (bulk) err = bwd_launch(bwd_02_mma_dkv_kernel<T, Cfg, DqMode::kBulk, false, kVarlen>, grid, kThreads, Cfg::smem_bytes(true), p, stream);
        if (!bulk)
          err = mods ? bwd_launch(bwd_02_mma_dkv_kernel<T, Cfg, DqMode::kAtomic, true, kVarlen>, grid, kThreads, Cfg::smem_bytes(false), p, stream)
                     : bwd_launch(bwd_02_mma_dkv_kernel<T, Cfg, DqMode::kAtomic, false, kVarlen>, grid, kThreads, Cfg::smem_bytes(false), p, stream);
      }
      if (err != cudaSuccess) return;
      const dim3 tiles((p.seqlen_q + Cfg::kBlockM - 1) / Cfg::kBlockM, p.heads_q, p.batch);
      if (tiles.x > 0) bwd_convert_dq_kernel<T, MmaDqOrder<Cfg>, kVarlen><<<tiles, 256, 0, stream>>>(p);
      err = cudaGetLastError();
    } else {
      dispatch_score_mods(p, [&](auto m) {
        constexpr bool kMods = decltype(m)::value;
        const dim3 dq_grid((p.seqlen_q + DqCfg::kBlockM - 1) / DqCfg::kBlockM, p.heads_q, p.batch);
        if (grid.x > 0)
          err = bwd_launch(bwd_02_mma_dkv_kernel<T, Cfg, DqMode::kNone, kMods, kVarlen>, grid, kThreads, Cfg::smem_bytes(false), p, stream);
        if (err == cudaSuccess && dq_grid.x > 0)
          err = bwd_launch(bwd_02_mma_dq_kernel<T, DqCfg, kMods, kVarlen>, dq_grid, DqCfg::kWarpsQ * 32, DqCfg::kBytes, p, stream);
      });
    }
  };
  const auto by_dtype = [&](auto varlen) {
    if (p.dtype == DType::f16) dispatch_tc_head_dim(p.head_dim, [&](auto hd) { go(TypeTag<__half>{}, hd, varlen); });
    else dispatch_tc_head_dim(p.head_dim, [&](auto hd) { go(TypeTag<__nv_bfloat16>{}, hd, varlen); });
  };
  if (p.cu_seqlens_q != nullptr) by_dtype(std::true_type{});
  else by_dtype(std::false_type{});
  return err;
}

}  // namespace

const BwdVariant* variant_bwd_mma() {
  static const BwdVariant v = bwd_variant<TcHeadDims>(check, workspace_bytes, run);
  return &v;
}

}  // namespace flash::detail
