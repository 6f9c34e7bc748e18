// dec_01_splitkv: decode with a KV cache, split-KV (flash-decoding).
//
// What it does. A decode step has one to a few new query tokens per
// sequence and a long cache: per key it reads head_dim * 4 bytes (K and V)
// and does a handful of FLOPs, so the kernel is a memory copy with a
// softmax on the side and the goal is the HBM bandwidth.
//   - Work split: a CTA owns one (split, KV head, sequence). All the query
//     heads that share the KV head (GQA) and all the new tokens form the rows
//     of one 16-row mma tile (row r = token r / group, head r % group), so each
//     K/V byte is read once; more than 16 such rows take more CTAs next to each
//     other in the grid, which read the same keys through L2.
//   - Splits: each sequence's keys are cut into num_splits ranges of whole
//     64-key tiles so that batch 1 still fills every SM; a combine kernel
//     (kv_cache.cuh) merges the splits by their LSE. The heuristic takes one
//     wave of one CTA an SM where a split count makes one (whole-tile loads:
//     contiguous caches, pages of >= 64 keys), else the fewest splits whose
//     CTAs fill the SMs' slots within 95% of the best.
//   - Inside a CTA the four warps split the keys of each 64-key tile (16
//     each) instead of the rows: each warp runs its own online softmax over
//     its keys, and the four partial (max, sum, O) are merged through shared
//     memory at the end. S = Q K^T and O += P V are mma.sync m16n8k16 on the
//     padded 16-row tile (the tensor cores idle anyway).
//   - Loads: cp.async 16-byte chunks into an XOR-swizzled ring of kStages
//     tiles, kStages - 1 tiles ahead of their use. For a paged cache each
//     row's page index is read from the page table one tile before its copy
//     is issued, so the lookup never stalls the copy.
//   - Metadata (lengths, page indices) is checked on the device by a kernel
//     that runs first (kv_cache.cu); the append of new keys is a separate
//     kernel before this one. The kernels after the check are chained with
//     programmatic dependent launch, so each one's CTAs are resident before
//     the previous kernel ends.
//
// Measured (H200, 2026-11-21, bf16, heads_q 32, heads_kv 8, head_dim 128, one
// token, whole call; GB/s of K/V read; SDPA cuDNN in the same call):
//   batch x cache   contiguous          page 256   page 16    cuDNN
//   1 x 131072      136.7 us 3926 GB/s  4018       3848       139.5 us 3850
//   16 x 8192       135.5 us 3963       3999       3843       134.0 us 4006
//   64 x 4096       249.5 us 4304       4312       4081       252.7 us 4248
// The first version (page-table reads in front of each copy, a serial
// combine, FlashAttention's 85% split rule) ran 167 / 146 / 267 us; the steps
// between are in docs/NOTES.md. Registers (sm_90a): 96 / 168 / 255 at head
// dims 64 / 128 / 256, no spills; shared memory 98 / 100 / 200 KB.
// 2026-11-23 (masks through common/mask.h): within 2% of e24b379 in the same
// call on the three shapes above. Score modifiers: softcap and ALiBi in a
// kMods kernel (per-row slopes: a tile packs several query heads; hdim 256
// spills 8 bytes there), the sink in the direct store or the combine; calls
// without them within +-1% of 212efaf (b64 x 4096).
// 2026-11-24 (issue 17): a different number of new tokens per sequence
// (DecodeArgs::cu_seqlens_q, speculative decoding) by a kVarlen flag: the
// grid is sized by max_seqlen_q and CTAs past a sequence's rows exit; the
// dense kernels' SASS is identical to before (cuobjdump, sm_80 and sm_90a,
// every head dim), the varlen ones take the same registers (sm_90a). Not yet
// measured.
// Session 37 (2026-11-29): a call on a contiguous cache without an append
// reads the cache at once and waits for the metadata check's verdict only
// before its first global store (the length clamped to the capacity
// meanwhile); a split call lets the combine's CTAs launch while it runs; the
// one-CTA check keeps 8 table entries per thread in flight. H200, four
// rounds of one call each (16 x 8k / 1 x 128k / 64 x 4k, contiguous): +1.7 /
// +0.7 / +0.3%, then +0.1 / +0.1 / -0.1%; page 16 +0.1 to +1.2%. Paged calls
// deferred the same way lost 11-13% at page 16 (not understood), so they
// wait first (docs/NOTES.md; session 56 deferred them too, below).
// Session 53 (2026-11-30): timed alike (a 256 MB clear before every call,
// as do_bench times cuDNN and FA4; benchmarks/fa4_decode_matched.py) flash
// trailed cuDNN by 2-7% (cuDNN 131.2 / 136.6 / 250.6 us at 16 x 8k / 1 x
// 128k / 64 x 4k, one CTA per (sequence, KV head), 86-90% of DRAM
// bandwidth under ncu; this kernel 73-76%). One CTA of this kernel alone
// streamed ~24 GB/s whatever its ring depth: ncu counted ~790 instructions
// a warp and tile, two thirds of them each row's 64-bit source address.
// kWholeTiles (now kSegKeys == kBlockN: contiguous caches, pages of >= 64
// keys) computes a tile's
// source once and steps by a constant per row: H200, --flush always, two
// rounds: 16 x 8k contiguous 143.5 -> 140.3 us (+2.3%), page 256 +2.2%, 1 x
// 128k +2.4% / +2.0%, 64 x 4k -0.1%; pages of 16 and 32 run the kernels
// without it, SASS-identical to before (docs/NOTES.md, session 53).
// Session 54 (2026-11-30): with the whole-tile loads one CTA an SM keeps up
// with two, and fewer CTAs read the cache faster, so choose_splits takes one
// wave of one CTA an SM where a split count makes one (contiguous caches,
// pages of >= 64 keys). H200, --flush always, two rounds: 16 x 8k 139.4 ->
// 135.4 us (+2.9%), page 256 +3.3%; 1 x 128k +2.5% / +2.1%; 64 x 4k and
// pages of 16 unchanged; against cuDNN timed alike 0.996 / 1.018 / 0.994.
// The loop itself proved not to bound the kernel (session 53's reading of
// the instruction count was wrong): with its compute removed it ran only
// 1-2.5% faster, and tensor-map TMA loads (3.4-4.5% slower), one bulk copy a
// row (5-10% slower), warps that never wait for each other (0.2-1.6%
// slower), fewer instructions (W2, a lazy O rescale: within 0.3%) all failed
// (docs/NOTES.md, session 54; the prototypes are patches in its results).
// kSegKeys (session 54, prepared in 53): pages of 16 / 32 keys load each run
// of keys in one page with one lookup and one source address (four lookups
// a tile at page 16, not eight a thread): page 16 +0.6 / +1.0 / +0.9% (16 x
// 8k, 1 x 128k, 64 x 4k), the rest +-0.1%; still two CTAs an SM there (one
// split at 16 x 8k: 149.9 us against two's 142.4).
// Session 55 (2026-11-30): page 16 still trailed the contiguous cache by
// 7-10% with its pages laid out as the contiguous cache's bytes (bench
// --page-order sequential), and by 2% with the page-table loads replaced by
// their values: each lookup, loaded one tile ahead, outlasted a tile under
// the saturated memory system. kStagedTable copies each tile's entries into
// shared memory 8 tiles ahead (cp.async in the tiles' own groups), at hdim
// 128 in grids of at most one CTA an SM, and choose_splits' one-wave rule
// now takes pages of 16 / 32 there. H200, --flush always, two rounds: 16 x
// 8k page 16 142.8 -> 137.8 us (+3.6%), 1 x 128k +1.4%, page 32 +3.6%;
// 64 x 4k (two CTAs an SM, where staging lost 1.4%) and every other kernel
// SASS-identical. Page 16 now 3-5% behind the contiguous cache (was 3-8%).
// Session 56 (2026-11-30): paged calls without an append read the cache
// before the metadata check's verdict (`deferred`, page indices clamped into
// the pool), as contiguous ones have since session 37. H200, --flush always,
// two rounds (16 x 8k / 1 x 128k / 64 x 4k): page 16 +2.1 / +2.7 / +1.5%,
// page 256 +0.6 / +0.9 / +0.7%, contiguous +-0.2%; page 16 now 1.0-1.6%
// behind the contiguous cache. The check alone takes 6.0 us at page 16
// (2.4-2.6 contiguous, 3.3 page 256; ncu, base clocks).
// Run it: ./runner --decode --kernel splitkv ; ./bench --decode --kernel splitkv
#include <algorithm>

