// bwd_04_wgmma_wide: the Hopper backward for head dims too wide for
// bwd_03's register-resident tiles (hdim 256): P and dS go through shared
// memory, and dK and dV are computed transposed, the head dim on wgmma's M
// axis, split between the two consumer warpgroups.
//
// What changed from bwd_03_wgmma, and why. bwd_03 keeps each warpgroup's
// 64 keys on wgmma's M axis so that P^T and dS^T, as accumulators, are the
// register A operand of dV += P^T dO and dK += dS^T Q. At hdim 256 that
// needs dK and dV of 64 keys x 256 dims per warpgroup, 128 + 128 fp32
// registers per thread: more than the 240 a consumer has. Here (the shape
// FlashAttention-3 and -4 take at hdim 256, NOTES "hdim 256 on Hopper"):
//   a CTA owns kBlockN = 64 keys; a step is kBlockM = 64 query rows;
//   S = Q K^T and dP = dO V^T are computed unswapped (queries on M), split
//     by key columns: warpgroup c takes keys n0 + 32 c .. + 31 (m64n32,
//     both operands K-major from shared memory, 16 k-steps of the head dim).
//     The LSE and dpsum are per fragment row: two of each per thread.
//   P and dS (64 x 64, [query][key], the 128-byte swizzle) go to shared
//     memory, double-buffered (one 256-thread barrier per step guards them:
//     a warpgroup past step i's barrier has finished step i - 1's reads);
//   dV^T += dO^T P and dK^T += Q^T dS: warpgroup c owns dims 128 c .. + 127
//     as two m64n64 accumulators each (M = dims, N = the 64 keys, k = the
//     step's queries): A is the stage's dO (Q) tile read M-major, B is P
//     (dS) read N-major. dK^T and dV^T (128 registers) stay in registers
//     over every query tile of every query head of the GQA group;
//   dQ = dS K (m64n128: the step's queries x warpgroup c's 128 dims, k = the
//     64 keys; dS K-major, K N-major) is added to the fp32 accumulator from
//     registers, one float4 reduction (RED.128) per n-tile, in the
//     accumulator order bwd_03 uses (common/hopper/bwd_tma.cuh: 64 x 64
//     blocks in fragment order, 512 contiguous bytes per warp and n-tile),
//     so the convert kernels are shared. bwd_03's staging blocks and writer
//     do not fit: K, V, two stages of Q and dO, and two buffers of P and dS
//     take 226 KB of the 227 (deterministic mode: below).
// The producer warpgroup, the ring, the tensor maps and variable-length
// batches are bwd_03's (common/hopper/bwd_tma.cuh). Deterministic mode
// (FlashAttention-3 has none at hdim 256): bwd_03's order (BwdDqOrder:
// descending key blocks, a counter per dQ tile) and bwd_03's hand-off to a
// dQ writer thread, in a layout of its own (Bwd04DetSmem): dO in one
// buffer with its own barriers, and in the 32 KB its second stage took one
// staging buffer for a warpgroup's 64 x 128 fp32 half of the step's dQ.
// Warpgroup 0 stages its half, the writer (once the tile's turn comes) adds
// it by one bulk reduction and frees the buffer as soon as it is read,
// warpgroup 1 stages its own, the writer adds it and, once both additions
// completed, hands the count to a counter thread (session 61). Warpgroup 1
// computes dQ last (dV, dK, dQ), so that the buffer is free by the time its
// dQ is done.
// Predicted (before the first run, docs/NOTES.md): ~350 TFLOPS at hdim 256
// full 8k (bwd_02 267, FlashAttention-4 379): per step both warpgroups
// read ~384 KB of shared memory for 5.2 M multiply-adds, ~150 bytes per
// tensor-core clock against the 128 the SM delivers, so the shared-memory
// port, not the tensor pipe, bounds this shape near 75% of the wgmma peak.
// Measured on the H200 (2026-11-24, bf16, heads = 2048 / dhead, TFLOPS =
// 2.5 x the forward's FLOPs / time; one call with FlashAttention-4 and cuDNN,
// README): full / causal 8k 392.6 / 372.6, 16k 384.5 / 394.2 TFLOPS: 1.44x
// bwd_02 (266-274), 1.01-1.07x FlashAttention-4 (380.9 / 366.5, 380.5 /
// 369.8), cuDNN 373.3 / 403.5, 356.8 / 381.5. Better than predicted: the
// tensor pipe keeps pace with the shared-memory reads.
// Deterministic mode: 0.67-0.74x of that (255-285 TFLOPS; FlashAttention-4's
// own 276-287). Where each warp counts its additions was measured four ways
// (one call, two rounds, docs/NOTES.md): fencing right after the reductions
// 0.58-0.65x; after the step's dK / dV wait 0.61-0.68x; in the next step
// behind its S / dP (the code here) 0.66-0.72x; and, not deterministic, the
// fence without the wait for the turn 0.55-0.59x: the cost is each lane's
// fence waiting for its reductions, which contend at L2 when every key block
// adds to the same tile at once (the ordered ones contend less), not the
// wait itself. Issue 18's 0.9 needs the additions off the consumers' path.
// Session 22 (2026-11-25, the same four cells, session start -> now, two
// rounds of one call, docs/NOTES.md): the staged dQ and writer thread with
// one dO stage 279 / 256 / 284 / 265 -> 306 / 283 / 311 / 294 (0.74-0.78x;
// predicted 0.85-0.9x): warpgroup 1 waited every step for the copy engine
// to read warpgroup 0's half (neither the order nor the writer's wait for
// completion cost anything: a second writer changed nothing), and the one
// dO stage costs ~9% by itself; with warpgroup 1's dQ last, 352.5 / 340.9 /
// 361.0 / 357.8 against 393.7 / 379.8 / 399.5 / 397.1 non-deterministic:
// 0.90x (issue 18's target; 0.88-0.89x at 8k in a later call).
// Session 27 (H100): dK and dV through shared memory as bwd_03 stores them
// (BwdRowTile, the transposed accumulators written 2 bytes at a time into
// [key][dim] rows, then 16-byte row pieces by all 256 consumer threads)
// instead of 2-byte global stores (4 rows x 16 bytes per warp
// instruction): full / causal 8k +0.3% / +0.2%, deterministic causal 8k
// +2.5% (call 3, two rounds; the step loop's SASS unchanged).
// Session 46 (H200, docs/NOTES.md): ptxas hoisted the wait for dP above
// every exponential of P; deterministic mode now pins it after them
// (wgmma_wait_after_all): full 8k / 16k +3.0% / +3.0%, causal 8k / 16k
// -0.1% / +0.1% to +1.1%, deterministic / non-deterministic 0.87-0.91 in
// one call. The same pin lost 1.6-1.9% without the ordering (there the
// consumers never wait for the writer), and 1-4% in bwd_03 (both modes),
// where the exponentials after dP's arrival interleave with dS's
// arithmetic; dQ last in both warpgroups -2.6 to -4.6%, in neither -15 to
// -19% (deterministic).
// Session 48 (H200): the deterministic writer's first turn on each tile
// stores instead of adding, and the preprocess zeroes only the tiles no key
// block sees (BwdDqOrder): preprocess 68 -> 35 us, this kernel's DRAM reads
// 417 -> 285 MB at full 8k, deterministic +0.4-1%; deterministic /
// non-deterministic 0.89-0.91 over three calls (README). Starting the dQ
// convert early in deterministic calls lost 4-9% (docs/NOTES.md).
// Session 49: variable-length calls take their sequences longest first
// (bwd_sequence_of): hdim 256 full +1.5%, deterministic +0.6% (H200, call 3).
// Sessions 57-58 (H200, docs/NOTES.md): three changes to the deterministic
// hand-off measured and dropped: warpgroup 0's dV first with dO released
// before its dQ is staged (-1 to -3%), the staging buffer freed in two 16 KB
// slots (-5 to -10%), and the writer counting a tile one step late so that
// it need not wait for the reductions' completion (-3 to -21%: a dQ tile's
// key blocks form a chain, each block's turn waits for the block above it,
// so a late count compounds down the chain). One call beside FlashAttention-4
// and cuDNN, all timed over 0.5 s (session 58, README): full / causal 8k
// 403.5 / 393.1, 16k 406.1 / 408.4 TFLOPS, 1.06-1.10x FA4 (378.3 / 360.4,
// 381.6 / 372.7), 1.03-1.14x cuDNN; deterministic 361.5 / 355.2 / 370.2 /
// 363.5 (0.89-0.91x; FA4's deterministic 274-289).
// Session 60 (H200, docs/NOTES.md): bwd_03's relaxed turn spin (one L1
// invalidation a wait instead of one a poll): deterministic +0.5 to +0.7%
// (causal 8k -0.2%). Dropped: two chains of turns per dQ tile (-20%: a
// second completion wait in the writer's step) and warpgroup 1 adding its
// dQ half from registers in the turn (RED.128, fence.release.gpu; -17 to
// -22%). Clocks per step (full 8k): the writer's turn wait 1165, bulk reads
// of the halves 1600 and 1895, completion and count 1048; warpgroup 1 waits
// 3461 of its ~6700 for the staging buffer.
// Session 61 (H200, call 1, two rotated rounds): the count by a counter
// thread (BwdDqOrder::hand_over / count_steps, thread 64): the writer hands
// each completed step over by an mbarrier, so the release's MEMBAR.GPU
// (600-1100 clocks after bulk reductions) leaves its serial path while the
// chain's links keep their length. Deterministic full 8k / 16k 364.2 ->
// 365.2 / 373.9 -> 396.7, causal 8k / 16k 359.7 -> 373.5 / 370.6 -> 387.9
// TFLOPS (+0.3 / +6.1 / +3.8 / +4.7%). Dropped on top of it: warpgroup 1
// adding its half from registers in the turn with no fence of its own (the
// counter's release covering it): -14 to -20% against the counter alone.
// Run it: ./runner --bwd --kernel wgmma_wide --dhead 256 ;
//   ./bench --bwd --kernel wgmma_wide --seq 8192 --dhead 256 [--causal]
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/backward.h"
#include "common/bwd_params.h"
#include "common/bwd_seq.cuh"
#include "common/head_dims.h"
#include "common/hopper/bwd_tma.cuh"
#include "common/hopper/sync.cuh"
#include "common/hopper/tma_host.h"
#include "common/hopper/wgmma.cuh"
#include "common/launch_limits.h"
#include "common/mask.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/reduce.cuh"
#include "common/scores.h"

