// What the Hopper backward rungs (bwd_03_wgmma, bwd_04_wgmma_wide) share:
// the kernel parameters with their TMA tensor maps, the Q/dO ring and its
// producer (one thread: K and V once, then Q, dO, LSE and dpsum per step),
// the rows a sequence's TMA boxes and row arrays start at, and the dQ
// accumulator's order (64 x 64 fp32 blocks in wgmma's fragment order) with
// its convert kernel. A rung's Cfg names kHeadDim, kBlockM (query rows per
// step), kBlockN (keys per CTA), kStages and kConsumerWGs; its Smem the byte
// offsets kK, kV, kQ, kDo, kLse, kDpsum and the sizes kKVBytes, kQBytes and
// kRowBytes (and kOneDoStage = true where dO has a single buffer of its own,
// BwdRing); bwd_tma_check, bwd_tma_workspace_bytes, bwd_tma_run and
// bwd_tma_variant are the host side of both rungs' entry points and registry
// entries. Device code (kernel translation units only).
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/backward.h"
#include "common/bwd_params.h"
#include "common/bwd_seq.cuh"
#include "common/hopper/sync.cuh"
#include "common/hopper/tma_host.h"
#include "common/launch_limits.h"
#include "common/mask.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/pdl.cuh"  // launch_after
#include "common/scores.h"

namespace flash::detail {

// The kernel's parameters: the call and its TMA tensor maps (64-byte
// aligned; one __grid_constant__ parameter).
struct BwdTmaParams {
  BwdParams p;
  CUtensorMap q, k, v, dout;
};

// A layout whose dO has one buffer and a barrier pair of its own (Smem::
// kOneDoStage; bwd_04's deterministic mode, which spends the second dO
// stage on staging dQ). Otherwise dO shares Q's stages and barriers.
template <class Smem, class = void> constexpr bool kBwdOneDoStage = false;
template <class Smem> constexpr bool kBwdOneDoStage<Smem, std::void_t<decltype(Smem::kOneDoStage)>> = Smem::kOneDoStage;

// BwdRing's barriers (kv_full, per stage full and empty, with one_do_stage
// dO's pair), for a layout's count before its BwdRing type is complete.
template <class Cfg> constexpr int bwd_ring_bars(bool one_do_stage) { return 1 + 2 * Cfg::kStages + (one_do_stage ? 2 : 0); }

// The Q/dO ring and the K/V barrier. Step i uses stage i % kStages for the
// (i / kStages)-th time; the parities come from i, so no role keeps phase
// bits of its own.
//   kv_full  K and V landed (one use);
//   full     the producer announced a stage's bytes and TMA delivered them;
//   empty    every consumer thread is done reading the stage.
// With kBwdOneDoStage, a stage is Q, LSE and dpsum, and dO has do_full /
// do_empty, one use per step (its last reader, dV, finishes before dK, so
// the next step's dO loads while dK and S run).
template <class Cfg, class Smem> struct BwdRing {
  static constexpr bool kOneDo = kBwdOneDoStage<Smem>;
  static constexpr int kNumBars = bwd_ring_bars<Cfg>(kOneDo);
  std::uint64_t* bars;

  __device__ std::uint64_t* kv_full() const { return bars; }
  __device__ std::uint64_t* full(int stage) const { return bars + 1 + 2 * stage; }
  __device__ std::uint64_t* empty(int stage) const { return bars + 2 + 2 * stage; }
  __device__ std::uint64_t* do_full() const { return bars + 1 + 2 * Cfg::kStages; }
  __device__ std::uint64_t* do_empty() const { return bars + 2 + 2 * Cfg::kStages; }
  // What a step loads: query tile m_block of query head h. The steps walk
  // the query tiles `tiles` of each query head of the GQA group in turn;
  // producer and consumers each keep one.
  struct Step {
    int h, m_block;
    __device__ void advance(const TileRange& tiles) {
      if (++m_block == tiles.end) m_block = tiles.begin, ++h;
    }
  };
  __device__ static int stage(int i) { return i % Cfg::kStages; }
  __device__ static std::uint32_t parity(int i) { return (i / Cfg::kStages) & 1; }

  // One thread, before anyone uses the barriers.
  __device__ void init() const {
    mbar_init(kv_full(), 1);
    for (int s = 0; s < Cfg::kStages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), kWarpgroupThreads * Cfg::kConsumerWGs);
    }
    if constexpr (kOneDo) {
      mbar_init(do_full(), 1);
      mbar_init(do_empty(), kWarpgroupThreads * Cfg::kConsumerWGs);
    }
    mbar_init_fence();
  }
  // Producer: step i's stage is free (its previous use released; a first use
  // passes at once, waiting on the phase before a fresh barrier's first),
  // then its bytes are announced; the loads complete on the barrier returned.
  __device__ std::uint64_t* producer_acquire(int i) const {
    constexpr std::uint32_t kStageTx = (kOneDo ? 1 : 2) * Smem::kQBytes + 2 * Smem::kRowBytes;  // Q, dO, LSE and dpsum
    mbar_wait(empty(stage(i)), parity(i) ^ 1);
    mbar_arrive_expect_tx(full(stage(i)), kStageTx);
    return full(stage(i));
  }
  __device__ void consumer_wait(int i) const { mbar_wait(full(stage(i)), parity(i)); }
  // kOneDo: dO's buffer, as the stages' (one use per step, parity i & 1).
  __device__ std::uint64_t* producer_acquire_do(int i) const {
    mbar_wait(do_empty(), (i & 1) ^ 1);
    mbar_arrive_expect_tx(do_full(), Smem::kQBytes);
    return do_full();
  }
  __device__ void consumer_wait_do(int i) const { mbar_wait(do_full(), i & 1); }
  __device__ void consumer_release_do() const { mbar_arrive(do_empty()); }
  // Every consumer thread arrives once it is done with the stage, so that
  // its own reads of the LSE and dpsum rows are ordered before the
  // producer's next bulk copy into them (an arrive releases the arriving
  // thread's accesses). Fewer arrivals were reported by racecheck as racing
  // with that copy: one lane per warp after __syncwarp, and one thread per
  // warpgroup after the step's dS bar.sync (2026-11-24); neither was faster
  // than this in a call of the same kind at 8k. Reading the rows from global
  // memory instead would let one thread per warpgroup arrive again
  // (docs/NOTES.md).
  __device__ void consumer_release(int i) const { mbar_arrive(empty(stage(i))); }
};

