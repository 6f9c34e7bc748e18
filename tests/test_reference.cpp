// The fp64 reference on tiny cases whose answers are known by construction.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "flash/reference.h"

namespace {

using flash::DType;
using flash::reference::Problem;

std::vector<double> randn(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> d;
  std::vector<double> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

// V = identity over keys (head_dim = seqlen_k, V[j][d] = [j == d]) makes O
// equal to the row of P, which the tests below inspect directly.
std::vector<double> one_hot_v(const Problem& p) {
  std::vector<double> v(std::size_t(p.batch) * p.seqlen_k * p.heads_kv * p.head_dim, 0.0);
  for (int b = 0; b < p.batch; ++b)
    for (int j = 0; j < p.seqlen_k; ++j)
      for (int h = 0; h < p.heads_kv; ++h) v[((std::size_t(b) * p.seqlen_k + j) * p.heads_kv + h) * p.head_dim + j] = 1;
  return v;
}

double p_at(const Problem& p, const flash::reference::Result& r, int b, int i, int h, int j) {
  return r.o[((std::size_t(b) * p.seqlen_q + i) * p.heads_q + h) * p.head_dim + j];
}

TEST(Reference, RowsOfPSumToOne) {
  Problem p{.batch = 2, .seqlen_q = 5, .seqlen_k = 7, .heads_q = 2, .heads_kv = 2, .head_dim = 7, .softmax_scale = 0.4};
  const auto q = randn(2 * 5 * 2 * 7, 1), k = randn(2 * 7 * 2 * 7, 2);
  const auto r = flash::reference::forward(p, q, k, one_hot_v(p));
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 5; ++i)
      for (int h = 0; h < 2; ++h) {
        double sum = 0;
        for (int j = 0; j < 7; ++j) {
          EXPECT_GT(p_at(p, r, b, i, h, j), 0.0);
          sum += p_at(p, r, b, i, h, j);
        }
        EXPECT_NEAR(sum, 1.0, 1e-12);
      }
}

TEST(Reference, SoftmaxAndLseMatchHandComputation) {
  // One query, two keys, head_dim 1: scores are scale * q * k_j.
  Problem p{.batch = 1, .seqlen_q = 1, .seqlen_k = 2, .heads_q = 1, .heads_kv = 1, .head_dim = 1, .softmax_scale = 0.5};
  const std::vector<double> q = {2.0}, k = {1.0, -3.0}, v = {10.0, 20.0};
  const auto r = flash::reference::forward(p, q, k, v);
  const double s0 = 0.5 * 2 * 1, s1 = 0.5 * 2 * -3;
  const double p0 = std::exp(s0) / (std::exp(s0) + std::exp(s1));
  EXPECT_NEAR(r.o[0], p0 * 10 + (1 - p0) * 20, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(std::exp(s0) + std::exp(s1)), 1e-12);
}

TEST(Reference, CausalMaskIsBottomRightAligned) {
  // seqlen_q 3, seqlen_k 5: query i sees keys 0 .. i + 2.
  Problem p{.batch = 1, .seqlen_q = 3, .seqlen_k = 5, .heads_q = 1, .heads_kv = 1, .head_dim = 5, .softmax_scale = 1.0,
            .causal = true};
  const auto r = flash::reference::forward(p, randn(15, 3), randn(25, 4), one_hot_v(p));
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 5; ++j) {
      if (j <= i + 2) EXPECT_GT(p_at(p, r, 0, i, 0, j), 0.0) << i << "," << j;
      else EXPECT_EQ(p_at(p, r, 0, i, 0, j), 0.0) << i << "," << j;
    }
}

TEST(Reference, CausalRowsThatSeeNoKeyAreZeroWithLseMinusInf) {
  // seqlen_q 4 > seqlen_k 2: query i sees keys 0 .. i - 2, so rows 0 and 1 see none.
  Problem p{.batch = 1, .seqlen_q = 4, .seqlen_k = 2, .heads_q = 1, .heads_kv = 1, .head_dim = 2, .softmax_scale = 1.0,
            .causal = true};
  const auto v = randn(4, 7);
  const auto r = flash::reference::forward(p, randn(8, 5), randn(4, 6), v);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(r.lse[i], -std::numeric_limits<double>::infinity());
    EXPECT_EQ(r.o[i * 2], 0.0);
    EXPECT_EQ(r.o[i * 2 + 1], 0.0);
  }
  EXPECT_TRUE(std::isfinite(r.lse[2]));
  EXPECT_DOUBLE_EQ(r.o[2 * 2], v[0]);  // row 2 sees key 0 only: O = V[0]
  EXPECT_DOUBLE_EQ(r.o[2 * 2 + 1], v[1]);
}

