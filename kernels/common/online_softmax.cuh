// Online softmax over mma.m16n8k16 accumulators (FlashAttention-2).
//
// A warp owns 16 * kMTiles query rows. In the accumulator layout each thread
// holds two rows per m-tile (g and g + 8), as elements 0, 1 and 2, 3 of every
// n-tile; the four threads of a quad (lanes 4g .. 4g + 3) share those rows,
// so a row reduction is two shuffles. Scores stay in raw units; the softmax
// scale is folded into exp2: exp(scale * (s - m)) = exp2(s * c - m * c) with
// c = scale * log2(e), one FFMA per element.
#pragma once

#include <cmath>

namespace flash::detail {

// 2^x by the MUFU.EX2 instruction, flushing subnormal results to zero: what
// exp2f becomes under --use_fast_math, without its extra range handling.
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// The natural-log LSE of a row from its max in natural-log units (raw max *
// ScoreMod::lse_scale()) and its sum of exponentials relative to that max;
// -inf for a row that saw no key (sum 0). The split-KV combine ends here
// (kv_cache.cuh); OnlineSoftmax::finalize, on every forward tile's critical
// path, takes the same formula with MUFU's log (session 43).
__device__ __forceinline__ float row_lse(float row_max_scaled, float sum) {
  return sum > 0.0f ? row_max_scaled + logf(sum) : -INFINITY;
}

// Folds a sink logit (natural log; -inf: none) into a finished row: the LSE
// becomes log(exp(lse) + exp(sink)) and the returned factor, exp(old lse -
// new lse) = 1 / (1 + exp(sink - lse)), is what O (normalized without the
// sink) is multiplied by. A row that saw no key (lse -inf) gets factor 0 and
// LSE = sink. Every kernel's epilogue calls it once per row.
__device__ __forceinline__ float add_sink(float& lse, float sink) {
  if (sink == -INFINITY) return 1.0f;
  const float factor = 1.0f / (1.0f + expf(sink - lse));
  lse = fmaxf(lse, sink) + log1pf(expf(-fabsf(lse - sink)));
  return factor;
}

// Whether OnlineSoftmax::probs takes a tile's row max as a tree
// (tile_row_max): for 128-key tiles (16 n-tiles of 8 keys) and wider.
template <int kNTilesS> inline constexpr bool kTreeMax = kNTilesS >= 16;

// probs()'s default after_row: nothing.
struct NoHook {
  __device__ __forceinline__ void operator()(int) const {}
};

template <int kMTiles> struct OnlineSoftmax {
  static constexpr int kRows = 2 * kMTiles;  // rows per thread: (m-tile, half)
  float row_max[kRows];
  float row_sum[kRows];  // this thread's partial sum; quad-reduced in finalize()

  __device__ __forceinline__ OnlineSoftmax() {
#pragma unroll
    for (int r = 0; r < kRows; ++r) row_max[r] = -INFINITY, row_sum[r] = 0.0f;
  }

  // Turns the scores of one K/V tile into probabilities P (in place, relative
  // to the new running max) and rescales the O accumulator rows by
  // exp2((old max - new max) * c).
  template <int kNTilesS, int kNTilesO>
  __device__ __forceinline__ void update(float (&s)[kMTiles][kNTilesS][4], float (&o)[kMTiles][kNTilesO][4],
                                         float scale_log2) {
    float rescale[kRows];
    probs(s, scale_log2, rescale);
    rescale_o(o, rescale);
  }

  // update() in two halves, for kernels whose O accumulator may still be an
  // operand of a running wgmma (fa3_forward.cuh): probs() turns the scores
  // into P and returns each row's rescale factor without touching O;
  // rescale_o() applies the factors once O is safe to change.
  //
  // kLazy (FlashAttention-4's conditional rescaling): a row keeps its old
  // max as the reference unless the tile's max exceeds it by more than
  // kLazyRescaleLog2 (exp2 units), so P may reach 2^8 (fp32, bf16 and fp16
  // all hold it) and the row's rescale factor is 1. probs() then returns
  // whether any of this thread's rows took a new reference; a caller that
  // finds none in its warp (__any_sync) skips rescale_o(). Exact either
  // way: the LSE is the reference plus log of the sum, whatever the
  // reference is.
  static constexpr float kLazyRescaleLog2 = 8.0f;

  // after_row(r) is called once row r's exponentials are summed: the
  // forward's steady loop waits there for its own P V (fa3_forward.cuh,
  // kFa3PvPin), so that the rows after the wait run beside P's conversion
  // to its A operand. kRefsFirst: every row's reference before any
  // exponential (a wait before row 1's then has row 0's max behind it, not
  // in front); else row by row, each row's max beside the previous row's
  // exponentials.
  template <bool kLazy = false, bool kRefsFirst = false, int kNTilesS, class AfterRow = NoHook>
  __device__ __forceinline__ bool probs(float (&s)[kMTiles][kNTilesS][4], float scale_log2, float (&rescale)[kRows],
                                        AfterRow&& after_row = {}) {
    bool moved = false;
    float max_scaled[kRows] = {};  // (set below; initialised for nvcc's #549, which the lambda trips)
    const auto exps = [&](int mt, int half) {
      const int r = 2 * mt + half;
      row_sum[r] = row_sum[r] * rescale[r] + exp_row<kTreeMax<kNTilesS>>(s[mt], half, scale_log2, max_scaled[r]);
      after_row(r);
    };
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = 2 * mt + half;
        float tile_max = -INFINITY;
        if constexpr (kTreeMax<kNTilesS>) {
          tile_max = tile_row_max(s[mt], half);
        } else {
#pragma unroll
          for (int nt = 0; nt < kNTilesS; ++nt) tile_max = fmaxf(tile_max, fmaxf(s[mt][nt][2 * half], s[mt][nt][2 * half + 1]));
        }
        float new_max = fmaxf(row_max[r], quad_max(tile_max));
        if constexpr (kLazy) {
          // -inf -> finite: +inf, takes it; both -inf: NaN, keeps -inf.
          const bool move = (new_max - row_max[r]) * scale_log2 > kLazyRescaleLog2;
          new_max = move ? new_max : row_max[r];
          moved |= move;
        }
        // A row that has seen only masked keys keeps max -inf: subtract 0 so
        // exp2 gets -inf (-> 0) instead of NaN from -inf - (-inf).
        max_scaled[r] = new_max == -INFINITY ? 0.0f : new_max * scale_log2;
        rescale[r] = fast_exp2(row_max[r] * scale_log2 - max_scaled[r]);
        row_max[r] = new_max;
        if constexpr (!kRefsFirst) exps(mt, half);
      }
    if constexpr (kRefsFirst) {
#pragma unroll
      for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
        for (int half = 0; half < 2; ++half) exps(mt, half);
    }
    return moved;
  }
  // One row (half) of a tile's scores turned into exp2(s * c - max_scaled),
  // in place; returns their sum. kFirstTerm: the first term starts the sum
  // (0 + x is x, one FADD less a row).
  template <bool kFirstTerm, int kNTilesS>
  __device__ __forceinline__ static float exp_row(float (&s)[kNTilesS][4], int half, float scale_log2,
                                                  float max_scaled) {
    float tile_sum = 0.0f;
#pragma unroll
    for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
      for (int e = 2 * half; e < 2 * half + 2; ++e) {
        s[nt][e] = fast_exp2(fmaf(s[nt][e], scale_log2, -max_scaled));
        tile_sum = kFirstTerm && nt == 0 && e == 2 * half ? s[nt][e] : tile_sum + s[nt][e];
      }
    return tile_sum;
  }
  // This thread's max of one row (half: elements 2 half, 2 half + 1 of each
  // n-tile) of a tile. kAcc partial maxima over interleaved n-tiles, then a
  // tree: a dependent chain of kNTilesS / kAcc + 2 FMNMX instead of
  // kNTilesS + 1 (one running max from -inf), so the two rows' chains and
  // the FFMAs behind them overlap. The max is exact in any order, so P, O
  // and the LSE are bitwise the same. Why (ncu source page, session 35,
  // fwd_09 hdim 128 full 16k): the single chain put row 0's max, then row
  // 1's, in front of every exp2 (FA4 keeps six partial maxima). Measured
  // (H200, two rounds against the single chain): 128-key tiles (kNTilesS
  // 16, hdim 64 / 128) full 16k / 8k +1.1% / +0.9%, causal 16k / 4k +0.4% /
  // +0.9%, hdim 64 causal 8k +1.3%, varlen +0.7%, short or capped calls -0.2
  // to -1.1%; hdim 256's 80-key tiles -3.4% full 8k, so kTreeMax keeps the
  // single chain below 16 n-tiles (those kernels' SASS is unchanged).
  template <int kNTilesS> __device__ __forceinline__ static float tile_row_max(const float (&s)[kNTilesS][4], int half) {
    constexpr int kAcc = kNTilesS < 4 ? kNTilesS : 4;
    float part[kAcc];
#pragma unroll
    for (int a = 0; a < kAcc; ++a) part[a] = fmaxf(s[a][2 * half], s[a][2 * half + 1]);
#pragma unroll
    for (int nt = kAcc; nt < kNTilesS; ++nt) part[nt % kAcc] = fmaxf(part[nt % kAcc], fmaxf(s[nt][2 * half], s[nt][2 * half + 1]));
#pragma unroll
    for (int w = kAcc; w > 1; w = (w + 1) / 2)
#pragma unroll
      for (int a = 0; a < w / 2; ++a) part[a] = fmaxf(part[a], part[a + (w + 1) / 2]);
    return part[0];
  }