// Where the rows of (sequence b, query head h) start in the row arrays
// (ws_row0). Dense calls keep the params' expression (kernels unchanged).
template <bool kVarlen>
__device__ __forceinline__ std::int64_t bwd_ws_row0(const BwdParams& p, const SeqRows<kVarlen>& seq, int b, int h) {
  if constexpr (kVarlen) return seq.ws_row0(h);
  else return p.ws_row0(b, h, 0);
}

// The TMA coordinates of a sequence's rows: row r of Q or dO is (x, y) =
// (q_x0 + r, q_y), key r of K or V (k_x0 + r, k_y). Dense maps: x the row,
// y the batch. Variable-length (make_ragged_tensor_map): x from max_seqlen
// - n, y the sequence's end row, so rows past its n read as zeros.
struct BwdTmaRows {
  int q_x0, q_y, k_x0, k_y;
  template <bool kVarlen>
  __device__ __forceinline__ static BwdTmaRows of(const BwdParams& p, const SeqRows<kVarlen>& seq, int b) {
    if constexpr (kVarlen)
      return {p.seqlen_q - seq.seqlen_q(), seq.q_row0() + seq.seqlen_q(), p.seqlen_k - seq.seqlen_k(),
              seq.k_row0() + seq.seqlen_k()};
    else return {0, b, 0, b};
  }
};

template <class Cfg, class Smem, bool kVarlen> struct BwdProducer {
  static constexpr int kColBlocks = Cfg::kHeadDim / 64;

  // One thread: K and V, then Q, dO, LSE and dpsum of every step.
  __device__ static void run(const BwdTmaParams& prm, std::uint8_t* smem, const BwdRing<Cfg, Smem>& ring, int n0, int h_kv,
                             int b, const SeqRows<kVarlen>& seq, const TileRange& tiles, int steps) {
    const BwdParams& p = prm.p;
    const BwdTmaRows rows = BwdTmaRows::of(p, seq, b);
    mbar_arrive_expect_tx(ring.kv_full(), 2 * Smem::kKVBytes);
#pragma unroll
    for (int cb = 0; cb < kColBlocks; ++cb) {
      tma_load_4d(smem + Smem::kK + cb * Cfg::kBlockN * 128, &prm.k, cb * 64, rows.k_x0 + n0, h_kv, rows.k_y,
                  ring.kv_full());
      tma_load_4d(smem + Smem::kV + cb * Cfg::kBlockN * 128, &prm.v, cb * 64, rows.k_x0 + n0, h_kv, rows.k_y,
                  ring.kv_full());
    }
    typename BwdRing<Cfg, Smem>::Step step{h_kv * p.group_size, tiles.begin};
    for (int i = 0; i < steps; ++i) {
      std::uint64_t* bar = ring.producer_acquire(i);
      const int s = BwdRing<Cfg, Smem>::stage(i), m0 = step.m_block * Cfg::kBlockM;
      constexpr bool kOneDo = BwdRing<Cfg, Smem>::kOneDo;
#pragma unroll
      for (int cb = 0; cb < kColBlocks; ++cb) {
        tma_load_4d(smem + Smem::kQ + s * Smem::kQBytes + cb * Cfg::kBlockM * 128, &prm.q, cb * 64, rows.q_x0 + m0,
                    step.h, rows.q_y, bar);
        if constexpr (!kOneDo)
          tma_load_4d(smem + Smem::kDo + s * Smem::kQBytes + cb * Cfg::kBlockM * 128, &prm.dout, cb * 64,
                      rows.q_x0 + m0, step.h, rows.q_y, bar);
      }
      // The row arrays are padded to whole kBwdRowPad tiles (per sequence,
      // and m0 < its seqlen_q): no bounds check, and never another
      // sequence's rows.
      const std::int64_t row0 = bwd_ws_row0(p, seq, b, step.h) + m0;
      bulk_load(smem + Smem::kLse + s * Smem::kRowBytes, p.lse_log2 + row0, Smem::kRowBytes, bar);
      bulk_load(smem + Smem::kDpsum + s * Smem::kRowBytes, p.dpsum + row0, Smem::kRowBytes, bar);
      if constexpr (kOneDo) {
        std::uint64_t* do_bar = ring.producer_acquire_do(i);
#pragma unroll
        for (int cb = 0; cb < kColBlocks; ++cb)
          tma_load_4d(smem + Smem::kDo + cb * Cfg::kBlockM * 128, &prm.dout, cb * 64, rows.q_x0 + m0, step.h,
                      rows.q_y, do_bar);
      }
      step.advance(tiles);
    }
  }
};