namespace flash::detail {

#if FLASH_HAS_SM90A
namespace {

template <int kHeadDim_> struct WideBwdConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kBlockM = 64;  // query rows per step
  static constexpr int kBlockN = 64;  // keys per CTA
  static constexpr int kConsumerWGs = 2;
  static constexpr int kStages = 2;
  static constexpr int kProducerRegs = 24, kConsumerRegs = 240;
  static constexpr int kKeys = kBlockN / kConsumerWGs;   // S and dP columns per warpgroup
  static constexpr int kDims = kHeadDim / kConsumerWGs;  // dK^T / dV^T rows, dQ columns per warpgroup
  static_assert(kHeadDim == 256, "the wide rung is hdim 256's");
  static_assert(kBlockN == 64 && kBlockM == 64, "P and dS are one 128-byte swizzle row per query");
  static_assert(kDims % kDqBlock == 0, "dQ adds whole 64-dim blocks of the accumulator");
};

template <class F> bool dispatch_bwd04_head_dim(int d, F&& f) {
  return dispatch_head_dim_of<256>(d, static_cast<F&&>(f));
}
using Bwd04HeadDims = BuiltHeadDims<256>;

// Deterministic mode: the consumer warpgroups hand their halves of the
// step's dQ to the dQ writer (Bwd04DqWriter) through the one staging
// buffer, warpgroup 0's first. One use of each barrier per step:
//   staged(c)  every thread of warpgroup c stored its half;
//   freed(c)   the writer's reduction of warpgroup c's half has read it, so
//              the other warpgroup may store: warpgroup 1 in this step
//              after freed(0), warpgroup 0 in the next after freed(1).
template <class Cfg> struct Bwd04DqHandoff {
  static constexpr int kNumBars = 2 * Cfg::kConsumerWGs + 2;
  std::uint64_t* bars;

  __device__ std::uint64_t* staged(int c) const { return bars + c; }
  __device__ std::uint64_t* freed(int c) const { return bars + Cfg::kConsumerWGs + c; }
  // The writer's step completed (its reductions' writes done) / counted.
  __device__ std::uint64_t* completed() const { return bars + 2 * Cfg::kConsumerWGs; }
  __device__ std::uint64_t* counted() const { return bars + 2 * Cfg::kConsumerWGs + 1; }

  // One thread, before the ring's init (whose fence publishes these too).
  __device__ void init() const {
    for (int c = 0; c < Cfg::kConsumerWGs; ++c) {
      mbar_init(staged(c), kWarpgroupThreads);
      mbar_init(freed(c), 1);
    }
    mbar_init(completed(), 1);
    mbar_init(counted(), 1);
  }
  // Warpgroup c, every thread, step i: the buffer is its (warpgroup 1: step
  // i's freed(0); warpgroup 0: step i - 1's freed(1), which step 0 passes
  // at once), then its half is announced. Every thread arrives, so that its
  // stores are ordered before the bulk reduction reads them.
  __device__ void consumer_acquire(int c, int i) const {
    if (c == 0) mbar_wait(freed(1), (i & 1) ^ 1);
    else mbar_wait(freed(0), i & 1);
  }
  __device__ void consumer_commit(int c) const { mbar_arrive(staged(c)); }
  // The writer.
  __device__ void writer_wait(int c, int i) const { mbar_wait(staged(c), i & 1); }
  __device__ void writer_release(int c) const { mbar_arrive(freed(c)); }
};

// Shared memory, byte offsets from a 1024-byte-aligned base; tiles of 16-bit
// values are rows of 64-column (128-byte) swizzled blocks, as TMA writes
// them (see Bwd03Smem). P and dS: [query][key], one 128-byte row per query.
template <class Cfg> struct Bwd04Smem {
  static constexpr int kKVBytes = Cfg::kBlockN * Cfg::kHeadDim * 2;  // K or V
  static constexpr int kQBytes = Cfg::kBlockM * Cfg::kHeadDim * 2;   // one stage of Q or dO
  static constexpr int kPBytes = Cfg::kBlockM * Cfg::kBlockN * 2;    // one buffer of P or dS
  static constexpr int kRowBytes = Cfg::kBlockM * 4;                  // one stage of LSE or dpsum
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKVBytes;
  static constexpr int kQ = kV + kKVBytes;
  static constexpr int kDo = kQ + Cfg::kStages * kQBytes;
  static constexpr int kP = kDo + Cfg::kStages * kQBytes;
  static constexpr int kDs = kP + 2 * kPBytes;
  static constexpr int kLse = kDs + 2 * kPBytes;
  static constexpr int kDpsum = kLse + Cfg::kStages * kRowBytes;
  static constexpr int kBars = kDpsum + Cfg::kStages * kRowBytes;
  static constexpr int kNumBars = bwd_ring_bars<Cfg>(false);
  // Deterministic mode's barriers (Bwd04DetSmem, the same tiles' bytes): the
  // ring with dO's pair, then Bwd04DqHandoff's. The launch's bytes cover
  // both layouts.
  static constexpr int kDetBars = bwd_ring_bars<Cfg>(true) + Bwd04DqHandoff<Cfg>::kNumBars;
  static constexpr std::size_t kBytes = kBars + std::max(kNumBars, kDetBars) * 8 + 1024;  // + slack to align the base
  static_assert(kKVBytes % 1024 == 0 && kQBytes % 1024 == 0 && kPBytes % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(kBytes <= 227 * 1024, "more shared memory than a CTA may have");
  static_assert(kBwdRowPad % Cfg::kBlockM == 0 && Cfg::kBlockM % kBwdDqTileRows == 0, "steps tile the row arrays");
  static constexpr int kThreads = kWarpgroupThreads * (1 + Cfg::kConsumerWGs);
  static_assert(setmaxnreg_fits(Cfg::kProducerRegs, Cfg::kConsumerRegs, Cfg::kConsumerWGs),
                "setmaxnreg: more registers than the CTA was launched with");
};

// Deterministic mode's layout: dO in one buffer with its own barriers
// (BwdRing's kOneDoStage) and, in the 32 KB its second stage took, the dQ
// staging buffer: one warpgroup's 64 x 128 fp32 half of the step's dQ, as
// two accumulator blocks in fragment order, which the two warpgroups fill in
// turn (Bwd04DqHandoff). Same bytes as Bwd04Smem, whose kBytes the launch
// uses.
template <class Cfg> struct Bwd04DetSmem {
  using Base = Bwd04Smem<Cfg>;
  static constexpr bool kOneDoStage = true;
  static constexpr int kKVBytes = Base::kKVBytes, kQBytes = Base::kQBytes, kPBytes = Base::kPBytes;
  static constexpr int kRowBytes = Base::kRowBytes;
  static constexpr int kDqBytes = Cfg::kBlockM * Cfg::kDims * 4;  // one warpgroup's half
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKVBytes;
  static constexpr int kQ = kV + kKVBytes;
  static constexpr int kDo = kQ + Cfg::kStages * kQBytes;
  static constexpr int kDq = kDo + kQBytes;
  static constexpr int kP = kDq + kDqBytes;
  static constexpr int kDs = kP + 2 * kPBytes;
  static constexpr int kLse = kDs + 2 * kPBytes;
  static constexpr int kDpsum = kLse + Cfg::kStages * kRowBytes;
  static constexpr int kBars = kDpsum + Cfg::kStages * kRowBytes;
  static constexpr int kNumBars = Base::kDetBars;  // BwdRing with dO's pair, then Bwd04DqHandoff's
  static constexpr std::size_t kBytes = kBars + kNumBars * 8 + 1024;
  static_assert(kDq % 1024 == 0 && kDqBytes % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(kBytes <= Base::kBytes, "the launch reserves Bwd04Smem::kBytes");
};

template <class Cfg, bool kDeterministic>
using Bwd04SmemOf = std::conditional_t<kDeterministic, Bwd04DetSmem<Cfg>, Bwd04Smem<Cfg>>;
template <class Cfg, bool kDeterministic> using Bwd04Ring = BwdRing<Cfg, Bwd04SmemOf<Cfg, kDeterministic>>;

// Deterministic mode's dQ writer (one thread of the producer warpgroup, its
// own warp): per step, its turn on the tile's counter (BwdDqOrder), then
// warpgroup 0's half and warpgroup 1's, each by one bulk reduction (a bulk
// store at the tile's first turn) and freed
// once the copy engine has read it, then, once both additions completed,
// the count. The consumers wait for the writer only when it is behind by
// the buffer's one use (bwd_03's scheme with one buffer for two halves).
template <class Cfg, bool kVarlen> struct Bwd04DqWriter {
  using Smem = Bwd04DetSmem<Cfg>;

  __device__ static void run(const BwdParams& p, std::uint8_t* smem, const Bwd04DqHandoff<Cfg>& handoff, int n_block,
                             int h_kv, int b, const SeqRows<kVarlen>& seq, const TileRange& tiles, int steps) {
    const Mask& mask = seq.mask();  // variable-length: the sequence's (its key blocks are the ones turn() counts)
    const float* sdq = reinterpret_cast<const float*>(smem + Smem::kDq);
    typename Bwd04Ring<Cfg, true>::Step step{h_kv * p.group_size, tiles.begin};
    for (int i = 0; i < steps; ++i) {
      const int m0 = step.m_block * Cfg::kBlockM;
      const std::int64_t row0 = bwd_ws_row0(p, seq, b, step.h) + m0;
      bool first;
      BwdDqOrder<Cfg>::wait_turn(p, mask, row0, m0, n_block, first);
      float* gdq = p.dq_accum + row0 * Cfg::kHeadDim;
#pragma unroll
      for (int c = 0; c < Cfg::kConsumerWGs; ++c) {
        handoff.writer_wait(c, i);
        BwdDqOrder<Cfg>::put(gdq + c * (Cfg::kDims / kDqBlock) * kDqBlockFloats, sdq, Smem::kDqBytes, first);
        tma_store_commit();
        bulk_wait_read<0>();
        handoff.writer_release(c);
      }
      bulk_wait_all();  // the additions' global writes are done (not only their shared-memory reads)
      BwdDqOrder<Cfg>::hand_over(handoff.completed(), handoff.counted(), i);  // to the counter thread
      step.advance(tiles);
    }
  }
};

// (Read only by sm_90a device code, which the sm_80 pass compiles out.)
static_assert(WideBwdConfig<256>::kKeys == 32, "each warpgroup takes 32 of the 64 keys");

// Named barrier (bar.sync ids; 0 is __syncthreads): both warpgroups' P and
// dS columns are in shared memory (256 threads).
[[maybe_unused]] constexpr int kBwd04PdsReady = 1;
[[maybe_unused]] constexpr int kBwd04StoreReady = 2;  // dK and dV through shared memory (Bwd04Consumer::store)

template <class T, class Cfg, bool kDeterministic, bool kMods, bool kVarlen> struct Bwd04Consumer {
  using Smem = Bwd04SmemOf<Cfg, kDeterministic>;
  using Ring = Bwd04Ring<Cfg, kDeterministic>;
  static constexpr int kHeadDim = Cfg::kHeadDim, kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN;
  static constexpr int kKeys = Cfg::kKeys, kDims = Cfg::kDims;
  static constexpr int kDimBlocks = kDims / 64;  // 64-dim blocks per warpgroup (M of dK^T / dV^T)

  const BwdParams& p;
  std::uint32_t base;  // shared address of the tiles
  std::uint8_t* smem;  // the same, generic
  int c, warp, lane;
  int n_block, n0;     // the CTA's key block and first key
  int key0;            // this warpgroup's first S / dP column: n0 + kKeys c

  // S = Q K^T (dP = dO V^T): A = the stage's Q (dO) tile, B = this
  // warpgroup's kKeys rows of K (V), both K-major.
  __device__ void gemm_sdp(std::uint32_t q_tile, std::uint32_t kv_tile, float (&acc)[kKeys / 2]) const {
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      const std::uint64_t da = wgmma_desc_sw128(q_tile, (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16, 1024);
      const std::uint64_t db =
          wgmma_desc_sw128(kv_tile + kKeys * c * 128, (ks / 4) * kBlockN * 128 + (ks % 4) * 32, 16, 1024);
      WgmmaOp<kKeys>::template ss<T>(acc, da, db, ks > 0);
    }
  }
  // dV^T += dO^T P (dK^T += Q^T dS): M = this warpgroup's dims, one 64-dim
  // block per accumulator (A: that column block of the stage's dO (Q) tile,
  // read M-major); N = the block's keys (B: P (dS), [query][key], read
  // N-major); k = the step's queries.
  __device__ void gemm_kv_t(std::uint32_t q_tile, std::uint32_t p_tile, float (&acc)[kDimBlocks][kBlockN / 2]) const {
#pragma unroll
    for (int mb = 0; mb < kDimBlocks; ++mb) {
      const std::uint32_t a_cols = q_tile + (kDimBlocks * c + mb) * kBlockM * 128;
#pragma unroll
      for (int kk = 0; kk < kBlockM / 16; ++kk) {
        const std::uint64_t da = wgmma_desc_sw128(a_cols, kk * 16 * 128, kBlockM * 128, 1024);
        const std::uint64_t db = wgmma_desc_sw128(p_tile, kk * 16 * 128, kBlockM * 128, 1024);
        WgmmaOp<kBlockN>::template ss_mn<T>(acc[mb], da, db, 1);
      }
    }
  }
  // dQ = dS K for this warpgroup's dims: A = dS ([query][key], K-major), B =
  // K's column blocks of those dims (N-major), k = the block's keys.
  __device__ void gemm_dq(std::uint32_t ds_tile, float (&acc)[kDims / 2]) const {
    const std::uint32_t k_cols = base + Smem::kK + kDimBlocks * c * kBlockN * 128;
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      const std::uint64_t da = wgmma_desc_sw128(ds_tile, kk * 32, 16, 1024);
      const std::uint64_t db = wgmma_desc_sw128(k_cols, kk * 16 * 128, kBlockN * 128, 1024);
      WgmmaOp<kDims>::template ss_b_nmajor<T>(acc, da, db, kk > 0);
    }
  }

  // This warpgroup's columns of P or dS, rounded, into a [query][key] tile:
  // the lane's pair (row r, keys key0 - n0 + 8 j + 2 t, + 1) lands in the
  // row's 16-byte chunk (key / 8) ^ (r % 8) (the 128-byte swizzle),
  // conflict-free.
  __device__ void store_tile(std::uint8_t* tile, const float (&x)[kKeys / 2]) const {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int j = 0; j < kKeys / 8; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = 16 * warp + g + 8 * half;  // r % 8 == g
        const int chunk = (kKeys * c / 8 + j) ^ g;
        *reinterpret_cast<std::uint32_t*>(tile + r * 128 + chunk * 16 + 4 * t) =
            pack2<T>(x[4 * j + 2 * half], x[4 * j + 2 * half + 1]);
      }
  }

  __device__ void run(const Ring& ring, const Bwd04DqHandoff<Cfg>& handoff, int b, int h_kv, const SeqRows<kVarlen>& seq, const TileRange& tiles,
                      int steps, float (&dk)[kDimBlocks][kBlockN / 2], float (&dv)[kDimBlocks][kBlockN / 2]) const {
    if (steps == 0) return;
    const Mask& mask = seq.mask();
    const float* s_lse = reinterpret_cast<const float*>(smem + Smem::kLse);
    const float* s_dpsum = reinterpret_cast<const float*>(smem + Smem::kDpsum);
    const int g = lane / 4;
    mbar_wait(ring.kv_full(), 0);
    typename Ring::Step step{h_kv * p.group_size, tiles.begin};
    for (int i = 0; i < steps; ++i) {
      const int s = Ring::stage(i), m0 = step.m_block * kBlockM;
      const std::uint32_t q_tile = base + Smem::kQ + s * Smem::kQBytes;
      const std::uint32_t do_tile = base + Smem::kDo + (Ring::kOneDo ? 0 : s * Smem::kQBytes);
      ring.consumer_wait(i);

      // S and dP in flight together.
      float sc[kKeys / 2], dp[kKeys / 2];
      wgmma_fence();
      gemm_sdp(q_tile, base + Smem::kK, sc);
      wgmma_commit();
      if constexpr (Ring::kOneDo) {
        ring.consumer_wait_do(i);  // (dO is loaded half a step ahead, Q a whole step)
        wgmma_fence();             // wgmma after a branch: ptxas would insert this arrive itself
      }
      gemm_sdp(do_tile, base + Smem::kV, dp);
      wgmma_commit();
      wgmma_wait<1>();
      fence_registers(sc);

      // P: the softcap and ALiBi (kMods), the Mask on tiles that need it,
      // then exp2 against the row's LSE (query rows past seqlen_q: LSE +inf,
      // P = 0; keys past seqlen_k: zero K and V rows, masked).
      auto& s_frag = *reinterpret_cast<float(*)[1][kKeys / 8][4]>(&sc);
      const int row0 = m0 + 16 * warp;
      const ScoreMod scores = kMods ? ScoreMod(p, b, step.h, mask.diag) : ScoreMod(p);
      if constexpr (kMods) scores.apply(s_frag, row0, key0, lane);
      if (mask.row_block(m0, kBlockM).needs_mask(key0, kKeys)) mask.apply(s_frag, row0, key0, lane);
      const float* lse = s_lse + s * kBlockM + 16 * warp + g;
      const float l0 = lse[0], l1 = lse[8];
      const float scale2 = ScoreMod(p).exp2_scale();
#pragma unroll
      for (int j = 0; j < kKeys / 8; ++j) {
        sc[4 * j + 0] = fast_exp2(sc[4 * j + 0] * scale2 - l0);
        sc[4 * j + 1] = fast_exp2(sc[4 * j + 1] * scale2 - l0);
        sc[4 * j + 2] = fast_exp2(sc[4 * j + 2] * scale2 - l1);
        sc[4 * j + 3] = fast_exp2(sc[4 * j + 3] * scale2 - l1);
      }
      // dP. Deterministic mode waits after the exponentials (pinned: ptxas
      // hoists a plain wait above them), the other mode before them.
      if constexpr (kDeterministic) wgmma_wait_after_all<0>(sc);
      else wgmma_wait<0>();
      fence_registers(dp);

      // dS = P (dP - dpsum), times the softcap's derivative (kMods).
      const float* dpsum = s_dpsum + s * kBlockM + 16 * warp + g;
      const float d0 = dpsum[0], d1 = dpsum[8];
#pragma unroll
      for (int j = 0; j < kKeys / 8; ++j) {
        dp[4 * j + 0] = sc[4 * j + 0] * (dp[4 * j + 0] - d0);
        dp[4 * j + 1] = sc[4 * j + 1] * (dp[4 * j + 1] - d0);
        dp[4 * j + 2] = sc[4 * j + 2] * (dp[4 * j + 2] - d1);
        dp[4 * j + 3] = sc[4 * j + 3] * (dp[4 * j + 3] - d1);
      }
      if constexpr (kMods)
        scores.apply_grad(*reinterpret_cast<float(*)[1][kKeys / 8][4]>(&dp), s_frag, row0, key0, lane,
                          [&](int, int half) { return half == 0 ? l0 : l1; });

      // P and dS to buffer i % 2 (the other warpgroup finished reading it
      // in step i - 2 before it arrived at step i - 1's barrier).
      const int buf = (i % 2) * Smem::kPBytes;
      store_tile(smem + Smem::kP + buf, sc);
      store_tile(smem + Smem::kDs + buf, dp);
      fence_async_shared();  // the stores, before wgmma (the async proxy) reads them
      named_barrier_sync(kBwd04PdsReady, Cfg::kConsumerWGs * kWarpgroupThreads);

      // dQ first (waited for alone and added while dV and dK run).
      // Deterministic mode, warpgroup 1: dQ last, so that by the time it is
      // done the writer's reduction has read warpgroup 0's half out of the
      // one staging buffer (Bwd04DqHandoff; with dQ first here too,
      // warpgroup 1 waited for that read every step).
      const std::uint32_t p_tile = base + Smem::kP + buf, ds_tile = base + Smem::kDs + buf;
      const bool dq_last = kDeterministic && c == 1;
      float dq[kDims / 2];
      if (dq_last) {
        wgmma_fence();
        gemm_kv_t(do_tile, p_tile, dv);
        wgmma_commit();
        gemm_kv_t(q_tile, ds_tile, dk);
        wgmma_commit();
        gemm_dq(ds_tile, dq);
        wgmma_commit();
        wgmma_wait<2>();  // dV: dO's last reader
        ring.consumer_release_do();
        wgmma_wait<0>();
      } else {
        wgmma_fence();
        gemm_dq(ds_tile, dq);
        wgmma_commit();
        gemm_kv_t(do_tile, p_tile, dv);
        wgmma_commit();
        gemm_kv_t(q_tile, ds_tile, dk);
        wgmma_commit();
        wgmma_wait<2>();
      }
      fence_registers(dq);
      // n-tile j of dq is (rows 16 w + g, + 8; dims kDims c + 8 j + 2 t, + 1):
      // the float4 at ((w * 8 + j % 8) * 32 + lane) * 4 of 64-dim block
      // kDimBlocks c + j / 8 of the step's accumulator tile.
      if constexpr (kDeterministic) {
        // Staged in the same order (block j / 8 of the half), for the dQ
        // writer's bulk reduction in BwdDqOrder's order.
        handoff.consumer_acquire(c, i);
        float* sdq = reinterpret_cast<float*>(smem + Smem::kDq);
#pragma unroll
        for (int j = 0; j < kDims / 8; ++j)
          *reinterpret_cast<float4*>(sdq + (j / 8) * kDqBlockFloats + ((warp * 8 + j % 8) * 32 + lane) * 4) =
              make_float4(dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]);
        fence_async_shared();  // the staging stores, before the copy engine reads them
        handoff.consumer_commit(c);
        if (!dq_last) {
          wgmma_wait<1>();  // dV: dO's last reader
          ring.consumer_release_do();
        }
      } else {
        float* gdq = p.dq_accum + (bwd_ws_row0(p, seq, b, step.h) + m0) * kHeadDim;
#pragma unroll
        for (int j = 0; j < kDims / 8; ++j)
          atomic_add4(gdq + (kDimBlocks * c + j / 8) * kDqBlockFloats + ((warp * 8 + j % 8) * 32 + lane) * 4,
                      make_float4(dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]));
      }
      wgmma_wait<0>();  // dV and dK
#pragma unroll
      for (int mb = 0; mb < kDimBlocks; ++mb) {
        fence_registers(dk[mb]);
        fence_registers(dv[mb]);
      }
      ring.consumer_release(i);  // every product of this stage's Q, dO, LSE and dpsum is done
      step.advance(tiles);
    }
  }

  // dK = scale * (dK^T)^T and dV, rounded; element (dim, key) of block mb's
  // accumulator at [4 j + 2 half + e]: dim kDims c + 64 mb + 16 w + g + 8
  // half, key n0 + 8 j + 2 t + e. Through shared memory (BwdRowTile): once
  // both warpgroups' last products (which read all of K and V) are done,
  // each writes its dims of the [key][dim] tiles into the K and V tiles, and
  // all 256 threads copy the rows out in 16-byte pieces. Keys past seqlen_k
  // are not stored.
  __device__ void store(const SeqRows<kVarlen>& seq, int h_kv, const float (&dk)[kDimBlocks][kBlockN / 2],
                        const float (&dv)[kDimBlocks][kBlockN / 2]) const {
    using Tile = BwdRowTile<kBlockN, kHeadDim>;
    static_assert(Tile::kBytes == Smem::kKVBytes, "the K (V) tile holds dK (dV)");
    constexpr int kThreads = Cfg::kConsumerWGs * kWarpgroupThreads;
    named_barrier_sync(kBwd04StoreReady, kThreads);
    const std::uint32_t tk = base + Smem::kK, tv = base + Smem::kV;
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int j = 0; j < kBlockN / 8; ++j)
#pragma unroll
      for (int e = 0; e < 2; ++e)