#include "common/copy.cuh"
#include "common/decode_params.h"
#include "common/head_dims.h"
#include "common/kv_cache.cuh"
#include "common/launch_limits.h"
#include "common/mask.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/scores.h"
#include "common/smem_layout.cuh"
#include "flash/variants.h"

namespace flash::detail {
namespace {

template <int kHeadDim_> struct SplitKvConfig {
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kWarps = 4;
  static constexpr int kKeysPerWarp = 16;
  static constexpr int kBlockN = kWarps * kKeysPerWarp;  // keys per tile
  // A thread copies one 16-byte column of every kRowStep-th row of a tile.
  static constexpr int kRowStep = kWarps * 32 / (kHeadDim / 8);
  // Ring depth: about 96 KB of K/V per CTA at head dims 64 and 128 (two CTAs
  // per SM), 192 KB at 256.
  static constexpr int kStages = kHeadDim == 64 ? 6 : 3;
  // Q fragments in registers; at 256 they would take 64 registers next to
  // 128 of O, so they are reloaded from shared memory per tile instead.
  static constexpr bool kQInRegisters = kHeadDim <= 128;
  // Pages of 16 / 32 keys may take their page-table entries from shared
  // memory (the kernel's kStagedTable): measured at hdim 128 alone (session
  // 55; hdim 256 runs one CTA an SM whatever the grid, hdim 64's six stages
  // would need 11 slots of the table ring, not 8).
  static constexpr bool kStagesTable = kHeadDim == 128;
  using Layout = SwizzledLayout<kHeadDim>;
};

template <class Cfg> struct SplitKvSmem {
  static constexpr int kQElems = 16 * Cfg::kHeadDim;
  static constexpr int kTileElems = Cfg::kBlockN * Cfg::kHeadDim;
  static constexpr std::size_t kRingBytes = std::size_t(2) * Cfg::kStages * kTileElems * 2;
  // The merge reuses the ring: fp32 O, max and sum of every warp's 16 rows.
  static constexpr std::size_t kMergeBytes = std::size_t(Cfg::kWarps) * 16 * (Cfg::kHeadDim + 2) * 4;
  static_assert(kMergeBytes <= kRingBytes, "the merge buffers fit in the K/V ring");
  // Pages of 16 / 32 keys: the page-table entries of kTableSlots tiles, copied
  // ahead of the tiles' loads (kStagedTable in the kernel), 4 slots a tile.
  static constexpr int kTableSlots = 8, kTableSlotEntries = 4;
  static constexpr std::size_t kTableBytes = std::size_t(kTableSlots) * kTableSlotEntries * 4;
  static constexpr std::size_t kBytes = kQElems * 2 + kRingBytes + kTableBytes;
};

// kMods: the call has a softcap or ALiBi (dispatch_score_mods). kVarlen:
// the call has cu_seqlens_q (each sequence its own number of new tokens,
// packed; decode_params.h): the grid is sized by max_seqlen_q and the CTAs
// past a sequence's rows exit; dense calls keep their code.
// kSegKeys: every aligned run of kSegKeys keys of a tile shares one cache
// block (kBlockN: a contiguous cache or pages of at least kBlockN keys; 16 or
// 32: pages of that size; run() decides), so load_tile computes a run's
// source once and steps by a constant per row (session 53). 0: each row's
// block and address on its own (pages under 16 keys, or under kRowStep).
// kStagedTable (kSegKeys 16 / 32 only): the page-table entries come from
// shared memory, copied kTableSlots tiles ahead; run() takes it at hdim 128
// for grids of at most one CTA an SM (below, at sTable).
template <class T, class Cfg, bool kMods, bool kVarlen, int kSegKeys, bool kStagedTable>
__global__ void __launch_bounds__(Cfg::kWarps * 32) dec_01_splitkv_kernel(const __grid_constant__ DecodeParams p) {
  constexpr int kHeadDim = Cfg::kHeadDim, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  constexpr int kThreads = Cfg::kWarps * 32;
  constexpr int kNTilesS = Cfg::kKeysPerWarp / 8;  // 8-key n-tiles of this warp's S
  constexpr int kNTilesO = kHeadDim / 8;
  constexpr int kKStepsQK = kHeadDim / 16;
  constexpr int kChunks = kHeadDim / 8;  // 16-byte chunks per row
  using Layout = typename Cfg::Layout;
  using Smem = SplitKvSmem<Cfg>;
  static_assert(Cfg::kKeysPerWarp == 16, "one P V k-step per warp and tile");
  static_assert((kBlockN * kChunks) % kThreads == 0, "every thread copies the same number of chunks");

  // The metadata check (and the append, when there is one) runs before this
  // kernel, whose CTAs start as soon as the check starts (programmatic
  // dependent launch). A contiguous cache without an append: nothing this
  // kernel reads is written by them, so it reads the cache at once (the
  // length clamped to the capacity: a bad one still stays inside the
  // tensors) and waits for the check's verdict only before its first global
  // store (`deferred`). Otherwise it waits first: an append writes the keys
  // it reads, and packed queries locate its rows by cu_seqlens_q. Paged
  // calls defer too (session 56; in session 37, with per-row lookups, they
  // lost 11-13% at page 16): every page index is clamped into the pool
  // (page_in_pool), so an entry the check has not yet proven still reads
  // inside the tensors, and the check's ~6 us over the table (page 16, ncu)
  // no longer stands in front of the cache reads. (A pool of no pages has
  // nothing to clamp into: such a call waits.)
  const bool deferred =
      !kVarlen && (p.k_new == nullptr || p.seqlen_new == 0) && (p.page_table == nullptr || p.num_pages > 0);
  if (!deferred) {
    wait_for_previous_kernel();
    if (metadata_failed(p)) return;
  }
  if (p.num_splits > 1) let_next_kernel_start();  // the combine's CTAs may start; it waits for this grid

  // No static __shared__ in this kernel: a 16-byte flag placed this buffer at
  // byte 1040 instead of 1024 and cost 10-15% on every decode shape (H200,
  // 2026-11-25, docs/NOTES.md "Session 21"); scratch goes in the ring.
  extern __shared__ uint4 smem_u4[];
  T* sQ = reinterpret_cast<T*>(smem_u4);
  T* sK = sQ + Smem::kQElems;                 // [kStages][kBlockN][kHeadDim]
  T* sV = sK + kStages * Smem::kTileElems;    // [kStages][kBlockN][kHeadDim]

  const int m_blocks = (p.group_size * p.seqlen_q + 15) / 16;
  const int m_block = blockIdx.x % m_blocks, split = blockIdx.x / m_blocks;
  const int h_kv = blockIdx.y, b = blockIdx.z;
  // This sequence's new tokens: p.seqlen_q of them at b's batch strides, or
  // (kVarlen) packed rows q0 .. q0 + seqlen_q() - 1 with batch strides 0.
  // A dense call reads p.seqlen_q where it is used, as before the flag (a
  // local copy moves the loads and changes the dense SASS).
  const int q0 = kVarlen ? p.cu_seqlens_q[b] : 0;
  const int varlen_seqlen_q = kVarlen ? p.cu_seqlens_q[b + 1] - q0 : 0;
  const auto seqlen_q = [&] { return kVarlen ? varlen_seqlen_q : p.seqlen_q; };
  const int rows = p.group_size * seqlen_q();  // (token, head) rows of this KV head
  if (kVarlen && m_block * 16 >= rows) return;  // past this sequence's rows: the whole CTA, before any barrier
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;

  // The key tiles this CTA's tokens see (common/mask.h, with this
  // sequence's length), cut into num_splits ranges: this split's are
  // [tile_begin, tile_end).
  const int seq_keys = min(max(total_keys(p, b), 0), p.seqlen_k);  // clamped: unchecked when deferred
  const int tok_first = m_block * 16 / p.group_size, tok_last = (min(m_block * 16 + 16, rows) - 1) / p.group_size;
  const TileRange tiles = p.mask_for(seqlen_q(), seq_keys).template key_tiles<kBlockN>(tok_first, tok_last - tok_first + 1);
  const int tiles_per_split = (tiles.count() + p.num_splits - 1) / p.num_splits;
  const int tile_begin = min(tiles.end, tiles.begin + split * tiles_per_split);
  const int tile_end = min(tiles.end, tile_begin + tiles_per_split);
  const int n_tiles = max(0, tile_end - tile_begin);

  // Q: 16 rows, zeros past the last real row (never written out).
  for (int idx = threadIdx.x; idx < 16 * kChunks; idx += kThreads) {
    const int r = idx / kChunks, c = (idx % kChunks) * 8, row = m_block * 16 + r;
    uint4 val = make_uint4(0, 0, 0, 0);
    if (row < rows) {
      const int tok = row / p.group_size, h = h_kv * p.group_size + row % p.group_size;
      val = *reinterpret_cast<const uint4*>(static_cast<const T*>(p.q) + b * p.q_batch_stride +
                                            (q0 + tok) * p.q_row_stride + h * p.q_head_stride + c);
    }
    *reinterpret_cast<uint4*>(sQ + Layout::offset(r, c)) = val;
  }

  // Each thread copies kRowsPerThread rows of every tile, always the same
  // 16-byte column: rows my_row + i * kRowStep. The cache block (sequence,
  // or page from the page table) of each row of the next tile to load is
  // fetched one tile ahead into next_block[], so the page-table lookups are
  // in flight while the current tile computes instead of stalling the copy.
  constexpr int kRowStep = Cfg::kRowStep, kRowsPerThread = kBlockN / kRowStep;
  static_assert(kThreads % kChunks == 0 && kRowStep == kThreads / kChunks, "a thread keeps one column");
  const int my_row = threadIdx.x / kChunks, my_col = (threadIdx.x % kChunks) * 8;
  const bool paged = p.page_table != nullptr;
  const auto page_in_pool = [&](int page) { return min(max(page, 0), p.num_pages - 1); };
  const int* table = p.page_table + b * p.page_table_stride;
  // Runs of kSegKeys keys share a block (see kSegKeys): one page-table lookup
  // a run, and a row's source is its run's first plus a constant step.
  static_assert(kSegKeys == 0 || (kSegKeys % kRowStep == 0 && kBlockN % (kSegKeys == 0 ? 1 : kSegKeys) == 0),
                "whole rows per run");
  constexpr int kRowsPerSeg = kSegKeys == 0 ? 1 : kSegKeys / kRowStep;  // this thread's rows in a run
  constexpr int kLookups = kSegKeys == 0 ? kRowsPerThread : kBlockN / kSegKeys;
  // kStagedTable (pages of 16 / 32 keys): a tile's kLookups entries are the
  // same for every thread, so they come from shared memory, where they were
  // copied kTableSlots tiles ahead (cp.async in the tiles' groups) instead of
  // one tile ahead into registers. At one CTA an SM each lookup's latency,
  // under the saturated memory system, held the next tile's copies: page 16
  // ran 7-10% behind the contiguous cache even with its pages laid out as one,
  // 2% with the lookups replaced by their values; staged, 16 x 8k one split
  // 152.0 -> 141.3 us, 1 x 128k 15 splits 158.8 -> 144.9 (H200, session 55).
  // Past one wave of one CTA an SM (64 x 4k, two an SM) it lost 1.4%: run()
  // keeps the entries in registers there.
  static_assert(!kStagedTable || (kSegKeys != 0 && kSegKeys < kBlockN), "staged entries: pages of 16 / 32 keys");
  constexpr int kTableSlots = Smem::kTableSlots;
  static_assert(!kStagedTable || kLookups <= Smem::kTableSlotEntries, "a tile's entries fit its slot");
  // Entry j of tile t is sTable[(t % kTableSlots) * 4 + j]. Iteration t (the
  // loop's, by tile) copies tile t + kTableSlots's entries into tile t's slot,
  // which load_tile(t) read at iteration t - (kStages - 1), barriers ago; the
  // copy is in iteration t's group, waited for at iteration t + kStages - 1
  // before its barrier, and load_tile(t + kTableSlots) runs at iteration
  // t + kTableSlots - (kStages - 1): 8 slots hold 3 stages, not hdim 64's 6
  // (racecheck caught that instantiation reading slots before they landed).
  static_assert(!kStagedTable || kTableSlots >= 2 * kStages - 1, "the entries land before their tile's load");
  int* sTable = reinterpret_cast<int*>(reinterpret_cast<char*>(smem_u4) + Smem::kQElems * 2 + Smem::kRingBytes);
  int next_block[kStagedTable ? 1 : kLookups];
  auto fetch_blocks = [&](int tile) {
    if constexpr (!kStagedTable) {
#pragma unroll
      for (int j = 0; j < kLookups; ++j) {
        const int key = tile * kBlockN + (kSegKeys == 0 ? my_row + j * kRowStep : j * kSegKeys);
        next_block[j] = paged && key < seq_keys ? page_in_pool(__ldg(table + (key >> p.page_shift))) : b;
      }
    }
  };
  // Tile `tile`'s entries into its slot (kStagedTable): keys past the
  // sequence read nothing and stage page 0, which no load uses.
  auto stage_entries = [&](int tile) {
    if (threadIdx.x < kLookups) {
      const int key = tile * kBlockN + threadIdx.x * kSegKeys;
      const bool valid = key < seq_keys;
      cp_async_4(sTable + (tile % kTableSlots) * Smem::kTableSlotEntries + threadIdx.x,
                 valid ? table + (key >> p.page_shift) : table, valid ? 4 : 0);
    }
  };
  const auto block_of = [&](int j, int tile) -> std::int64_t {
    if constexpr (kStagedTable) return page_in_pool(sTable[(tile % kTableSlots) * Smem::kTableSlotEntries + j]);
    else return next_block[j];
  };
  const T* k_cache = static_cast<const T*>(p.k) + h_kv * p.k_head_stride + my_col;
  const T* v_cache = static_cast<const T*>(p.v) + h_kv * p.v_head_stride + my_col;
  const int pos_mask = paged ? p.page_size - 1 : -1;
  auto load_tile = [&](int tile) {
    const int stage = tile % kStages;
    if (kSegKeys != 0 && (tile + 1) * kBlockN <= seq_keys) {  // a whole tile: not the tail
      // 64-bit address arithmetic once a run, not once a row (two thirds of
      // the ~790 instructions a warp and tile ncu counted at 16 x 8k; +2.3%
      // there, and what lets one CTA an SM keep up: session 54).
      const std::int64_t k_step = std::int64_t(kRowStep) * p.k_row_stride;
      const std::int64_t v_step = std::int64_t(kRowStep) * p.v_row_stride;
#pragma unroll
      for (int j = 0; j < kLookups; ++j) {
        const std::int64_t block = block_of(j, tile), row0 = ((tile * kBlockN + j * kSegKeys) & pos_mask) + my_row;
        const T* k_src = k_cache + block * p.k_batch_stride + row0 * p.k_row_stride;
        const T* v_src = v_cache + block * p.v_batch_stride + row0 * p.v_row_stride;
#pragma unroll
        for (int u = 0; u < kRowsPerSeg; ++u) {
          const int r = my_row + (j * kRowsPerSeg + u) * kRowStep;
          cp_async_16(sK + stage * Smem::kTileElems + Layout::offset(r, my_col), k_src + u * k_step, 16);
          cp_async_16(sV + stage * Smem::kTileElems + Layout::offset(r, my_col), v_src + u * v_step, 16);
        }
      }
      return;
    }
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = my_row + i * kRowStep, key = tile * kBlockN + r;
      const bool valid = key < seq_keys;
      const std::int64_t block = block_of(kSegKeys == 0 ? i : i / kRowsPerSeg, tile), pos = key & pos_mask;
      const T* k_src = valid ? k_cache + block * p.k_batch_stride + pos * p.k_row_stride : k_cache;
      const T* v_src = valid ? v_cache + block * p.v_batch_stride + pos * p.v_row_stride : v_cache;
      cp_async_16(sK + stage * Smem::kTileElems + Layout::offset(r, my_col), k_src, valid ? 16 : 0);
      cp_async_16(sV + stage * Smem::kTileElems + Layout::offset(r, my_col), v_src, valid ? 16 : 0);
    }
  };
  if constexpr (kStagedTable) {  // the first kTableSlots tiles' entries, straight
    for (int idx = threadIdx.x; idx < kTableSlots * kLookups; idx += kThreads) {
      const int tile = tile_begin + idx / kLookups, key = tile * kBlockN + (idx % kLookups) * kSegKeys;
      sTable[(tile % kTableSlots) * Smem::kTableSlotEntries + idx % kLookups] =
          key < seq_keys ? __ldg(table + (key >> p.page_shift)) : 0;
    }
    __syncthreads();
  }
  fetch_blocks(tile_begin);
#pragma unroll
  for (int s = 0; s < kStages - 1; ++s) {
    if (s < n_tiles) {
      load_tile(tile_begin + s);
      fetch_blocks(tile_begin + s + 1);
    }
    cp_async_commit();
  }
  __syncthreads();  // Q is in shared memory