// Deterministic mode: the fixed order of the additions to one dQ tile (query
// tile m of query head h of batch b: one step's kBlockM rows): by
// descending key block, from the last key block that sees the tile down to
// the first. A counter per tile (BwdParams::dq_semaphore, zeroed by the
// preprocess; it has one per kBwdDqTileRows = 64 rows, and a 128-row step
// uses its first tile's, an 80-row step the tile of its first row: steps 80
// rows apart from a multiple of 640 start in distinct 64-row tiles) counts
// the key blocks whose additions to it have completed; key block n adds its
// dQ blocks when the counter says turn(m, n) key blocks have, the number of
// key blocks above n that see tile m, and
// then increments it. bwd_03: the dQ writer adds warpgroup 0's block, then
// warpgroup 1's (split keys: both to the same floats, the second issued once
// the first completed; split dims or query rows: two blocks, both in
// flight), and counts once (by the counter thread it hands each completed
// step to: hand_over / count_steps below), so the counter is turn(m, n).
// bwd_04: the same writer, the two warpgroups' halves of the head dim
// through one staging buffer in turn (both added before the one count).
//   The first adder (turn 0) stores its blocks instead of adding them
// (bulk_store_f32; bwd_03's split keys: its first block, the second then
// adds), so the accumulator needs no zeros: every row of a tile that some
// key block sees is written by that tile's first step, the rows that no
// key block sees get zeros from the preprocess (common/backward.cu), by
// whole tiles of the accumulator's order (BwdParams::dq_zero_tile_rows: a
// tile's floats are in fragment order, so the rows of one are not a
// contiguous run): a tile no key block sees holds only such rows. H200,
// 16k tokens x 2048 dims (session 48): the preprocess 68 -> 35 us at hdim
// 256 (its DRAM writes 114 MB -> 0.65 MB), 70 -> 40 us at hdim 128; the
// dkv kernel reads 131 MB less (the first touch of a tile is a store);
// deterministic calls +0.4-1% (a 7.7 ms call at hdim 256 8k).
//   Which key blocks see tile m: exactly those whose query-tile range
// (Mask::query_tiles, the tiles a CTA walks) holds m, and they are the key
// tiles Mask::key_tiles gives for the tile's rows (tests/test_mask.cpp,
// KeyBlocksOfAQueryTileAreItsKeyTiles), so the ones above n number
// key_tiles.end - 1 - n.
//   Why descending: a CTA walks its query tiles upwards from the first one
// that sees its keys, and that first tile rises with the key block (causal,
// windows) or is tile 0 for all (no mask). So the key block that adds first
// to tile m reaches it earliest in its walk, and each later one reaches it
// at the same step or later: with the CTAs started together, an adder waits
// about one addition's latency behind the block above it, not for a walk.
// (Ascending order under a causal mask would make key block n wait until
// key block 0 walked up to n's first tile.)
//   Which CTA is which (cta()): with the CTAs of one (KV head, batch) started
// together, an adder's lag behind the first accumulates, one addition's
// latency per key block above it, so the last key block of a head starts
// adding (and, its staging blocks not freed, computing) that many latencies
// late; a head's key blocks all resident at once (an 8k call holds two
// heads' 64 key blocks on 132 SMs, a 16k call one head's 128) pay the whole
// chain in every wave. So bwd_03's deterministic calls without a mask take
// (KV head, batch) pairs in groups of BwdParams::det_head_group = 2
// (bwd_grouped_cta, common/bwd_params.h), interleaved: the linear
// block index walks a group's key blocks in descending order, the group's
// pairs in turn at each key block (FlashAttention-4's deterministic
// scheduler groups heads too), so the CTAs started together hold about half
// as many of one head's key blocks. Measured on an H100 (session 26, two
// rounds against groups of 1): hdim 128 full 8k +1.9%, hdim 64 full 8k
// +6.9%, 16k -0.3% / -0.5%; but causal 16k -1.4% and hdim 256 causal -3.5%,
// so causal calls and bwd_04 keep groups of 1; groups of 4 lost at hdim
// 128 (session 25).
//   Deadlock freedom: within a group, a pair's key blocks come in descending
// order of linear block index (blockIdx.x + gridDim.x * (blockIdx.y +
// gridDim.y * blockIdx.z)), so the key blocks that key block n waits for
// (same KV head and batch, above n) are CTAs with a smaller linear block
// index. A CTA waits for nothing but
// those, its own producer's TMA loads, and its own warpgroups. CUDA hands
// out the CTAs of a grid in increasing linear index (FlashAttention-3's
// deterministic backward relies on the same): so whenever some CTA is not
// finished, the unfinished CTA of smallest index is resident, and everything
// it waits for is either finished or inside itself, so it finishes; by
// induction every CTA does, however many CTAs fit on the GPU at once.
template <class Cfg> struct BwdDqOrder {
  // This CTA's key block, KV head and batch (bwd_grouped_cta, common/
  // bwd_params.h, with its CPU test).
  __device__ static BwdCta cta(const BwdParams& p, bool deterministic) {
    if (!deterministic && p.head_group == 1)
      return {static_cast<int>(blockIdx.x), static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z)};
    return bwd_grouped_cta(blockIdx.x, blockIdx.y, blockIdx.z, gridDim.x, gridDim.y, gridDim.z,
                           static_cast<unsigned>(deterministic ? p.det_head_group : p.head_group), deterministic);
  }
  __device__ static int turn(const Mask& mask, int m0, int n_block) {
    return mask.key_tiles<Cfg::kBlockN>(m0, Cfg::kBlockM).end - 1 - n_block;
  }
  // A dQ writer thread's side of it. wait_turn: the step's tile (row0, its
  // first row in the row arrays; m0 its first query row) is this key
  // block's to add to: spins until the key blocks above have counted, then
  // orders their additions (seen by that acquire) before this thread's bulk
  // reductions; returns in `first` whether this key block is the tile's
  // first adder (which stores).
  __device__ static void wait_turn(const BwdParams& p, const Mask& mask, std::int64_t row0, int m0, int n_block,
                                   bool& first) {
    const int t = turn(mask, m0, n_block);
    first = t == 0;
    wait_equal_acquire_gpu(p.dq_semaphore + row0 / kBwdDqTileRows, t);
    fence_proxy_async_global();
  }
  // The step's block from shared memory into the accumulator: stored by the
  // first adder, added by the others.
  __device__ static void put(float* gdq, const float* sdq, std::uint32_t bytes, bool first) {
    if (first) bulk_store_f32(gdq, sdq, bytes);
    else bulk_reduce_add_f32(gdq, sdq, bytes);
  }
  // The count, by a counter thread of the producer warpgroup, so that the
  // release's MEMBAR.GPU (600-1100 clocks right after bulk reductions,
  // session 60's probes) is off the writer's path (session 61: deterministic
  // hdim 256 +0.3 to +6.1%, hdim 128 up to +4.1%). Two mbarriers of count 1:
  // `completed` (the writer's step done) and `counted` (the counter took it).
  // hand_over, the writer, step i, once its reductions to the tile
  // completed (bulk_wait_all): their writes (async proxy) ordered before the
  // arrival; waits first until the counter took step i - 1 (one phase of
  // `completed` in flight at a time).
  __device__ static void hand_over(std::uint64_t* completed, std::uint64_t* counted, int i) {
    fence_proxy_async_global();
    if (i > 0) mbar_wait(counted, (i - 1) & 1);
    mbar_arrive(completed);
  }
  // count_steps, the counter thread: the writer's steps in its order (Step:
  // the ring's step walk), each counted once it completed. The writer's
  // arrival and this thread's wait order its writes before the release,
  // which covers them (cumulativity).
  template <class Step, bool kVarlen>
  __device__ static void count_steps(const BwdParams& p, std::uint64_t* completed, std::uint64_t* counted, int h_kv,
                                     int b, const SeqRows<kVarlen>& seq, const TileRange& tiles, int steps) {
    Step step{h_kv * p.group_size, tiles.begin};
    for (int i = 0; i < steps; ++i) {
      const std::int64_t row0 = bwd_ws_row0(p, seq, b, step.h) + step.m_block * Cfg::kBlockM;
      mbar_wait(completed, i & 1);
      red_release_gpu_add(p.dq_semaphore + row0 / kBwdDqTileRows, 1);
      mbar_arrive(counted);
      step.advance(tiles);
    }
  }
  // The counter thread's index: a third warp of the producer warpgroup (its
  // loads: thread 0; the dQ writer: warp 1).
  static constexpr int kCounterThread = 64;
};