#pragma unroll
        for (int mb = 0; mb < kDimBlocks; ++mb)
#pragma unroll
          for (int half = 0; half < 2; ++half) {
            const int key = 8 * j + 2 * t + e, dim = kDims * c + 64 * mb + 16 * warp + g + 8 * half;
            Tile::put_one(tk, key, dim, from_float<T>(dk[mb][4 * j + 2 * half + e] * p.scale));
            Tile::put_one(tv, key, dim, from_float<T>(dv[mb][4 * j + 2 * half + e]));
          }
    named_barrier_sync(kBwd04StoreReady, kThreads);
    const int rows = seq.seqlen_k() - n0, tid = kWarpgroupThreads * c + 32 * warp + lane;
    T* gdk = static_cast<T*>(p.dk) + seq.dk() + h_kv * p.dk_head_stride + std::int64_t{n0} * p.dk_row_stride;
    T* gdv = static_cast<T*>(p.dv) + seq.dv() + h_kv * p.dv_head_stride + std::int64_t{n0} * p.dv_row_stride;
    Tile::template copy_out<kThreads>(tk, gdk, p.dk_row_stride, rows, tid);
    Tile::template copy_out<kThreads>(tv, gdv, p.dv_row_stride, rows, tid);
  }
};

// One CTA per (key block, KV head, batch); deterministic mode takes the key
// blocks in descending order, head groups interleaved (BwdDqOrder::cta). kVarlen: the grid
// covers max_seqlen_k, and a CTA past its sequence's keys exits.
template <class T, class Cfg, bool kDeterministic, bool kMods, bool kVarlen>
__global__ void __launch_bounds__(Bwd04Smem<Cfg>::kThreads, 1)
    bwd_04_wgmma_wide_dkv_kernel(const __grid_constant__ BwdTmaParams prm) {
#if FLASH_SM90A_DEVICE
  using Smem = Bwd04SmemOf<Cfg, kDeterministic>;
  using Ring = Bwd04Ring<Cfg, kDeterministic>;
  extern __shared__ std::uint8_t smem_raw[];
  const std::uint32_t raw_addr = smem_addr(smem_raw);
  std::uint8_t* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  const Ring ring{reinterpret_cast<std::uint64_t*>(smem + Smem::kBars)};
  const Bwd04DqHandoff<Cfg> handoff{reinterpret_cast<std::uint64_t*>(smem + Smem::kBars) + Ring::kNumBars};
  const BwdParams& p = prm.p;
  const BwdCta cta = BwdDqOrder<Cfg>::cta(p, kDeterministic);
  const int n_block = cta.n_block, h_kv = cta.h_kv, b = kVarlen ? bwd_sequence_of(p, cta.b) : cta.b;
  const int n0 = n_block * Cfg::kBlockN;
  if constexpr (kVarlen)
    if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
  const SeqRows<kVarlen> seq(p, b);
  if constexpr (kVarlen)
    if (n0 >= seq.seqlen_k()) return;  // past this sequence's keys (the whole CTA, before any barrier)
  const TileRange tiles = seq.mask().template query_tiles<Cfg::kBlockM>(n0, Cfg::kBlockN);
  const int steps = tiles.count() * p.group_size;
  let_next_kernel_start();  // the dQ convert's CTAs may take the SMs this grid leaves (bwd_tma_run)
  using Done = BwdKvDone<Cfg::kConsumerWGs * kWarpgroupThreads>;

  if (threadIdx.x == 0) {
    if constexpr (kDeterministic) handoff.init();
    ring.init();
  }
  __syncthreads();  // the barriers are initialised before any role uses them
  // Launched by programmatic dependent launch (bwd_tma_run): everything
  // above overlapped the preprocess; from here on every thread may read its
  // row arrays and add into the dQ accumulator it zeroed.
  wait_for_previous_kernel();

  const int wg = warpgroup_index();
  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0 && steps > 0)
      BwdProducer<Cfg, Smem, kVarlen>::run(prm, smem, ring, n0, h_kv, b, seq, tiles, steps);
    // Deterministic mode's dQ writer: the first thread of the second warp.
    if constexpr (kDeterministic)
      if (threadIdx.x == 32 && steps > 0)
        Bwd04DqWriter<Cfg, kVarlen>::run(p, smem, handoff, n_block, h_kv, b, seq, tiles, steps);
    if constexpr (kDeterministic)
      if (threadIdx.x == BwdDqOrder<Cfg>::kCounterThread && steps > 0)
        BwdDqOrder<Cfg>::template count_steps<typename Bwd04Ring<Cfg, true>::Step>(
            p, handoff.completed(), handoff.counted(), h_kv, b, seq, tiles, steps);
    if constexpr (kBwdEarlyConvert<kDeterministic, kVarlen>)
      if (threadIdx.x / 32 == 1) Done::count(p, h_kv, b);
    return;
  }
  setmaxnreg_inc<Cfg::kConsumerRegs>();
  const int c = wg - 1, tid = threadIdx.x - kWarpgroupThreads * wg;
  using Consumer = Bwd04Consumer<T, Cfg, kDeterministic, kMods, kVarlen>;
  const Consumer consumer{p, smem_addr(smem), smem, c, tid / 32, tid % 32, n_block, n0, n0 + Cfg::kKeys * c};
  constexpr int kDimBlocks = Consumer::kDimBlocks;
  float dk[kDimBlocks][Cfg::kBlockN / 2], dv[kDimBlocks][Cfg::kBlockN / 2];
