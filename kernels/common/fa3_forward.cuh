// The Hopper forward (FlashAttention-3 design), shared by the sm_90a rungs of
// the ladder. Each rung is a Config that switches on its idea; this file is
// the frame, split as CUTLASS's FMHA is: a tile scheduler, a mainloop with a
// producer and consumers, and an epilogue, as plain structs.
//
// A CTA owns kBlockM = 64 * kConsumerWGs query rows of one (batch, head) and
// runs 1 + kConsumerWGs warpgroups:
//   producer (warpgroup 0, one thread)  TMA loads: the Q tile once, then K and
//       V tiles into a ring of kStages shared-memory stages. Each stage has a
//       "full" mbarrier (TMA completes its bytes on it) and an "empty" one
//       (every consumer warp arrives once it is done reading).
//   consumers (warpgroups 1..)  each owns 64 query rows:
//       S = Q K^T   wgmma, Q and K from shared memory
//       mask        ScoreMod (softcap, ALiBi: kMods kernels only, which take the
//                   single-tile schedule), then Mask (-inf), only on the tiles
//                   Mask says need it. Softcap 30 on the H200 (2026-11-24,
//                   tanh.approx: one MUFU.TANH beside the softmax's EX2):
//                   314 / 506 TFLOPS at hdim 64 / 128 against 452 / 619
//                   causal, FA4 193 / 310 in the same call (2026-11-23,
//                   tanh from EX2 and RCP: 220 / 404)
//       softmax     online, fp32 registers, exp2 with the scale folded in
//       O += P V    wgmma, P from registers (the S accumulators, rounded), V from shared memory
//   epilogue: O / row_sum into this warpgroup's rows of the Q tile, then a
//       TMA store (rows past seqlen_q are clipped); LSE from registers.
// K/V tiles are visited last to first over the range Mask gives, so the
// tiles at its right edge (the ragged tail, the causal diagonal) come first.
// The pieces are objects: a tile scheduler (Fa3SingleTileScheduler or
// Fa3PersistentScheduler, one interface, chosen per call), the
// Q buffer and K/V ring as a pipeline (Fa3Pipeline: barriers and phases),
// named barriers from one enum (Fa3Barrier).
//
// Config (a struct with these members, see the rung files):
//   kHeadDim, kBlockN, kConsumerWGs, kStages      tile shape and pipeline depth
//   kProducerRegs, kConsumerRegs                  setmaxnreg per warpgroup role
//   regs(Fa3ProducerLoad)                         (optional) the split per kernel kind (Fa3Regs)
//   kIntraWGOverlap   issue S(j) and P(j-1) V(j-1) together, softmax(j) while PV runs
//   kPingpong         named barriers take the consumer warpgroups' GEMMs in
//                     turn, so one warpgroup's softmax overlaps another's GEMMs
//   kHeavyFirst       causal: launch the longest query blocks first
//   kQInRegisters     S = Q K^T with Q as the register operand (ldmatrix once
//                     per tile): shared memory then feeds only K to that GEMM
//   kPersistent       (optional, needs kIntraWGOverlap) one CTA per SM loops
//                     over the tiles; the producer loads the next tile's Q and
//                     K/V while the consumers finish and store the current one.
//                     Causal calls run the same kernel code with the
//                     single-tile schedule: the hardware's block scheduler
//                     balances their uneven tiles better than a static
//                     longest-first order did (docs/NOTES.md: -3 to -8%).
//   kPagedKV          (optional) the Config takes a paged KV cache.
//   kDenseQueryPagedDynamic, kDenseQueryPagedWalk (optional) dense-query paged
//                     calls take the dense calls' dynamic schedule / walk
//                     (Fa3Launcher; else the grid).
//   kPackedPagedDynamic (optional) packed-query full paged calls on pages of
//                     >= 128 keys take the dynamic schedule (else the grid).
//   kSmallPageStages  (optional) K/V stages of the kernel for 16-key pages
//                     (Fa3SmallPageCfgOf: the grid, not persistent).
//   kLazyRescale      (optional) the overlapped loop rescales O only when a
//                     warp's row max moved by more than 2^8 (OnlineSoftmax).
//   kMinBlocks        (optional, default 1) CTAs per SM the kernel is built
//                     for: __launch_bounds__ and the registers setmaxnreg splits.
// Sequences (template flag kSeq, as the fa2 frame): dense; per_sequence
// (cu_seqlens / seqused_k: tensor maps over the packed tensors, Fa3Seq gives
// a tile's rows and lengths, V rows past a sequence zeroed by the producer,
// O of a block that straddles a sequence's end stored without TMA); paged
// (K/V tiles as page-sized TMA boxes through the page table, issued by the
// producer warp's lanes: produce_paged; over 64 columns the tiles are kept
// in row groups, so that a box spans every column block: kRowGroups).
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/head_dims.h"
#include "common/hopper/sync.cuh"
#include "common/hopper/tma_host.h"
#include "common/hopper/wgmma.cuh"
#include "common/launch_limits.h"
#include "common/mask.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/params.h"
#include "common/pdl.cuh"
#include "common/scores.h"
#include "common/variant.h"
#include "flash/variants.h"

// The kernels exist only in the sm_90a pass (FLASH_SM90A_DEVICE, hopper/wgmma.cuh).

