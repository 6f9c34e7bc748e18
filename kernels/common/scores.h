// What happens to the raw scores S = Q K^T between the product and the
// softmax, in one place for every kernel: the softmax scale, the softcap
// (Gemma 2, Grok), ALiBi (BLOOM, MPT) and the sink logit (gpt-oss).
//
// The kernels keep scores in "score units" u and fold the rest into the
// softmax's exp2 (one FFMA per element): exp2_scale() is what exp2
// multiplies u by, lse_scale() turns a row max of u into natural-log units.
//   no softcap:   u = q.k                       exp2_scale = scale log2(e)
//   softcap c:    u = tanh(scale q.k / c)       exp2_scale = c log2(e)
//   ALiBi:        u -= slope / lse_scale * |row + diag - key|
// apply() runs before the mask (which writes -inf), so a new score rule is an
// edit here (apply_transposed() and apply_grad_transposed() are the same
// rules on fragments with keys as rows, bwd_03's S^T, through the same
// private code); the sink joins each row's denominator once, in the
// epilogue (add_sink in common/online_softmax.cuh), and needs nothing per
// element.
// Without a softcap or ALiBi apply() is one uniform branch per tile.
#pragma once

#include <cmath>
#include <type_traits>

#include "common/constants.h"
#include "common/params.h"

namespace flash::detail {

// tanh(x) for the fragment paths: one MUFU.TANH (tanh.approx.f32, relative
// error ~2^-11; saturates to +-1). Until 2026-11-24 this was 1 - 2 / (1 +
// 2^(2x log2 e)), ~1e-7 absolute but two MUFU operations and three FMA-pipe
// ones per score; the softcap's error c * 2^-11 |t| is below the dtype's own
// rounding of the capped score, which the reference's low-precision model
// takes under a softcap as FlashAttention's reference does (src/reference.cpp).
// The scalar rungs (score(), the f32 path) keep tanhf.
FLASH_HOST_DEVICE float softcap_tanh(float x) {
#ifdef __CUDA_ARCH__
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(x));
  return t;
#else
  return std::tanh(x);
#endif
}