TEST(Reference, GqaMapsQueryHeadsToTheirKvHead) {
  // heads_q 4 over heads_kv 2: query heads 0,1 use KV head 0; 2,3 use KV head 1.
  // Compare with MHA where K/V are repeated per query head.
  Problem gqa{.batch = 1, .seqlen_q = 3, .seqlen_k = 4, .heads_q = 4, .heads_kv = 2, .head_dim = 3, .softmax_scale = 0.7};
  Problem mha = gqa;
  mha.heads_kv = 4;
  const auto q = randn(3 * 4 * 3, 8), k = randn(4 * 2 * 3, 9), v = randn(4 * 2 * 3, 10);
  std::vector<double> k4, v4;
  for (int j = 0; j < 4; ++j)
    for (int h = 0; h < 4; ++h)
      for (int d = 0; d < 3; ++d) {
        k4.push_back(k[(j * 2 + h / 2) * 3 + d]);
        v4.push_back(v[(j * 2 + h / 2) * 3 + d]);
      }
  const auto a = flash::reference::forward(gqa, q, k, v), b = flash::reference::forward(mha, q, k4, v4);
  ASSERT_EQ(a.o.size(), b.o.size());
  for (std::size_t i = 0; i < a.o.size(); ++i) EXPECT_DOUBLE_EQ(a.o[i], b.o[i]);
  for (std::size_t i = 0; i < a.lse.size(); ++i) EXPECT_DOUBLE_EQ(a.lse[i], b.lse[i]);
}

TEST(Reference, SeqlenQDiffersFromSeqlenK) {
  // Without a mask each query row is independent of the others: row i of a
  // 3-query problem equals the 1-query problem with that row.
  Problem p{.batch = 1, .seqlen_q = 3, .seqlen_k = 9, .heads_q = 1, .heads_kv = 1, .head_dim = 4, .softmax_scale = 0.5};
  const auto q = randn(12, 11), k = randn(36, 12), v = randn(36, 13);
  const auto all = flash::reference::forward(p, q, k, v);
  Problem one = p;
  one.seqlen_q = 1;
  for (int i = 0; i < 3; ++i) {
    const std::vector<double> qi(q.begin() + i * 4, q.begin() + i * 4 + 4);
    const auto r = flash::reference::forward(one, qi, k, v);
    for (int d = 0; d < 4; ++d) EXPECT_DOUBLE_EQ(all.o[i * 4 + d], r.o[d]);
    EXPECT_DOUBLE_EQ(all.lse[i], r.lse[0]);
  }
}

TEST(Reference, SampledRowsMatchTheFullComputation) {
  Problem p{.batch = 2, .seqlen_q = 6, .seqlen_k = 5, .heads_q = 2, .heads_kv = 1, .head_dim = 3, .softmax_scale = 0.5,
            .causal = true};
  const auto q = randn(2 * 6 * 2 * 3, 14), k = randn(2 * 5 * 3, 15), v = randn(2 * 5 * 3, 16);
  const auto full = flash::reference::forward(p, q, k, v);
  const auto some = flash::reference::forward(p, q, k, v, std::nullopt, {1, 4});
  for (int b = 0; b < 2; ++b)
    for (int i : {1, 4})
      for (int h = 0; h < 2; ++h)
        for (int d = 0; d < 3; ++d) {
          const std::size_t idx = ((std::size_t(b) * 6 + i) * 2 + h) * 3 + d;
          EXPECT_DOUBLE_EQ(full.o[idx], some.o[idx]);
        }
}

TEST(Reference, LowPrecisionOutputIsCloseButNotExact) {
  Problem p{.batch = 1, .seqlen_q = 8, .seqlen_k = 64, .heads_q = 1, .heads_kv = 1, .head_dim = 16, .softmax_scale = 0.25};
  const auto q = randn(8 * 16, 17), k = randn(64 * 16, 18), v = randn(64 * 16, 19);
  const auto r = flash::reference::forward(p, q, k, v, DType::bf16);
  double max_err = 0, max_ref = 0;
  for (std::size_t i = 0; i < r.o.size(); ++i) {
    max_err = std::max(max_err, std::abs(r.o_lowp[i] - r.o[i]));
    max_ref = std::max(max_ref, std::abs(r.o[i]));
  }
  EXPECT_GT(max_err, 0.0);
  EXPECT_LT(max_err, 0.02 * max_ref);
}

TEST(Reference, RoundToMatchesTheFormats) {
  EXPECT_EQ(flash::reference::round_to(DType::bf16, 1.0 + 1.0 / 256), 1.0);                  // tie to even
  EXPECT_EQ(flash::reference::round_to(DType::bf16, 1.0 + 3.0 / 256), 1.0 + 4.0 / 256);      // tie to even, up
  EXPECT_EQ(flash::reference::round_to(DType::f16, 1.0 + 1.0 / 4096), 1.0);                  // below half an ulp
  EXPECT_EQ(flash::reference::round_to(DType::f16, 1.0 + 3.0 / 2048), 1.0 + 2.0 / 1024);     // tie to even, up
  EXPECT_EQ(flash::reference::round_to(DType::f16, 70000.0), std::numeric_limits<double>::infinity());
  EXPECT_EQ(flash::reference::round_to(DType::f32, 1.0 + 1e-9), 1.0);
}

}  // namespace