namespace flash::detail {

struct Fa3Params {
  FwdParams p;
  CUtensorMap q, k, v, o;  // 64-byte aligned; passed as one __grid_constant__ parameter
  // Paged calls at head dims over 64 (row-group maps: make_paged_row_group_
  // tensor_map): a box is 2^box_shift rows of a page, row `row` of page
  // `page` at map coordinates (row & row_mask, page * page_mul + (row >>
  // group_shift)) along the rows and the groups (or pages): a box per page
  // where the strides give a group count (0, groups per page, 3), else one
  // per 8-row group (row, page, 31: box_shift 3).
  struct PagedBoxes {
    int box_shift, row_mask, page_mul, group_shift;
  } kv_boxes = {};
};

// Whether a Config asked for the persistent schedule (absent: no).
template <class Cfg, class = void> struct Fa3IsPersistent : std::false_type {};
template <class Cfg> struct Fa3IsPersistent<Cfg, std::void_t<decltype(Cfg::kPersistent)>>
    : std::integral_constant<bool, Cfg::kPersistent> {};
template <class Cfg> inline constexpr bool kFa3Persistent = Fa3IsPersistent<Cfg>::value;

// The CTAs per SM a Config is built for (kMinBlocks; absent: 1): the second
// argument of __launch_bounds__, and so the register budget setmaxnreg splits.
template <class Cfg, class = void> struct Fa3MinBlocks : std::integral_constant<int, 1> {};
template <class Cfg> struct Fa3MinBlocks<Cfg, std::void_t<decltype(Cfg::kMinBlocks)>>
    : std::integral_constant<int, Cfg::kMinBlocks> {};
template <class Cfg> inline constexpr int kFa3MinBlocks = Fa3MinBlocks<Cfg>::value;

// The Config of a Config's dynamic-schedule kernels: kDynamicStages K/V
// stages (where the Config has it) instead of kStages. hdim 64's four stages
// gained 2.2-4.8% on the walk and the grid and lost 1-2.3% on the dynamic
// schedule's short causal tiles (session 44), which keep three.
template <class Cfg, class = void> struct Fa3DynamicCfgOf {
  using type = Cfg;
};
template <class Cfg> struct Fa3DynamicCfgOf<Cfg, std::void_t<decltype(Cfg::kDynamicStages)>> {
  struct type : Cfg {
    static constexpr int kStages = Cfg::kDynamicStages;
  };
};

// The Config of a Config's kernel for pages of kFa3SmallPageKeys keys (paged
// calls without score modifiers): where the Config has kSmallPageStages,
// that many K/V stages on the single-tile grid, without persistence, so O
// is staged in Q's buffer and the stages take O's room. At 16-key pages a
// 128-key tile is 8 TMA boxes per operand, which land later than the
// contiguous cache's one; the consumers waited for K (session 37's ncu:
// 21% of stall samples) with two stages.
inline constexpr int kFa3SmallPageKeys = 16;
template <class Cfg, class = void> struct Fa3SmallPageCfgOf {
  using type = Cfg;
};
template <class Cfg> struct Fa3SmallPageCfgOf<Cfg, std::void_t<decltype(Cfg::kSmallPageStages)>> {
  struct Deeper : Cfg {
    static constexpr bool kPersistent = false;
    static constexpr int kStages = Cfg::kSmallPageStages;
  };
  using type = std::conditional_t<Cfg::kSmallPageStages == Cfg::kStages, Cfg, Deeper>;
};
template <class Cfg> inline constexpr bool kFa3SmallPageKernel =
    !std::is_same_v<typename Fa3SmallPageCfgOf<Cfg>::type, Cfg>;

// Whether the overlapped loop rescales O only when a row's max moved by more
// than OnlineSoftmax::kLazyRescaleLog2 (kLazyRescale; absent: always).
template <class Cfg, class = void> struct Fa3LazyRescale : std::false_type {};
template <class Cfg> struct Fa3LazyRescale<Cfg, std::void_t<decltype(Cfg::kLazyRescale)>>
    : std::integral_constant<bool, Cfg::kLazyRescale> {};
template <class Cfg> inline constexpr bool kFa3LazyRescale = Fa3LazyRescale<Cfg>::value;

// Where the steady loop waits for its warpgroup's own P V (Cfg::kPvPin,
// optional): after row kPvPin's exponentials (OnlineSoftmax::probs's
// after_row; 1: after both, the default; 0: after the first, so that the
// second row's run beside P's conversion to bf16 / fp16, with the rows'
// references all set first: probs's kRefsFirst). A wait before any
// exponential measured -1.1 to +0.8% (session 45) and is not offered.
template <class Cfg, class = void> struct Fa3PvPin : std::integral_constant<int, 1> {};
template <class Cfg> struct Fa3PvPin<Cfg, std::void_t<decltype(Cfg::kPvPin)>> : std::integral_constant<int, Cfg::kPvPin> {};
template <class Cfg> inline constexpr int kFa3PvPin = Fa3PvPin<Cfg>::value;

// The registers setmaxnreg gives each role. What the producer carries
// depends on the kernel (Fa3ProducerLoad): dense tiles (a fixed walk over
// kernel parameters, or the dynamic schedule's next index), tiles resolved
// at run time from per-sequence metadata (a sequence's rows and lengths:
// per-sequence and paged kernels), or both with page-table lookups (paged
// calls on the dynamic schedule or the persistent walk). A
// Config takes Cfg::kProducerRegs / kConsumerRegs for every kernel, or
// chooses per load with a `regs(Fa3ProducerLoad)` member (hdim 128's
// resolving producers spilled at 24 registers: fwd_09).
struct Fa3RegSplit {
  int producer, consumer;
};
enum class Fa3ProducerLoad { fixed, resolving, paged_persistent };
template <class Cfg, class = void> struct Fa3HasRegs : std::false_type {};
template <class Cfg>
struct Fa3HasRegs<Cfg, std::void_t<decltype(Cfg::regs(Fa3ProducerLoad::fixed))>> : std::true_type {};
template <class Cfg, Fa3ProducerLoad kLoad> struct Fa3Regs {
  static constexpr Fa3RegSplit kSplit = [] {
    if constexpr (Fa3HasRegs<Cfg>::value) return Cfg::regs(kLoad);
    else return Fa3RegSplit{Cfg::kProducerRegs, Cfg::kConsumerRegs};
  }();
  static constexpr int kProducer = kSplit.producer, kConsumer = kSplit.consumer;
  static_assert(setmaxnreg_fits(kProducer, kConsumer, Cfg::kConsumerWGs, kFa3MinBlocks<Cfg>),
                "setmaxnreg: more registers than the CTA was launched with");
};

// Shared memory, as byte offsets from a 1024-byte-aligned base (the 128-byte
// swizzle repeats every 1024 bytes; wgmma and TMA both assume it starts there).
template <class Cfg> struct Fa3Smem {
  static constexpr int kBlockM = 64 * Cfg::kConsumerWGs;
  static constexpr int kQBytes = kBlockM * Cfg::kHeadDim * 2;
  static constexpr int kKVBytes = Cfg::kBlockN * Cfg::kHeadDim * 2;  // one stage of K or V
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kQBytes;
  static constexpr int kV = kK + Cfg::kStages * kKVBytes;
  // Persistent: O gets its own buffer, since the next tile's Q may already be
  // landing in the Q tile while this one's O is stored.
  static constexpr int kOwnO = kFa3Persistent<Cfg> ? kV + Cfg::kStages * kKVBytes : 0;
  static constexpr int kO = kFa3Persistent<Cfg> ? kOwnO : kQ;
  static constexpr int kBars = kFa3Persistent<Cfg> ? kOwnO + kQBytes : kV + Cfg::kStages * kKVBytes;
  // q_full, then per stage: k_full, k_empty, v_full, v_empty; persistent:
  // q_empty; last: v_fix (variable-length calls: see Fa3Mainloop::produce)
  static constexpr int kNumBars = 1 + 4 * Cfg::kStages + (kFa3Persistent<Cfg> ? 1 : 0) + 1;
  static constexpr std::size_t kBytes = kBars + kNumBars * 8 + 1024;  // + slack to align the base
  static_assert(kKVBytes % 1024 == 0 && kQBytes % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(!Cfg::kPingpong || Cfg::kConsumerWGs >= 2, "pingpong needs two consumer warpgroups");
  static_assert(setmaxnreg_fits(Cfg::kProducerRegs, Cfg::kConsumerRegs, Cfg::kConsumerWGs, kFa3MinBlocks<Cfg>),
                "setmaxnreg: more registers than the CTA was launched with");
  static_assert(!kFa3Persistent<Cfg> || Cfg::kIntraWGOverlap, "the persistent loop is the overlapped one");
};

// Named barriers (bar.sync ids; 0 is __syncthreads): one per consumer
// warpgroup for the pingpong turns, one per consumer warpgroup for its
// epilogue.
enum Fa3Barrier : int {
  kFa3PingpongTurn = 1,  // + consumer warpgroup: its turn to issue GEMMs (256 threads: two warpgroups)
  kFa3Epilogue = 8,      // + consumer warpgroup: its O rows are staged (128 threads)
};

// A tile: query block m_block of one (head, batch).
struct Fa3Tile {
  int m_block, head, batch;
};

// Where a tile's sequence lives, for the TMA coordinates: dense tensors are
// mapped by batch (coordinate b, row 0); packed ones (cu_seqlens_q for q and
// o, cu_seqlens_k for k and v) as one sequence of all their rows, so a
// sequence is a row offset and batch coordinate 0. Lengths are the
// sequence's own (kVarlen: seq_span, seqused_k included); o is the element
// offset of its row 0 in o, for stores that bypass TMA.
struct Fa3Seq {
  int q_row0, q_b, k_row0, k_b;  // paged: k_b is the sequence (its page-table row)
  int seqlen_q, seqlen_k;
  std::int64_t o;
};
template <SeqLayout kSeq> __device__ __forceinline__ Fa3Seq fa3_seq(const FwdParams& p, int b) {
  if constexpr (kSeq != SeqLayout::dense) {
    const auto span = p.seq_span(b);
    const bool packed_q = p.cu_seqlens_q != nullptr, packed_k = p.cu_seqlens_k != nullptr;
    return {span.lse_row0,         packed_q ? 0 : b,    packed_k ? p.cu_seqlens_k[b] : 0, packed_k ? 0 : b,
            span.seqlen_q,         span.seqlen_k,       span.o};
  } else {
    return {0, b, 0, b, p.seqlen_q, p.seqlen_k, b * p.o_batch_stride};
  }
}

// Whether a Config takes a paged KV cache (kPagedKV; absent: no): one more
// kernel per element type, head dim and score-modifier flag, so only the
// rung that auto picks has it (build time).
template <class Cfg, class = void> struct Fa3IsPaged : std::false_type {};
template <class Cfg> struct Fa3IsPaged<Cfg, std::void_t<decltype(Cfg::kPagedKV)>>
    : std::integral_constant<bool, Cfg::kPagedKV> {};
template <class Cfg> inline constexpr bool kFa3Paged = Fa3IsPaged<Cfg>::value;

// Whether dense-query paged calls take the dense calls' schedules: the
// dynamic one where dense calls take it (kDenseQueryPagedDynamic), and the
// walk (kDenseQueryPagedWalk: full calls on pages of >= 32 keys, narrow
// windows on any); absent: no,
// they keep the single-tile grid (Fa3Launcher).
template <class Cfg, class = void> struct Fa3DenseQueryPagedDynamic : std::false_type {};
template <class Cfg> struct Fa3DenseQueryPagedDynamic<Cfg, std::void_t<decltype(Cfg::kDenseQueryPagedDynamic)>>
    : std::integral_constant<bool, Cfg::kDenseQueryPagedDynamic> {};
template <class Cfg, class = void> struct Fa3DenseQueryPagedWalk : std::false_type {};
template <class Cfg> struct Fa3DenseQueryPagedWalk<Cfg, std::void_t<decltype(Cfg::kDenseQueryPagedWalk)>>
    : std::integral_constant<bool, Cfg::kDenseQueryPagedWalk> {};

// Whether packed-query paged calls without a mask take the dynamic schedule
// on pages of >= 128 keys (kPackedPagedDynamic; absent: no, the grid).
template <class Cfg, class = void> struct Fa3PackedPagedDynamic : std::false_type {};
template <class Cfg> struct Fa3PackedPagedDynamic<Cfg, std::void_t<decltype(Cfg::kPackedPagedDynamic)>>
    : std::integral_constant<bool, Cfg::kPackedPagedDynamic> {};

// The rows of one TMA box of a paged K/V tile: each box lies in one page, so
// it is the page size or, for pages larger than a tile, the largest power
// of two that divides kBlockN (the tiles start at multiples of kBlockN).
__host__ __device__ constexpr int fa3_page_box(int page_size, int block_n) {
  return page_size < (block_n & -block_n) ? page_size : (block_n & -block_n);
}

// A no-op for Consumer::sched_arrive's wait before the hand-on.
struct Fa3NoWait {
  __device__ void operator()() const {}
};

// Tile schedulers share one interface: is_valid(), tile(), advance(), and
// grid() for the launch. The kernel loop reads the same for every schedule.
template <class Cfg> struct Fa3TileCount {
  static constexpr int kBlockM = 64 * Cfg::kConsumerWGs;
  __host__ __device__ static int num_m_blocks(const FwdParams& p) { return (p.seqlen_q + kBlockM - 1) / kBlockM; }
  __host__ __device__ static std::int64_t num_tiles(const FwdParams& p) {
    return std::int64_t{num_m_blocks(p)} * p.heads_q * p.batch;
  }
};

// The query heads of one section of the causal longest-first order: a power
// of two of (batch, KV head) pairs whose K and V fit in 16 MiB of L2, times
// the query heads per KV head, at most every (batch, head) of the call.
// 16 MiB: on the H200 (2026-11-24, causal, 2k-16k tokens, hdims 64-256)
// within 0.5% of the best of 8, 16 and 32 in every cell; 32 lost 2% at
// hdim 64 2k and 256 16k, 8 gave up hdim 256 8k's +6%.
inline constexpr long long kFa3L2SectionBytes = 16LL << 20;
__device__ __forceinline__ int fa3_l2_section(const FwdParams& p) {
  const long long kv_bytes = 4LL * p.seqlen_k * p.head_dim;  // K and V of one head, 2-byte elements
  int pairs = 1;
  while (pairs < p.heads_q * p.batch && 2 * pairs * kv_bytes <= kFa3L2SectionBytes) pairs *= 2;
  return min(pairs * p.group_size, p.heads_q * p.batch);
}

// One CTA per tile, blockIdx.x naming it. Without kHeavyFirst and a causal
// mask: query block fastest, then head, then batch. With them, longest
// first within L2-sized sections: the (batch, head) pairs go in sections of
// fa3_l2_section; a section's CTAs take its query blocks from the last (the
// most keys) to the first, its heads fastest, so short tiles fill the end
// of each section while the CTAs running together read that section's
// K/V. Before (2026-11-23): longest first per head, heads one after
// another, which left the last head's longest tiles to the end of the grid
// (a list-scheduling model: 4-5% idle tail at hdim 64 8k and hdim 128 8k);
// longest first over the whole call lost the L2 sharing. FlashAttention-4
// orders its causal grid in sections too. Measured (H200, 2026-11-24, one
// call, TFLOPS old -> new; the hdim >= 128 rows include the wait pin of
// Consumer::run): hdim 64 2k / 4k / 8k / 16k 340 -> 339 / 400 -> 403 /
// 451 -> 460 / 477 -> 487; hdim 128 447 -> 460 / 522 -> 540 / 572 -> 593 /
// 618 -> 625; hdim 256 8k 614 -> 652, 16k 682 -> 686.
// kPacked: the grid of kernels that may take packed-query calls (paged and
// per-sequence ones), whose sequences come in p.seq_order's order when the
// call has one (longest first per group of 32; compact_of below says why):
// the grid's b-th sequence is entry b's. Session 50 (H200, issue 17's 7
// sequences, full, pages of 16 / 256): +1.3% / +1.5%. Dense kernels keep
// the plain grid (no load of p.seq_order).
template <class Cfg, bool kPacked = false> struct Fa3SingleTileScheduler : Fa3TileCount<Cfg> {
  static dim3 grid(const FwdParams& p) { return dim3(static_cast<unsigned>(Fa3SingleTileScheduler::num_tiles(p))); }
  bool valid = true;
  __device__ explicit Fa3SingleTileScheduler(const FwdParams&) {}
  __device__ bool is_valid(const FwdParams&) const { return valid; }
  __device__ Fa3Tile tile(const FwdParams& p) const { return grid_tile(p, static_cast<int>(blockIdx.x)); }
  __device__ void advance() { valid = false; }

  // The idx-th CTA's tile: of(), in the sequences' order (kPacked).
  __device__ static Fa3Tile grid_tile(const FwdParams& p, int idx) {
    Fa3Tile t = of(p, idx);
    if constexpr (kPacked) {
      if (p.seq_order != nullptr) t.batch = p.seq_order[2 * t.batch];
    }
    return t;
  }
  // The idx-th tile of the order above (also Fa3DynamicScheduler's order).
  __device__ static Fa3Tile of(const FwdParams& p, int idx) {
    const int num_m = Fa3SingleTileScheduler::num_m_blocks(p);
    if (!(Cfg::kHeavyFirst && p.mask.causal)) return {idx % num_m, (idx / num_m) % p.heads_q, idx / num_m / p.heads_q};
    const int pairs = p.heads_q * p.batch, width = fa3_l2_section(p);
    const int section = idx / (width * num_m), r = idx - section * width * num_m;
    const int this_width = min(width, pairs - section * width);  // the last section may be narrower
    const int blk = r / this_width, hb = section * width + (r - blk * this_width);
    return {num_m - 1 - blk, hb % p.heads_q, hb / p.heads_q};
  }
};

// Causal variable-length calls (packed queries, cu_seqlens_q): one CTA per
// real tile, FlashAttention-4's compact grid, instead of max_seqlen_q's query
// blocks for every sequence, whose CTAs past a sequence's end exit at once
// (38% of the grid at issue 17's 7 sequences). Sequence by sequence (the
// longest sequences first, compact_of), the longest query block first, the
// heads fastest. The grid is a bound,
// total_q / kBlockM + batch tiles per head (sum over b of ceil(len_b /
// kBlockM) is at most that); indices past the last tile get a query block
// past every sequence and exit. tile() is warp-collective (the varlen
// producer and consumers call it with whole warps): lane j reads sequence
// b0 + j's length, and a prefix sum over the warp's 32 sequences and a
// ballot find the CTA's, one load latency per 32 sequences.
// Measured (H200, session 31, calls 1-3, issue 17's 7 sequences, TFLOPS):
// causal hdim 128 450 -> 457-461 (+1.6-2.2%), hdim 64 358-362 -> 367-374
// (+2.6-3.4%), 7 mixed lengths at hdim 256 with GQA 540-546 -> 572-580
// (+6%). Full-mask calls measured -0.2% / -0.9% on it (a loop over the
// sequences, one dependent load each: -1.4%), and -1.0% on the single-tile
// grid in this kernel (call 4): not the grid; they keep the single-tile
// grid, as dense queries with per-sequence keys (seqused_k, no
// cu_seqlens_q) do, which have no empty CTAs. Nor does it suit long
// sequences: with every head fastest, the CTAs running together read all
// the sequence's heads' K and V, where the single-tile grid's sections keep
// 16 MiB of them in L2. Session 32 (call 1, old grid -> compact): 1 x 16k
// -5.1%, 2 x 8k -4.1% (hdim 128), 1 x 16k hdim 64 -3.1%, 2 x 8k hdim 256
// -1.9%; in the sections' order per sequence still -1.8% / -1.7% / 0.0% /
// +0.4%. So the compact grid is taken only where the longest sequence's K
// and V over every KV head (max_seqlen_k, 2-byte elements) fit in
// kFa3VarlenCompactBytes: issue 17's batch (29.5 MiB) keeps it (+2.1%),
// the long cells above went back to the old grid (call 2: +2.0-3.7%).
inline constexpr long long kFa3VarlenCompactBytes = 32LL << 20;
template <class Cfg> struct Fa3VarlenTileScheduler : Fa3SingleTileScheduler<Cfg, true> {
  using Single = Fa3SingleTileScheduler<Cfg, true>;
  static constexpr int kBlockM = Fa3TileCount<Cfg>::kBlockM;
  // Whether the compact numbering suits the call (packed queries whose
  // longest sequence's K and V fit kFa3VarlenCompactBytes); the compact
  // grid takes it for causal calls, the dynamic schedule for any mask.
  __host__ __device__ static bool compact_fits(const FwdParams& p) {
    return Cfg::kHeavyFirst && p.cu_seqlens_q != nullptr &&
           4LL * p.seqlen_k * p.head_dim * p.heads_kv <= kFa3VarlenCompactBytes;
  }
  __host__ __device__ static bool compact(const FwdParams& p) { return p.mask.causal && compact_fits(p); }
  __host__ __device__ static std::int64_t compact_tiles(const FwdParams& p) {
    return (std::int64_t{p.total_q} / kBlockM + p.batch) * p.heads_q;
  }
  __host__ __device__ static std::int64_t num_tiles(const FwdParams& p) {
    return compact(p) ? compact_tiles(p) : Single::num_tiles(p);
  }
  static dim3 grid(const FwdParams& p) { return dim3(static_cast<unsigned>(num_tiles(p))); }
  __device__ explicit Fa3VarlenTileScheduler(const FwdParams& p) : Single(p) {}
  __device__ Fa3Tile tile(const FwdParams& p) const {
    const int idx = static_cast<int>(blockIdx.x);
    return compact(p) ? compact_of(p, idx) : Single::grid_tile(p, idx);
  }
  // The idx-th tile of the compact numbering (also Fa3DynamicScheduler's
  // order for these calls); warp-collective. Causal calls (the compact
  // grid's) number each sequence's tiles longest first, the heads fastest;
  // calls without a mask (the dynamic schedule's only), whose tiles are
  // equal, the query block fastest, so that the CTAs running together read
  // a few heads' K and V, not all of the sequence's (session 39, H200: 4 x
  // 4096 at hdim 128 578 -> 611 TFLOPS, +5.7%; issue 17's batch +3.4%;
  // hdim 64 +1.6-3.3%).
  // The sequences come in p.seq_order's order when the call has one: the
  // metadata check put them longest first (most keys) within each group of
  // 32, a warp's lanes (check_varlen_metadata), so that the schedule ends on
  // the cheapest tiles instead of on whichever sequence came last (list
  // scheduling's longest-processing-time rule; a tile costs its keys). Lane
  // j reads entry b0 + j, {sequence, query rows}: one load round per 32, as
  // the caller's order. Session 49 (H200): issue 17's 7 sequences longest
  // first instead of as listed, full +2.3%, causal +0.7% (call 1); ranking
  // the lanes here, per tile, cost up to 6% on short tiles (call 2).
  __device__ static Fa3Tile compact_of(const FwdParams& p, int idx) {
    constexpr unsigned kAll = 0xffffffffu;
    const int lane = static_cast<int>(threadIdx.x % 32);
    for (int b0 = 0; b0 < p.batch; b0 += 32) {
      const int r = b0 + lane;
      int seq = r, rows = 0;
      if (r < p.batch) {
        if (p.seq_order != nullptr) {
          const int2 e = *reinterpret_cast<const int2*>(p.seq_order + 2 * r);
          seq = e.x, rows = e.y;
        } else {
          rows = p.cu_seqlens_q[r + 1] - p.cu_seqlens_q[r];
        }
      }
      const int num_m = (rows + kBlockM - 1) / kBlockM;
      const int n = num_m * p.heads_q;
      int upto = n;  // tiles of entries b0 .. r
#pragma unroll
      for (int d = 1; d < 32; d *= 2) {
        const int v = __shfl_up_sync(kAll, upto, d);
        if (lane >= d) upto += v;
      }
      const unsigned hit = __ballot_sync(kAll, idx < upto);
      if (hit != 0) {
        const int l = __ffs(static_cast<int>(hit)) - 1;
        const int m = __shfl_sync(kAll, num_m, l), i = idx - __shfl_sync(kAll, upto - n, l);
        const int b = __shfl_sync(kAll, seq, l);
        if (!p.mask.causal) return {i % m, i / m, b};
        return {m - 1 - i / p.heads_q, i % p.heads_q, b};
      }
      idx -= __shfl_sync(kAll, upto, 31);
    }
    return {Fa3TileCount<Cfg>::num_m_blocks(p), 0, p.batch - 1};
  }
};

// Persistent: min(tiles, SMs x kMinBlocks) CTAs; CTA i takes tiles i, i + gridDim.x, ...,
// numbered with the query block fastest, so CTAs running together share a
// head's K/V in L2. For uniform tiles (fa3_persistent_walk says which calls).
template <class Cfg> struct Fa3PersistentScheduler : Fa3TileCount<Cfg> {
  static dim3 grid(const FwdParams& p) {
    return dim3(static_cast<unsigned>(
        std::min<std::int64_t>(Fa3PersistentScheduler::num_tiles(p), std::int64_t{p.sm_count} * kFa3MinBlocks<Cfg>)));
  }
  int idx;
  __device__ explicit Fa3PersistentScheduler(const FwdParams&) : idx(blockIdx.x) {}
  __device__ bool is_valid(const FwdParams& p) const {
    return idx < Fa3PersistentScheduler::num_m_blocks(p) * p.heads_q * p.batch;
  }
  __device__ Fa3Tile tile(const FwdParams& p) const {
    const int num_m = Fa3PersistentScheduler::num_m_blocks(p);
    return {idx % num_m, (idx / num_m) % p.heads_q, idx / num_m / p.heads_q};
  }
  __device__ void advance() { idx += gridDim.x; }
};

// Dynamic: min(tiles, SMs x kMinBlocks) CTAs take the tiles in the single-tile grid's
// order (causal: longest first within L2 sections) from an atomic counter,
// as the hardware's block scheduler hands them out, but without a CTA launch,
// a cold pipeline and an empty SM between two tiles: the producer fetches
// the next index while the consumers finish the current tile and passes it
// through shared memory (two slots, kFa3TileSlotBytes). A static assignment
// of causal tiles, in either order, lost 4-30% (docs/NOTES.md). Needs a
// Config with kPersistent (Q and O in separate buffers) and
// FwdParams::tile_counter zeroed before the launch. Causal variable-length
// calls on the compact grid take it too (session 32), in the compact
// order, the producer warp's lane 0 fetching the indices and every lane of
// both roles finding the tile warp-collectively: issue 17's batch at hdim
// 64 +4.2%, 22 sequences of 200-2300 tokens at hdim 128 +2.4%, issue 17's
// hdim 128 batch 0.0% (H200, call 4). (On the old varlen grid, half of whose
// indices were empty tiles, it lost 1% at hdim 128: session 18.) Then
// unmasked packed calls (22 sequences of 200-2300 tokens +4.0%, issue 17's
// batch -0.3%) and causal paged calls with packed queries (page 16 +1.1%,
// page 256 +4.0%; unmasked paged ones lost 2-5% and keep the grid; in the
// query-block-fastest order, session 39, still -0.8 / -4.2% at 4 x 4096
// pages 256 / 16). Dense full calls stay on the walk: on this schedule in
// the same order -1.6% (hdim 128 4 x 4096, session 39).
template <class Cfg> struct Fa3DynamicScheduler : Fa3TileCount<Cfg> {
  // The tiles of the order: the single-tile grid's, or the compact grid's
  // for packed-query calls (Fa3VarlenTileScheduler::compact_fits).
  using Order = Fa3VarlenTileScheduler<Cfg>;
  static std::int64_t count(const FwdParams& p) {
    return p.cu_seqlens_q != nullptr ? Order::compact_tiles(p) : Fa3TileCount<Cfg>::num_tiles(p);
  }
  static dim3 grid(const FwdParams& p) {
    return dim3(static_cast<unsigned>(std::min<std::int64_t>(count(p), std::int64_t{p.sm_count} * kFa3MinBlocks<Cfg>)));
  }
};
template <class S> struct Fa3IsDynamic : std::false_type {};
template <class Cfg> struct Fa3IsDynamic<Fa3DynamicScheduler<Cfg>> : std::true_type {};
// The tile slots' shared memory beyond Fa3Smem: two full and two empty
// mbarriers, then the two slots: a tile index each, or for variable-length
// calls a record of the tile and its sequence (Fa3SlotTile), which the
// producer resolved, so the consumers read them from shared memory instead
// of loading cu_seqlens again between two tiles (session 38: hdim 64 causal
// varlen +3.3%).
struct Fa3SlotTile {
  int idx;
  Fa3Tile tile;
  int q_row0, q_b, k_row0, k_b, seqlen_q, seqlen_k;
  long long o;
};
inline constexpr int kFa3TileSlotBytes = 32 + 2 * 64;
static_assert(sizeof(Fa3SlotTile) <= 64, "a slot's record fits its 64 bytes");

// kMods: the call has a softcap or ALiBi (dispatch_score_mods). kSeq: how
// sequences are found (Fa3Seq; per_sequence and paged: each sequence's own
// lengths and mask; paged: K/V tiles through the page table).
template <class T, class Cfg, bool kMods, SeqLayout kSeq> struct Fa3Mainloop {
  static constexpr bool kVarlen = kSeq != SeqLayout::dense, kPaged = kSeq == SeqLayout::paged;
  using Smem = Fa3Smem<Cfg>;
  static constexpr int kHeadDim = Cfg::kHeadDim, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  static constexpr int kBlockM = Smem::kBlockM;
  static constexpr int kColBlocks = kHeadDim / 64;  // 64-column (128-byte) blocks per row
  static constexpr int kNTilesS = kBlockN / 8, kNTilesO = kHeadDim / 8;
  static constexpr int kConsumerWarps = 4 * Cfg::kConsumerWGs;

  // K/V tiles are kept as TMA writes them: a column block of kBlockN rows
  // of 128 bytes after the other. Paged kernels with several column blocks
  // keep them in row groups instead, [8-row group][column block][8 rows][128
  // bytes], so that a page's rows at every column block are one TMA box
  // (make_paged_row_group_tensor_map): a 128-key tile of 16-key pages at
  // hdim 128 is 16 boxes, not 32 (hdim 64's paged tiles: 16 boxes, within
  // 4% of its contiguous cache; hdim 128's 32: 15-20% under it). wgmma
  // reads either layout: 8-row groups kKVGroupStride apart (SBO) and column
  // blocks kKVBlockStride apart (a k-step's start address for K, LBO for V).
  static constexpr bool kRowGroups = kPaged && kColBlocks > 1;
  static constexpr int kKVGroupStride = kRowGroups ? 1024 * kColBlocks : 1024;
  static constexpr int kKVBlockStride = kRowGroups ? 1024 : kBlockN * 128;
  // Byte offset of row r's column block cb in a K/V tile.
  __host__ __device__ static constexpr int kv_offset(int r, int cb) {
    return (r / 8) * kKVGroupStride + cb * kKVBlockStride + (r % 8) * 128;
  }

  // The Q buffer and the K/V ring: their mbarriers and phases. Each role
  // (the producer thread, every consumer thread) keeps its own copy of the
  // phases and calls the side of each handshake that is its own.
  //   full  barriers: the producer announces a fill's bytes, TMA completes them;
  //   empty barriers: every consumer warp releases the buffer once done reading.
  // The K/V ring restarts at stage 0 with every tile, so the consumers'
  // stage is a compile-time constant in their unrolled loop (the wgmma
  // descriptors then stay on the uniform datapath, which a persistent CTA's
  // run-time tile arithmetic would otherwise push them off) and only the
  // phases are run-time: uses[s] counts the fills of stage s before this tile.
  enum class Buf { kK = 0, kV = 2 };
  struct Pipeline {
    std::uint64_t* bars;  // q_full, then per stage: k_full, k_empty, v_full, v_empty; persistent: q_empty; v_fix
    std::uint32_t uses[kStages] = {};
    std::uint32_t q_uses = 0;
    std::uint32_t fix_uses = 0;  // producer only

    __device__ std::uint64_t* q_full() const { return bars; }
    __device__ std::uint64_t* q_empty() const { return bars + 1 + 4 * kStages; }
    __device__ std::uint64_t* full(Buf b, int stage) const { return bars + 1 + 4 * stage + static_cast<int>(b); }
    __device__ std::uint64_t* empty(Buf b, int stage) const { return full(b, stage) + 1; }
    __device__ std::uint64_t* v_fix() const { return bars + Smem::kNumBars - 1; }

    // One thread, before anyone uses the barriers.
    __device__ void init() const {
      if constexpr (kFa3Persistent<Cfg>) mbar_init(q_empty(), kConsumerWarps);
      mbar_init(q_full(), 1);
      if constexpr (kVarlen) mbar_init(v_fix(), 1);
      for (int s = 0; s < kStages; ++s)
        for (Buf b : {Buf::kK, Buf::kV}) {
          mbar_init(full(b, s), 1);
          mbar_init(empty(b, s), kConsumerWarps);
        }
      mbar_init_fence();
    }

    // uses[stage]; the select keeps uses[] in registers for a run-time stage.
    __device__ std::uint32_t uses_of(int stage) const {
      std::uint32_t u = 0;
#pragma unroll
      for (int s = 0; s < kStages; ++s)
        if (s == stage) u = uses[s];
      return u;
    }
    // The phase of the i-th K/V tile of this tile (stage i % kStages).
    __device__ std::uint32_t phase(int i, int stage) const { return (uses_of(stage) + i / kStages) & 1; }

    // Producer: waits until the consumers released the buffer's previous
    // fill (the first fill of a stage passes at once: waiting on the phase
    // before a fresh barrier's first one returns immediately), then
    // announces `bytes` on its full barrier; the TMA loads complete on the
    // barrier returned.
    __device__ std::uint64_t* producer_acquire(Buf b, int i, int stage, std::uint32_t bytes) const {
      mbar_wait(empty(b, stage), phase(i, stage) ^ 1);
      mbar_arrive_expect_tx(full(b, stage), bytes);
      return full(b, stage);
    }
    __device__ std::uint64_t* producer_acquire_q(std::uint32_t bytes) const {
      // Persistent: the previous tile's consumers are done with Q.
      if constexpr (kFa3Persistent<Cfg>) mbar_wait(q_empty(), (q_uses & 1) ^ 1);
      mbar_arrive_expect_tx(q_full(), bytes);
      return q_full();
    }
    // Consumer: waits for a fill to land; releases it (one arrival per warp).
    __device__ void consumer_wait(Buf b, int i, int stage) const { mbar_wait(full(b, stage), phase(i, stage)); }
    // The same for the i-th tile of the overlapped loop, whose quotient i /
    // kStages is its round r (the loop's counter) plus a compile-time carry:
    // no run-time division. (With three stages, the 16-key-page kernel, the
    // division took a wide multiply and four more instructions a step, on
    // the consumers' way into each K wait; session 68's ncu page.)
    __device__ void consumer_wait_round(Buf b, int stage, int r, int carry) const {
      mbar_wait(full(b, stage), (uses_of(stage) + r + carry) & 1);
    }
    __device__ void consumer_wait_q() const { mbar_wait(q_full(), q_uses & 1); }
    __device__ static void release(std::uint64_t* bar, int lane) {
      __syncwarp();
      if (lane == 0) mbar_arrive(bar);
    }
    __device__ void consumer_release(Buf b, int stage, int lane) const { release(empty(b, stage), lane); }
    __device__ void consumer_release_q(int lane) const { release(q_empty(), lane); }

    // After a tile of n_blocks K/V tiles, on every role.
    __device__ void advance(int n_blocks) {
#pragma unroll
      for (int s = 0; s < kStages; ++s) uses[s] += n_blocks > s ? (n_blocks - 1 - s) / kStages + 1 : 0;
      ++q_uses;
    }
  };

  // ---- producer: one thread of warpgroup 0 (per-sequence: its first warp) ---
  // Where one contiguous K/V tile comes from: rows [row, row + kBlockN) of
  // batch b of the maps. The same source serves K and V.
  struct KVSource {
    int row, b;
    __device__ void load(const CUtensorMap* map, std::uint8_t* dst, int h_kv, std::uint64_t* bar) const {
#pragma unroll
      for (int cb = 0; cb < kColBlocks; ++cb) tma_load_4d(dst + cb * kBlockN * 128, map, cb * 64, row, h_kv, b, bar);
    }
  };

  // Loads Q, then K/V tiles n_last, n_last - 1, ... (n_blocks of them).
  // kVarlen: the producer warp runs this (lane: its lane), lane 0 issues
  // and arrives, and every lane helps zero a partial V tile.
  __device__ static void produce(const Fa3Params& prm, std::uint8_t* smem, Pipeline& pipe, const Fa3Seq& seq, int m0,
                                 int h, int n_last, int n_blocks, int lane) {
    if (n_blocks == 0) return;  // the consumers will not wait for anything
    const FwdParams& p = prm.p;
    const int h_kv = h / p.group_size;
    const bool issuer = !kVarlen || lane == 0;
    if (issuer) {
      std::uint64_t* q_bar = pipe.producer_acquire_q(Smem::kQBytes);
#pragma unroll
      for (int cb = 0; cb < kColBlocks; ++cb)
        tma_load_4d(smem + Smem::kQ + cb * kBlockM * 128, &prm.q, cb * 64, seq.q_row0 + m0, h, seq.q_b, q_bar);
    }
    for (int i = 0; i < n_blocks; ++i) {
      const int n_block = n_last - i, stage = i % kStages;
      const KVSource src{seq.k_row0 + n_block * kBlockN, seq.k_b};
      if (issuer) {
        std::uint64_t* k_bar = pipe.producer_acquire(Buf::kK, i, stage, Smem::kKVBytes);
        src.load(&prm.k, smem + Smem::kK + stage * Smem::kKVBytes, h_kv, k_bar);
      }
      std::uint8_t* v_tile = smem + Smem::kV + stage * Smem::kKVBytes;
      // The tile that holds the sequence's last key also holds rows past it
      // (kVarlen): the next sequence's or keys past seqused_k (anything, NaN
      // included). The mask hides them from S, but P = 0 times a NaN in V is
      // NaN: zero those rows of V before the consumers see the tile.
      const int valid = seq.seqlen_k - n_block * kBlockN;
      if (kVarlen && valid < kBlockN) {
        if (issuer) {
          mbar_wait(pipe.empty(Buf::kV, stage), pipe.phase(i, stage) ^ 1);
          mbar_arrive_expect_tx(pipe.v_fix(), Smem::kKVBytes);
          src.load(&prm.v, v_tile, h_kv, pipe.v_fix());
        }
        fix_partial_v(pipe, v_tile, stage, valid, lane, 32);  // (the TMA landing orders it after the stage wait)
      } else if (issuer) {
        std::uint64_t* v_bar = pipe.producer_acquire(Buf::kV, i, stage, Smem::kKVBytes);
        src.load(&prm.v, v_tile, h_kv, v_bar);
      }
    }
    pipe.advance(n_blocks);
  }

  // Paged (kPaged), by the 32 lanes of the producer warp: a tile's keys are
  // boxes of fa3_page_box rows, each inside one page; lane j looks up box
  // j's page (one table entry per lane, loaded a tile ahead) and issues its
  // TMA loads, so a tile of 16-key pages costs each lane one lookup and one
  // box (kRowGroups: the box spans every column block; hdim 64 has one)
  // instead of one thread all of them. Where the strides allow no group
  // count, each lane takes an 8-row group.
  // Boxes past the sequence's keys are not loaded (their table entries may
  // be anything); the V fix zeroes their rows. Lane 0 alone arrives on the
  // barriers, every lane waits on them.
  __device__ static void produce_paged(const Fa3Params& prm, std::uint8_t* smem, Pipeline& pipe, const Fa3Seq& seq,
                                       int m0, int h, int n_last, int n_blocks, int lane) {
    if (n_blocks == 0) return;
    const FwdParams& p = prm.p;
    const int h_kv = h / p.group_size, page_mask = p.page_size - 1;
    // (Row groups: boxes of 2^box_shift rows, shifts for divisions.)
    const Fa3Params::PagedBoxes& rg = prm.kv_boxes;
    const int box = kRowGroups ? 1 << rg.box_shift : fa3_page_box(p.page_size, kBlockN);
    const auto per_box = [&](int rows) { return kRowGroups ? rows >> rg.box_shift : rows / box; };
    const int boxes = per_box(kBlockN);
    static_assert(!kRowGroups || kBlockN / 8 <= 32, "a lane per 8-row group");
    if (lane == 0) {
      std::uint64_t* q_bar = pipe.producer_acquire_q(Smem::kQBytes);
#pragma unroll
      for (int cb = 0; cb < kColBlocks; ++cb)
        tma_load_4d(smem + Smem::kQ + cb * kBlockM * 128, &prm.q, cb * 64, seq.q_row0 + m0, h, seq.q_b, q_bar);
    }
    // The table entries (kBatched, hdims 128 and 256): lane j holds box
    // j % boxes of tile i0 + j / boxes, so one load per lane covers a batch
    // of 32 / boxes tiles; the next batch loads while this one is issued,
    // and a tile's lanes take their entries by a shuffle. One entry per lane
    // a tile ahead (page_of) put a load's latency between each tile's issue
    // and the next at a CTA's start (session 51's ncu page: the page-16
    // consumers waited for their second K tile); batches gained 0.8-2.3% at
    // hdims 128 / 256 and lost 0.2-1.0% at hdim 64 (six stages at page 16),
    // which keeps page_of.
    const int* table = p.page_table + seq.k_b * p.page_table_stride;
    constexpr bool kBatched = kHeadDim >= 128;
    const int per_load = 32 / boxes, lane_tile = lane / boxes, lane_box = lane % boxes;
    const auto lookup = [&](int i0) {
      const int i = i0 + lane_tile, key = (n_last - i) * kBlockN + lane_box * box;
      return lane_tile < per_load && i < n_blocks && key < seq.seqlen_k ? __ldg(table + (key >> p.page_shift)) : 0;
    };
    const auto page_of = [&](int n_block) {
      const int key = n_block * kBlockN + lane * box;
      return lane < boxes && key < seq.seqlen_k ? __ldg(table + (key >> p.page_shift)) : 0;
    };
    int batch = kBatched ? lookup(0) : page_of(n_last);
    int next_batch = kBatched && per_load < n_blocks ? lookup(per_load) : 0;
    for (int i = 0, slot = 0; i < n_blocks; ++i, ++slot) {
      if (kBatched && slot == per_load) {
        slot = 0;
        batch = next_batch;
        if (i + per_load < n_blocks) next_batch = lookup(i + per_load);
      }
      const int page = kBatched ? __shfl_sync(0xffffffffu, batch, slot * boxes + lane_box) : batch;
      const int n_block = n_last - i, stage = i % kStages, n0 = n_block * kBlockN;
      const int valid = seq.seqlen_k - n0, loaded = min(boxes, per_box(valid + box - 1));
      const auto bytes = static_cast<std::uint32_t>(loaded * box * 128 * kColBlocks);
      const int row = (n0 + lane * box) & page_mask;
      const auto load = [&](const CUtensorMap* map, std::uint8_t* dst, std::uint64_t* bar) {
        if (lane >= loaded) return;
        if constexpr (kRowGroups) {  // the box's rows at every column block
          tma_load_5d(dst + kv_offset(lane * box, 0), map, 0, row & rg.row_mask, 0,
                      page * rg.page_mul + (row >> rg.group_shift), h_kv, bar);
        } else {
#pragma unroll
          for (int cb = 0; cb < kColBlocks; ++cb)
            tma_load_4d(dst + cb * kBlockN * 128 + lane * box * 128, map, cb * 64, row, h_kv, page, bar);
        }
      };
      mbar_wait(pipe.empty(Buf::kK, stage), pipe.phase(i, stage) ^ 1);
      if (lane == 0) mbar_arrive_expect_tx(pipe.full(Buf::kK, stage), bytes);
      __syncwarp();
      load(&prm.k, smem + Smem::kK + stage * Smem::kKVBytes, pipe.full(Buf::kK, stage));
      std::uint8_t* v_tile = smem + Smem::kV + stage * Smem::kKVBytes;
      const bool partial = valid < kBlockN;
      std::uint64_t* v_bar = partial ? pipe.v_fix() : pipe.full(Buf::kV, stage);
      mbar_wait(pipe.empty(Buf::kV, stage), pipe.phase(i, stage) ^ 1);
      if (lane == 0) mbar_arrive_expect_tx(v_bar, bytes);
      __syncwarp();
      load(&prm.v, v_tile, v_bar);
      if (partial) fix_partial_v(pipe, v_tile, stage, valid, lane, 32);
      if (!kBatched && i + 1 < n_blocks) batch = page_of(n_block - 1);
    }
    pipe.advance(n_blocks);
  }

  // A V tile with `valid` < kBlockN real rows, loaded on v_fix: once it
  // lands, the producer's `lanes` threads zero rows valid.. (128 bytes per
  // row in each 64-column block: the swizzle permutes chunks within a row
  // only), then lane 0 releases it on v_full. Once per (sequence, head)
  // query block at most.
  __device__ static void fix_partial_v(Pipeline& pipe, std::uint8_t* v_tile, int stage, int valid, int lane,
                                       int lanes) {
    mbar_wait(pipe.v_fix(), pipe.fix_uses & 1);
    ++pipe.fix_uses;
    const uint4 zero = make_uint4(0, 0, 0, 0);
    const int first = valid > 0 ? valid : 0;
    if constexpr (kRowGroups) {  // from first's group on: its rows from first % 8, then whole groups
      const unsigned start = static_cast<unsigned>(first / 8) * kKVGroupStride, skip = first % 8;
#pragma unroll 1
      for (unsigned off = start + 16 * lane; off < kBlockN * 128 * kColBlocks; off += 16 * lanes)
        if (off >= start + kKVGroupStride || ((off >> 7) & 7) >= skip) *reinterpret_cast<uint4*>(v_tile + off) = zero;
    } else {
#pragma unroll
      for (int cb = 0; cb < kColBlocks; ++cb)
        for (int off = first * 128 + 16 * lane; off < kBlockN * 128; off += 16 * lanes)
          *reinterpret_cast<uint4*>(v_tile + cb * kBlockN * 128 + off) = zero;
    }
    fence_async_shared();  // the zeros, before wgmma reads the tile
    if (lanes > 1) __syncwarp();
    if (lane == 0) mbar_arrive(pipe.full(Buf::kV, stage));
  }

  // ---- consumer: one warpgroup, 64 query rows -------------------------------
  struct Consumer {
    const FwdParams& p;
    Pipeline& pipe;
    std::uint32_t q_addr, k_addr, v_addr;  // shared addresses: this warpgroup's Q rows, K and V stage 0
    int wg, warp, lane;                    // consumer warpgroup index, warp within it, lane
    int row0;                              // first row of this warp (global query index)
    int n_last, n_blocks;                  // K/V tiles n_last, n_last - 1, ... (n_blocks of them)
    int full_begin, full_end;              // keys every row of this warpgroup sees (Mask::row_block)
    int any_end;                           // keys past it no row of this warpgroup sees
    float slope;                           // ALiBi slope of this tile's head (ScoreMod::alibi_slope); 0: none
    Mask seq_mask;                         // kVarlen: the sequence's mask (dense calls read the call's)

    // Pingpong: warpgroup wg issues its GEMMs after the previous one has.
    __device__ void sched_sync() const {
      if constexpr (Cfg::kPingpong) named_barrier_sync(kFa3PingpongTurn + wg, 2 * kWarpgroupThreads);
    }
    // The last warpgroup's final turn of a tile has no one after it in this
    // tile. In a persistent kernel (kHandOn) it hands the first turn of the
    // CTA's next tile with turns on, so that the first warpgroup starts that
    // tile while this one stores O; the first warpgroup takes the one arrival
    // left after the CTA's last tile at exit. Elsewhere it is skipped, and
    // each tile's start hands the turn on.
    // before_hand_on(): what the last warpgroup waits for before it hands
    // on (hdim 64's dynamic schedule: the next slot to be published).
    template <bool kHandOn = false, class Before = Fa3NoWait>
    __device__ void sched_arrive(bool last, Before&& before_hand_on = Before{}) const {
      if constexpr (Cfg::kPingpong) {
        if constexpr (kHandOn) {
          if (last && wg == Cfg::kConsumerWGs - 1) before_hand_on();
        }
        if (kHandOn || !(last && wg == Cfg::kConsumerWGs - 1))
          named_barrier_arrive(kFa3PingpongTurn + (wg + 1) % Cfg::kConsumerWGs, 2 * kWarpgroupThreads);
      }
    }

    // Q fragments (kQInRegisters): the A operand of every k-step, by
    // ldmatrix from the swizzled Q tile (lane l addresses row l % 16 and
    // column 8 * (l / 16) of the warp's 16 x 16 block, as in mma.cuh).
    using QFrags = std::uint32_t[Cfg::kQInRegisters ? kHeadDim / 16 : 1][4];
    __device__ void load_q(QFrags& q) const {
      if constexpr (Cfg::kQInRegisters) {
        const int r = 64 * wg + 16 * warp + lane % 16;  // row within the CTA tile
#pragma unroll
        for (int ks = 0; ks < kHeadDim / 16; ++ks) {
          const int col = 16 * ks + 8 * (lane / 16);
          const int byte = (col / 64) * kBlockM * 128 + r * 128 + ((((col % 64) / 8) ^ (r % 8)) * 16);
          ldmatrix_x4(q[ks], q_addr - 64 * wg * 128 + byte);
        }
      }
    }

    __device__ void gemm_qk(int stage, const QFrags& q, float (&s)[1][kNTilesS][4]) const {
      auto& d = *reinterpret_cast<float(*)[kBlockN / 2]>(&s);
      const std::uint32_t k_stage = k_addr + stage * Smem::kKVBytes;
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kHeadDim / 16; ++ks) {
        const std::uint64_t db = wgmma_desc_sw128(k_stage, kv_offset(0, ks / 4) + (ks % 4) * 32, 16, kKVGroupStride);
        if constexpr (Cfg::kQInRegisters) {
          WgmmaOp<kBlockN>::template rs_kmajor<T>(d, q[ks], db, ks > 0);
        } else {
          const std::uint64_t da = wgmma_desc_sw128(q_addr, (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16, 1024);
          WgmmaOp<kBlockN>::template ss<T>(d, da, db, ks > 0);
        }
      }
      wgmma_commit();
    }

    __device__ void gemm_pv(int stage, const std::uint32_t (&pr)[kBlockN / 16][4], float (&o)[1][kNTilesO][4]) const {
      auto& d = *reinterpret_cast<float(*)[kHeadDim / 2]>(&o);
      const std::uint32_t v_stage = v_addr + stage * Smem::kKVBytes;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        const std::uint64_t db = wgmma_desc_sw128(v_stage, kv_offset(16 * kk, 0), kKVBlockStride, kKVGroupStride);
        WgmmaOp<kHeadDim>::template rs<T>(d, pr[kk], db, 1);
      }
      wgmma_commit();
    }

    // The score rule, then -inf for the keys the Mask hides; only tiles that
    // hold such keys for some row of this warpgroup pay for the mask (two
    // compares decide). Mask and ScoreMod are built here from the params
    // (constant bank): held in the consumer they would take registers.
    __device__ void mask_scores(int n_block, float (&s)[1][kNTilesS][4]) const {
      const int n0 = n_block * kBlockN;
      const Mask& mask = kVarlen ? seq_mask : p.mask_for();
      if constexpr (kMods) ScoreMod(p, slope, mask.diag).apply(s, row0, n0, lane);
      if (tile_needs_mask(n0, kBlockN, full_begin, full_end)) mask.apply(s, row0, n0, lane);
    }

    __device__ static void to_p(const float (&s)[1][kNTilesS][4], std::uint32_t (&pr)[kBlockN / 16][4]) {
      to_a_operand<T, kBlockN>(*static_cast<const float(*)[kBlockN / 2]>(static_cast<const void*>(&s)), pr);
    }

    // The whole K/V loop; O (unnormalised) and the softmax state come back.
    template <bool kHandOn, class Before>
    __device__ void run(float (&o)[1][kNTilesO][4], OnlineSoftmax<1>& softmax, Before&& before_hand_on) const {
      if (n_blocks == 0) return;
      pipe.consumer_wait_q();
      QFrags q;
      load_q(q);
      // Q in registers: its tile is free once every warp has read it, so the
      // persistent producer loads the next tile's Q while this one runs.
      if constexpr (kFa3Persistent<Cfg> && Cfg::kQInRegisters) pipe.consumer_release_q(lane);
      float s[1][kNTilesS][4];
      std::uint32_t pr[kBlockN / 16][4];
      if constexpr (!Cfg::kIntraWGOverlap) {
        for (int i = 0; i < n_blocks; ++i) {
          const int n_block = n_last - i, stage = i % kStages;
          pipe.consumer_wait(Buf::kK, i, stage);
          sched_sync();
          gemm_qk(stage, q, s);
          sched_arrive(false);
          wgmma_wait<0>();
          fence_registers(*reinterpret_cast<float(*)[kBlockN / 2]>(&s));
          pipe.consumer_release(Buf::kK, stage, lane);
          mask_scores(n_block, s);
          softmax.update(s, o, ScoreMod(p).exp2_scale());
          to_p(s, pr);
          pipe.consumer_wait(Buf::kV, i, stage);
          sched_sync();
          gemm_pv(stage, pr, o);
          sched_arrive<kHandOn>(i == n_blocks - 1, before_hand_on);
          wgmma_wait<0>();
          fence_registers(*reinterpret_cast<float(*)[kHeadDim / 2]>(&o));
          pipe.consumer_release(Buf::kV, stage, lane);
        }
      } else {
        // Tile 0: S alone. Where the first warpgroup's rows end a whole key
        // tile before the CTA's (hdim 64: 192 rows, 128 keys), a warpgroup
        // that sees no key of this tile (causal: warpgroup 0 always, 1 half
        // the time) skips its mask, softmax and P (P = 0; the GEMMs stay:
        // under a branch ptxas serializes every wgmma). H200, causal hdim 64
        // 2k / 4k / 8k: 335 -> 340 / 401 -> 406 / 458 -> 456 TFLOPS; where
        // it fires less often (hdims 128, 256) the branch cost ~0.5%.
        const bool skip0 = kBlockM - 64 >= kBlockN && n_last * kBlockN >= any_end;
        // A softcap bounds every score (u <= 1; ALiBi's bias only lowers it
        // for a slope >= 0): once every row of the warp has a reference
        // within kHeadroom of the bound (OnlineSoftmax::can_freeze), later
        // tiles skip the max (probs_bounded). P then stays under 2^64 (bf16,
        // fp32's range) or 2^15 (fp16, whose largest finite value is 65504);
        // O's fp32 accumulator could overflow only where keys x |v| > 2^64.
        const float e2 = ScoreMod(p).exp2_scale();
        constexpr float kHeadroom = std::is_same_v<T, __nv_bfloat16> ? 64.0f : 15.0f;
        // Measured (session 36): capped 30 causal hdim 128 / 256 +4.0% / +6.5%;
        // hdim 64 -2.2% (its 160-register consumers), so not there.
        constexpr bool kBounded = kMods && kFa3LazyRescale<Cfg> && kHeadDim >= 128;
        const bool bounded = kBounded && ScoreMod(p).capped() && slope >= 0.0f;
        bool frozen = false;
        pipe.consumer_wait(Buf::kK, 0, 0);
        sched_sync();
        gemm_qk(0, q, s);
        sched_arrive(false);
        wgmma_wait<0>();
        fence_registers(*reinterpret_cast<float(*)[kBlockN / 2]>(&s));
        pipe.consumer_release(Buf::kK, 0, lane);
        if (!skip0) {
          mask_scores(n_last, s);
          softmax.update(s, o, ScoreMod(p).exp2_scale());  // O is still zero: rescaling it is harmless
          frozen = bounded && __all_sync(0xffffffffu, softmax.can_freeze(1.0f, e2, kHeadroom));
          to_p(s, pr);
        } else {
#pragma unroll
          for (int kk = 0; kk < kBlockN / 16; ++kk) pr[kk][0] = pr[kk][1] = pr[kk][2] = pr[kk][3] = 0;
        }
        // Tile i: S(i) and O += P(i-1) V(i-1) in flight together; softmax(i)
        // runs while PV finishes; O is rescaled once PV is done. Unrolled by
        // kStages so that each stage is a constant.
        // (Round r: i = kStages * r + 1 + u, so i / kStages = r + (1 + u) /
        // kStages and (i - 1) / kStages = r.)
        for (int i0 = 1, r = 0; i0 < n_blocks; i0 += kStages, ++r) {
#pragma unroll
          for (int u = 0; u < kStages; ++u) {
            const int i = i0 + u;
            if (i < n_blocks) {
              const int stage = (1 + u) % kStages, prev = u % kStages;
              pipe.consumer_wait_round(Buf::kK, stage, r, (1 + u) / kStages);
              sched_sync();
              gemm_qk(stage, q, s);
              pipe.consumer_wait_round(Buf::kV, prev, r, 0);
              gemm_pv(prev, pr, o);
              sched_arrive(false);
              wgmma_wait<1>();
              fence_registers(*reinterpret_cast<float(*)[kBlockN / 2]>(&s));
              pipe.consumer_release(Buf::kK, stage, lane);
              mask_scores(n_last - i, s);
              float rescale[2] = {1.0f, 1.0f};
              bool moved = false;
              // The softmax beside PV: ptxas hoists a plain wait above it
              // (session 35's ncu page of hdim 64: the warps waited there
              // for their own P V, FA4's after the softmax), so the wait is
              // pinned after a value of the softmax (session 44: +1.9-3.1%
              // at hdim 64): after both rows' sums, or (kFa3PvPin 0) inside
              // probs, after row 0's sum. Kernels that may freeze keep it
              // after both: with a wait in each branch ptxas serialized every
              // wgmma of the capped hdim 128 kernel (-8.6%, session 45).
              constexpr int kPin = kBounded ? 1 : kFa3PvPin<Cfg>;
              static_assert(kPin == 0 || kPin == 1, "kPvPin: 0 or 1");
              const auto pin = [&](int r) {
                if constexpr (kPin == 0) {
                  if (r == 0) wgmma_wait_after<0>(softmax.row_sum[0], softmax.row_sum[0]);
                }
              };
              if (frozen) {
                softmax.probs_bounded(s, e2);
              } else {
                moved = softmax.template probs<kFa3LazyRescale<Cfg>, kPin == 0>(s, e2, rescale, pin);
                frozen = bounded && __all_sync(0xffffffffu, softmax.can_freeze(1.0f, e2, kHeadroom));
              }
              if constexpr (kPin == 1) wgmma_wait_after<0>(softmax.row_sum[0], softmax.row_sum[1]);
              fence_registers(*reinterpret_cast<float(*)[kHeadDim / 2]>(&o));
              pipe.consumer_release(Buf::kV, prev, lane);
              to_p(s, pr);
              if (!kFa3LazyRescale<Cfg> || __any_sync(0xffffffffu, moved)) softmax.rescale_o(o, rescale);
            }
          }
        }
        // Every S = Q K^T of this tile is done: the producer may load the next Q.
        if constexpr (kFa3Persistent<Cfg> && !Cfg::kQInRegisters) pipe.consumer_release_q(lane);
        const int last = (n_blocks - 1) % kStages;
        pipe.consumer_wait(Buf::kV, n_blocks - 1, last);
        sched_sync();
        gemm_pv_any_stage(last, pr, o);
        sched_arrive<kHandOn>(true, before_hand_on);
        wgmma_wait<0>();
        fence_registers(*reinterpret_cast<float(*)[kHeadDim / 2]>(&o));
        pipe.consumer_release(Buf::kV, last, lane);
      }
      pipe.advance(n_blocks);
    }

    // gemm_pv with a run-time stage, unrolled into one call per stage so each
    // keeps its descriptors uniform.
    __device__ void gemm_pv_any_stage(int stage, const std::uint32_t (&pr)[kBlockN / 16][4],
                                      float (&o)[1][kNTilesO][4]) const {
#pragma unroll
      for (int st = 0; st < kStages; ++st)
        if (st == stage) gemm_pv(st, pr, o);
    }
  };
};

template <class T, class Cfg, SeqLayout kSeq> struct Fa3Epilogue {
  static constexpr bool kVarlen = kSeq != SeqLayout::dense;
  using Smem = Fa3Smem<Cfg>;
  static constexpr int kHeadDim = Cfg::kHeadDim, kBlockM = Smem::kBlockM, kNTilesO = kHeadDim / 8;

  // O (normalised here) through this warpgroup's own rows of the Q tile,
  // which its last S = Q K^T has finished reading, then one TMA store per
  // 64-column block; LSE straight from registers.
  __device__ static void store(const Fa3Params& prm, std::uint8_t* smem, float (&o)[1][kNTilesO][4],
                               OnlineSoftmax<1>& softmax, int wg, int tid, const Fa3Seq& seq, int m0, int h, int b) {
    const FwdParams& p = prm.p;
    float lse[2];
    softmax.finalize(o, ScoreMod(p).lse_scale(), lse, ScoreMod::sink(p, h));
    const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    if constexpr (kFa3Persistent<Cfg>) {
      if (tid == 0) tma_store_wait_read();  // the previous tile's store has read the O buffer
      named_barrier_sync(kFa3Epilogue + wg, kWarpgroupThreads);  // nobody writes O before that wait
    }
    {
      // O rounded as P is for its A operand (to_a_operand: n-tiles 2 kk and
      // 2 kk + 1 of the warp's 16 rows), one stmatrix per pair: lane l
      // addresses row 8 ((l / 8) % 2) + l % 8 of n-tile 2 kk + l / 16.
      std::uint32_t frag[kHeadDim / 16][4];
      to_a_operand<T, kHeadDim>(*reinterpret_cast<const float(*)[kHeadDim / 2]>(&o), frag);
      const int m = lane / 8, r = 64 * wg + 16 * warp + 8 * (m % 2) + lane % 8;  // row within the CTA tile
      const std::uint32_t row_addr = smem_addr(smem + Smem::kO) + r * 128;
#pragma unroll
      for (int kk = 0; kk < kHeadDim / 16; ++kk) {
        const int c = 2 * kk + m / 2;  // this lane's n-tile (8 columns)
        stmatrix_x4(row_addr + (kk / 4) * kBlockM * 128 + (((c % 8) ^ (r % 8)) * 16), frag[kk]);
      }
    }
    fence_async_shared();                          // the stores above, before the TMA engine reads them
    named_barrier_sync(kFa3Epilogue + wg, kWarpgroupThreads);  // the whole warpgroup's rows are in place
    const int rows = seq.seqlen_q - (m0 + 64 * wg);  // this warpgroup's rows in the sequence (dense: TMA clips)
    if (kVarlen && rows > 0 && rows < 64) {
      // The sequence ends inside these rows, and the next sequence's start
      // right after: TMA would clip only at the packed tensor's end. Rows
      // go out in 16-byte chunks, each a row's chunk of the staged tile.
      constexpr int kChunks = kHeadDim / 8;  // per row
      T* o_rows = static_cast<T*>(p.o) + seq.o + (m0 + 64 * wg) * p.o_row_stride + h * p.o_head_stride;
#pragma unroll
      for (int i = 0; i < 64 * kChunks / kWarpgroupThreads; ++i) {
        const int idx = i * kWarpgroupThreads + tid, r = idx / kChunks, c = idx % kChunks;
        const int rr = 64 * wg + r;  // row within the CTA tile
        if (r < rows)
          *reinterpret_cast<uint4*>(o_rows + r * p.o_row_stride + 8 * c) = *reinterpret_cast<const uint4*>(
              smem + Smem::kO + (c / 8) * kBlockM * 128 + rr * 128 + (((c % 8) ^ (rr % 8)) * 16));
      }
    } else if (tid == 0 && rows > 0) {
#pragma unroll
      for (int cb = 0; cb < kHeadDim / 64; ++cb)
        tma_store_4d(&prm.o, smem + Smem::kO + cb * kBlockM * 128 + 64 * wg * 128, cb * 64,
                     seq.q_row0 + m0 + 64 * wg, h, seq.q_b);
      tma_store_commit();
    }
    // The LSE while the TMA engine reads O.
    if (p.lse != nullptr && t == 0) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + 64 * wg + 16 * warp + g + 8 * half;
        if (row < seq.seqlen_q) p.lse[p.lse_offset(b, h, seq.q_row0 + row)] = lse[half];
      }
    }
    // Shared memory must outlive the store's reads: wait now, or (persistent)
    // before the next tile writes the O buffer, and at exit.
    if constexpr (!kFa3Persistent<Cfg>) {
      if (tid == 0) tma_store_wait_read();  // (nothing committed: returns at once)
    }
  }
};