// log2(x) by MUFU.LG2 (-inf for 0), where the backward recovers a score
// from its probability.
FLASH_HOST_DEVICE float fast_log2(float x) {
#ifdef __CUDA_ARCH__
  float y;
  asm("lg2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return std::log2(x);
#endif
}

// A view of the params plus what one (batch, head) adds: kernels build it
// once per tile of work (b, h known), so the flags and scales stay operands
// in the kernel's constant bank and only the ALiBi slope takes a register.
struct ScoreMod {
  const AttnProblem& p;
  float slope = 0.0f;  // ALiBi slope in score units (slope / lse_scale); 0: none
  int diag = 0;        // seqlen_k - seqlen_q of the sequence: ALiBi's distance is |row + diag - key|

  // For kernels and epilogues that need only the units.
  FLASH_HOST_DEVICE explicit ScoreMod(const AttnProblem& params) : p(params) {}
  // Query head h of sequence b, whose keys are aligned by diag.
  FLASH_HOST_DEVICE ScoreMod(const AttnProblem& params, int b, int h, int diag_)
      : p(params), slope(alibi_slope(params, b, h)), diag(diag_) {}
  // The same with the slope already looked up (alibi_slope).
  FLASH_HOST_DEVICE ScoreMod(const AttnProblem& params, float slope_, int diag_)
      : p(params), slope(slope_), diag(diag_) {}

  // ALiBi slope of (b, h) in score units; 0 without ALiBi.
  FLASH_HOST_DEVICE static float alibi_slope(const AttnProblem& p, int b, int h) {
    if (p.scores.alibi == nullptr) return 0.0f;
    return p.scores.alibi[b * p.scores.alibi_batch_stride + h * p.scores.alibi_head_stride] / p.score_lse;
  }
  // The sink logit of query head h in natural-log units; -inf without sinks.
  FLASH_HOST_DEVICE static float sink(const AttnProblem& p, int h) {
    return p.scores.sinks == nullptr ? -INFINITY : p.scores.sinks[h * p.scores.sinks_stride];
  }

  FLASH_HOST_DEVICE float exp2_scale() const { return p.score_exp2; }
  FLASH_HOST_DEVICE float lse_scale() const { return p.score_lse; }
  FLASH_HOST_DEVICE bool capped() const { return p.scores.softcap > 0.0f; }

  // One raw score of row `row` and key `key`, for kernels that handle scores
  // one at a time (fwd_01, fwd_02, bwd_01); *dcap (when given) gets the
  // softcap's derivative factor 1 - tanh^2 (1 without a softcap).
  FLASH_HOST_DEVICE float score(float raw, int row, int key, float* dcap = nullptr) const {
    float u = raw;
    if (capped()) {
      u = tanhf(raw * p.softcap_in);
      if (dcap != nullptr) *dcap = 1.0f - u * u;
    } else if (dcap != nullptr) {
      *dcap = 1.0f;
    }
    if (slope != 0.0f) u -= slope * fabsf(static_cast<float>(row - key + diag));
    return u;
  }

  // The scores of an m16n8 accumulator fragment (mma.sync and wgmma share the
  // layout; see Mask::apply): element e of n-tile nt in m-tile mt is row
  // row_of(mt, e / 2), key n0 + 8 nt + 2 (lane % 4) + e % 2. slope_of(mt, half)
  // gives each fragment row's slope (decode packs several heads in a tile).
  template <int kMTiles, int kNTiles, class RowOf, class SlopeOf>
  FLASH_HOST_DEVICE void apply(float (&s)[kMTiles][kNTiles][4], int n0, int lane, RowOf&& row_of,
                               SlopeOf&& slope_of) const {
    cap_and_bias(s, n0, lane, [&](int mt, int half) { return row_of(mt, half) + diag; }, slope_of);
  }
  template <int kMTiles, int kNTiles, class RowOf>
  FLASH_HOST_DEVICE void apply(float (&s)[kMTiles][kNTiles][4], int n0, int lane, RowOf&& row_of) const {
    apply(s, n0, lane, row_of, [&](int, int) { return slope; });
  }
  // The common case: a warp's rows start at row0, 16 per m-tile, and the
  // lane holds rows g and g + 8 of each (g = lane / 4).
  template <int kMTiles, int kNTiles>
  FLASH_HOST_DEVICE void apply(float (&s)[kMTiles][kNTiles][4], int row0, int n0, int lane) const {
    const int g = lane / 4;
    apply(s, n0, lane, [&](int mt, int half) { return row0 + mt * 16 + g + 8 * half; });
  }

  // The same on a transposed fragment, S^T = K Q^T (the backward with keys
  // on wgmma's M axis, bwd_03; see Mask::apply_transposed): fragment rows are
  // keys, columns queries. Element e of n-tile nt in m-tile mt holds key
  // key_of(mt, e / 2) and query m0 + 8 nt + 2 (lane % 4) + e % 2; the tile is
  // one query head's (one slope).
  template <int kMTiles, int kNTiles, class KeyOf>
  FLASH_HOST_DEVICE void apply_transposed(float (&s)[kMTiles][kNTiles][4], int m0, int lane, KeyOf&& key_of) const {
    cap_and_bias(s, m0, lane, [&](int mt, int half) { return key_of(mt, half) - diag; }, [&](int, int) { return slope; });
  }
  // A warp's keys start at key0, 16 per m-tile (lane: keys g and g + 8).
  template <int kMTiles, int kNTiles>
  FLASH_HOST_DEVICE void apply_transposed(float (&s)[kMTiles][kNTiles][4], int key0, int m0, int lane) const {
    const int g = lane / 4;
    apply_transposed(s, m0, lane, [&](int mt, int half) { return key0 + mt * 16 + g + 8 * half; });
  }

  // The backward: dS (from P (dP - rowsum(dO O))) times the softcap's
  // derivative 1 - t^2, t = tanh(scale q.k / c), for a fragment of dS and
  // its P. t is recovered from P rather than kept from the forward pass of
  // the tile (no second fragment of live registers): u = (log2 P + lse2) /
  // exp2_scale, t = u + the ALiBi bias; P = 0 (masked or underflowed) gives
  // dS = 0 either way, so t is clamped to [-1, 1]. lse2_of(mt, half) is the
  // row's LSE * log2(e). A no-op without a softcap.
  template <int kMTiles, int kNTiles, class RowOf, class Lse2Of>
  FLASH_HOST_DEVICE void apply_grad(float (&ds)[kMTiles][kNTiles][4], const float (&prob)[kMTiles][kNTiles][4],
                                    int n0, int lane, RowOf&& row_of, Lse2Of&& lse2_of) const {
    times_cap_derivative(ds, prob, n0, lane, [&](int mt, int half) { return row_of(mt, half) + diag; },
                         [&](int mt, int half) {
                           const float lse2 = lse2_of(mt, half);  // one per fragment row
                           return [lse2](int, int) { return lse2; };
                         });
  }
  template <int kMTiles, int kNTiles, class Lse2Of>
  FLASH_HOST_DEVICE void apply_grad(float (&ds)[kMTiles][kNTiles][4], const float (&prob)[kMTiles][kNTiles][4],
                                    int row0, int n0, int lane, Lse2Of&& lse2_of) const {
    const int g = lane / 4;
    apply_grad(ds, prob, n0, lane, [&](int mt, int half) { return row0 + mt * 16 + g + 8 * half; }, lse2_of);
  }

  // The same on transposed fragments of dS^T and P^T (keys as rows, as in
  // apply_transposed): the LSE now varies along the columns, and
  // lse2_of(nt, e) is the LSE * log2(e) of query m0 + 8 nt + 2 (lane % 4) + e.
  template <int kMTiles, int kNTiles, class KeyOf, class Lse2Of>
  FLASH_HOST_DEVICE void apply_grad_transposed(float (&ds)[kMTiles][kNTiles][4],
                                               const float (&prob)[kMTiles][kNTiles][4], int m0, int lane,
                                               KeyOf&& key_of, Lse2Of&& lse2_of) const {
    times_cap_derivative(ds, prob, m0, lane, [&](int mt, int half) { return key_of(mt, half) - diag; },
                         [&](int, int) { return [&](int nt, int e) { return lse2_of(nt, e); }; });
  }
  // A warp's keys start at key0, 16 per m-tile (lane: keys g and g + 8).
  template <int kMTiles, int kNTiles, class Lse2Of>
  FLASH_HOST_DEVICE void apply_grad_transposed(float (&ds)[kMTiles][kNTiles][4],
                                               const float (&prob)[kMTiles][kNTiles][4], int key0, int m0, int lane,
                                               Lse2Of&& lse2_of) const {
    const int g = lane / 4;
    apply_grad_transposed(ds, prob, m0, lane, [&](int mt, int half) { return key0 + mt * 16 + g + 8 * half; }, lse2_of);
  }

 private:
  // The rules of apply() and apply_grad(), for either layout. Columns are
  // col0 + 8 nt + 2 (lane % 4) + e (keys, or queries when transposed), and
  // ALiBi's distance |query + diag - key| is measured along a fragment row
  // from its diagonal column diag_col_of(mt, half), the column at distance 0:
  // key row + diag for query row `row`, or query key - diag for key `key`.
  template <int kMTiles, int kNTiles, class DiagColOf, class SlopeOf>
  FLASH_HOST_DEVICE void cap_and_bias(float (&s)[kMTiles][kNTiles][4], int col0, int lane, DiagColOf&& diag_col_of,
                                      SlopeOf&& slope_of) const {
    if (capped()) {
      const float in = p.softcap_in;
FLASH_UNROLL
      for (int mt = 0; mt < kMTiles; ++mt)
FLASH_UNROLL
        for (int nt = 0; nt < kNTiles; ++nt)
FLASH_UNROLL
          for (int e = 0; e < 4; ++e) s[mt][nt][e] = softcap_tanh(s[mt][nt][e] * in);
    }
    if (p.scores.alibi != nullptr) {
      const int base = col0 + 2 * (lane % 4);
FLASH_UNROLL
      for (int mt = 0; mt < kMTiles; ++mt)
FLASH_UNROLL
        for (int half = 0; half < 2; ++half) {
          // distance = |d0 - (8 nt + e)|, d0 = diagonal column - base
          const float d0 = static_cast<float>(diag_col_of(mt, half) - base), sl = slope_of(mt, half);
FLASH_UNROLL
          for (int nt = 0; nt < kNTiles; ++nt)
FLASH_UNROLL
            for (int e = 0; e < 2; ++e)
              s[mt][nt][2 * half + e] -= sl * fabsf(d0 - static_cast<float>(nt * 8 + e));
        }
    }
  }
  // lse2_of(mt, half) gives fragment row (mt, half)'s LSE lookup, a callable
  // of (nt, e): one value per row, or one per column when transposed.
  template <int kMTiles, int kNTiles, class DiagColOf, class Lse2Of>
  FLASH_HOST_DEVICE void times_cap_derivative(float (&ds)[kMTiles][kNTiles][4],
                                              const float (&prob)[kMTiles][kNTiles][4], int col0, int lane,
                                              DiagColOf&& diag_col_of, Lse2Of&& lse2_of) const {
    if (!capped()) return;
    const float inv_e2 = 1.0f / p.score_exp2;
    const int base = col0 + 2 * (lane % 4);
FLASH_UNROLL
    for (int mt = 0; mt < kMTiles; ++mt)
FLASH_UNROLL
      for (int half = 0; half < 2; ++half) {
        const auto lse2 = lse2_of(mt, half);
        const float d0 = static_cast<float>(diag_col_of(mt, half) - base);
FLASH_UNROLL
        for (int nt = 0; nt < kNTiles; ++nt)
FLASH_UNROLL
          for (int e = 0; e < 2; ++e) {
            const int i = 2 * half + e;
            float t = (fast_log2(prob[mt][nt][i]) + lse2(nt, e)) * inv_e2;
            if (slope != 0.0f) t += slope * fabsf(d0 - static_cast<float>(nt * 8 + e));
            t = fminf(fmaxf(t, -1.0f), 1.0f);
            ds[mt][nt][i] *= 1.0f - t * t;
          }
      }
  }
};

// Calls f(std::true_type) when the call has a softcap or ALiBi, else
// f(std::false_type): kernels take it as a template flag (kMods) and compile
// apply()/apply_grad() only into the kernel that needs them. As runtime
// branches inside the key loop, with both off, they cost the forward rungs
// and the backward 2-6% (A/B against 212efaf, docs/NOTES.md).
template <class F> decltype(auto) dispatch_score_mods(const AttnProblem& p, F&& f) {
  if (p.has_score_mods()) return f(std::true_type{});
  return f(std::false_type{});
}

}  // namespace flash::detail