namespace {

TEST(Reference, Fp32LowPrecisionPathErrsLikeFloatArithmetic) {
  Problem p{.batch = 1, .seqlen_q = 4, .seqlen_k = 512, .heads_q = 1, .heads_kv = 1, .head_dim = 256, .softmax_scale = 0.0625};
  const auto q = randn(4 * 256, 21), k = randn(512 * 256, 22), v = randn(512 * 256, 23);
  const auto r = flash::reference::forward(p, q, k, v, DType::f32);
  double max_err = 0;
  for (std::size_t i = 0; i < r.o.size(); ++i) max_err = std::max(max_err, std::abs(r.o_lowp[i] - r.o[i]));
  EXPECT_GT(max_err, 1e-9);  // float accumulation leaves a trace ...
  EXPECT_LT(max_err, 1e-4);  // ... of float size
}

}  // namespace

namespace {

// L(q, k, v) = sum(O * dO) by the forward reference.
double loss(const Problem& p, const std::vector<double>& q, const std::vector<double>& k,
            const std::vector<double>& v, const std::vector<double>& dout) {
  const auto r = flash::reference::forward(p, q, k, v, std::nullopt, {}, 1);
  double l = 0;
  for (std::size_t i = 0; i < r.o.size(); ++i) l += r.o[i] * dout[i];
  return l;
}

// Every gradient element against a central finite difference of the forward.
void check_against_finite_differences(const Problem& p, std::uint64_t seed) {
  const std::size_t nq = std::size_t(p.batch) * p.seqlen_q * p.heads_q * p.head_dim;
  const std::size_t nkv = std::size_t(p.batch) * p.seqlen_k * p.heads_kv * p.head_dim;
  auto q = randn(nq, seed), k = randn(nkv, seed + 1), v = randn(nkv, seed + 2);
  const auto dout = randn(nq, seed + 3);
  const auto g = flash::reference::backward(p, q, k, v, dout, 1);
  constexpr double kStep = 1e-5;
  struct Input { const char* name; std::vector<double>* x; const std::vector<double>* grad; };
  const Input inputs[] = {{"dq", &q, &g.dq}, {"dk", &k, &g.dk}, {"dv", &v, &g.dv}};
  for (const auto& in : inputs) {
    for (std::size_t i = 0; i < in.x->size(); ++i) {
      const double saved = (*in.x)[i];
      (*in.x)[i] = saved + kStep;
      const double up = loss(p, q, k, v, dout);
      (*in.x)[i] = saved - kStep;
      const double down = loss(p, q, k, v, dout);
      (*in.x)[i] = saved;
      const double numeric = (up - down) / (2 * kStep);
      EXPECT_NEAR((*in.grad)[i], numeric, 1e-7 * (1 + std::abs(numeric))) << in.name << "[" << i << "]";
    }
  }
}

TEST(ReferenceBackward, MatchesFiniteDifferences) {
  check_against_finite_differences(
      {.batch = 2, .seqlen_q = 3, .seqlen_k = 4, .heads_q = 2, .heads_kv = 2, .head_dim = 3, .softmax_scale = 0.6}, 31);
}

TEST(ReferenceBackward, MatchesFiniteDifferencesCausalWithUnequalLengths) {
  // seqlen_q 5 > seqlen_k 3: the first two rows see no key and get no gradient.
  check_against_finite_differences({.batch = 1, .seqlen_q = 5, .seqlen_k = 3, .heads_q = 1, .heads_kv = 1,
                                    .head_dim = 4, .softmax_scale = 0.5, .causal = true},
                                   41);
  check_against_finite_differences({.batch = 1, .seqlen_q = 2, .seqlen_k = 5, .heads_q = 1, .heads_kv = 1,
                                    .head_dim = 2, .softmax_scale = 0.9, .causal = true},
                                   43);
}

TEST(ReferenceBackward, MatchesFiniteDifferencesWithGqaAndMqa) {
  // dK and dV sum over the query heads that share a KV head.
  check_against_finite_differences(
      {.batch = 1, .seqlen_q = 3, .seqlen_k = 3, .heads_q = 4, .heads_kv = 2, .head_dim = 2, .softmax_scale = 0.7}, 51);
  check_against_finite_differences({.batch = 1, .seqlen_q = 2, .seqlen_k = 4, .heads_q = 3, .heads_kv = 1,
                                    .head_dim = 3, .softmax_scale = 0.8, .causal = true},
                                   53);
}

// The low-precision model of the backward (the yardstick of the GPU tests'
// 3x rule) must carry the error of 16-bit math: nonzero, about the dtype's
// relative precision, and larger for bf16 than for f16. A model that
// collapsed to the exact result would make every GPU bound the bare floor.
TEST(ReferenceBackward, LowPrecisionModelCarriesTheDtypeError) {
  Problem p{.batch = 1, .seqlen_q = 24, .seqlen_k = 40, .heads_q = 2, .heads_kv = 1, .head_dim = 16,
            .softmax_scale = 0.25, .causal = true};
  const auto round = [](std::vector<double> x, DType t) {
    for (double& e : x) e = flash::reference::round_to(t, e);
    return x;
  };
  double rel[2] = {};
  for (int i = 0; i < 2; ++i) {
    const DType t = i == 0 ? DType::f16 : DType::bf16;
    const auto q = round(randn(24 * 2 * 16, 71), t), k = round(randn(40 * 16, 72), t),
               v = round(randn(40 * 16, 73), t), dout = round(randn(24 * 2 * 16, 74), t);
    const auto g = flash::reference::backward(p, q, k, v, dout, 1, t);
    const std::vector<double>* exact[3] = {&g.dq, &g.dk, &g.dv};
    const std::vector<double>* lowp[3] = {&g.dq_lowp, &g.dk_lowp, &g.dv_lowp};
    for (int j = 0; j < 3; ++j) {
      ASSERT_EQ(lowp[j]->size(), exact[j]->size());
      double err = 0, ref = 0;
      for (std::size_t e = 0; e < exact[j]->size(); ++e) {
        err = std::max(err, std::abs((*lowp[j])[e] - (*exact[j])[e]));
        ref = std::max(ref, std::abs((*exact[j])[e]));
      }
      EXPECT_GT(err, 0.0) << "gradient " << j << " dtype " << flash::dtype_name(t);
      EXPECT_LT(err, 0.1 * ref) << "gradient " << j << " dtype " << flash::dtype_name(t);
      rel[i] = std::max(rel[i], err / ref);
    }
  }
  EXPECT_GT(rel[1], rel[0]) << "bf16 (8 bits of mantissa) must err more than f16 (11)";
}

TEST(ReferenceBackward, ThreadsDoNotChangeTheResult) {
  Problem p{.batch = 2, .seqlen_q = 7, .seqlen_k = 9, .heads_q = 4, .heads_kv = 2, .head_dim = 8, .softmax_scale = 0.35};
  const auto q = randn(2 * 7 * 4 * 8, 61), k = randn(2 * 9 * 2 * 8, 62), v = randn(2 * 9 * 2 * 8, 63),
             dout = randn(2 * 7 * 4 * 8, 64);
  const auto a = flash::reference::backward(p, q, k, v, dout, 1), b = flash::reference::backward(p, q, k, v, dout, 3);
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
}

}  // namespace