// The kernel body; each rung's __global__ (FLASH_FA3_RUNG_KERNEL) calls it
// with the scheduler the launcher picked.
template <class T, class Cfg, class Scheduler, bool kMods, SeqLayout kSeq>
__device__ __forceinline__ void fa3_forward(const Fa3Params& prm) {
#if FLASH_SM90A_DEVICE
  using Mainloop = Fa3Mainloop<T, Cfg, kMods, kSeq>;
  constexpr bool kVarlen = kSeq != SeqLayout::dense;
  using Smem = Fa3Smem<Cfg>;
  extern __shared__ std::uint8_t smem_raw[];
  // Align the base to 1024 bytes in the shared window.
  const std::uint32_t raw_addr = smem_addr(smem_raw);
  std::uint8_t* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  typename Mainloop::Pipeline pipe{reinterpret_cast<std::uint64_t*>(smem + Smem::kBars)};

  const FwdParams& p = prm.p;
  constexpr bool kDynamic = Fa3IsDynamic<Scheduler>::value;
  // A CTA that takes tile after tile: the dynamic schedule or the walk.
  constexpr bool kPersistentSchedule = kDynamic || std::is_same_v<Scheduler, Fa3PersistentScheduler<Cfg>>;
  constexpr bool kPersistentPaged = Mainloop::kPaged && kPersistentSchedule;
  // (The dense dynamic schedule's producer is `fixed`'s: at 24 registers it
  // keeps one spill, a load beside each next-index atomic; session 52.)
  constexpr Fa3ProducerLoad kLoad = kPersistentPaged ? Fa3ProducerLoad::paged_persistent
                                    : kVarlen        ? Fa3ProducerLoad::resolving
                                                     : Fa3ProducerLoad::fixed;
  using Regs = Fa3Regs<Cfg, kLoad>;
  // Dynamic schedule: tile_full[2] (the producer's arrival), tile_empty[2]
  // (every consumer thread's), then the two slots (indices, or varlen records).
  std::uint64_t* const tile_bars = reinterpret_cast<std::uint64_t*>(smem + Smem::kBars + Smem::kNumBars * 8);
  Fa3SlotTile* const slot_tile = reinterpret_cast<Fa3SlotTile*>(tile_bars + 4);  // dense: index and tile only
  // The dynamic schedule's order: the compact one for packed queries, the
  // single-tile grid's for dense ones (dense calls, dense-query paged calls).
  const bool compact_order = kSeq == SeqLayout::per_sequence || (kSeq == SeqLayout::paged && p.cu_seqlens_q != nullptr);
  const int num_tiles =  // the dynamic schedule's end
      static_cast<int>(compact_order ? Fa3VarlenTileScheduler<Cfg>::compact_tiles(p) : Fa3TileCount<Cfg>::num_tiles(p));
  if (threadIdx.x == 0) {
    pipe.init();
    if constexpr (kDynamic) {
      for (int s = 0; s < 2; ++s) {
        mbar_init(tile_bars + s, 1);
        mbar_init(tile_bars + 2 + s, kWarpgroupThreads * Cfg::kConsumerWGs);
      }
      mbar_init_fence();
    }
  }
  // Programmatic dependent launch (fa3_launch): this CTA may have started
  // while the kernel before it in the stream still runs (the varlen
  // metadata check, the previous layer's kernel, the previous call); it set
  // up its barriers meanwhile and touches global memory only after this
  // wait. The next kernel may start its CTAs now: it waits for this one.
  wait_for_previous_kernel();
  let_next_kernel_start();
  __syncthreads();  // the barriers are initialised before any role uses them
  if constexpr (kVarlen) {
    if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
  }

  const int wg = threadIdx.x / kWarpgroupThreads;
  if (wg == 0) {
    setmaxnreg_dec<Regs::kProducer>();
    if (threadIdx.x == 0) {
      // The maps are kernel parameters: fetch them while the first tile's
      // range is worked out, so the first loads (and O's store) do not wait
      // for them.
      tma_prefetch_map(&prm.q);
      tma_prefetch_map(&prm.k);
      tma_prefetch_map(&prm.v);
      tma_prefetch_map(&prm.o);
    }
    // One tile's loads (per-sequence and paged: by the whole warp).
    const auto produce_seq = [&](const Fa3Tile& tile, const Fa3Seq& seq) {
      const int m0 = tile.m_block * Smem::kBlockM;
      if (kVarlen && m0 >= seq.seqlen_q) return;  // past this sequence's queries
      const Mask seq_mask = kVarlen ? p.mask_for(seq.seqlen_q, seq.seqlen_k) : Mask();
      const Mask& mask = kVarlen ? seq_mask : p.mask_for();
      const TileRange tiles = mask.key_tiles<Cfg::kBlockN>(m0, Smem::kBlockM);
      if constexpr (Mainloop::kPaged)
        Mainloop::produce_paged(prm, smem, pipe, seq, m0, tile.head, tiles.end - 1, tiles.count(), threadIdx.x);
      else
        Mainloop::produce(prm, smem, pipe, seq, m0, tile.head, tiles.end - 1, tiles.count(), threadIdx.x);
    };
    const auto produce = [&](const Fa3Tile& tile) { produce_seq(tile, fa3_seq<kSeq>(p, tile.batch)); };
    if constexpr (kDynamic && kVarlen) {
      // Packed-query calls (per-sequence and paged), by the producer warp:
      // every lane finds the tile (warp-collective) and its sequence, lane 0
      // publishes both with the index (the consumers read them from the
      // slot, not from cu_seqlens) and fetches the next index, and the warp
      // loads the tile.
      static_assert(kFa3Persistent<Cfg>, "the dynamic schedule is for persistent Configs");
      if (threadIdx.x < 32) {
        int idx = static_cast<int>(blockIdx.x);
        for (int k = 0;; ++k) {
          const int slot = k & 1;
          const bool done = idx >= num_tiles;
          const Fa3Tile tile = done            ? Fa3Tile{}
                               : compact_order ? Fa3VarlenTileScheduler<Cfg>::compact_of(p, idx)
                                               : Fa3SingleTileScheduler<Cfg>::of(p, idx);
          const Fa3Seq seq = done ? Fa3Seq{} : fa3_seq<kSeq>(p, tile.batch);
          if (threadIdx.x == 0) {
            if (k >= 2) mbar_wait(tile_bars + 2 + slot, ((k >> 1) - 1) & 1);  // the slot's last record was read
            slot_tile[slot] = {idx, tile, seq.q_row0, seq.q_b, seq.k_row0, seq.k_b, seq.seqlen_q, seq.seqlen_k, seq.o};
            mbar_arrive(tile_bars + slot);  // release: the record is visible to whoever waits on the slot
          }
          if (done) break;
          produce_seq(tile, seq);
          if (threadIdx.x == 0) idx = atomicAdd(p.tile_counter, 1) + static_cast<int>(gridDim.x);
          idx = __shfl_sync(0xffffffffu, idx, 0);
        }
      }
    } else if constexpr (kDynamic) {
      static_assert(kFa3Persistent<Cfg>, "the dynamic schedule is for persistent Configs");
      if (threadIdx.x == 0) {
        int idx = static_cast<int>(blockIdx.x);
        for (int k = 0;; ++k) {
          const int slot = k & 1;
          // The tile goes into the slot with its index: the consumers find
          // it there instead of each decoding the index (the causal order's
          // divisions), which sat on their path into the tile (~600 cycles,
          // session 43's trace).
          const Fa3Tile tile = idx < num_tiles ? Fa3SingleTileScheduler<Cfg>::of(p, idx) : Fa3Tile{};
          if (k >= 2) mbar_wait(tile_bars + 2 + slot, ((k >> 1) - 1) & 1);  // the slot's last record was read
          slot_tile[slot].idx = idx;
          slot_tile[slot].tile = tile;
          mbar_arrive(tile_bars + slot);  // release: the record is visible to whoever waits on the slot
          if (idx >= num_tiles) break;
          produce(tile);
          idx = atomicAdd(p.tile_counter, 1) + static_cast<int>(gridDim.x);
        }
      }
    } else if (kVarlen ? threadIdx.x < 32 : threadIdx.x == 0) {
      for (Scheduler sched(p); sched.is_valid(p); sched.advance()) produce(sched.tile(p));
    }
  } else {
    setmaxnreg_inc<Regs::kConsumer>();
    // With Q in shared memory (hdim 64, 256) the warpgroup picks Q's wgmma
    // descriptor: a lane-0 shuffle tells the compiler the value is
    // warp-uniform, so the descriptors stay in uniform registers (hdim 256
    // +2-3% on the H200, 2026-11-24). With Q in registers the shuffle only
    // cost (hdim 128 -1-2%), so those kernels keep the plain quotient.
    const int c = (Cfg::kQInRegisters ? wg : __shfl_sync(0xffffffffu, wg, 0)) - 1;
    const int tid = threadIdx.x - kWarpgroupThreads * wg;
    const std::uint32_t base = smem_addr(smem);
    // Pingpong across tiles, in the persistent kernels (the walk and the
    // dynamic schedule): the last warpgroup hands the first turn of its CTA's
    // next tile on at its final turn of a tile (Consumer::sched_arrive), so
    // the first warpgroup issues that tile's first S = Q K^T while the last
    // one stores O; only the first tile with turns needs the start's arrival,
    // and the first warpgroup takes the last tile's hand-on at exit. (Until
    // session 42 each tile's start handed the turn on, after the last
    // warpgroup's epilogue.)
    constexpr bool kHandOn = kPersistentSchedule;
    bool turns_seen = false;  // a tile of this CTA had turns
    const auto consume_seq = [&](const Fa3Tile& tile, const Fa3Seq& seq, auto&& before_hand_on) {
      const int m0 = tile.m_block * Smem::kBlockM;
      if (kVarlen && m0 >= seq.seqlen_q) return;  // past this sequence's queries
      const Mask seq_mask = kVarlen ? p.mask_for(seq.seqlen_q, seq.seqlen_k) : Mask();
      const Mask& mask = kVarlen ? seq_mask : p.mask_for();
      const TileRange tiles = mask.key_tiles<Cfg::kBlockN>(m0, Smem::kBlockM);
      const RowBlockKeys keys = mask.row_block(m0 + 64 * c, 64);
      const typename Mainloop::Consumer consumer{p,
                                                 pipe,
                                                 base + Smem::kQ + 64 * c * 128,
                                                 base + Smem::kK,
                                                 base + Smem::kV,
                                                 c,
                                                 tid / 32,
                                                 tid % 32,
                                                 m0 + 64 * c + 16 * (tid / 32),
                                                 tiles.end - 1,
                                                 tiles.count(),
                                                 keys.all_begin,
                                                 keys.all_end,
                                                 keys.any_end,
                                                 kMods ? ScoreMod::alibi_slope(p, tile.batch, tile.head) : 0.0f,
                                                 seq_mask};
      // Pingpong: the last warpgroup lets the first one go first (with
      // kHandOn, its final turn of the tile before did, but for the first).
      if constexpr (Cfg::kPingpong) {
        if (c == Cfg::kConsumerWGs - 1 && tiles.count() > 0 && !(kHandOn && turns_seen))
          named_barrier_arrive(kFa3PingpongTurn, 2 * kWarpgroupThreads);
      }
      turns_seen = turns_seen || tiles.count() > 0;
      float o[1][Mainloop::kNTilesO][4];
#pragma unroll
      for (int nt = 0; nt < Mainloop::kNTilesO; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[0][nt][e] = 0.0f;
      OnlineSoftmax<1> softmax;
      consumer.template run<kHandOn>(o, softmax, before_hand_on);
      Fa3Epilogue<T, Cfg, kSeq>::store(prm, smem, o, softmax, c, tid, seq, m0, tile.head, tile.batch);
    };
    const auto consume = [&](const Fa3Tile& tile, auto&& before_hand_on) {
      consume_seq(tile, fa3_seq<kSeq>(p, tile.batch), before_hand_on);
    };
    if constexpr (kDynamic && kVarlen) {
      for (int k = 0;; ++k) {
        const int slot = k & 1;
        mbar_wait(tile_bars + slot, (k >> 1) & 1);
        asm volatile("" ::: "memory");  // the record's loads stay after the wait
        const Fa3SlotTile r = slot_tile[slot];
        mbar_arrive(tile_bars + 2 + slot);  // (as below: every thread, once it has read the record)
        if (r.idx >= num_tiles) break;
        consume_seq(r.tile, Fa3Seq{r.q_row0, r.q_b, r.k_row0, r.k_b, r.seqlen_q, r.seqlen_k, r.o}, Fa3NoWait{});
      }
    } else if constexpr (kDynamic) {
      for (int k = 0;; ++k) {
        const int slot = k & 1;
        mbar_wait(tile_bars + slot, (k >> 1) & 1);
        asm volatile("" ::: "memory");  // the record's loads stay after the wait
        const int idx = slot_tile[slot].idx;
        const Fa3Tile tile = slot_tile[slot].tile;
        // Every consumer thread arrives once it has read the record, so each
        // read is ordered before the producer's next write of the slot by
        // the barrier itself. (One arrival per warp after __syncwarp left
        // that order to __syncwarp's cumulativity; racecheck reported the
        // write against the other lanes' reads once slots were reused,
        // 2026-11-24.)
        mbar_arrive(tile_bars + 2 + slot);
        if (idx >= num_tiles) break;
        // hdim 64 (three consumer warpgroups): the last one hands on once
        // the next slot is published (session 42, call 4: the (4096, 0)
        // window 2.5% and causal 2k 0.9% faster than handing on at once;
        // hdim 128 lost 1.2-3.1% waiting so).
        if constexpr (Cfg::kConsumerWGs > 2) {
          const auto wait_next = [&] { mbar_wait(tile_bars + ((k + 1) & 1), ((k + 1) >> 1) & 1); };
          consume(tile, wait_next);
        } else {
          consume(tile, Fa3NoWait{});
        }
      }
    } else {
      for (Scheduler sched(p); sched.is_valid(p); sched.advance()) consume(sched.tile(p), Fa3NoWait{});
    }
    // The last warpgroup's hand-on after the CTA's last tile with turns.
    if constexpr (Cfg::kPingpong && kHandOn) {
      if (c == 0 && turns_seen) named_barrier_sync(kFa3PingpongTurn, 2 * kWarpgroupThreads);
    }
    if constexpr (kFa3Persistent<Cfg>) {
      if (tid == 0) tma_store_wait_read();  // the last store has read shared memory
    }
  }
#endif
}

// A rung's kernel, named after the rung, and `name##_rung`, which hands it to
// the launcher: Rung::kernel<T, Cfg, Scheduler>() is the __global__ of that
// element type, Config and tile scheduler.
#define FLASH_FA3_RUNG_KERNEL(name)                                                                  \
  template <class T, class Cfg, class Scheduler, bool kMods, SeqLayout kSeq>                        \
  __global__ void __launch_bounds__(kWarpgroupThreads * (1 + Cfg::kConsumerWGs), kFa3MinBlocks<Cfg>) \
      name##_kernel(const __grid_constant__ Fa3Params prm) {                                         \
    fa3_forward<T, Cfg, Scheduler, kMods, kSeq>(prm);                                                \
  }                                                                                                  \
  struct name##_rung {                                                                               \
    template <class T, class Cfg, class Scheduler, bool kMods, SeqLayout kSeq> static auto kernel() { \
      return name##_kernel<T, Cfg, Scheduler, kMods, kSeq>;                                          \
    }                                                                                                \
  }