// dK and dV leave a dkv CTA through shared memory: each warpgroup writes its
// rounded rows into a tile of kRows rows of kDim 16-bit values (16-byte
// chunk ch of row r at chunk ch ^ (r % 8): conflict-free for the fragment
// order's 4-byte stores and for the 16-byte reads), then copies the tile out
// in 16-byte pieces, a warp instruction covering whole rows (512 contiguous
// bytes at hdim 128). Rows at or past `rows` are not stored. (From registers,
// each warp instruction wrote 8 rows x 16 bytes: ~9 us per CTA after its last
// step, session 26's stamps.)
template <int kRows, int kDim> struct BwdRowTile {
  static constexpr int kChunks = kDim / 8;  // 16-byte chunks per row
  static_assert(kChunks % 8 == 0, "the swizzle permutes 8 chunks");
  static constexpr int kBytes = kRows * kDim * 2;
  __device__ static std::uint32_t offset(int r, int ch) { return r * kDim * 2 + ((ch ^ (r % 8)) * 16); }
  // The 4-byte pair of (row r, columns 2 k, 2 k + 1); tile: a shared address.
  __device__ static void put(std::uint32_t tile, int r, int k, std::uint32_t v) {
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(tile + offset(r, k / 4) + 4 * (k % 4)), "r"(v) : "memory");
  }
  // One 16-bit value at (row r, column col).
  template <class T> __device__ static void put_one(std::uint32_t tile, int r, int col, T v) {
    static_assert(sizeof(T) == 2, "16-bit values");
    std::uint16_t bits;
    __builtin_memcpy(&bits, &v, 2);
    asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(tile + offset(r, col / 8) + 2 * (col % 8)), "h"(bits) : "memory");
  }
  // Thread `tid` of kThreads copies rows [0, rows) to dst (row stride in elements).
  template <int kThreads, class T>
  __device__ static void copy_out(std::uint32_t tile, T* dst, std::int64_t row_stride, int rows, int tid) {
    static_assert(kRows * kChunks % kThreads == 0, "whole passes");
#pragma unroll
    for (int k = 0; k < kRows * kChunks / kThreads; ++k) {
      const int i = tid + k * kThreads, r = i / kChunks, ch = i % kChunks;
      if (r < rows) {
        uint4 v;
        asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                     : "r"(tile + offset(r, ch))
                     : "memory");
        *reinterpret_cast<uint4*>(dst + r * row_stride + 8 * ch) = v;
      }
    }
  }
};

