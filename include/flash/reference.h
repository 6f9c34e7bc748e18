// The fp64 CPU reference: plain, obviously-correct attention (forward and
// backward) on host vectors.
//
// A supported part of the installed API, in libflash with the rest: the
// library's tests, runner and bench check every kernel against it, and a
// user can check results the same way. It is exact in doubles and slow,
// O(batch * heads * seqlen_q * seqlen_k * head_dim) per call on the host's
// cores: meant for test-sized problems (forward() can compute a sample of
// the rows).
// flash/flash.h does not include it; include flash/reference.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "flash/tensor.h"

namespace flash::reference {

// Host tensors in BSHD layout, contiguous: q [batch, seqlen_q, heads_q, head_dim],
// k and v [batch, seqlen_k, heads_kv, head_dim].
struct Problem {
  int batch = 1;
  int seqlen_q = 1;
  int seqlen_k = 1;
  int heads_q = 1;
  int heads_kv = 1;
  int head_dim = 1;
  double softmax_scale = 1.0;
  bool causal = false;
  // Sliding window sides, as ForwardArgs::window_left / window_right (-1:
  // unbounded; causal means window_right = 0).
  int window_left = -1;
  int window_right = -1;
  // Score modifiers, as ForwardArgs::softcap, alibi_slopes and sinks.
  // softcap: 0 (off) or > 0.
  double softcap = 0;
  // ALiBi slopes: empty (none), heads_q values (one per query head) or
  // batch * heads_q ([batch][heads_q], one per sequence and head).
  std::vector<double> alibi_slopes = {};
  // Sinks: empty (none) or heads_q logits, one per query head (-inf: no sink).
  std::vector<double> sinks = {};
};

struct Result {
  // [batch, seqlen_q, heads_q, head_dim]
  std::vector<double> o;
  // [batch, heads_q, seqlen_q]: log(exp(sink) + sum_j exp(s_ij)) over the
  // keys row i sees; a row that sees no key gets the sink (-inf without one).
  std::vector<double> lse;
  // The same math done in the low-precision dtype `lowp`: for f16/bf16, P
  // rounded to it before P V and O rounded to it; for f32, the whole row in
  // float arithmetic. The error a kernel in that dtype makes anyway.
  // With a softcap (f16/bf16) the scores are rounded to the dtype first, as
  // FlashAttention's reference computes them: the kernels' tanh is the
  // hardware's approximation (relative error ~2^-11).
  // Filled only when forward() is given a lowp dtype.
  std::vector<double> o_lowp;
  // The LSE of that math (equal to lse unless the scores are rounded, i.e.
  // with a softcap), [batch, heads_q, seqlen_q]; filled with o_lowp.
  std::vector<double> lse_lowp;
};

// Rounds x to the nearest value representable in dtype (round to nearest even).
double round_to(DType dtype, double x);

// True when query i may attend key j under the bottom-right causal mask.
inline bool causal_allows(int i, int j, int seqlen_q, int seqlen_k) {
  return static_cast<std::int64_t>(j) <= static_cast<std::int64_t>(i) + seqlen_k - seqlen_q;
}

// The mask rule, stated once for the reference and the tests: true when query
// i of problem p sees key j: 0 <= j < seqlen_k, and with d = i + seqlen_k -
// seqlen_q (the bottom-right diagonal), d - window_left <= j <= d +
// window_right for each side that is not -1; causal is window_right = 0.
inline bool visible(const Problem& p, int i, int j) {
  if (j < 0 || j >= p.seqlen_k) return false;
  const std::int64_t d = static_cast<std::int64_t>(i) + p.seqlen_k - p.seqlen_q;
  const int right = p.causal ? 0 : p.window_right;
  if (right >= 0 && j > d + right) return false;
  return p.window_left < 0 || j >= d - p.window_left;
}

// The ALiBi slope of sequence b, query head h (0 without slopes).
inline double alibi_slope(const Problem& p, int b, int h) {
  if (p.alibi_slopes.empty()) return 0.0;
  const bool per_batch = p.alibi_slopes.size() != static_cast<std::size_t>(p.heads_q);
  return p.alibi_slopes[per_batch ? static_cast<std::size_t>(b) * p.heads_q + h : static_cast<std::size_t>(h)];
}

// The sink logit of query head h (-inf without sinks: a term exp(-inf) = 0).
inline double sink(const Problem& p, int h) {
  return p.sinks.empty() ? -std::numeric_limits<double>::infinity() : p.sinks[static_cast<std::size_t>(h)];
}

// The score rule, stated once for the forward and the backward: the score of
// query i and key j of sequence b, query head h, from dot = q_i . k_j:
//   s = softmax_scale * dot;  softcap > 0: s = softcap * tanh(s / softcap);
//   ALiBi: s -= slope(b, h) * |i + seqlen_k - seqlen_q - j|.
// The mask (visible()) is applied apart: a hidden key has no score.
inline double score(const Problem& p, int b, int h, int i, int j, double dot) {
  double s = p.softmax_scale * dot;
  if (p.softcap > 0) s = p.softcap * std::tanh(s / p.softcap);
  if (!p.alibi_slopes.empty()) {
    const std::int64_t dist = static_cast<std::int64_t>(i) + p.seqlen_k - p.seqlen_q - j;
    s -= alibi_slope(p, b, h) * static_cast<double>(dist < 0 ? -dist : dist);
  }
  return s;
}

// ds / d(softmax_scale * dot) of score(): the softcap's 1 - tanh^2 (1
// without a softcap; ALiBi adds a constant).
inline double score_grad(const Problem& p, double dot) {
  if (!(p.softcap > 0)) return 1.0;
  const double t = std::tanh(p.softmax_scale * dot / p.softcap);
  return 1.0 - t * t;
}

// Computes the rows listed in `rows` (query indices, for every batch and
// head), or every row when `rows` is empty. Entries of rows not computed are
// left at zero. Parallel over (batch, head) on `threads` threads (0: all cores).
Result forward(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
               const std::vector<double>& v, std::optional<DType> lowp = std::nullopt,
               const std::vector<int>& rows = {}, int threads = 0);

// Gradients of L = sum(O * dO) (the backward pass), shaped like q, k, v.
// With GQA/MQA, dk and dv sum over the query heads that share a KV head.
struct Gradients {
  std::vector<double> dq;
  std::vector<double> dk;
  std::vector<double> dv;
  // The same math done in the low-precision dtype `lowp` (filled only when
  // backward() is given one): P, dP = dO V^T and dS rounded to it, as the
  // tile products of a 16-bit implementation take them, rowsum(P * dP) from
  // those, fp32-like accumulation, and the gradients rounded at the end.
  // With a softcap, P and the cap's derivative come from the scores rounded
  // to the dtype (as forward()'s o_lowp) and rowsum(dO * O) from that O.
  std::vector<double> dq_lowp;
  std::vector<double> dk_lowp;
  std::vector<double> dv_lowp;
  // With sinks (else empty): dL/dsinks, [heads_q], summed over the batch
  // and the rows: dsinks[h] = -sum_{b,i} exp(sink_h - LSE_bhi) * D_bhi, D =
  // rowsum(dO * O). dsinks_lowp (with lowp) takes D from O rounded to the
  // dtype, as a kernel given the forward's O does.
  std::vector<double> dsinks;
  std::vector<double> dsinks_lowp;
};

// The fp64 backward: P recomputed from Q, K (the scores by score(), the
// mask, the sink in the softmax's denominator), then
//   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dO * O)) * score_grad,
//   dQ = scale * dS K,  dK = scale * dS^T Q,  and dsinks (see Gradients).
// ALiBi slopes get no gradient.
// Parallel over (batch, KV head) on `threads` threads (0: all cores).
Gradients backward(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
                   const std::vector<double>& v, const std::vector<double>& dout, int threads = 0,
                   std::optional<DType> lowp = std::nullopt);

}  // namespace flash::reference