// Score modifiers: softcap, ALiBi and sinks (FlashAttention's semantics).
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Inputs {
  std::vector<double> q, k, v;
};

Inputs random_inputs(const Problem& p, std::uint64_t seed, double gain = 1.0) {
  const std::size_t nq = std::size_t(p.batch) * p.seqlen_q * p.heads_q * p.head_dim;
  const std::size_t nkv = std::size_t(p.batch) * p.seqlen_k * p.heads_kv * p.head_dim;
  Inputs in{randn(nq, seed), randn(nkv, seed + 1), randn(nkv, seed + 2)};
  for (double& x : in.q) x *= gain;
  for (double& x : in.k) x *= gain;
  return in;
}

void expect_same(const flash::reference::Result& a, const flash::reference::Result& b, double tol) {
  ASSERT_EQ(a.o.size(), b.o.size());
  for (std::size_t i = 0; i < a.o.size(); ++i) EXPECT_NEAR(a.o[i], b.o[i], tol) << "o[" << i << "]";
  for (std::size_t i = 0; i < a.lse.size(); ++i) EXPECT_NEAR(a.lse[i], b.lse[i], tol) << "lse[" << i << "]";
}

TEST(ReferenceScores, HugeSoftcapIsNoSoftcap) {
  Problem p{.batch = 2, .seqlen_q = 5, .seqlen_k = 7, .heads_q = 2, .heads_kv = 1, .head_dim = 4, .softmax_scale = 0.5,
            .causal = true};
  const auto in = random_inputs(p, 101, 3.0);  // scores of several units
  const auto plain = flash::reference::forward(p, in.q, in.k, in.v);
  p.softcap = 1e7;  // c tanh(s / c) = s - s^3 / (3 c^2) + ...: s within 1e-12
  expect_same(plain, flash::reference::forward(p, in.q, in.k, in.v), 1e-10);
  p.softcap = 5;  // and a cap that bites changes the result
  const auto capped = flash::reference::forward(p, in.q, in.k, in.v);
  double diff = 0;
  for (std::size_t i = 0; i < plain.o.size(); ++i) diff = std::max(diff, std::abs(plain.o[i] - capped.o[i]));
  EXPECT_GT(diff, 1e-3);
}

TEST(ReferenceScores, SoftcapMatchesHandComputation) {
  // One query, two keys, head_dim 1: s_j = c tanh(scale q k_j / c).
  Problem p{.batch = 1, .seqlen_q = 1, .seqlen_k = 2, .heads_q = 1, .heads_kv = 1, .head_dim = 1, .softmax_scale = 0.5,
            .softcap = 2.0};
  const std::vector<double> q = {8.0}, k = {1.0, -3.0}, v = {10.0, 20.0};
  const auto r = flash::reference::forward(p, q, k, v);
  const double s0 = 2.0 * std::tanh(0.5 * 8 * 1 / 2.0), s1 = 2.0 * std::tanh(0.5 * 8 * -3 / 2.0);
  const double p0 = std::exp(s0) / (std::exp(s0) + std::exp(s1));
  EXPECT_NEAR(r.o[0], p0 * 10 + (1 - p0) * 20, 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(std::exp(s0) + std::exp(s1)), 1e-12);
  EXPECT_LT(std::abs(s1), 2.0);  // the cap held a score of -12 inside (-2, 2)
}