// The end of a dkv CTA, for the dQ convert's early start (bwd_tma_run):
// once every write of the CTA is done (its consumers' dK and dV, and bwd_04's
// dQ atomics; its dQ writer's bulk reductions completed), the CTA counts
// itself in p.kv_done, with release semantics, for the convert CTAs of its
// (batch, KV head), which wait for all of its key blocks. Named barrier
// kBwdDoneBarrier (the rungs' own barriers take the ids below it) between
// the consumer warpgroups and the producer warpgroup's second warp (the dQ
// writer's, whose first lane counts: the thread whose bulk reductions the
// proxy fence orders).
inline constexpr int kBwdDoneBarrier = 8;
// Which calls start the convert early, and so which dkv kernels count
// themselves done: dense non-deterministic ones (bwd_tma_run says why).
template <bool kDeterministic, bool kVarlen> inline constexpr bool kBwdEarlyConvert = !kDeterministic && !kVarlen;
// ... and of those, where the Config says so (kEarlyConvertMinSteps; absent:
// every call), the calls whose CTAs run at least that many steps on average.
// bwd_03's count costs each CTA its dQ writer's wait for its bulk
// reductions to complete, a proxy fence and a release at its end, which a
// narrow window's two to five steps a CTA do not earn back (session 52,
// H200, non-deterministic, early start off: (128, 0) hdim 64 8k +3.7%, hdim
// 128 16k +1.0%; (512, 0) at 2k -2.2%, (4096, 0) -1.1 / -1.6%, causal and
// full -0.6 to -1.3%; bwd_03's Configs give their thresholds). bwd_04 (dQ
// by reductions from registers, no bulk wait) gains from the early start
// even there: (128, 0) hdim 256 8k -1.1% and (512, 0) 2k -4.3% without it.
template <class Cfg, class = void> struct BwdEarlyConvertMinSteps : std::integral_constant<int, 0> {};
template <class Cfg>
struct BwdEarlyConvertMinSteps<Cfg, std::void_t<decltype(Cfg::kEarlyConvertMinSteps)>>
    : std::integral_constant<int, Cfg::kEarlyConvertMinSteps> {};
// The steps a dkv CTA takes on average (query tiles of kBlockM rows that see
// its key block, times the query heads of its group); dense calls.
template <int kBlockM, int kBlockN> long long bwd_steps_per_cta(const BwdParams& p) {
  const long long blocks = (p.seqlen_k + kBlockN - 1) / kBlockN;
  if (blocks == 0) return 0;
  return p.call_mask.template walked_rows<kBlockM, kBlockN>() / kBlockM * p.group_size / blocks;
}
template <int kConsumerThreads> struct BwdKvDone {
  static constexpr int kThreads = kConsumerThreads + 32;
  // Every consumer thread, after its last global write.
  __device__ static void consumer_done(const BwdParams& p) {
    if (p.kv_done_target > 0) named_barrier_arrive(kBwdDoneBarrier, kThreads);
  }
  // Every lane of the writer's warp, after the writer returned.
  __device__ static void count(const BwdParams& p, int h_kv, int b) {
    if (p.kv_done_target == 0) return;  // the convert is launched after this grid (bwd_tma_run)
    named_barrier_sync(kBwdDoneBarrier, kThreads);
    if (threadIdx.x % 32 == 0) {
      fence_proxy_async_global();
      red_release_gpu_add(p.kv_done + static_cast<std::int64_t>(b) * p.heads_kv + h_kv, 1);
    }
  }
};

// dQ blocks: 64 query rows x 64 dims of fp32, in the accumulator's fragment
// order (BwdDqLayout).
constexpr int kDqBlock = 64;
constexpr int kDqBlockFloats = kDqBlock * kDqBlock;