  // ldmatrix row addresses (see fa2_forward.cuh): A = Q, B = this warp's 16
  // keys of K, B^T = the same keys of V.
  const int a_row = lane % 16, a_col = 8 * (lane / 16);
  const int k_row = warp * 16 + lane % 8 + 8 * (lane / 16), k_col = 8 * ((lane / 8) % 2);
  const int v_row = warp * 16 + lane % 8 + 8 * ((lane / 8) % 2), v_col = 8 * (lane / 16);
  std::uint32_t q_addr[4], k_addr[4], v_addr[4];
#pragma unroll
  for (int ph = 0; ph < 4; ++ph) {
    q_addr[ph] = smem_addr(sQ + Layout::lane_offset(a_row, a_col, ph));
    k_addr[ph] = smem_addr(sK + Layout::lane_offset(k_row, k_col, ph));
    v_addr[ph] = smem_addr(sV + Layout::lane_offset(v_row, v_col, ph));
  }
  constexpr std::uint32_t kStageBytes = Smem::kTileElems * sizeof(T);
  std::uint32_t rQ[Cfg::kQInRegisters ? kKStepsQK : 1][4];
  if constexpr (Cfg::kQInRegisters) {
#pragma unroll
    for (int ks = 0; ks < kKStepsQK; ++ks) ldmatrix_x4(rQ[ks], q_addr[ks % 4] + 2 * Layout::step_offset(0, ks));
  }