TEST(ReferenceScores, CappedScoresStayWithinTheCap) {
  // With V one-hot over keys O is the row of P: no two probabilities of a
  // row may differ by more than exp(2 c), however large the raw scores.
  Problem p{.batch = 1, .seqlen_q = 4, .seqlen_k = 6, .heads_q = 1, .heads_kv = 1, .head_dim = 6, .softmax_scale = 1.0,
            .softcap = 1.5};
  const auto in = random_inputs(p, 111, 10.0);
  const auto r = flash::reference::forward(p, in.q, in.k, one_hot_v(p));
  for (int i = 0; i < 4; ++i) {
    double lo = kInf, hi = 0;
    for (int j = 0; j < 6; ++j) lo = std::min(lo, p_at(p, r, 0, i, 0, j)), hi = std::max(hi, p_at(p, r, 0, i, 0, j));
    EXPECT_LE(hi / lo, std::exp(2 * 1.5) * (1 + 1e-12)) << "row " << i;
  }
}

TEST(ReferenceScores, SinkOfMinusInfinityIsNoSink) {
  Problem p{.batch = 2, .seqlen_q = 6, .seqlen_k = 4, .heads_q = 3, .heads_kv = 1, .head_dim = 5, .softmax_scale = 0.4,
            .causal = true};  // rows 0 and 1 see no key
  const auto in = random_inputs(p, 121);
  const auto plain = flash::reference::forward(p, in.q, in.k, in.v, DType::bf16);
  p.sinks = {-kInf, -kInf, -kInf};
  const auto none = flash::reference::forward(p, in.q, in.k, in.v, DType::bf16);
  EXPECT_EQ(plain.o, none.o);
  EXPECT_EQ(plain.lse, none.lse);
  EXPECT_EQ(plain.o_lowp, none.o_lowp);
  // Far below every score: no weight either (on rows that see a key; one
  // that sees none gets LSE = sink, finite now).
  p.sinks = {-1000, -800, -2000};
  const auto low = flash::reference::forward(p, in.q, in.k, in.v);
  EXPECT_EQ(plain.o, low.o);
  for (std::size_t l = 0; l < plain.lse.size(); ++l) {
    const int h = static_cast<int>(l / 6 % 3);
    if (std::isinf(plain.lse[l])) EXPECT_EQ(low.lse[l], p.sinks[h]) << l;
    else EXPECT_DOUBLE_EQ(low.lse[l], plain.lse[l]) << l;
  }
}

// A sink adds exp(sink) to the denominator: the probabilities sum to
// sigmoid(LSE_nosink - sink) < 1, O shrinks by that factor and LSE becomes
// log(exp(LSE_nosink) + exp(sink)). Sinks of both signs, small and large.
TEST(ReferenceScores, SinkScalesTheRowBySigmoid) {
  Problem p{.batch = 2, .seqlen_q = 5, .seqlen_k = 7, .heads_q = 4, .heads_kv = 2, .head_dim = 7, .softmax_scale = 0.5};
  const auto in = random_inputs(p, 131);
  const auto v = one_hot_v(p);
  const auto plain = flash::reference::forward(p, in.q, in.k, v);
  p.sinks = {-2.5, 0.0, 1.75, 12.0};
  const auto with = flash::reference::forward(p, in.q, in.k, v);
  for (int b = 0; b < 2; ++b)
    for (int i = 0; i < 5; ++i)
      for (int h = 0; h < 4; ++h) {
        const std::size_t l = (std::size_t(b) * 4 + h) * 5 + i;
        const double lse0 = plain.lse[l], sink = p.sinks[h];
        const double factor = 1 / (1 + std::exp(sink - lse0));  // sigmoid(lse0 - sink)
        double sum = 0;
        for (int j = 0; j < 7; ++j) {
          EXPECT_NEAR(p_at(p, with, b, i, h, j), p_at(p, plain, b, i, h, j) * factor, 1e-14);
          sum += p_at(p, with, b, i, h, j);
        }
        EXPECT_NEAR(sum, factor, 1e-13);
        EXPECT_LT(sum, 1.0);
        EXPECT_NEAR(with.lse[l], std::log(std::exp(lse0) + std::exp(sink)), 1e-12);
      }
}

