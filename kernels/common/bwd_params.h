// BwdParams and BwdVariant: what a backward kernel needs and what a backward
// translation unit tells the registry. Host-compilable: src/ fills them,
// kernels/ read them.
#pragma once

#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/params.h"
#include "common/variant.h"
#include "flash/tensor.h"

namespace flash::detail {

// Per-row workspace arrays are padded to a multiple of this many rows, so a
// kernel may read whole tiles of them without a bounds check.
inline constexpr int kBwdRowPad = 128;
// Deterministic dQ accumulation with an ordering counter per tile of this
// many rows of the row arrays (bwd_03's query tiles).
inline constexpr int kBwdDqTileRows = 64;
static_assert(kBwdRowPad % kBwdDqTileRows == 0, "a (sequence, head)'s padded rows are whole counter tiles");

// A backward CTA's key block, KV head and batch (grid: key blocks, KV heads,
// batch).
struct BwdCta {
  int n_block, h_kv, b;
};
// The backward's launch order in groups of (KV head, batch) pairs: block
// (x, y, z) of a (blocks, heads, batch) grid, whose linear index is
// x + blocks p with p = y + heads z, takes (KV head, batch) pair
// group_size g + (its place in group g = p / group_size) % (the group's
// pairs) and key block place / (the group's pairs), or blocks - 1 - that
// when `descending`, the place being x + blocks (p % group_size): each
// pair's key blocks in ascending (descending) order of linear index, the
// group's pairs interleaved (group_size 1: pair p, key block x, or
// blocks - 1 - x). All in 32 bits (the linear index itself may pass 2^32).
// Deterministic mode takes them descending (common/hopper/bwd_tma.cuh,
// BwdDqOrder, says why); masked non-deterministic calls ascending in groups
// of 2 (BwdParams::head_group says why).
__host__ __device__ constexpr BwdCta bwd_grouped_cta(unsigned x, unsigned y, unsigned z, unsigned blocks, unsigned heads,
                                                     unsigned batch, unsigned group_size, bool descending) {
  const unsigned p = y + heads * z, pairs = heads * batch, group = p / group_size;
  const unsigned place = x + blocks * (p % group_size);
  const unsigned left = pairs - group * group_size;
  const unsigned size = left < group_size ? left : group_size;  // the last group may be smaller
  const unsigned pair = group * group_size + place % size;
  const unsigned n = place / size;
  return {static_cast<int>(descending ? blocks - 1 - n : n), static_cast<int>(pair % heads), static_cast<int>(pair / heads)};
}

// The span of a dense backward grid whose CTAs (one per key block and pair)
// take cta_time[n] each (key block n's steps, in any unit, plus its edges),
// handed out in launch order to `sms` SMs, each SM taking the next CTA when
// its last one ends (one CTA an SM): the order of bwd_grouped_cta, key blocks
// ascending, in groups of group_size pairs. A list-scheduling replay: fed
// the durations that per-CTA stamps measured (session 63, H200), it
// reproduces the measured spans of bwd_03's grids within 0.1%.
inline long long bwd_replay_span(const long long* cta_time, int blocks, int pairs, int group_size, int sms) {
  std::vector<long long> free_at(static_cast<std::size_t>(sms), 0);  // a min-heap of when each SM is free
  const auto later = [](long long a, long long b) { return a > b; };
  long long span = 0;
  for (int g = 0; g < pairs; g += group_size) {
    const int size = std::min(group_size, pairs - g);
    for (int n = 0; n < blocks; ++n)
      for (int k = 0; k < size; ++k) {
        std::pop_heap(free_at.begin(), free_at.end(), later);
        free_at.back() += cta_time[n];
        span = std::max(span, free_at.back());
        std::push_heap(free_at.begin(), free_at.end(), later);
      }
  }
  return span;
}

// Whether row i (of a sequence with this Mask, padding rows included) of a
// backward's fp32 dQ accumulator needs a zero from the preprocess: every row
// when the accumulator is added to from zero (tile_rows 0); in deterministic
// calls (tile_rows = BwdParams::dq_zero_tile_rows) the rows of the
// accumulator tiles whose rows see no key: a tile some key block sees is
// written whole by its first adder's store, and the floats of a tile are in
// the variant's fragment order, so zeros must cover whole tiles. Rows of
// tiles past seqlen_q are never read. (tests/test_backward_api.cpp checks
// that zeros and stores cover every tile the convert reads.)
FLASH_HOST_DEVICE bool bwd_dq_row_needs_zero(const Mask& mask, int i, int tile_rows) {
  if (tile_rows == 0) return true;
  const int t0 = i / tile_rows * tile_rows;
  if (t0 >= mask.seqlen_q) return false;
  const RowBlockKeys keys = mask.row_block(t0, tile_rows);
  return keys.any_end <= keys.any_begin;
}

struct BwdParams : AttnParams {
  // The forward's LSE (AttnParams::lse, fp32, read here), dO and the gradients.
  const void* dout = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  std::int64_t do_batch_stride = 0, do_row_stride = 0, do_head_stride = 0;
  std::int64_t dq_batch_stride = 0, dq_row_stride = 0, dq_head_stride = 0;
  std::int64_t dk_batch_stride = 0, dk_row_stride = 0, dk_head_stride = 0;
  std::int64_t dv_batch_stride = 0, dv_row_stride = 0, dv_head_stride = 0;