  float acc_o[1][kNTilesO][4];
#pragma unroll
  for (int nt = 0; nt < kNTilesO; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) acc_o[0][nt][e] = 0.0f;
  OnlineSoftmax<1> softmax;
  // Row r of the mma tile is token r / group_size (of head r % group_size).
  const auto token_of = [&](int, int half) { return (m_block * 16 + g + 8 * half) / p.group_size; };
  // The score rule of each of this lane's two rows (their heads differ when
  // a tile packs several query heads: ALiBi slope per row).
  const Mask seq_mask = p.mask_for(seqlen_q(), seq_keys);
  float slopes[2] = {0.0f, 0.0f};
  if constexpr (kMods) {
#pragma unroll
    for (int half = 0; half < 2; ++half)
      slopes[half] = ScoreMod::alibi_slope(p, b, h_kv * p.group_size + (m_block * 16 + g + 8 * half) % p.group_size);
  }
  const ScoreMod scores(p, 0.0f, seq_mask.diag);

  for (int j = 0; j < n_tiles; ++j) {
    const int tile = tile_begin + j;
    if (j + kStages - 1 < n_tiles) {
      load_tile(tile + kStages - 1);
      fetch_blocks(tile + kStages);
      if (kStagedTable && j + kTableSlots < n_tiles) stage_entries(tile + kTableSlots);
    }
    cp_async_commit();
    cp_async_wait<kStages - 1>();
    __syncthreads();  // tile j has landed for every thread
    const std::uint32_t stage_bytes = (tile % kStages) * kStageBytes;

    float acc_s[1][kNTilesS][4];
#pragma unroll
    for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc_s[0][nt][e] = 0.0f;
#pragma unroll
    for (int ks = 0; ks < kKStepsQK; ++ks) {
      std::uint32_t a[4], bk[4];
      if constexpr (Cfg::kQInRegisters) {
#pragma unroll
        for (int e = 0; e < 4; ++e) a[e] = rQ[ks][e];
      } else {
        ldmatrix_x4(a, q_addr[ks % 4] + 2 * Layout::step_offset(0, ks));
      }
      ldmatrix_x4(bk, k_addr[ks % 4] + stage_bytes + 2 * Layout::step_offset(0, ks));
      const std::uint32_t b0[2] = {bk[0], bk[1]}, b1[2] = {bk[2], bk[3]};
      mma_16816<T>(acc_s[0][0], a, b0);
      mma_16816<T>(acc_s[0][1], a, b1);
    }
    const int n0 = tile * kBlockN;
    if constexpr (kMods) scores.apply(acc_s, n0 + warp * 16, lane, token_of, [&](int, int half) { return slopes[half]; });
    if (seq_mask.row_block(tok_first, tok_last - tok_first + 1).needs_mask(n0, kBlockN))
      seq_mask.apply(acc_s, n0 + warp * 16, lane, token_of);
    softmax.update(acc_s, acc_o, ScoreMod(p).exp2_scale());

    std::uint32_t a[4];
    a[0] = pack2<T>(acc_s[0][0][0], acc_s[0][0][1]);
    a[1] = pack2<T>(acc_s[0][0][2], acc_s[0][0][3]);
    a[2] = pack2<T>(acc_s[0][1][0], acc_s[0][1][1]);
    a[3] = pack2<T>(acc_s[0][1][2], acc_s[0][1][3]);
#pragma unroll
    for (int dp = 0; dp < kNTilesO / 2; ++dp) {
      std::uint32_t bv[4];
      ldmatrix_x4_trans(bv, v_addr[dp % 4] + stage_bytes + 2 * Layout::step_offset(0, dp));
      const std::uint32_t b0[2] = {bv[0], bv[1]}, b1[2] = {bv[2], bv[3]};
      mma_16816<T>(acc_o[0][2 * dp], a, b0);
      mma_16816<T>(acc_o[0][2 * dp + 1], a, b1);
    }
    __syncthreads();  // every warp is done with this stage before it is refilled
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is free for the merge buffers

  // Merge the four warps' partial results: max m_w, sum l_w and O_w (not yet
  // divided) of each row. m = max_w m_w, O = sum_w 2^((m_w - m) c) O_w / l.
  float* sO = reinterpret_cast<float*>(sK);            // [kWarps][16][kHeadDim]
  float* sMax = sO + Cfg::kWarps * 16 * kHeadDim;      // [kWarps][16]
  float* sSum = sMax + Cfg::kWarps * 16;               // [kWarps][16]
#pragma unroll
  for (int half = 0; half < 2; ++half) {
    const int r = g + 8 * half;
    const float sum = quad_sum(softmax.row_sum[half]);
    if (t == 0) {
      sMax[warp * 16 + r] = softmax.row_max[half];
      sSum[warp * 16 + r] = sum;
    }
#pragma unroll
    for (int nt = 0; nt < kNTilesO; ++nt)
      *reinterpret_cast<float2*>(sO + (warp * 16 + r) * kHeadDim + nt * 8 + 2 * t) =
          make_float2(acc_o[0][nt][2 * half], acc_o[0][nt][2 * half + 1]);
  }
  __syncthreads();
  if (deferred) {  // the check's verdict, before the first global store
    wait_for_previous_kernel();
    if (metadata_failed(p)) return;
  }

  const bool direct = p.num_splits == 1;
  const std::int64_t split_rows = p.partial_rows<kVarlen>();
  // kVarlen: read again rather than kept in a register across the key loop
  // (at head dim 256 that register spills).
  const int out_q0 = kVarlen ? p.cu_seqlens_q[b] : 0;
  for (int idx = threadIdx.x; idx < 16 * (kHeadDim / 4); idx += kThreads) {
    const int r = idx / (kHeadDim / 4), c = (idx % (kHeadDim / 4)) * 4, row = m_block * 16 + r;
    if (row >= rows) continue;
    float m = -INFINITY;
#pragma unroll
    for (int w = 0; w < Cfg::kWarps; ++w) m = fmaxf(m, sMax[w * 16 + r]);
    float l = 0.0f, o[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (m != -INFINITY) {
#pragma unroll
      for (int w = 0; w < Cfg::kWarps; ++w) {
        const float wm = sMax[w * 16 + r];
        if (wm == -INFINITY) continue;  // this warp saw no key of the row
        const float f = fast_exp2((wm - m) * ScoreMod(p).exp2_scale());
        l += f * sSum[w * 16 + r];
        const float4 x = *reinterpret_cast<const float4*>(sO + (w * 16 + r) * kHeadDim + c);
        o[0] += f * x.x, o[1] += f * x.y, o[2] += f * x.z, o[3] += f * x.w;
      }
    }
    float inv = l > 0.0f ? 1.0f / l : 0.0f;
    float lse = row_lse(m * ScoreMod(p).lse_scale(), l);
    const int tok = row / p.group_size, h = h_kv * p.group_size + row % p.group_size;
    if (direct) inv *= add_sink(lse, ScoreMod::sink(p, h));  // split partials get it in the combine
    // The partial results' row (partial_rows): (b, h, tok), or (h, packed row) for kVarlen.
    const std::int64_t out_row = kVarlen ? static_cast<std::int64_t>(h) * p.total_q + out_q0 + tok
                                         : (static_cast<std::int64_t>(b) * p.heads_q + h) * p.seqlen_q + tok;
    if (direct) {
      store4_from_float(static_cast<T*>(p.o) + b * p.o_batch_stride + (out_q0 + tok) * p.o_row_stride +
                            h * p.o_head_stride + c,
                        o[0] * inv, o[1] * inv, o[2] * inv, o[3] * inv);
      if (p.lse != nullptr && c == 0)
        p.lse[p.lse_offset(b, h, out_q0 + tok)] = lse;
    } else {
      *reinterpret_cast<float4*>(p.o_partial + (split * split_rows + out_row) * kHeadDim + c) =
          make_float4(o[0] * inv, o[1] * inv, o[2] * inv, o[3] * inv);
      if (c == 0) p.lse_partial[split * split_rows + out_row] = lse;
    }
  }
}

template <class F> bool dispatch_decode_head_dim(int d, F&& f) {
  return dispatch_head_dim_of<64, 128, 256>(d, static_cast<F&&>(f));
}
using DecodeHeadDims = BuiltHeadDims<64, 128, 256>;

std::size_t smem_bytes(int head_dim) {
  std::size_t bytes = 0;
  dispatch_decode_head_dim(head_dim, [&](auto hd) { bytes = SplitKvSmem<SplitKvConfig<decltype(hd)::value>>::kBytes; });
  return bytes;
}

int m_blocks(const DecodeParams& p) { return (p.group_size * p.seqlen_q + 15) / 16; }

std::string check(const DecodeParams& p, const DeviceInfo& dev) {
  if (std::string why = grid_yz_reason("heads_kv", p.heads_kv); !why.empty()) return why;
  if (std::string why = grid_yz_reason("batch", p.batch); !why.empty()) return why;
  const std::size_t smem = smem_bytes(p.head_dim);
  if (smem > dev.smem_per_block_optin)
    return "needs " + std::to_string(smem) + " bytes of shared memory per block; this GPU allows " +
           std::to_string(dev.smem_per_block_optin);
  return {};
}

// Every tile of the call lies in one cache block (a contiguous cache, or
// pages of at least a tile's keys; tiles start at multiples of kBlockN): the
// kernels' whole-tile loads, and the split rule's one CTA an SM.
constexpr int kBlockNDecode = SplitKvConfig<64>::kBlockN;  // (every head dim's)
bool whole_tiles(const DecodeParams& p) { return p.page_table == nullptr || p.page_size >= kBlockNDecode; }

// The kernel's kSegKeys for a call: a whole tile where whole_tiles, 16 or 32
// for pages of that size where a thread's rows in a page are whole (kRowStep:
// 16 at head dim 64), else 0 (each row on its own).
template <class Cfg> int segment_keys(const DecodeParams& p) {
  static_assert(Cfg::kBlockN == kBlockNDecode, "one tile size");
  if (whole_tiles(p)) return Cfg::kBlockN;
  return (p.page_size == 16 || p.page_size == 32) && p.page_size % Cfg::kRowStep == 0 ? p.page_size : 0;
}

// Pages of 16 / 32 keys whose kernel can stage the page-table entries
// (Cfg::kStagesTable); run() stages them in grids of at most one CTA an SM.
template <class Cfg> bool small_pages_staged(const DecodeParams& p) {
  const int seg = segment_keys<Cfg>(p);
  return Cfg::kStagesTable && (seg == 16 || seg == 32);
}

// Calls whose loads keep up at one CTA an SM (choose_splits): whole tiles, or
// small pages with their entries staged.
bool one_wave_loads(const DecodeParams& p) {
  bool ok = whole_tiles(p);
  dispatch_decode_head_dim(p.head_dim, [&](auto hd) { ok = ok || small_pages_staged<SplitKvConfig<decltype(hd)::value>>(p); });
  return ok;
}

// CTAs of this kernel one SM holds at once (from the shared memory it takes).
int ctas_per_sm(int head_dim, const DeviceInfo& dev) {
  return std::max<int>(1, static_cast<int>(dev.smem_per_sm / (smem_bytes(head_dim) + kSmemReservedPerCta)));
}

// FlashAttention's rule, tightened: with CTAs = batch * heads_kv * m_blocks
// * s and waves = CTAs / slots, efficiency(s) = waves / ceil(waves); take the
// fewest splits within 95% of the best (FlashAttention: 85%), each split
// keeping at least four tiles. At batch 1 with a 128k cache 85% picks 29
// splits (232 CTAs for 264 slots) and 95% picks 32: 151 -> 143 us.
int choose_splits(const DecodeParams& p, const DeviceInfo& dev) {
  const std::int64_t ctas = static_cast<std::int64_t>(p.batch) * p.heads_kv * m_blocks(p);
  const std::int64_t slots = static_cast<std::int64_t>(dev.sm_count) * ctas_per_sm(p.head_dim, dev);
  if (ctas >= slots * 8 / 10) return 1;
  constexpr int kMinTilesPerSplit = 4, kBlockN = kBlockNDecode, kMaxSplits = 128;
  const int tiles = (p.seqlen_k + kBlockN - 1) / kBlockN;
  const int max_splits = std::max(1, std::min<int>(kMaxSplits, tiles / kMinTilesPerSplit));
  // Whole-tile loads (a contiguous cache, pages of >= 64 keys): one wave of
  // one CTA an SM on >= 90% of the SMs where a split count makes one. Fewer
  // CTAs streaming the cache read it faster, and one such CTA an SM keeps
  // up (H200, session 54, --flush always: 16 x 8k one split 134.7 us, two
  // 139.9; 1 x 128k 16 splits 137.3, 32 140.7; hdim 64 16 x 8k 78.8 / 83.2).
  // Pages of 16 / 32 keys take it too at hdim 128, where the kernel stages
  // their page-table entries (kStagedTable): 16 x 8k page 16 one split 141.3
  // us against two's 144.8, 1 x 128k 15 splits 144.9 against 32's 145.9,
  // page 32 139.6 / 143.3 (H200, session 55). hdim 64 keeps two CTAs an SM
  // (page 32 at one split, 1 x 128k: -3.2%).
  if (one_wave_loads(p)) {
    for (int s = 1; s <= max_splits; ++s) {
      const std::int64_t n = ctas * s;
      if (n > dev.sm_count) break;
      if (n * 10 >= static_cast<std::int64_t>(dev.sm_count) * 9) return s;
    }
  }
  double best = 0.0;
  double eff[kMaxSplits + 1] = {};
  for (int s = 1; s <= max_splits; ++s) {
    const double waves = static_cast<double>(ctas * s) / static_cast<double>(slots);
    eff[s] = waves / std::ceil(waves);
    best = std::max(best, eff[s]);
  }
  for (int s = 1; s <= max_splits; ++s)
    if (eff[s] >= 0.95 * best) return s;
  return 1;
}

constexpr std::size_t kStatusBytes = 256;

std::size_t workspace_bytes(const DecodeParams& p) {
  if (p.num_splits <= 1) return kStatusBytes;
  const std::size_t rows = static_cast<std::size_t>(p.num_splits) * p.partial_rows();
  const std::size_t lse_bytes = (rows * sizeof(float) + 255) / 256 * 256;
  return kStatusBytes + lse_bytes + rows * p.head_dim * sizeof(float);
}

cudaError_t run(const DecodeParams& params, void* workspace, cudaStream_t stream) {
  DecodeParams p = params;
  char* ws = static_cast<char*>(workspace);
  if (p.num_splits > 1) {
    const std::size_t rows = static_cast<std::size_t>(p.num_splits) * p.partial_rows();
    p.lse_partial = reinterpret_cast<float*>(ws + kStatusBytes);
    p.o_partial = reinterpret_cast<float*>(ws + kStatusBytes + (rows * sizeof(float) + 255) / 256 * 256);
  }
  cudaError_t err = launch_check_metadata(p, stream);
  if (err == cudaSuccess) err = launch_append_kv(p, stream);
  if (err != cudaSuccess || p.seqlen_q == 0) return err;
  err = cudaErrorInvalidValue;
  const bool varlen = p.cu_seqlens_q != nullptr;
  const auto launch = [&](auto tag, auto hd) {
    using T = typename decltype(tag)::type;
    using Cfg = SplitKvConfig<decltype(hd)::value>;
    // The run of keys that share a cache block (the kernel's kSegKeys).
    const int seg = segment_keys<Cfg>(p);
    const dim3 grid(m_blocks(p) * p.num_splits, p.heads_kv, p.batch);
    // Small pages in a grid of at most one CTA an SM: the staged entries.
    const bool staged = small_pages_staged<Cfg>(p) &&
                        std::int64_t(grid.x) * grid.y * grid.z <= p.sm_count;
    auto kernel = dispatch_score_mods(p, [&](auto m) {
      constexpr bool kMods = decltype(m)::value;
      const auto of = [&](auto v) {
        constexpr bool kV = decltype(v)::value;
        if constexpr (Cfg::kStagesTable) {
          if (staged) return seg == 32 ? dec_01_splitkv_kernel<T, Cfg, kMods, kV, 32, true>
                                       : dec_01_splitkv_kernel<T, Cfg, kMods, kV, 16, true>;
        }
        return seg == Cfg::kBlockN ? dec_01_splitkv_kernel<T, Cfg, kMods, kV, Cfg::kBlockN, false>
               : seg == 32          ? dec_01_splitkv_kernel<T, Cfg, kMods, kV, 32, false>
               : seg == 16          ? dec_01_splitkv_kernel<T, Cfg, kMods, kV, 16, false>
                                    : dec_01_splitkv_kernel<T, Cfg, kMods, kV, 0, false>;
      };
      return varlen ? of(std::true_type{}) : of(std::false_type{});
    });
    constexpr std::size_t smem = SplitKvSmem<Cfg>::kBytes;
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (err != cudaSuccess) return;
    err = launch_after(p.pdl, kernel, grid, dim3(Cfg::kWarps * 32), smem, stream, p);
    if (err != cudaSuccess || p.num_splits == 1) return;
    // One CTA per partial row (decode.cpp keeps their count within 2^31 - 1).
    const int rows = static_cast<int>(p.partial_rows());
    const auto combine = varlen ? combine_splits_kernel<T, Cfg::kHeadDim, true> : combine_splits_kernel<T, Cfg::kHeadDim, false>;
    err = launch_after(p.pdl, combine, dim3(rows), dim3(kCombineWarps * 32), 0, stream, p);
  };
  if (p.dtype == DType::f16) dispatch_decode_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__half>{}, hd); });
  else dispatch_decode_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__nv_bfloat16>{}, hd); });
  return err;
}

}  // namespace

const DecodeVariant* variant_splitkv() {
  static const DecodeVariant v = [] {
    DecodeVariant d;
    d.min_compute_capability = 80;
    d.dtype_mask = dtype_bit(DType::f16) | dtype_bit(DType::bf16);
    d.head_dims = DecodeHeadDims::data();
    d.num_head_dims = DecodeHeadDims::size();
    d.alignment = 16;
    d.features = kAllFeatures | kFeatureVarlen;
    d.check = check;
    d.choose_splits = choose_splits;
    d.workspace_bytes = workspace_bytes;
    d.run = run;
    return d;
  }();
  return &v;
}

}  // namespace flash::detail