// The head dims of the Hopper kernels: multiples of 64 (TMA's 128-byte boxes).
template <class F> bool dispatch_fa3_head_dim(int d, F&& f) {
  return dispatch_head_dim_of<64, 128, 256>(d, static_cast<F&&>(f));
}
using Fa3HeadDims = BuiltHeadDims<64, 128, 256>;

// The kernel parameters of a call: its FwdParams and four tensor maps.
// Variable-length calls map each packed tensor as one sequence of all its
// rows (Fa3Seq gives a sequence's first row).
inline std::string fa3_make_params(const FwdParams& p, Fa3Params& prm, int block_m, int block_n) {
  prm.p = p;
  const bool packed_q = p.cu_seqlens_q != nullptr, packed_k = p.cu_seqlens_k != nullptr;
  const bool paged = p.page_table != nullptr;
  // (At least one row: a call whose sequences have no keys loads none.)
  const int batch_q = packed_q ? 1 : p.batch, rows_q = packed_q ? std::max(p.total_q, 1) : p.seqlen_q;
  int batch_k = packed_k ? 1 : p.batch, rows_k = packed_k ? std::max(p.total_k, 1) : p.seqlen_k;
  // Paged calls over 64 columns keep K/V in row groups (Fa3Mainloop::
  // kRowGroups): row-group maps, a box per page where K's and V's strides
  // both allow a group count, else a box per 8-row group.
  std::int64_t groups = 0;
  const bool row_groups = paged && p.head_dim > 64;
  if (paged) {  // the pages: [num_pages, page_size, heads, dim], boxes of fa3_page_box rows
    batch_k = p.num_pages, rows_k = p.page_size, block_n = fa3_page_box(p.page_size, block_n);
    if (row_groups) {
      const std::int64_t gk = paged_groups_per_page(p.num_pages, p.page_size, p.k_batch_stride, p.k_row_stride);
      const std::int64_t gv = paged_groups_per_page(p.num_pages, p.page_size, p.v_batch_stride, p.v_row_stride);
      if (gk == gv && gk <= INT32_MAX) groups = gk;
      int box_shift = 3;
      while (groups > 0 && (1 << box_shift) < block_n) ++box_shift;
      prm.kv_boxes = groups > 0 ? Fa3Params::PagedBoxes{box_shift, 0, static_cast<int>(groups), 3}
                                : Fa3Params::PagedBoxes{3, -1, 1, 31};
    }
  }
  const auto kv_map = [&](CUtensorMap* map, const void* data, std::int64_t batch_stride, std::int64_t row_stride,
                          std::int64_t head_stride) {
    if (row_groups)
      return make_paged_row_group_tensor_map(map, data, p.dtype, p.num_pages, p.page_size, p.heads_kv, p.head_dim,
                                             groups, batch_stride, row_stride, head_stride, block_n);
    return make_bshd_tensor_map(map, data, p.dtype, batch_k, rows_k, p.heads_kv, p.head_dim, batch_stride, row_stride,
                                head_stride, block_n);
  };
  std::string err = make_bshd_tensor_map(&prm.q, p.q, p.dtype, batch_q, rows_q, p.heads_q, p.head_dim,
                                         p.q_batch_stride, p.q_row_stride, p.q_head_stride, block_m);
  if (err.empty()) err = kv_map(&prm.k, p.k, p.k_batch_stride, p.k_row_stride, p.k_head_stride);
  if (err.empty()) err = kv_map(&prm.v, p.v, p.v_batch_stride, p.v_row_stride, p.v_head_stride);
  if (err.empty())
    err = make_bshd_tensor_map(&prm.o, p.o, p.dtype, batch_q, rows_q, p.heads_q, p.head_dim, p.o_batch_stride,
                               p.o_row_stride, p.o_head_stride, 64);
  return err;
}