  bool deterministic = false;
  // Deterministic mode's head groups (bwd_grouped_cta): 1, or 2 where
  // the rung measured them faster (bwd_03, calls without a mask).
  int det_head_group = 1;
  // Non-deterministic calls' head groups (bwd_grouped_cta, key blocks
  // ascending): 1 is the grid's own order, pair after pair, or 2
  // (bwd_head_group says when).
  int head_group = 1;
  // Optional fp32 [heads_q] output: the gradient of the sinks (ScoreSpec::sinks).
  float* dsinks = nullptr;
  std::int64_t dsinks_stride = 0;

  // Variable-length calls: AttnParams::total_q / total_k are the packed rows
  // of q (and o, dout, dq) and of k (and v, dk, dv).

  // The workspace, carved by bind_bwd_workspace(): per (sequence, head_q)
  // row arrays, each padded to whole kBwdRowPad-row tiles (ws_row0 says
  // where one starts):
  int seqlen_q_pad = 0;           // dense: rows per (batch, head), seqlen_q padded
  int ws_seq_pad = kBwdRowPad;    // variable-length: rows added per sequence (bwd_ws_seq_pad)
  std::int64_t ws_head_rows = 0;  // variable-length: rows per head (bwd_ws_rows)
  float* lse_log2 = nullptr;  // LSE * log2(e); +inf for rows that see no key and for the padding (P = 0 there)
  float* dpsum = nullptr;     // rowsum(dO * O); 0 in the padding
  // fp32, when the variant accumulates dQ: head_dim floats per row of the
  // row arrays, each (sequence, head) a contiguous block whose order within
  // is the variant's (the mma variant keeps its fragment order).
  float* dq_accum = nullptr;
  // int32, when the variant orders its dQ additions (deterministic mode of
  // bwd_03): one counter per kBwdDqTileRows rows of the row arrays (the
  // tile of row r is r / kBwdDqTileRows), zeroed by the preprocess.
  int* dq_semaphore = nullptr;
  // Deterministic calls of the Hopper rungs: the height of the accumulator's
  // tiles (its order's unit: 64 rows, or bwd_03's 80-row steps). Each tile's
  // first adder stores instead of adding (common/hopper/bwd_tma.cuh,
  // BwdDqOrder), so the preprocess zeroes only the tiles no key block
  // sees. 0: the preprocess zeroes the whole accumulator.
  int dq_zero_tile_rows = 0;
  // int32, with dq_accum: per (batch, KV head), the dkv CTAs that finished
  // (every write of theirs released), zeroed with dq_accum; and the count
  // that means all of them, which the Hopper rungs' dQ convert waits for
  // (0: it does not wait, and the dkv CTAs do not count themselves;
  // common/hopper/bwd_tma.cuh, bwd_tma_run).
  int* kv_done = nullptr;
  int kv_done_target = 0;

  // Sequence b's offsets of dO, dQ, dK and dV (seq_span's, for the gradients).
  struct GradSpan {
    std::int64_t dout, dq, dk, dv;
  };
  FLASH_HOST_DEVICE GradSpan grad_span(int b) const {
    if (cu_seqlens_q == nullptr) return {b * do_batch_stride, b * dq_batch_stride, b * dk_batch_stride, b * dv_batch_stride};
    const int q0 = cu_seqlens_q[b], k0 = cu_seqlens_k[b];
    return {q0 * do_row_stride, q0 * dq_row_stride, k0 * dk_row_stride, k0 * dv_row_stride};
  }