  // Scores with an upper bound known before the product (a softcap: u <= 1
  // whatever q.k) need no running max once every row's reference is within
  // `headroom` (exp2 units) of the bound: no later tile can then move it by
  // more, so the row keeps its reference for good and later tiles take
  // P = exp2((u - reference) * c) directly (probs_bounded: no max, no
  // compare, no rescale), P <= 2^headroom. The reference stays the one the
  // running max gave (a row's first maximum is P = 1 exactly: a row of one
  // key then gives O = v exactly, which a reference moved to the bound did
  // not, session 20).
  __device__ __forceinline__ bool can_freeze(float bound, float scale_log2, float headroom) const {
    bool ok = true;
#pragma unroll
    for (int r = 0; r < kRows; ++r) ok = ok && (bound - row_max[r]) * scale_log2 <= headroom;  // -inf rows may not
    return ok;
  }
  // probs() for frozen rows: the reference is fixed, O needs no rescale.
  template <int kNTilesS>
  __device__ __forceinline__ void probs_bounded(float (&s)[kMTiles][kNTilesS][4], float scale_log2) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = 2 * mt + half;
        row_sum[r] += exp_row<true>(s[mt], half, scale_log2, row_max[r] * scale_log2);
      }
  }

  template <int kNTilesO>
  __device__ __forceinline__ void rescale_o(float (&o)[kMTiles][kNTilesO][4], const float (&rescale)[kRows]) {
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half)
#pragma unroll
        for (int nt = 0; nt < kNTilesO; ++nt)
          o[mt][nt][2 * half] *= rescale[2 * mt + half], o[mt][nt][2 * half + 1] *= rescale[2 * mt + half];
  }

  // Reduces the row sums over the quad, scales O by 1 / row_sum (0 for rows
  // that saw no key) and returns each row's LSE (natural log) in lse[];
  // `sink` (natural log, -inf: none) joins every row's denominator (add_sink).
  //
  // This chain (quad sums, log, reciprocal, O scaled) opens every tile's
  // epilogue, and in the Hopper pingpong that epilogue sits on the tensor
  // pipe's critical path at each tile boundary. So the rows' chains are
  // issued side by side and without branches, on MUFU: lg2.approx and
  // rcp.approx (relative errors ~2^-22, far below the LSE bound of
  // testing.h and the rounding of O to bf16 / fp16; FlashAttention-3 does
  // the same). A row's sum is 0 if it saw no key, else well inside
  // [2^-64, 2^64] (its max's exp2 relative to the reference: 1, up to 2^8
  // under a lazy reference, >= 2^-64 under a frozen softcap one), where
  // both are accurate to ~2^-22 without special cases. H200, hdim
  // 128 walk (session 43's clock64 trace): logf and the IEEE division,
  // each behind a branch, ran the two rows one after the other in ~930
  // cycles of a ~1900-cycle epilogue.
  template <int kNTilesO>
  __device__ __forceinline__ void finalize(float (&o)[kMTiles][kNTilesO][4], float scale, float (&lse)[kRows],
                                           float sink = -INFINITY) {
    float sum[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) sum[r] = quad_sum(row_sum[r]);
#pragma unroll
    for (int mt = 0; mt < kMTiles; ++mt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = 2 * mt + half;
        const bool seen = sum[r] > 0.0f;
        lse[r] = seen ? row_max[r] * scale + __logf(sum[r]) : -INFINITY;
        const float inv = (seen ? __fdividef(1.0f, sum[r]) : 0.0f) * add_sink(lse[r], sink);
#pragma unroll
        for (int nt = 0; nt < kNTilesO; ++nt) o[mt][nt][2 * half] *= inv, o[mt][nt][2 * half + 1] *= inv;
      }
  }
};

}  // namespace flash::detail