// The accumulator's order: per (sequence, head) and query tile of 64 rows,
// head_dim / 64 blocks of 64 x 64 floats (the dims 64 cb..), each in a wgmma
// accumulator's fragment order: the float4 at ((w * 8 + j) * 32 + l) * 4 holds
// rows 16 w + l / 4 and + 8, dims 8 j + 2 (l % 4) and + 1. position(f, row,
// col): the float4 at float f of a tile's head_dim * 64 floats holds
// dQ[row][col, col + 1] and dQ[row + 8][...] (as the convert,
// common/bwd_seq.cuh, asks).
template <int kHeadDim_> struct BwdDqLayout {
  static constexpr int kTileRows = kDqBlock, kHeadDim = kHeadDim_;
  __device__ __forceinline__ static void position(int in_tile, int& row, int& col) {
    const int in_block = in_tile % kDqBlockFloats;
    const int frag = in_block / 128, lane = in_block % 128 / 4;
    row = 16 * (frag / 8) + lane / 4;
    col = in_tile / kDqBlockFloats * kDqBlock + 8 * (frag % 8) + 2 * (lane % 4);
  }
};

// The transposed order (bwd_03's 80-row steps, dQ^T = K^T dS^T, the head dim
// on wgmma's M): per (sequence, head) and step of kRows query rows,
// head_dim / 64 blocks of 64 dims x kRows queries, each in the accumulator's
// fragment order: the float4 at ((w * kRows / 8 + j) * 32 + l) * 4 holds dims
// 16 w + l / 4 and + 8, queries 8 j + 2 (l % 4) and + 1. position(f, row,
// col): the float4 at float f holds dQ[row][col], dQ[row + 1][col],
// dQ[row][col + 8] and dQ[row + 1][col + 8] (kTransposed).
template <int kRows, int kHeadDim_> struct BwdDqTLayout {
  static constexpr int kTileRows = kRows, kHeadDim = kHeadDim_;
  static constexpr bool kTransposed = true;
  static constexpr int kBlockFloats = kDqBlock * kRows;
  __device__ __forceinline__ static void position(int in_tile, int& row, int& col) {
    const int in_block = in_tile % kBlockFloats;
    const int frag = in_block / 128, lane = in_block % 128 / 4;
    row = 8 * (frag % (kRows / 8)) + 2 * (lane % 4);
    col = in_tile / kBlockFloats * kDqBlock + 16 * (frag / (kRows / 8)) + lane / 4;
  }
};
// A Cfg's accumulator order: transposed where it says kDqTransposed.
template <class Cfg, class = void> struct BwdDqLayoutOf {
  using type = BwdDqLayout<Cfg::kHeadDim>;
};
template <class Cfg> struct BwdDqLayoutOf<Cfg, std::enable_if_t<Cfg::kDqTransposed>> {
  using type = BwdDqTLayout<Cfg::kBlockM, Cfg::kHeadDim>;
};
// A Cfg that only serves calls without score modifiers (kPlainOnly): its
// kernels for those are not built.
template <class Cfg, class = void> constexpr bool kBwdPlainOnly = false;
template <class Cfg> constexpr bool kBwdPlainOnly<Cfg, std::void_t<decltype(Cfg::kPlainOnly)>> = Cfg::kPlainOnly;
// Rows each dense (batch, head) pads to: Cfg::kRowPad where it names one.
template <class Cfg, class = void> constexpr int kBwdCfgRowPad = kBwdRowPad;
template <class Cfg> constexpr int kBwdCfgRowPad<Cfg, std::void_t<decltype(Cfg::kRowPad)>> = Cfg::kRowPad;

// Q and dO as boxes of kBlockM rows, K and V of kBlockN; each map's rows end
// at its sequence length, so rows past it read as zeros. Variable-length
// calls: the packed tensors as ragged maps (make_ragged_tensor_map), in
// which each sequence ends at its own length (seqused_k for the keys).
inline std::string make_bwd_tma_maps(BwdTmaParams& prm, int block_m, int block_n) {
  const BwdParams& p = prm.p;
  if (p.cu_seqlens_q != nullptr) {
    std::string err = make_ragged_tensor_map(&prm.q, p.q, p.dtype, p.total_q, p.seqlen_q, p.heads_q, p.head_dim,
                                             p.q_row_stride, p.q_head_stride, block_m);
    if (err.empty())
      err = make_ragged_tensor_map(&prm.dout, p.dout, p.dtype, p.total_q, p.seqlen_q, p.heads_q, p.head_dim,
                                   p.do_row_stride, p.do_head_stride, block_m);
    if (err.empty())
      err = make_ragged_tensor_map(&prm.k, p.k, p.dtype, p.total_k, p.seqlen_k, p.heads_kv, p.head_dim,
                                   p.k_row_stride, p.k_head_stride, block_n);
    if (err.empty())
      err = make_ragged_tensor_map(&prm.v, p.v, p.dtype, p.total_k, p.seqlen_k, p.heads_kv, p.head_dim,
                                   p.v_row_stride, p.v_head_stride, block_n);
    return err;
  }
  std::string err = make_bshd_tensor_map(&prm.q, p.q, p.dtype, p.batch, p.seqlen_q, p.heads_q, p.head_dim,
                                         p.q_batch_stride, p.q_row_stride, p.q_head_stride, block_m);
  if (err.empty())
    err = make_bshd_tensor_map(&prm.dout, p.dout, p.dtype, p.batch, p.seqlen_q, p.heads_q, p.head_dim,
                               p.do_batch_stride, p.do_row_stride, p.do_head_stride, block_m);
  if (err.empty())
    err = make_bshd_tensor_map(&prm.k, p.k, p.dtype, p.batch, p.seqlen_k, p.heads_kv, p.head_dim, p.k_batch_stride,
                               p.k_row_stride, p.k_head_stride, block_n);
  if (err.empty())
    err = make_bshd_tensor_map(&prm.v, p.v, p.dtype, p.batch, p.seqlen_k, p.heads_kv, p.head_dim, p.v_batch_stride,
                               p.v_row_stride, p.v_head_stride, block_n);
  return err;
}