#pragma unroll
  for (int mb = 0; mb < kDimBlocks; ++mb)
#pragma unroll
    for (int e = 0; e < Cfg::kBlockN / 2; ++e) dk[mb][e] = dv[mb][e] = 0.0f;
  consumer.run(ring, handoff, b, h_kv, seq, tiles, steps, dk, dv);
  consumer.store(seq, h_kv, dk, dv);
  if constexpr (kBwdEarlyConvert<kDeterministic, kVarlen>) Done::consumer_done(p);  // only the early convert waits
#endif
}

// The shared host side (common/hopper/bwd_tma.cuh) with this rung's tiles
// and kernel.
const auto dispatch_head_dim = [](int d, auto&& f) { return dispatch_bwd04_head_dim(d, f); };

std::string check(const BwdParams& p, const DeviceInfo& dev) {
  return bwd_tma_check<WideBwdConfig, Bwd04Smem>(p, dev, dispatch_head_dim);
}

std::size_t workspace_bytes(const BwdParams& p) { return bwd_tma_workspace_bytes(p); }

cudaError_t run(const BwdParams& params, void* workspace, cudaStream_t stream) {
  const auto kernel_of = [](auto tag, auto hd, auto det, auto mods, auto varlen) {
    return bwd_04_wgmma_wide_dkv_kernel<typename decltype(tag)::type, WideBwdConfig<decltype(hd)::value>,
                                       decltype(det)::value, decltype(mods)::value, decltype(varlen)::value>;
  };
  return bwd_tma_run<WideBwdConfig, Bwd04Smem>(params, workspace, stream, dispatch_head_dim, kernel_of);
}

}  // namespace

// sm_90a only, hdim 256; causal, windows, GQA/MQA, unequal lengths,
// softcap, ALiBi, sinks, variable-length batches and deterministic mode.
const BwdVariant* variant_bwd_wgmma_wide() {
  static const BwdVariant v = bwd_tma_variant<Bwd04HeadDims>(check, workspace_bytes, run);
  return &v;
}
#else
const BwdVariant* variant_bwd_wgmma_wide() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