// The limits of one Config on this device: grid, shared memory, tile count,
// and whether the driver can encode tensor maps.
template <class Cfg> std::string fa3_check(const FwdParams& p, const DeviceInfo& dev) {
  std::string err = check_head_batch_grid(p, dev, Fa3Smem<Cfg>::kBytes);
  const std::int64_t tiles = std::max(Fa3TileCount<Cfg>::num_tiles(p), Fa3VarlenTileScheduler<Cfg>::num_tiles(p));
  if (err.empty() && tiles > INT32_MAX) err = "too many query tiles for one launch (" + std::to_string(tiles) + ")";
  if (err.empty()) err = tensor_map_driver_reason();
  return err;
}

// One launch: Rung's kernel for this element type, Config, tile schedule,
// score-modifier flag and sequence layout. Fa3Launcher::run picks these per
// call; a rung with its own dispatch (fwd_10) calls it directly.
template <class Rung, class T, class Cfg, class Scheduler, bool kMods, SeqLayout kSeq>
cudaError_t fa3_launch(const FwdParams& p, cudaStream_t stream) {
  Fa3Params prm;
  if (!fa3_make_params(p, prm, Fa3Smem<Cfg>::kBlockM, Cfg::kBlockN).empty()) return cudaErrorInvalidValue;
  auto kernel = Rung::template kernel<T, Cfg, Scheduler, kMods, kSeq>();
  constexpr std::size_t smem = Fa3Smem<Cfg>::kBytes + (Fa3IsDynamic<Scheduler>::value ? kFa3TileSlotBytes : 0);
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  // Several CTAs per SM: all of the SM's shared memory goes to them (not L1).
  if (err == cudaSuccess && kFa3MinBlocks<Cfg> > 1)
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
  if (err != cudaSuccess) return err;
  return launch_after(true, kernel, Scheduler::grid(p), dim3(kWarpgroupThreads * (1 + Cfg::kConsumerWGs)), smem,
                      stream, prm);
}

