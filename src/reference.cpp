// The fp64 CPU reference. Deliberately plain: for each (batch, head, query
// row): scores (score(): softcap, ALiBi), max, exp, sum (with the sink's
// term), then the weighted sum of V.
#include "flash/reference.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <thread>

namespace flash::reference {

double round_to(DType dtype, double x) {
  if (!std::isfinite(x)) return x;
  const float f = static_cast<float>(x);  // round to nearest even in fp32 first
  if (dtype == DType::f32) return f;
  if (dtype == DType::i32) return std::nearbyint(x);
  // Round the fp32 value to `mantissa` explicit bits, to nearest even.
  const int mantissa = dtype == DType::bf16 ? 7 : 10;
  if (dtype == DType::f16) {
    // f16: the exponent range is narrow; handle overflow and subnormals by
    // rounding to the f16 grid at this magnitude.
    const double a = std::fabs(x);
    if (a >= 65520.0) return std::copysign(std::numeric_limits<double>::infinity(), x);
    const int e = a > 0 ? std::max(std::ilogb(a), -14) : -14;
    const double quantum = std::ldexp(1.0, e - mantissa);
    return std::nearbyint(x / quantum) * quantum;
  }
  std::uint32_t bits = 0;
  std::memcpy(&bits, &f, sizeof(bits));
  const std::uint32_t drop = 23 - mantissa;  // bf16 keeps the top 16 bits
  const std::uint32_t lsb = (bits >> drop) & 1u;
  bits += ((1u << (drop - 1)) - 1u) + lsb;
  bits &= ~((1u << drop) - 1u);
  float r = 0.0f;
  std::memcpy(&r, &bits, sizeof(r));
  return r;
}

namespace {

// The softmax of one row's scores rounded to `dtype` (hidden keys -inf), the
// sink in its denominator: P into prob, and the LSE returned (the sink's, or
// -inf, for a row that sees nothing). The low-precision model under a
// softcap (forward() and backward()).
double softmax_of_rounded(DType dtype, const std::vector<double>& s, double sink, std::vector<double>& prob) {
  double m = sink;
  for (std::size_t j = 0; j < s.size(); ++j) m = std::max(m, prob[j] = round_to(dtype, s[j]));
  double sum = 0.0;
  if (m != -std::numeric_limits<double>::infinity()) {
    for (double& x : prob) sum += (x = std::exp(x - m));
    sum += std::exp(sink - m);
  }
  for (double& x : prob) x = sum > 0.0 ? x / sum : 0.0;
  return sum > 0.0 ? m + std::log(sum) : sink;
}

}  // namespace

Result forward(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
               const std::vector<double>& v, std::optional<DType> lowp, const std::vector<int>& rows, int threads) {
  const int B = p.batch, Sq = p.seqlen_q, Sk = p.seqlen_k, Hq = p.heads_q, Hkv = p.heads_kv, D = p.head_dim;
  const int group = Hq / Hkv;
  Result out;
  out.o.assign(static_cast<std::size_t>(B) * Sq * Hq * D, 0.0);
  out.lse.assign(static_cast<std::size_t>(B) * Hq * Sq, 0.0);
  if (lowp) out.o_lowp.assign(out.o.size(), 0.0);

  std::vector<int> row_list = rows;
  if (row_list.empty())
    for (int i = 0; i < Sq; ++i) row_list.push_back(i);

  auto q_at = [&](int b, int i, int h) { return &q[((static_cast<std::size_t>(b) * Sq + i) * Hq + h) * D]; };
  auto k_at = [&](int b, int j, int h) { return &k[((static_cast<std::size_t>(b) * Sk + j) * Hkv + h) * D]; };
  auto v_at = [&](int b, int j, int h) { return &v[((static_cast<std::size_t>(b) * Sk + j) * Hkv + h) * D]; };

  // For f32 the "same math in the input dtype" is the row in float
  // arithmetic as an fp32 kernel does it: scores and their modifiers, then
  // an online softmax over key tiles of the tiled rung's width (64 keys at
  // head dims up to 96, 32 above), each tile rescaling the running sum and O
  // by exp(old max - new max), and the sink folded into the finished row.
  // (A whole-row softmax has no rescaling error, and the tiled rung's came
  // out 0.5% over twice it on one seed: docs/NOTES.md, session 16.)
  const float scale_f = static_cast<float>(p.softmax_scale), cap_f = static_cast<float>(p.softcap);
  const int tile_keys = D <= 96 ? 64 : 32;
  auto fp32_row = [&](int b, int i, int h, int hk, std::vector<double>& o_out) {
    constexpr float kMinusInf = -std::numeric_limits<float>::infinity();
    std::vector<float> s(tile_keys), o(D, 0.0f);
    const float slope = static_cast<float>(alibi_slope(p, b, h));
    const double* qi = q_at(b, i, h);
    float row_max = kMinusInf, row_sum = 0.0f;
    for (int j0 = 0; j0 < Sk; j0 += tile_keys) {
      const int cols = std::min(tile_keys, Sk - j0);
      float tile_max = kMinusInf;
      for (int c = 0; c < cols; ++c) {
        const int j = j0 + c;
        s[c] = kMinusInf;
        if (!visible(p, i, j)) continue;
        const double* kj = k_at(b, j, hk);
        float dot = 0.0f;
        for (int d = 0; d < D; ++d) dot += static_cast<float>(qi[d]) * static_cast<float>(kj[d]);
        s[c] = dot * scale_f;
        if (cap_f > 0.0f) s[c] = cap_f * std::tanh(s[c] / cap_f);
        if (slope != 0.0f) s[c] -= slope * std::fabs(static_cast<float>(std::int64_t{i} + Sk - Sq - j));
        tile_max = std::max(tile_max, s[c]);
      }
      const float new_max = std::max(row_max, tile_max);
      if (new_max == kMinusInf) continue;  // nothing visible yet
      const float alpha = row_max == kMinusInf ? 0.0f : std::exp(row_max - new_max);
      row_sum *= alpha;
      for (float& x : o) x *= alpha;
      for (int c = 0; c < cols; ++c) {
        const float pc = std::exp(s[c] - new_max);  // 0 for a masked key
        row_sum += pc;
        const double* vj = v_at(b, j0 + c, hk);
        for (int d = 0; d < D; ++d) o[d] += pc * static_cast<float>(vj[d]);
      }
      row_max = new_max;
    }
    // The sink: O / sum times exp(lse - lse with the sink) = 1 / (1 + exp(sink - lse)).
    const float sink_f = static_cast<float>(sink(p, h));
    const float lse = row_sum > 0.0f ? row_max + std::log(row_sum) : kMinusInf;
    const float sink_factor = lse == kMinusInf || sink_f == kMinusInf ? 1.0f : 1.0f / (1.0f + std::exp(sink_f - lse));
    for (int d = 0; d < D; ++d) o_out[d] = row_sum > 0.0f ? o[d] / row_sum * sink_factor : 0.0f;
  };

  // With a softcap the kernels take tanh from the hardware's approximation
  // (tanh.approx.f32, relative error ~2^-11), so the model rounds each score
  // to the dtype, as FlashAttention's reference does (its scores are in the
  // input dtype): P and the LSE from those scores. Without a softcap a
  // kernel's scores are fp32 and the model keeps them exact (a tighter
  // bound than FlashAttention's). f32 inputs run the scalar rungs (exact
  // tanhf) and the fp32 row below.
  const bool capped_lowp = lowp && *lowp != DType::f32 && p.softcap > 0;
  if (lowp) out.lse_lowp.assign(out.lse.size(), 0.0);
  auto run_head = [&](int bh) {
    const int b = bh / Hq, h = bh % Hq, hk = h / group;
    const double sink_h = sink(p, h);
    std::vector<double> s(Sk), o(D), o_lowp(D), p_capped(capped_lowp ? Sk : 0);
    double lse_capped = 0.0;
    for (int i : row_list) {
      double row_max = -std::numeric_limits<double>::infinity();
      for (int j = 0; j < Sk; ++j) {
        if (!visible(p, i, j)) {
          s[j] = -std::numeric_limits<double>::infinity();
          continue;
        }
        const double* qi = q_at(b, i, h);
        const double* kj = k_at(b, j, hk);
        double dot = 0.0;
        for (int d = 0; d < D; ++d) dot += qi[d] * kj[d];
        s[j] = score(p, b, h, i, j, dot);
        row_max = std::max(row_max, s[j]);
      }
      // With a softcap, the low-precision model's scores are rounded to the
      // dtype (capped_lowp below) and give their own P and LSE.
      if (capped_lowp) lse_capped = softmax_of_rounded(*lowp, s, sink_h, p_capped);
      // The sink is one more term of the denominator, with no value.
      const double m = std::max(row_max, sink_h);
      double row_sum = 0.0;
      if (row_max != -std::numeric_limits<double>::infinity()) {
        for (int j = 0; j < Sk; ++j) row_sum += (s[j] = std::exp(s[j] - m));
        row_sum += std::exp(sink_h - m);
      } else {
        std::fill(s.begin(), s.end(), 0.0);
      }
      std::fill(o.begin(), o.end(), 0.0);
      std::fill(o_lowp.begin(), o_lowp.end(), 0.0);
      for (int j = 0; j < Sk; ++j) {
        if (s[j] == 0.0) continue;
        const double pj = s[j] / row_sum;
        const double* vj = v_at(b, j, hk);
        for (int d = 0; d < D; ++d) o[d] += pj * vj[d];
        if (lowp) {
          const double pj_lowp = round_to(*lowp, capped_lowp ? p_capped[j] : pj);
          for (int d = 0; d < D; ++d) o_lowp[d] += pj_lowp * vj[d];
        }
      }
      if (lowp == DType::f32) fp32_row(b, i, h, hk, o_lowp);
      const std::size_t o_off = ((static_cast<std::size_t>(b) * Sq + i) * Hq + h) * D;
      for (int d = 0; d < D; ++d) {
        out.o[o_off + d] = o[d];
        if (lowp) out.o_lowp[o_off + d] = round_to(*lowp, o_lowp[d]);
      }
      // A row that sees no key: the sink alone (-inf without one).
      const std::size_t lse_off = (static_cast<std::size_t>(b) * Hq + h) * Sq + i;
      out.lse[lse_off] = row_sum > 0.0 ? m + std::log(row_sum) : sink_h;
      if (lowp) out.lse_lowp[lse_off] = capped_lowp ? lse_capped : out.lse[lse_off];
    }
  };

  const int heads = B * Hq;
  int n_threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n_threads = std::min(n_threads, std::max(heads, 1));
  if (n_threads <= 1) {
    for (int bh = 0; bh < heads; ++bh) run_head(bh);
  } else {
    std::vector<std::thread> pool;
    for (int t = 0; t < n_threads; ++t)
      pool.emplace_back([&, t] {
        for (int bh = t; bh < heads; bh += n_threads) run_head(bh);
      });
    for (auto& th : pool) th.join();
  }
  return out;
}

Gradients backward(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
                   const std::vector<double>& v, const std::vector<double>& dout, int threads,
                   std::optional<DType> lowp) {
  const int B = p.batch, Sq = p.seqlen_q, Sk = p.seqlen_k, Hq = p.heads_q, Hkv = p.heads_kv, D = p.head_dim;
  const int group = Hq / Hkv;
  const bool sinks = !p.sinks.empty();
  Gradients g;
  g.dq.assign(q.size(), 0.0);
  g.dk.assign(k.size(), 0.0);
  g.dv.assign(v.size(), 0.0);
  if (lowp) {
    g.dq_lowp.assign(q.size(), 0.0);
    g.dk_lowp.assign(k.size(), 0.0);
    g.dv_lowp.assign(v.size(), 0.0);
  }
  // dsinks per (batch, query head), summed over the batch at the end: each
  // (b, h) belongs to one task, so the sum is the same for any thread count.
  std::vector<double> dsinks_bh(sinks ? static_cast<std::size_t>(B) * Hq : 0, 0.0), dsinks_bh_lowp(dsinks_bh);
  auto rnd = [&](double x) { return round_to(*lowp, x); };
  // As forward(): with a softcap (f16/bf16) the model rounds the scores.
  const bool capped_lowp = lowp && *lowp != DType::f32 && p.softcap > 0;
  auto q_idx = [&](int b, int i, int h) { return ((static_cast<std::size_t>(b) * Sq + i) * Hq + h) * D; };
  auto kv_idx = [&](int b, int j, int h) { return ((static_cast<std::size_t>(b) * Sk + j) * Hkv + h) * D; };

  // One (batch, KV head) per task: it owns dK and dV of that head, and dQ of
  // the query heads in its group, so tasks never write the same element.
  auto run_kv_head = [&](int task) {
    const int b = task / Hkv, hk = task % Hkv;
    std::vector<double> prob(Sk), dprob(Sk), dcap(Sk), prob_l(lowp ? Sk : 0), dprob_l(lowp ? Sk : 0), o(D);
    std::vector<double> score_l(capped_lowp ? Sk : 0), dcap_l(capped_lowp ? Sk : 0), o_l(capped_lowp ? D : 0);
    for (int h = hk * group; h < (hk + 1) * group; ++h) {
      const double sink_h = sink(p, h);
      for (int i = 0; i < Sq; ++i) {
        const double* qi = &q[q_idx(b, i, h)];
        const double* doi = &dout[q_idx(b, i, h)];
        double row_max = -std::numeric_limits<double>::infinity();
        for (int j = 0; j < Sk; ++j) {
          if (!visible(p, i, j)) {
            prob[j] = -std::numeric_limits<double>::infinity();
            dcap[j] = 0.0;
            continue;
          }
          const double* kj = &k[kv_idx(b, j, hk)];
          double dot = 0.0;
          for (int d = 0; d < D; ++d) dot += qi[d] * kj[d];
          prob[j] = score(p, b, h, i, j, dot);
          dcap[j] = score_grad(p, dot);
          row_max = std::max(row_max, prob[j]);
          if (capped_lowp) {  // the exact score (rounded below); tanh = the rounded capped score / softcap
            score_l[j] = prob[j];
            const double t = rnd(p.softcap * std::tanh(p.softmax_scale * dot / p.softcap)) / p.softcap;
            dcap_l[j] = 1.0 - t * t;
          }
        }
        if (capped_lowp)
          for (int j = 0; j < Sk; ++j)
            if (!visible(p, i, j)) score_l[j] = -std::numeric_limits<double>::infinity();
        // No key: O = 0, no gradient (and rowsum(dO * O) = 0: none for the sink).
        if (row_max == -std::numeric_limits<double>::infinity()) continue;
        const double m = std::max(row_max, sink_h);
        double row_sum = std::exp(sink_h - m);
        for (int j = 0; j < Sk; ++j) row_sum += (prob[j] = std::exp(prob[j] - m));
        double d_i = 0.0;  // rowsum(dO * O) = sum_j P_ij dP_ij
        std::fill(o.begin(), o.end(), 0.0);
        for (int j = 0; j < Sk; ++j) {
          prob[j] /= row_sum;
          if (prob[j] == 0.0) {  // hidden (or underflowed): no share of anything
            dprob[j] = 0.0;
            continue;
          }
          const double* vj = &v[kv_idx(b, j, hk)];
          double dp = 0.0;
          for (int d = 0; d < D; ++d) {
            dp += doi[d] * vj[d];
            o[d] += prob[j] * vj[d];
          }
          dprob[j] = dp;
          d_i += prob[j] * dp;
        }
        // The sink's probability, exp(sink - LSE).
        const double p_sink = std::exp(sink_h - m) / row_sum;
        if (sinks) dsinks_bh[static_cast<std::size_t>(b) * Hq + h] -= p_sink * d_i;
        double* dqi = &g.dq[q_idx(b, i, h)];
        for (int j = 0; j < Sk; ++j) {
          if (prob[j] == 0.0) continue;
          const double ds = prob[j] * (dprob[j] - d_i) * dcap[j] * p.softmax_scale;
          const double* kj = &k[kv_idx(b, j, hk)];
          double* dkj = &g.dk[kv_idx(b, j, hk)];
          double* dvj = &g.dv[kv_idx(b, j, hk)];
          for (int d = 0; d < D; ++d) {
            dqi[d] += ds * kj[d];
            dkj[d] += ds * qi[d];
            dvj[d] += prob[j] * doi[d];
          }
        }
        if (!lowp) continue;
        // rowsum(dO * O) from O rounded to the dtype, as a kernel reads the
        // forward's output (rowsum(P * dP) from rounded P and dP misses that
        // error: under a saturated softcap it alone put every kernel 1.24x
        // past the bound). With a softcap: P, O and the sink's probability
        // from the scores rounded to the dtype.
        double d_l = 0.0, p_sink_l = p_sink;
        if (capped_lowp) {
          p_sink_l = std::exp(sink_h - softmax_of_rounded(*lowp, score_l, sink_h, prob_l));
          std::fill(o_l.begin(), o_l.end(), 0.0);
          for (int j = 0; j < Sk; ++j) {
            prob_l[j] = rnd(prob_l[j]);
            if (prob_l[j] == 0.0) continue;
            const double* vj = &v[kv_idx(b, j, hk)];
            for (int d = 0; d < D; ++d) o_l[d] += prob_l[j] * vj[d];
          }
          for (int d = 0; d < D; ++d) d_l += doi[d] * rnd(o_l[d]);
        } else {
          for (int d = 0; d < D; ++d) d_l += doi[d] * rnd(o[d]);
        }
        if (sinks) dsinks_bh_lowp[static_cast<std::size_t>(b) * Hq + h] -= p_sink_l * d_l;
        for (int j = 0; j < Sk; ++j) {
          if (!capped_lowp) prob_l[j] = rnd(prob[j]);
          dprob_l[j] = rnd(dprob[j]);
        }
        double* dqi_l = &g.dq_lowp[q_idx(b, i, h)];
        for (int j = 0; j < Sk; ++j) {
          if (prob[j] == 0.0) continue;
          const double ds = rnd(prob_l[j] * (dprob_l[j] - d_l) * (capped_lowp ? dcap_l[j] : dcap[j]));
          const double* kj = &k[kv_idx(b, j, hk)];
          double* dkj = &g.dk_lowp[kv_idx(b, j, hk)];
          double* dvj = &g.dv_lowp[kv_idx(b, j, hk)];
          for (int d = 0; d < D; ++d) {
            dqi_l[d] += ds * kj[d];
            dkj[d] += ds * qi[d];
            dvj[d] += prob_l[j] * doi[d];
          }
        }
      }
    }
  };

  const int tasks = B * Hkv;
  int n_threads = threads > 0 ? threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n_threads = std::min(n_threads, std::max(tasks, 1));
  std::vector<std::thread> pool;
  for (int t = 1; t < n_threads; ++t)
    pool.emplace_back([&, t] {
      for (int task = t; task < tasks; task += n_threads) run_kv_head(task);
    });
  for (int task = 0; task < tasks; task += n_threads) run_kv_head(task);
  for (auto& th : pool) th.join();
  if (lowp) {  // the scale and the final rounding of each gradient
    for (double& x : g.dq_lowp) x = rnd(x * p.softmax_scale);
    for (double& x : g.dk_lowp) x = rnd(x * p.softmax_scale);
    for (double& x : g.dv_lowp) x = rnd(x);
  }
  if (sinks) {
    g.dsinks.assign(Hq, 0.0);
    if (lowp) g.dsinks_lowp.assign(Hq, 0.0);
    for (int b = 0; b < B; ++b)
      for (int h = 0; h < Hq; ++h) {
        g.dsinks[h] += dsinks_bh[static_cast<std::size_t>(b) * Hq + h];
        if (lowp) g.dsinks_lowp[h] += dsinks_bh_lowp[static_cast<std::size_t>(b) * Hq + h];
      }
    if (lowp)  // an fp32 output
      for (double& x : g.dsinks_lowp) x = round_to(DType::f32, x);
  }
  return g;
}

}  // namespace flash::reference