TEST(ReferenceScores, RowsThatSeeNoKeyGetTheSinkAsLse) {
  Problem p{.batch = 1, .seqlen_q = 4, .seqlen_k = 2, .heads_q = 2, .heads_kv = 1, .head_dim = 2, .softmax_scale = 1.0,
            .causal = true, .sinks = {0.5, -3.0}};
  const auto in = random_inputs(p, 141);
  const auto r = flash::reference::forward(p, in.q, in.k, in.v, DType::f32);
  for (int h = 0; h < 2; ++h)
    for (int i = 0; i < 2; ++i) {  // rows 0 and 1 see no key
      EXPECT_EQ(r.lse[h * 4 + i], p.sinks[h]);
      for (int d = 0; d < 2; ++d) {
        EXPECT_EQ(r.o[(i * 2 + h) * 2 + d], 0.0);
        EXPECT_EQ(r.o_lowp[(i * 2 + h) * 2 + d], 0.0);
      }
    }
}

TEST(ReferenceScores, AlibiMatchesHandComputation) {
  // q = 0: every dot product is 0, so P follows the bias alone. One query
  // over three keys sits at position 2 (bottom-right): distances 2, 1, 0.
  Problem p{.batch = 1, .seqlen_q = 1, .seqlen_k = 3, .heads_q = 2, .heads_kv = 1, .head_dim = 3, .softmax_scale = 1.0,
            .alibi_slopes = {0.25, 1.5}};
  const std::vector<double> q(2 * 3, 0.0), k = randn(3 * 3, 151);
  const auto r = flash::reference::forward(p, q, k, one_hot_v(p));
  for (int h = 0; h < 2; ++h) {
    const double m = p.alibi_slopes[h];
    const double z = std::exp(-2 * m) + std::exp(-m) + 1;
    EXPECT_NEAR(p_at(p, r, 0, 0, h, 0), std::exp(-2 * m) / z, 1e-14);
    EXPECT_NEAR(p_at(p, r, 0, 0, h, 1), std::exp(-m) / z, 1e-14);
    EXPECT_NEAR(p_at(p, r, 0, 0, h, 2), 1 / z, 1e-14);
    EXPECT_NEAR(r.lse[h], std::log(z), 1e-14);
  }
}

TEST(ReferenceScores, AlibiDistanceIsAbsoluteOnBothSidesOfTheDiagonal) {
  // seqlen_q 3 = seqlen_k 3, no mask: query 0 sees key 2 at distance 2, the
  // same weight as query 2 sees key 0.
  Problem p{.batch = 1, .seqlen_q = 3, .seqlen_k = 3, .heads_q = 1, .heads_kv = 1, .head_dim = 3, .softmax_scale = 1.0,
            .alibi_slopes = {0.7}};
  const std::vector<double> q(3 * 3, 0.0);
  const auto r = flash::reference::forward(p, q, randn(9, 153), one_hot_v(p));
  EXPECT_NEAR(p_at(p, r, 0, 0, 0, 2), p_at(p, r, 0, 2, 0, 0), 1e-15);
  EXPECT_NEAR(p_at(p, r, 0, 0, 0, 1), p_at(p, r, 0, 2, 0, 1), 1e-15);
  EXPECT_GT(p_at(p, r, 0, 0, 0, 0), p_at(p, r, 0, 0, 0, 2));
}