// Whether a dense call without score modifiers takes the persistent walk.
// The walk loads a tile's Q and K/V under the previous tile's epilogue; the
// one-CTA-per-tile grid lets the hardware balance uneven tiles (causal:
// longest first). A window bounded on both sides (right = 0 when causal)
// decides by its width: under 2048 keys per row the tiles are uniform and
// short and the walk wins; wider, the grid does, which balances the shorter
// tiles at the sequence's edges, except for two-sided windows at hdim 64.
// Measured on the H200 (2026-11-24, fwd_09, bf16, hdim 128 16k / hdim 64
// 8k, TFLOPS grid -> walk): causal (W, 0): W = 128 137 -> 164 / 87 -> 100,
// 256 232 -> 256 / 149 -> 169, 512 332 -> 361 / 235 -> 253, 1024 435 -> 450
// / 317 -> 330, 2048 513 -> 510 / 389 -> 391, 4096 566 -> 527 / 437 -> 421;
// non-causal, walk -> grid: (4096, 0) 528 -> 560 / 419 -> 432, (2048, 2048)
// 550 -> 569 / 450 -> 443, (1024, 1024) 518 -> 516 / 407 -> 395.
// Without such a window: the walk unless causal.
// Past this many keys the causal grid keeps one CTA per tile: the dynamic
// schedule measured (H200, bf16, 16k tokens, the grid -> dynamic, two rounds
// of one call, 2026-11-24) hdim 128 causal 1k +8%, 2k +4%, 4k +2%, 8k -1%,
// 16k -1%; hdim 64 causal 2k +3%, 4k +2%, 8k +1%. Long tiles amortise the
// block scheduler's launch; the dynamic walk's gain is the gap between tiles.
constexpr int kFa3DynamicMaxKeys = 4096;
// Dense calls (one sequence length) take it up to 8192 keys: session 51
// (H200, four rotated rounds, the grid -> dynamic): causal 8k hdim 128
// +0.5%, hdim 64 +0.9%; 16k -1.1% / -0.4%.
constexpr int kFa3DynamicMaxKeysDense = 8192;