// A Hopper rung's check(): the launch limits of its head dim's tiles
// (dispatch_head_dim, the rung's switch; SmemOf<CfgOf<d>>::kBytes of shared
// memory) and the driver's tensor maps. (Per-sequence metadata comes only
// with cu_seqlens_q in a backward call, src/backward.cpp; restated here,
// since kVarlen follows cu_seqlens_q alone.)
template <template <int> class CfgOf, template <class> class SmemOf, class DispatchHeadDim>
std::string bwd_tma_check(const BwdParams& p, const DeviceInfo& dev, DispatchHeadDim&& dispatch_head_dim) {
  if (p.cu_seqlens_q == nullptr && (p.cu_seqlens_k != nullptr || p.seqused_k != nullptr))
    return "cu_seqlens_k or seqused_k without cu_seqlens_q";
  std::string err = "head_dim " + std::to_string(p.head_dim) + " is not built";
  dispatch_head_dim(p.head_dim, [&](auto hd) {
    err = check_head_batch_grid(p, dev, SmemOf<CfgOf<decltype(hd)::value>>::kBytes);
  });
  if (err.empty()) err = grid_yz_reason("heads_kv", p.heads_kv);
  if (err.empty()) err = tensor_map_driver_reason();
  return err;
}

// Which calls add dQ in BwdDqOrder's order: deterministic ones, and, for
// speed, non-deterministic dense calls with a narrow window on both sides
// (left + right <= bwd_ordered_window_keys): their first adders store, so the
// preprocess zeroes none of the accumulator, and a narrow window's dQ tiles
// have chains of two or three key blocks. The limit per head dim is where the
// deterministic kernels stopped winning in session 62's call 1 (H200, same
// binary, (w, 0) windows, causal; deterministic / non-deterministic TFLOPS):
//   hdim 128 16k: w 128 128.7 / 118.2, w 256 209.2 / 204.3, w 512 310.9 / 309.1;
//   hdim 256 8k:  w 128 114.7 / 109.5, w 256 179.4 / 179.5, w 512 243.8 / 257.9;
//   hdim 64 8k:   w 128 103.0 / 104.9, w 256 177.3 / 182.1 (never).
inline int bwd_ordered_window_keys(int head_dim) { return head_dim == 128 ? 256 : head_dim == 256 ? 128 : -1; }
inline bool bwd_orders_dq(const BwdParams& p) {
  if (p.deterministic) return true;
  const Mask& m = p.call_mask;
  return p.cu_seqlens_q == nullptr && m.has_left && m.has_right &&
         m.left + m.right <= bwd_ordered_window_keys(p.head_dim);
}

// The rungs' workspace: the dQ accumulator, and where the additions are
// ordered (bwd_orders_dq) its tiles' counters.
inline std::size_t bwd_tma_workspace_bytes(const BwdParams& p, int row_pad = kBwdRowPad) {
  return bwd_workspace_bytes(p, /*with_dq_accum=*/true, /*with_dq_semaphore=*/bwd_orders_dq(p), row_pad);
}