  // Where row 0 of (sequence b, query head h) sits in the row arrays; q0 is
  // the sequence's first packed row (seq_span(b).lse_row0, 0 when dense).
  // Dense: (b * heads_q + h) * seqlen_q_pad. Variable-length: each head
  // holds the sequences in order, sequence b from q0 rounded up to a whole
  // tile plus one tile per sequence before it, so that its padded rows end
  // before the next one starts (FlashAttention-2's cu_seqlens_q[b] + 128 b).
  // seq_pad: the rows each sequence adds, ws_seq_pad (bwd_ws_seq_pad), which
  // variable-length code passes; it is one tile (the default) except for
  // bwd_03's 80-row steps, so dense-only callers, whose kernels never take
  // this branch, keep the constant.
  FLASH_HOST_DEVICE std::int64_t ws_row0(int b, int h, int q0, int seq_pad = kBwdRowPad) const {
    if (cu_seqlens_q == nullptr) return (static_cast<std::int64_t>(b) * heads_q + h) * seqlen_q_pad;
    return h * ws_head_rows + (static_cast<std::int64_t>(q0) + kBwdRowPad - 1) / kBwdRowPad * kBwdRowPad +
           static_cast<std::int64_t>(seq_pad) * b;
  }
};

// Rows each variable-length sequence adds to the row arrays, for a variant
// whose dense calls pad to row_pad rows: one kBwdRowPad tile where the
// variant's steps divide a tile; two where they do not (bwd_03's 80-row
// steps, row_pad 640), since a sequence's region then holds at least
// 128 * ceil((len + 1) / 128) + 128 >= len + 129 rows, and its last step
// and the convert's last 80-row tile end at most 79 rows past len.
constexpr int bwd_ws_seq_pad(int row_pad) { return row_pad == kBwdRowPad ? kBwdRowPad : 2 * kBwdRowPad; }
// Rows of each row array: dense, batch * heads_q * seqlen_q padded;
// variable-length, heads_q * (total_q padded + seq_pad * batch) (sequence
// b's padded rows end by cu_seqlens_q[b + 1] padded + seq_pad * (b + 1);
// see ws_row0).
inline std::int64_t bwd_ws_head_rows(const BwdParams& p, int seq_pad = kBwdRowPad) {
  return (static_cast<std::int64_t>(p.total_q) + kBwdRowPad - 1) / kBwdRowPad * kBwdRowPad +
         static_cast<std::int64_t>(seq_pad) * p.batch;
}
// Dense calls pad each (batch, head)'s rows to a multiple of row_pad (a
// multiple of kBwdRowPad: a variant whose steps are not a divisor of it, as
// bwd_03's 80-row steps, asks for more).
inline std::size_t bwd_ws_rows(const BwdParams& p, int row_pad = kBwdRowPad) {
  if (p.cu_seqlens_q != nullptr)
    return static_cast<std::size_t>(p.heads_q) * bwd_ws_head_rows(p, bwd_ws_seq_pad(row_pad));
  return static_cast<std::size_t>(p.batch) * p.heads_q *
         ((static_cast<std::size_t>(p.seqlen_q) + row_pad - 1) / row_pad * row_pad);
}
// The rows of the bound workspace (bind_bwd_workspace).
inline std::size_t bwd_bound_rows(const BwdParams& p) {
  if (p.cu_seqlens_q != nullptr) return static_cast<std::size_t>(p.heads_q) * p.ws_head_rows;
  return static_cast<std::size_t>(p.batch) * p.heads_q * p.seqlen_q_pad;
}

// BwdParams::kv_done's counters: one per (batch, KV head).
inline std::size_t bwd_kv_done_count(const BwdParams& p) { return static_cast<std::size_t>(p.batch) * p.heads_kv; }

// Workspace bytes for the per-row arrays, plus the fp32 dQ accumulator and
// its kv_done counters when with_dq_accum (right after it; the preprocess
// zeroes the accumulator, a memset the counters), plus its tiles' counters
// when with_dq_semaphore;
// 256-byte aligned pieces.
inline std::size_t bwd_workspace_bytes(const BwdParams& p, bool with_dq_accum, bool with_dq_semaphore = false,
                                       int row_pad = kBwdRowPad) {
  auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
  const std::size_t rows = bwd_ws_rows(p, row_pad);
  std::size_t bytes = 2 * align(rows * sizeof(float));
  if (with_dq_accum) bytes += align(rows * p.head_dim * sizeof(float)) + align(bwd_kv_done_count(p) * sizeof(int));
  if (with_dq_semaphore) bytes += align(rows / kBwdDqTileRows * sizeof(int));
  return bytes;
}

// Points p's workspace arrays into `ws` (bwd_workspace_bytes long, with the
// same flags and row_pad).
inline void bind_bwd_workspace(BwdParams& p, void* ws, bool with_dq_accum, bool with_dq_semaphore = false,
                               int row_pad = kBwdRowPad) {
  auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
  p.seqlen_q_pad = (p.seqlen_q + row_pad - 1) / row_pad * row_pad;
  p.ws_seq_pad = bwd_ws_seq_pad(row_pad);
  p.ws_head_rows = p.cu_seqlens_q != nullptr ? bwd_ws_head_rows(p, p.ws_seq_pad) : 0;
  const std::size_t rows = bwd_ws_rows(p, row_pad);
  char* base = static_cast<char*>(ws);
  p.lse_log2 = reinterpret_cast<float*>(base);
  p.dpsum = reinterpret_cast<float*>(base + align(rows * sizeof(float)));
  std::size_t next = 2 * align(rows * sizeof(float));
  p.dq_accum = with_dq_accum ? reinterpret_cast<float*>(base + next) : nullptr;
  if (with_dq_accum) next += align(rows * p.head_dim * sizeof(float));
  p.kv_done = with_dq_accum ? reinterpret_cast<int*>(base + next) : nullptr;
  if (with_dq_accum) next += align(bwd_kv_done_count(p) * sizeof(int));
  p.dq_semaphore = with_dq_semaphore ? reinterpret_cast<int*>(base + next) : nullptr;
}

// Non-deterministic dense calls whose CTAs differ in length (a mask bounded
// on one side at least) take the (KV head, batch) pairs two at a time
// (BwdParams::head_group = 2) where the replay of their grid
// (bwd_replay_span: each CTA its steps plus its edges) says that this
// order ends at least 3% sooner than the grid's own. Why: under a causal
// mask key block n of a pair walks T - n query tiles, and in the grid's
// order (pair after pair, each from its longest key block) the last pair's
// longest CTAs start at the grid's end and run alone. Per-CTA stamps
// (session 63, H200) put 5.1% of the SMs' time idle in the tail of hdim 128
// causal 8k (2.6% at hdim 64, 0.3% at 16k); two pairs interleaved start
// every pair's longest CTAs among its group's first and leave the last
// group's short ones for the tail. Measured (two calls, two rounds each):
// hdim 128 causal 8k +1.9% / +3.3% (replay +5.2%); but hdim 64 causal 8k
// -0.2% / -0.1% (replay +2.7%), and -0.1 to -0.6% at 16k, hdim 256 causal
// 8k and hdim 128 causal 4k (replay 0 to +1.3%), so the replay's gain,
// which overstates the measured one by about 2%, must reach 3% (hdim 128
// causal 8k then 1.018x FlashAttention-4's, session 63's call 7). Where the
// rule groups (call 10, the grid's order -> groups of 2): hdim 128 causal
// 8k +2.5%, with 4 KV heads (GQA 4: 8 pairs, replay +23%) +10.3%, hdim 256
// causal 4k +1.6% (replay +5.4%). The decision is cached per host thread
// for the last shape. Grids over 16384 CTAs keep the grid's order (the
// replay's cost; their tails weigh little). Set by bwd_tma_run
// (common/hopper/bwd_tma.cuh) for the rung's tiles.
inline constexpr int kBwdEdgeSteps2 = 3;  // a CTA's edges (~4 us: session 28's stamps), in half steps
template <int kBlockM, int kBlockN> int bwd_head_group(const BwdParams& p) {
  const Mask& m = p.call_mask;
  if (p.deterministic || p.cu_seqlens_q != nullptr || !(m.has_left || m.has_right)) return 1;
  const int blocks = (p.seqlen_k + kBlockN - 1) / kBlockN, pairs = p.heads_kv * p.batch;
  if (pairs < 2 || p.sm_count <= 0 || static_cast<long long>(blocks) * pairs > 16384) return 1;
  using Key = std::array<int, 10>;
  const Key key{p.seqlen_q, p.seqlen_k, m.left,       m.right, m.has_left * 2 + m.has_right,
                pairs,      p.group_size, p.sm_count, kBlockM, kBlockN};
  thread_local Key last{};
  thread_local int last_group = 1;
  if (key == last) return last_group;
  std::vector<long long> time(static_cast<std::size_t>(blocks));
  for (int n = 0; n < blocks; ++n)
    time[n] = 2LL * m.template query_tiles<kBlockM>(n * kBlockN, kBlockN).count() * p.group_size + kBwdEdgeSteps2;
  const long long grid = bwd_replay_span(time.data(), blocks, pairs, 1, p.sm_count);
  const long long two = bwd_replay_span(time.data(), blocks, pairs, 2, p.sm_count);
  last = key;
  last_group = two * 103 <= grid * 100 ? 2 : 1;
  return last_group;
}
using BwdVariant = Variant<BwdParams>;

}  // namespace flash::detail