inline bool fa3_persistent_walk(const FwdParams& p) {
  const long long span = p.mask.window_span();
  if (span < 0) return !p.mask.causal;
  if (span < 2048) return true;
  // Wider two-sided windows at hdim 64 walk only where they cover every key
  // (uniform tiles): the walk hands CTA c the tiles c, c + grid, ..., and
  // where the query blocks divide the grid (4096 rows are 22 blocks of 192;
  // 132 SMs) each CTA keeps one block of every head, so the CTAs on the
  // longest blocks set the time. Session 51, H200, (2048, 2048) 4 x 4096:
  // walk 387 -> dynamic 463 TFLOPS (+19.5%); 2 x 8192 / 1 x 16384 within
  // +-0.6%; covering (8 x 2048) walk +0.7%.
  const bool two_sided = !p.mask.causal && p.mask.window_right > 0;
  const bool covers = p.mask.window_left >= p.seqlen_k - 1 && p.mask.window_right >= p.seqlen_q - 1;
  return two_sided && covers && p.head_dim < 128;
}

// Host side: limits, tensor maps and the launch for one Config family;
// Rung names the kernel. The tensor maps are encoded once per call, in run():
// what they need (16-byte alignment, strides below 2^40 bytes) the variant's
// alignment and max_offset already guarantee, and check() asks only whether
// the driver can encode them at all.
template <template <int> class ConfigFor, class Rung> struct Fa3Launcher {
  static std::string check(const FwdParams& p, const DeviceInfo& dev) {
    std::string err;
    dispatch_fa3_head_dim(p.head_dim, [&](auto hd) { err = fa3_check<ConfigFor<decltype(hd)::value>>(p, dev); });
    return err;
  }

  // Paged calls on 16-key pages without score modifiers, where the Config
  // has a kernel for them (Fa3SmallPageCfgOf): run() launches it, and
  // dynamic() answers no for them.
  static bool small_page_kernel(const FwdParams& p) {
    bool has = false;
    dispatch_fa3_head_dim(p.head_dim, [&](auto hd) { has = kFa3SmallPageKernel<ConfigFor<decltype(hd)::value>>; });
    return has && p.seq_layout() == SeqLayout::paged && p.page_size <= kFa3SmallPageKeys && !p.has_score_mods();
  }

  // Calls of at most kFa3DynamicMaxKeys keys (dense ones: kFa3DynamicMaxKeysDense)
  // without score modifiers, on a Config with the persistent schedule, take the dynamic one
  // (Fa3DynamicScheduler; its tile counter is the workspace): dense causal
  // calls, and packed-query calls that fit the compact order (below).
  static bool dynamic(const FwdParams& p) {
    if (small_page_kernel(p)) return false;
    bool persistent = false, compact = false, dense_paged_cfg = false, packed_paged_cfg = false;
    dispatch_fa3_head_dim(p.head_dim, [&](auto hd) {
      using Cfg = ConfigFor<decltype(hd)::value>;
      persistent = kFa3Persistent<Cfg>;
      compact = Fa3VarlenTileScheduler<Cfg>::compact_fits(p);
      dense_paged_cfg = Fa3DenseQueryPagedDynamic<Cfg>::value;
      packed_paged_cfg = Fa3PackedPagedDynamic<Cfg>::value;
    });
    // Packed queries, in the compact order: causal calls as dense ones, and
    // calls without a mask, contiguous or, where the Config asks (fwd_09:
    // hdim 64), on pages of >= 128 keys (a box per K / V tile). Paged ones
    // lost 2-5% on it in session 32 (H200: page 16 / 256 full -4.9% / -2.2%,
    // causal +1.1% / +4.0%); in session 50 (issue 17's batch, full, against
    // the grid) hdim 64 page 256 +3.9% / +4.7%, page 16 -3.8%, hdim 128 page
    // 256 -0.4% / -0.7%.
    const bool unmasked = !p.mask.causal && p.mask.window_left < 0 && p.mask.window_right < 0;
    const bool paged = p.seq_layout() == SeqLayout::paged;
    const bool varlen = (p.seq_layout() == SeqLayout::per_sequence || paged) && compact &&
                        (p.mask.causal ? !fa3_persistent_walk(p) : unmasked && (!paged || (packed_paged_cfg && p.page_size >= 128)));
    const bool dense = p.seq_layout() == SeqLayout::dense && !fa3_persistent_walk(p);
    // Dense queries on a paged cache, where the Config asks (fwd_09: hdims
    // 64 and 128) and dense calls take the dynamic schedule (causal, windows
    // too wide for the walk), in the same order: session 39, H200, causal
    // 4 x 4096 page 16 / 256 +1.5% / +2.1%, 8 x 2048 +3.8% / +3.9%; hdim 64
    // (session 50, 4 x 4096 causal) page 256 +4.9%, page 16 -2.1% (16-key
    // pages have their own kernel now). (Session 38, with 24-register
    // producers: -0.3 to -1.6%; hdim 64 -5.3% / +1.3%. Their full calls lost
    // on the walk: -1.1 to -4.3% at hdim 128, -16 to -28% at hdim 64 in
    // session 38 and -18% in session 50; hdim 64 keeps the grid for them.)
    const bool dense_paged = paged && p.cu_seqlens_q == nullptr && dense_paged_cfg && !fa3_persistent_walk(p);
    // Windows too wide for the walk take it whatever seqlen_k: their tiles'
    // keys are bounded by the span. (Session 34, H200, the single-tile grid
    // -> this: hdim 64 8k (4096, 0) +4.6%, to 0.99x of causal; hdim 128 16k
    // (4096, 0) / (8192, 0) / (2048, 2048) -0.1% / -0.5% / +0.0%.)
    const bool wide_window = dense && p.mask.window_span() >= 0;
    const int max_keys = p.seq_layout() == SeqLayout::dense ? kFa3DynamicMaxKeysDense : kFa3DynamicMaxKeys;
    return persistent && (dense || dense_paged || varlen) && !p.has_score_mods() && (p.seqlen_k <= max_keys || wide_window);
  }
  static std::size_t workspace_bytes(const FwdParams& p) { return dynamic(p) ? sizeof(int) : 0; }

  static cudaError_t run(const FwdParams& p_in, void* workspace, cudaStream_t stream) {
    FwdParams p = p_in;
    if (dynamic(p)) {
      p.tile_counter = static_cast<int*>(workspace);
      const cudaError_t zero = cudaMemsetAsync(workspace, 0, sizeof(int), stream);
      if (zero != cudaSuccess) return zero;
    }
    cudaError_t err = cudaErrorInvalidValue;
    const auto launch_with = [&](auto tag, auto cfg, auto sched, auto mods, auto seq) {
      err = fa3_launch<Rung, typename decltype(tag)::type, typename decltype(cfg)::type, typename decltype(sched)::type,
                       decltype(mods)::value, decltype(seq)::value>(p, stream);
    };
    // The persistent schedule where the Config has it and the tiles are
    // uniform (fa3_persistent_walk); causal calls the dynamic schedule up to
    // kFa3DynamicMaxKeysDense keys and one CTA per tile (longest first) past it;
    // windows too wide for the walk the dynamic schedule (dynamic()).
    // Calls with a softcap or ALiBi take the single-tile schedule (fewer kernels per
    // element type and head dim: build time); so do calls with per-sequence
    // metadata, whose query tiles past a sequence's end exit at once.
    const auto launch = [&](auto tag, auto hd) {
      using Cfg = ConfigFor<decltype(hd)::value>;
      using DCfg = typename Fa3DynamicCfgOf<Cfg>::type;  // the dynamic schedule's
      using Single = TypeTag<Fa3SingleTileScheduler<Cfg>>;
      using PackedSingle = TypeTag<Fa3SingleTileScheduler<Cfg, true>>;  // paged calls' grid
      using Compact = TypeTag<Fa3VarlenTileScheduler<Cfg>>;
      const std::false_type no;
      const std::true_type yes;
      using Dense = std::integral_constant<SeqLayout, SeqLayout::dense>;
      using PerSeq = std::integral_constant<SeqLayout, SeqLayout::per_sequence>;
      using Paged = std::integral_constant<SeqLayout, SeqLayout::paged>;
      switch (p.seq_layout()) {
        case SeqLayout::paged:
          if constexpr (kFa3Paged<Cfg>) {
            if (p.has_score_mods()) return launch_with(tag, TypeTag<Cfg>{}, PackedSingle{}, yes, Paged{});
            if constexpr (kFa3Persistent<Cfg> && Fa3DenseQueryPagedWalk<Cfg>::value) {
              // Dense queries walk where dense calls do: full calls on pages
              // of >= 32 keys, narrow windows (fa3_persistent_walk) on any
              // (session 40, H200, full 4 x 4096 / 8 x 2048 page 256 +1.3% /
              // +2.4% over the grid; page 32 then -0.4%). Session 56, with the
              // batched table loads (session 51) and 40 / 232 registers
              // (session 52), 4 x 4096 against the grid: full page 32 / 64
              // +1.2% / +2.0%; causal (128, 0) pages 16 / 32 / 64 +34.5% /
              // +32.3% / +30.5%, (64, 63) page 16 +16.2%, (1000, 0) +1.7-4.0%.
              // Full calls on pages of 16 lost 1.3% walking against their
              // 3-stage grid kernel (below), which they keep.
              const bool walk_paged = p.page_size >= 32 || p.mask.window_span() >= 0;
              if (p.cu_seqlens_q == nullptr && walk_paged && fa3_persistent_walk(p))
                return launch_with(tag, TypeTag<Cfg>{}, TypeTag<Fa3PersistentScheduler<Cfg>>{}, no, Paged{});
            }
            if constexpr (kFa3SmallPageKernel<Cfg>) {
              // Pages of 16 keys, any mask: one CTA per tile (the compact
              // grid for causal packed calls), three stages at hdim 128, six
              // at hdim 64 (Fa3SmallPageCfgOf; the dynamic schedule and the
              // walk need persistent Configs). Session 50, H200: +2-4.6% /
              // +1.8-3.7% over the grid and the dynamic schedule.
              using SCfg = typename Fa3SmallPageCfgOf<Cfg>::type;
              if (small_page_kernel(p))
                return launch_with(tag, TypeTag<SCfg>{}, TypeTag<Fa3VarlenTileScheduler<SCfg>>{}, no, Paged{});
            }
            if constexpr (kFa3Persistent<Cfg>) {
              if (dynamic(p))  // packed queries, and dense ones where the Config asks (dynamic() says which)
                return launch_with(tag, TypeTag<DCfg>{}, TypeTag<Fa3DynamicScheduler<DCfg>>{}, no, Paged{});
            }
            // (The persistent walk for dense-query full paged calls was
            // measured 12-27% slower than this grid at page 16 and 256,
            // 2026-11-24: docs/NOTES.md.)
            return launch_with(tag, TypeTag<Cfg>{}, PackedSingle{}, no, Paged{});
          }
          return;  // the variant does not claim kFeaturePaged
        case SeqLayout::per_sequence:
          // One CTA per tile, on the compact grid where it is causal
          // (Fa3VarlenTileScheduler), or that grid's order on the dynamic
          // schedule (dynamic()). (A persistent walk over the real query
          // blocks, numbered from cu_seqlens_q[b] / kBlockM + b and found by
          // binary search, was 0-5% slower than the single-tile grid at
          // issue 17's shape: docs/NOTES.md.)
          if (p.has_score_mods()) return launch_with(tag, TypeTag<Cfg>{}, Compact{}, yes, PerSeq{});
          if constexpr (kFa3Persistent<Cfg>) {
            if (dynamic(p))
              return launch_with(tag, TypeTag<DCfg>{}, TypeTag<Fa3DynamicScheduler<DCfg>>{}, no, PerSeq{});
          }
          return launch_with(tag, TypeTag<Cfg>{}, Compact{}, no, PerSeq{});
        default:
          if (p.has_score_mods()) return launch_with(tag, TypeTag<Cfg>{}, Single{}, yes, Dense{});
          if constexpr (kFa3Persistent<Cfg>) {
            if (fa3_persistent_walk(p))
              return launch_with(tag, TypeTag<Cfg>{}, TypeTag<Fa3PersistentScheduler<Cfg>>{}, no, Dense{});
            if (dynamic(p)) return launch_with(tag, TypeTag<DCfg>{}, TypeTag<Fa3DynamicScheduler<DCfg>>{}, no, Dense{});
          }
          launch_with(tag, TypeTag<Cfg>{}, Single{}, no, Dense{});
      }
    };
    if (p.dtype == DType::f16) dispatch_fa3_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__half>{}, hd); });
    else dispatch_fa3_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__nv_bfloat16>{}, hd); });
    return err;
  }
};