// The host side of a Hopper rung's run(): binds the workspace (with the dQ
// accumulator, and in deterministic mode its tiles' counters), runs the
// preprocess, and for the call's dtype and head dim (dispatch_head_dim, the
// rung's switch) and its flags (deterministic mode, score modifiers,
// variable-length batch: each a template flag of the dkv kernel, so calls
// without one run the kernels they ran before) builds the tensor maps,
// launches kernel_of(tag, head dim, det, mods, varlen) over (key blocks, KV
// heads, batch) with CfgOf<head dim>'s tiles and SmemOf's threads and bytes,
// and converts dQ from the accumulator (BwdDqLayout; started while the dkv
// grid's last wave runs in non-deterministic dense calls, BwdKvDone).
template <template <int> class CfgOf, template <class> class SmemOf, class DispatchHeadDim, class KernelOf>
cudaError_t bwd_tma_run(const BwdParams& params, void* workspace, cudaStream_t stream,
                        DispatchHeadDim&& dispatch_head_dim, KernelOf&& kernel_of, int row_pad = kBwdRowPad) {
  BwdTmaParams prm;
  prm.p = params;
  BwdParams& p = prm.p;
  p.deterministic = bwd_orders_dq(params);  // narrow windows take the ordered kernels too
  bind_bwd_workspace(p, workspace, /*with_dq_accum=*/true, /*with_dq_semaphore=*/p.deterministic, row_pad);
  if (p.deterministic)  // the first adders store: zeros only in the tiles no key block sees (BwdDqOrder)
    dispatch_head_dim(p.head_dim, [&](auto hd) {
      p.dq_zero_tile_rows = BwdDqLayoutOf<CfgOf<decltype(hd)::value>>::type::kTileRows;
    });
  cudaError_t err = bwd_preprocess(p, stream);  // dpsum, lse_log2, dq_accum = 0, dq_semaphore = 0, dsinks
  if (err != cudaSuccess) return err;
  err = cudaErrorInvalidValue;
  const auto go = [&](auto tag, auto hd, auto det, auto mods, auto varlen) {
    using T = typename decltype(tag)::type;
    using Cfg = CfgOf<decltype(hd)::value>;
    using Smem = SmemOf<Cfg>;
    constexpr bool kVarlen = decltype(varlen)::value;
    if constexpr (kBwdPlainOnly<Cfg> && decltype(mods)::value) {
      return;  // the rung's run() never picks this Cfg for such a call
    } else {
    if (!make_bwd_tma_maps(prm, Cfg::kBlockM, Cfg::kBlockN).empty()) return;  // check() asked the driver already
    // Variable-length: the grids cover max_seqlen_k and max_seqlen_q, either
    // of which may be 0 (every sequence empty on that side): a grid without
    // CTAs is not launched.
    const dim3 grid((p.seqlen_k + Cfg::kBlockN - 1) / Cfg::kBlockN, p.heads_kv, p.batch);
    err = cudaSuccess;
    constexpr int kMinSteps = BwdEarlyConvertMinSteps<Cfg>::value;
    const bool early = kBwdEarlyConvert<decltype(det)::value, decltype(varlen)::value> &&
                       (kMinSteps == 0 || bwd_steps_per_cta<Cfg::kBlockM, Cfg::kBlockN>(p) >= kMinSteps);
    p.kv_done_target = early ? static_cast<int>(grid.x) : 0;  // the dkv CTAs count themselves done
    p.head_group = bwd_head_group<Cfg::kBlockM, Cfg::kBlockN>(p);
    // Programmatic dependent launch: the CTAs start (barriers, setup) while
    // the preprocess's last wave runs and wait for it (wait_for_previous_kernel).
    if (!kVarlen || grid.x > 0)
      err = bwd_launch(kernel_of(tag, hd, det, mods, varlen), grid, Smem::kThreads, Smem::kBytes, prm, stream,
                       /*pdl=*/true);
    if (err != cudaSuccess) return;
    using Layout = typename BwdDqLayoutOf<Cfg>::type;
    const dim3 tiles((p.seqlen_q + Layout::kTileRows - 1) / Layout::kTileRows, p.heads_q, p.batch);
    // Dense calls: the convert starts once every dkv CTA has started
    // (programmatic dependent launch, common/pdl.cuh), so that its CTAs fill
    // the SMs that the dkv grid's last wave leaves idle; each converts its
    // tile once its (batch, KV head)'s grid.x key blocks have counted
    // themselves done (BwdKvDone). Variable-length calls (whose CTAs past a
    // sequence's keys or rows exit at once) and deterministic calls launch
    // it after the dkv kernel: measured (session 26, H100, two rounds),
    // the early start gave non-deterministic calls +0.2% to +1.2% (hdim 64
    // full 8k) and deterministic ones -0.3% to -3.3% (the convert's traffic
    // probably slows the ordered additions still running).
    if (tiles.x > 0)
      err = launch_after(early, bwd_convert_dq_kernel<T, Layout, kVarlen>, tiles, dim3(256), 0, stream, p);
    if (err == cudaSuccess) err = cudaGetLastError();
    }
  };
  const auto go_mode = [&](auto tag, auto hd) {
    dispatch_score_mods(p, [&](auto mods) {
      const auto by_det = [&](auto varlen) {
        if (p.deterministic) go(tag, hd, std::true_type{}, mods, varlen);
        else go(tag, hd, std::false_type{}, mods, varlen);
      };
      if (p.cu_seqlens_q != nullptr) by_det(std::true_type{});
      else by_det(std::false_type{});
    });
  };
  if (p.dtype == DType::f16) dispatch_head_dim(p.head_dim, [&](auto hd) { go_mode(TypeTag<__half>{}, hd); });
  else dispatch_head_dim(p.head_dim, [&](auto hd) { go_mode(TypeTag<__nv_bfloat16>{}, hd); });
  return err;
}

// The registry entry of a Hopper backward rung (bwd_03, bwd_04): every
// feature of bwd_variant's, on sm_90a machine code (which runs on compute
// capability 9.0 only), with TMA's bound on a tensor's strides (< 2^40 bytes).
template <class HeadDims>
BwdVariant bwd_tma_variant(std::string (*check)(const BwdParams&, const DeviceInfo&),
                           std::size_t (*workspace_bytes)(const BwdParams&),
                           cudaError_t (*run)(const BwdParams&, void*, cudaStream_t)) {
  BwdVariant v = bwd_variant<HeadDims>(check, workspace_bytes, run);
  v.min_compute_capability = 90;
  v.max_compute_capability = 90;
  v.max_offset = (std::int64_t{1} << 39) - 1;
  v.strides_nest = true;  // (dq, dk and dv are stored without maps; the rule holds for outputs anyway)
  return v;
}

}  // namespace flash::detail