TEST(ReferenceScores, AlibiPerBatchSlopesMatchPerHeadOnes) {
  Problem per_head{.batch = 3, .seqlen_q = 4, .seqlen_k = 6, .heads_q = 2, .heads_kv = 1, .head_dim = 3,
                   .softmax_scale = 0.6, .causal = true, .alibi_slopes = {0.3, 0.05}};
  const auto in = random_inputs(per_head, 161);
  const auto a = flash::reference::forward(per_head, in.q, in.k, in.v, DType::bf16);
  // [batch, heads_q] with every batch alike: the same result, bit for bit.
  Problem per_batch = per_head;
  per_batch.alibi_slopes = {0.3, 0.05, 0.3, 0.05, 0.3, 0.05};
  const auto b = flash::reference::forward(per_batch, in.q, in.k, in.v, DType::bf16);
  EXPECT_EQ(a.o, b.o);
  EXPECT_EQ(a.lse, b.lse);
  EXPECT_EQ(a.o_lowp, b.o_lowp);
  // Different slopes per batch: sequence s of the batch equals a batch-1
  // problem with that sequence's row of slopes per head.
  per_batch.alibi_slopes = {0.3, 0.05, 0.0, 1.25, 0.6, 0.1};
  const auto all = flash::reference::forward(per_batch, in.q, in.k, in.v);
  for (int s = 0; s < 3; ++s) {
    Problem one = per_batch;
    one.batch = 1;
    one.alibi_slopes = {per_batch.alibi_slopes[2 * s], per_batch.alibi_slopes[2 * s + 1]};
    const std::size_t nq = 4 * 2 * 3, nkv = 6 * 1 * 3;
    const std::vector<double> qs(in.q.begin() + s * nq, in.q.begin() + (s + 1) * nq);
    const std::vector<double> ks(in.k.begin() + s * nkv, in.k.begin() + (s + 1) * nkv);
    const std::vector<double> vs(in.v.begin() + s * nkv, in.v.begin() + (s + 1) * nkv);
    const auto r = flash::reference::forward(one, qs, ks, vs);
    for (std::size_t i = 0; i < nq; ++i) EXPECT_DOUBLE_EQ(all.o[s * nq + i], r.o[i]) << "sequence " << s;
    for (std::size_t i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(all.lse[s * 8 + i], r.lse[i]) << "sequence " << s;
  }
  // Slope 0 is no bias.
  Problem zero = per_head;
  zero.alibi_slopes = {0.0, 0.0};
  Problem none = per_head;
  none.alibi_slopes.clear();
  EXPECT_EQ(flash::reference::forward(zero, in.q, in.k, in.v).o, flash::reference::forward(none, in.q, in.k, in.v).o);
}

// The low-precision models apply the same rules: with every modifier on,
// the f32 model (the whole row in float) stays within float error of the
// fp64 result and the bf16 one within bf16 error. A model that dropped a
// modifier would miss by the modifier's effect, far more.
TEST(ReferenceScores, LowPrecisionModelsApplyTheModifiers) {
  Problem p{.batch = 2, .seqlen_q = 9, .seqlen_k = 33, .heads_q = 4, .heads_kv = 2, .head_dim = 16,
            .softmax_scale = 0.25, .causal = true, .softcap = 4.0, .alibi_slopes = {0.5, 0.1, 0.02, 0.2},
            .sinks = {-1.0, 2.0, 0.3, 6.0}};
  const auto in = random_inputs(p, 171, 3.0);
  for (DType t : {DType::f32, DType::bf16}) {
    const auto r = flash::reference::forward(p, in.q, in.k, in.v, t);
    double err = 0, ref = 0;
    for (std::size_t i = 0; i < r.o.size(); ++i) {
      err = std::max(err, std::abs(r.o_lowp[i] - r.o[i]));
      ref = std::max(ref, std::abs(r.o[i]));
    }
    EXPECT_GT(err, 0.0) << flash::dtype_name(t);
    EXPECT_LT(err, (t == DType::f32 ? 1e-5 : 0.02) * ref) << flash::dtype_name(t);
  }
}

// L(q, k, v, sinks) = sum(O * dO) by the forward reference.
double loss_of(const Problem& p, const Inputs& in, const std::vector<double>& dout) {
  const auto r = flash::reference::forward(p, in.q, in.k, in.v, std::nullopt, {}, 1);
  double l = 0;
  for (std::size_t i = 0; i < r.o.size(); ++i) l += r.o[i] * dout[i];
  return l;
}

// Every gradient element, dsinks included, against a central finite
// difference of the forward with the problem's modifiers.
void check_modifiers_against_finite_differences(Problem p, std::uint64_t seed, double gain) {
  Inputs in = random_inputs(p, seed, gain);
  const auto dout = randn(in.q.size(), seed + 3);
  const auto g = flash::reference::backward(p, in.q, in.k, in.v, dout, 1);
  ASSERT_EQ(g.dsinks.size(), p.sinks.size());
  constexpr double kStep = 1e-5;
  auto central = [&](double& x) {
    const double saved = x;
    x = saved + kStep;
    const double up = loss_of(p, in, dout);
    x = saved - kStep;
    const double down = loss_of(p, in, dout);
    x = saved;
    return (up - down) / (2 * kStep);
  };
  struct Input { const char* name; std::vector<double>* x; const std::vector<double>* grad; };
  const Input inputs[] = {
      {"dq", &in.q, &g.dq}, {"dk", &in.k, &g.dk}, {"dv", &in.v, &g.dv}, {"dsinks", &p.sinks, &g.dsinks}};
  for (const auto& input : inputs)
    for (std::size_t i = 0; i < input.x->size(); ++i) {
      const double numeric = central((*input.x)[i]);
      EXPECT_NEAR((*input.grad)[i], numeric, 1e-7 * (1 + std::abs(numeric))) << input.name << "[" << i << "]";
    }
}

TEST(ReferenceBackward, MatchesFiniteDifferencesWithSoftcap) {
  // Scores of a few units against a cap of 1.5: deep in tanh's bend.
  check_modifiers_against_finite_differences({.batch = 2, .seqlen_q = 3, .seqlen_k = 4, .heads_q = 2, .heads_kv = 1,
                                              .head_dim = 3, .softmax_scale = 0.6, .softcap = 1.5},
                                             181, 2.0);
}

TEST(ReferenceBackward, MatchesFiniteDifferencesWithSinks) {
  // dsinks sums over the batch and the rows; sinks of both signs, one large.
  check_modifiers_against_finite_differences({.batch = 2, .seqlen_q = 3, .seqlen_k = 4, .heads_q = 3, .heads_kv = 1,
                                              .head_dim = 2, .softmax_scale = 0.7, .sinks = {-1.5, 0.4, 3.0}},
                                             191, 1.0);
}

TEST(ReferenceBackward, MatchesFiniteDifferencesWithAlibi) {
  check_modifiers_against_finite_differences({.batch = 2, .seqlen_q = 4, .seqlen_k = 3, .heads_q = 2, .heads_kv = 2,
                                              .head_dim = 2, .softmax_scale = 0.8,
                                              .alibi_slopes = {0.4, 0.1, 0.9, 0.0}},
                                             201, 1.0);
}

TEST(ReferenceBackward, MatchesFiniteDifferencesWithEveryModifierAndAMask) {
  // Causal with seqlen_q > seqlen_k: row 0 sees no key (no gradient, no
  // share of dsinks); a window on top; GQA.
  check_modifiers_against_finite_differences(
      {.batch = 2, .seqlen_q = 5, .seqlen_k = 4, .heads_q = 4, .heads_kv = 2, .head_dim = 3, .softmax_scale = 0.5,
       .causal = true, .window_left = 2, .softcap = 2.0, .alibi_slopes = {0.3, 0.0, 0.6, 0.2},
       .sinks = {0.5, -2.0, 1.0, 4.0}},
      211, 1.5);
}

// dsinks_lowp carries the rounding of O to the dtype (the kernels' rowsum(dO
// * O) reads the forward's O): nonzero, and about the dtype's precision.
TEST(ReferenceBackward, LowPrecisionDsinksCarryTheRoundingOfO) {
  Problem p{.batch = 2, .seqlen_q = 24, .seqlen_k = 40, .heads_q = 4, .heads_kv = 1, .head_dim = 16,
            .softmax_scale = 0.25, .causal = true, .softcap = 3.0, .sinks = {-1.0, 0.5, 2.0, 1.5}};
  const auto in = random_inputs(p, 221);
  const auto dout = randn(in.q.size(), 222);
  const auto g = flash::reference::backward(p, in.q, in.k, in.v, dout, 1, DType::bf16);
  ASSERT_EQ(g.dsinks.size(), 4u);
  ASSERT_EQ(g.dsinks_lowp.size(), 4u);
  double err = 0, ref = 0;
  for (int h = 0; h < 4; ++h) {
    err = std::max(err, std::abs(g.dsinks_lowp[h] - g.dsinks[h]));
    ref = std::max(ref, std::abs(g.dsinks[h]));
  }
  EXPECT_GT(err, 0.0);
  EXPECT_LT(err, 0.05 * ref);
  // Without sinks there is no dsinks.
  p.sinks.clear();
  const auto none = flash::reference::backward(p, in.q, in.k, in.v, dout, 1, DType::bf16);
  EXPECT_TRUE(none.dsinks.empty());
  EXPECT_TRUE(none.dsinks_lowp.empty());
}

// The low-precision model of the backward takes the softcap's derivative
// too: with scores deep in tanh's bend, dq and dk of the model stay within
// bf16 error of the fp64 ones (without the derivative they would be off by
// about the factor 1 - tanh^2 itself).
TEST(ReferenceBackward, LowPrecisionModelCarriesTheSoftcap) {
  Problem p{.batch = 1, .seqlen_q = 24, .seqlen_k = 40, .heads_q = 2, .heads_kv = 1, .head_dim = 16,
            .softmax_scale = 0.25, .softcap = 2.0, .alibi_slopes = {0.05, 0.2}, .sinks = {0.0, 1.0}};
  const auto in = random_inputs(p, 241, 3.0);
  const auto dout = randn(in.q.size(), 242);
  const auto g = flash::reference::backward(p, in.q, in.k, in.v, dout, 1, DType::bf16);
  const std::vector<double>* exact[3] = {&g.dq, &g.dk, &g.dv};
  const std::vector<double>* lowp[3] = {&g.dq_lowp, &g.dk_lowp, &g.dv_lowp};
  for (int t = 0; t < 3; ++t) {
    double err = 0, ref = 0;
    for (std::size_t e = 0; e < exact[t]->size(); ++e) {
      err = std::max(err, std::abs((*lowp[t])[e] - (*exact[t])[e]));
      ref = std::max(ref, std::abs((*exact[t])[e]));
    }
    EXPECT_GT(err, 0.0) << "gradient " << t;
    EXPECT_LT(err, 0.03 * ref) << "gradient " << t;
  }
}

TEST(ReferenceBackward, ThreadsDoNotChangeTheResultWithModifiers) {
  Problem p{.batch = 3, .seqlen_q = 7, .seqlen_k = 9, .heads_q = 4, .heads_kv = 2, .head_dim = 8, .softmax_scale = 0.35,
            .softcap = 2.5, .alibi_slopes = {0.1, 0.2, 0.3, 0.4}, .sinks = {0.1, -0.2, 0.3, 1.4}};
  const auto in = random_inputs(p, 231);
  const auto dout = randn(in.q.size(), 232);
  const auto a = flash::reference::backward(p, in.q, in.k, in.v, dout, 1, DType::f16);
  const auto b = flash::reference::backward(p, in.q, in.k, in.v, dout, 4, DType::f16);
  EXPECT_EQ(a.dq, b.dq);
  EXPECT_EQ(a.dk, b.dk);
  EXPECT_EQ(a.dv, b.dv);
  EXPECT_EQ(a.dsinks, b.dsinks);
  EXPECT_EQ(a.dsinks_lowp, b.dsinks_lowp);
}

}  // namespace