// What every Hopper forward variant registers: f16/bf16, head dims
// 64/128/256, every forward feature and variable-length batches (paged KV
// caches when `paged`), compute capability 9.0 only; check and run are the rung's.
inline FwdVariant fa3_variant_info(bool paged) {
  FwdVariant r;
  r.min_compute_capability = 90;
  r.max_compute_capability = 90;  // sm_90a machine code runs on 9.0 only
  r.dtype_mask = dtype_bit(DType::f16) | dtype_bit(DType::bf16);
  r.head_dims = Fa3HeadDims::data();
  r.num_head_dims = Fa3HeadDims::size();
  r.max_head_dim = 256;
  r.alignment = 16;  // TMA: base address and strides in multiples of 16 bytes
  r.features = kAllFeatures | kFeatureVarlen | (paged ? kFeaturePaged : 0u);
  r.max_offset = (std::int64_t{1} << 39) - 1;  // TMA strides are below 2^40 bytes
  r.strides_nest = true;
  return r;
}

// The registry entry of a rung whose Config family Fa3Launcher dispatches.
template <template <int> class ConfigFor, class Rung> const FwdVariant* fa3_variant() {
  static const FwdVariant v = [] {
    FwdVariant r = fa3_variant_info(kFa3Paged<ConfigFor<128>>);
    r.check = Fa3Launcher<ConfigFor, Rung>::check;
    r.workspace_bytes = Fa3Launcher<ConfigFor, Rung>::workspace_bytes;
    r.run = Fa3Launcher<ConfigFor, Rung>::run;
    return r;
  }();
  return &v;
}

}  // namespace flash::detail
