// GPU tests of attention_backward (ctest label gpu): every built backward
// variant, in both modes (deterministic where the variant has
// kFeatureDeterministic; the others must refuse it), against the fp64 reference over the forward's
// shape grid, by FlashAttention's rule for gradients
//   max|g - ref| <= 3 * max|g_lowp - ref| + floor(dtype) * max|ref|
// for each of dq, dk, dv, with the gradients poisoned (NaN) before each call
// and every element checked written. O and the LSE come from the fp64
// forward reference, so a forward bug cannot hide a backward one.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "flash/flash.h"
#include "gpu_test.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::testing::BwdProblem;
using flash::testing::Layout;
using flash::testing::Shape;
using flash::gpu_test::base_seed;

using flash::gpu_test::runnable;

std::string describe(const flash::testing::BwdCheck& r) {
  return fmt::format("err dq {:.3g} (bound {:.3g}) dk {:.3g} ({:.3g}) dv {:.3g} ({:.3g}) dsinks {:.3g} ({:.3g}), "
                     "unwritten {} {}",
                     r.err[0], r.bound[0], r.err[1], r.bound[1], r.err[2], r.bound[2], r.err[3], r.bound[3],
                     r.unwritten, r.error);
}

// The modes variant v takes: deterministic = true only with kFeatureDeterministic.
std::vector<bool> modes(const flash::VariantInfo& v) {
  if (v.features & flash::kFeatureDeterministic) return {false, true};
  return {false};
}

// Every built variant that supports the case, in each of its modes.
void check_all_variants(BwdProblem& prob) {
  int checked = 0;
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, prob.dtype, prob.shape.head_dim)) continue;
    for (bool deterministic : modes(v)) {
      const auto r = flash::testing::run_and_check_backward(prob, v.name, deterministic);
      ++checked;
      EXPECT_TRUE(r.ok) << v.name << (deterministic ? " deterministic" : "") << ": " << describe(r);
    }
  }
  // A build of a subset of variants (FLASH_VARIANTS) may have none with this
  // head dim: skip, saying so. The full build has tiled for every head dim.
  if (checked == 0) {
    bool any = false;
    for (const auto& v : flash::backward_variants())
      for (int d : v.head_dims) any = any || (v.built && d == prob.shape.head_dim);
    if (!any) GTEST_SKIP() << "no built backward variant has head dim " << prob.shape.head_dim << " (FLASH_VARIANTS)";
  }
  EXPECT_GT(checked, 0) << "no built backward variant supports this case";
}

struct Heads {
  const char* name;
  int q, kv;
};
constexpr Heads kHeads[] = {{"mha", 2, 2}, {"gqa4", 8, 2}, {"mqa", 3, 1}};
constexpr int kSeqlens[][2] = {{1, 1}, {17, 17}, {113, 203}, {128, 128}, {257, 129}, {1023, 1024}};
constexpr int kHeadDims[] = {32, 64, 96, 128, 256};

using GridParam = std::tuple<DType, int, bool, int, int>;  // dtype, head dim, causal, seqlens, heads
class BackwardGrid : public ::testing::TestWithParam<GridParam> {};

TEST_P(BackwardGrid, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [dtype, head_dim, causal, seq_idx, heads_idx] = GetParam();
  const Shape s{.batch = 2, .seqlen_q = kSeqlens[seq_idx][0], .seqlen_k = kSeqlens[seq_idx][1],
                .heads_q = kHeads[heads_idx].q, .heads_kv = kHeads[heads_idx].kv, .head_dim = head_dim};
  const std::uint64_t seed = flash::gpu_test::test_seed();
  SCOPED_TRACE(fmt::format("seed {} shape b{} sq{} sk{} hq{} hkv{} d{} {}{}", seed, s.batch, s.seqlen_q, s.seqlen_k,
                           s.heads_q, s.heads_kv, s.head_dim, flash::dtype_name(dtype), causal ? " causal" : ""));
  auto prob = flash::testing::make_bwd_problem(s, dtype, causal, Layout::bshd, seed);
  check_all_variants(prob);
}

std::string grid_name(const ::testing::TestParamInfo<GridParam>& info) {
  const auto [dtype, head_dim, causal, seq_idx, heads_idx] = info.param;
  return fmt::format("{}_d{}_{}_sq{}_sk{}_{}", flash::dtype_name(dtype), head_dim, causal ? "causal" : "full",
                     kSeqlens[seq_idx][0], kSeqlens[seq_idx][1], kHeads[heads_idx].name);
}

INSTANTIATE_TEST_SUITE_P(Grid, BackwardGrid,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16), ::testing::ValuesIn(kHeadDims),
                                            ::testing::Bool(), ::testing::Range(0, 6), ::testing::Range(0, 3)),
                         grid_name);

// Sliding windows (gpu_test.h: kWindows, kWindowSeqlens).
using flash::gpu_test::WindowParam;
using flash::gpu_test::kWindows;
using flash::gpu_test::kWindowSeqlens;
class BackwardWindow : public ::testing::TestWithParam<WindowParam> {};

TEST_P(BackwardWindow, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [dtype, head_dim, win_idx, seq_idx] = GetParam();
  const flash::gpu_test::WindowCase& w = kWindows[win_idx];
  const Shape s{.batch = 2, .seqlen_q = kWindowSeqlens[seq_idx][0], .seqlen_k = kWindowSeqlens[seq_idx][1],
                .heads_q = 8, .heads_kv = 2, .head_dim = head_dim, .window_left = w.left, .window_right = w.right};
  const std::uint64_t seed = flash::gpu_test::test_seed();
  SCOPED_TRACE(fmt::format("seed {} sq{} sk{} d{} {} window ({}, {}){}", seed, s.seqlen_q, s.seqlen_k, head_dim,
                           flash::dtype_name(dtype), w.left, w.right, w.causal ? " causal" : ""));
  auto prob = flash::testing::make_bwd_problem(s, dtype, w.causal, Layout::bshd, seed);
  check_all_variants(prob);
}

INSTANTIATE_TEST_SUITE_P(Window, BackwardWindow,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16), ::testing::Values(64, 128, 256),
                                            ::testing::Range(0, flash::gpu_test::kNumWindows),
                                            ::testing::Range(0, flash::gpu_test::kNumWindowSeqlens)),
                         flash::gpu_test::window_name);

// Score modifiers (gpu_test.h: kScoreCases x kScoreGeometries, a sparse
// cross over head dims), dsinks checked with the gradients whenever the call
// has sinks. Every variant whose features have the bits the call needs
// matches the reference in both modes; a variant that lacks a score
// modifier's bit refuses the call with a flash::Error naming it, and writes
// nothing.
void check_scores_all_variants(BwdProblem& prob) {
  const unsigned needed = flash::gpu_test::needed_features(prob.shape, prob.causal, /*lse=*/false);
  int checked = 0;
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, prob.dtype, prob.shape.head_dim)) continue;
    const unsigned missing = needed & ~v.features;
    if (missing & ~flash::kScoreFeatures) continue;  // a mask or shape it does not take: not this suite's concern
    if (missing != 0) {
      const auto r = flash::testing::run_and_check_backward(prob, v.name);
      flash::gpu_test::expect_refusal(r.error, missing, v.name);
      std::size_t written = 0;
      for (double x : flash::testing::download(prob.args.dq)) written += !std::isnan(x);
      EXPECT_EQ(written, 0u) << v.name << ": a refused call wrote dq";
      continue;
    }
    for (bool deterministic : modes(v)) {
      const auto r = flash::testing::run_and_check_backward(prob, v.name, deterministic);
      ++checked;
      EXPECT_TRUE(r.ok) << v.name << (deterministic ? " deterministic" : "") << ": " << describe(r);
    }
  }
  EXPECT_GT(checked, 0) << "no built backward variant supports this case";
}

using flash::gpu_test::ScoreParam;
using flash::gpu_test::kScoreCases;
using flash::gpu_test::kScoreGeometries;
class BackwardScores : public ::testing::TestWithParam<ScoreParam> {};

TEST_P(BackwardScores, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, geo_idx, dtype] = GetParam();
  const auto& g = kScoreGeometries[geo_idx];
  const Shape s =
      flash::gpu_test::score_shape(kScoreCases[case_idx], g, flash::gpu_test::score_head_dim(case_idx, geo_idx));
  const std::uint64_t seed = flash::gpu_test::test_seed();
  auto prob = flash::testing::make_bwd_problem(s, dtype, g.causal, Layout::bshd, seed);
  SCOPED_TRACE(flash::gpu_test::score_trace(seed, s, dtype, g.causal, prob.scores));
  check_scores_all_variants(prob);
}

INSTANTIATE_TEST_SUITE_P(Scores, BackwardScores,
                         ::testing::Combine(::testing::Range(0, flash::gpu_test::kNumScoreCases),
                                            ::testing::Range(0, flash::gpu_test::kNumScoreGeometries),
                                            ::testing::Values(DType::bf16, DType::f16)),
                         flash::gpu_test::score_name);

// The variants that take every score modifier.
std::vector<std::string> score_variants(DType dtype, int head_dim) {
  std::vector<std::string> names;
  for (const auto& v : flash::backward_variants())
    if (runnable(v, dtype, head_dim) && (v.features & flash::kScoreFeatures) == flash::kScoreFeatures)
      names.push_back(v.name);
  return names;
}

// dsinks is optional: sinks without it give the same dq, dk and dv.
TEST(BackwardScoresEdges, SinksWithoutDsinks) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 2, .seqlen_q = 113, .seqlen_k = 203, .heads_q = 8, .heads_kv = 2, .head_dim = 128,
                .softcap = 30.0f, .sinks = true, .qk_gain = 4.0};
  auto prob = flash::testing::make_bwd_problem(s, DType::bf16, true, Layout::bshd, base_seed());
  prob.args.dsinks.reset();
  for (const std::string& name : score_variants(DType::bf16, 128))
    for (bool deterministic : {false, true}) {
      const auto r = flash::testing::run_and_check_backward(prob, name, deterministic);
      EXPECT_TRUE(r.ok) << name << (deterministic ? " deterministic" : "") << ": " << describe(r);
    }
}

// Empty calls with sinks: no key (O = 0, so rowsum(dO * O) = 0), no query
// and no batch all give dsinks = 0, every element written.
TEST(BackwardScoresEdges, EmptyCallsZeroDsinks) {
  SKIP_WITHOUT_GPU();
  for (Shape s : {Shape{.batch = 2, .seqlen_q = 5, .seqlen_k = 0, .heads_q = 4, .heads_kv = 2, .head_dim = 64},
                  Shape{.batch = 2, .seqlen_q = 0, .seqlen_k = 7, .heads_q = 4, .heads_kv = 2, .head_dim = 64},
                  Shape{.batch = 0, .seqlen_q = 5, .seqlen_k = 7, .heads_q = 4, .heads_kv = 2, .head_dim = 64}}) {
    s.sinks = true;
    s.softcap = 10.0f;
    s.alibi = flash::testing::Alibi::per_head;
    auto prob = flash::testing::make_bwd_problem(s, DType::bf16, false, Layout::bshd, base_seed());
    for (const std::string& name : score_variants(DType::bf16, 64)) {
      const auto r = flash::testing::run_and_check_backward(prob, name);
      EXPECT_TRUE(r.ok) << name << " b " << s.batch << " sq " << s.seqlen_q << " sk " << s.seqlen_k << ": "
                        << describe(r);
    }
  }
}

// deterministic = true takes no floating-point atomics: dsinks, a sum over
// the batch and every row, is bit-identical from run to run like dq.
TEST(BackwardScoresEdges, DeterministicDsinks) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 3, .seqlen_q = 777, .seqlen_k = 640, .heads_q = 8, .heads_kv = 2, .head_dim = 64,
                .sinks = true};
  auto prob = flash::testing::make_bwd_problem(s, DType::bf16, false, Layout::bshd, base_seed());
  for (const std::string& name : score_variants(DType::bf16, 64)) {
    flash::BackwardArgs a = prob.args;
    a.kernel = name;
    a.deterministic = true;
    const std::size_t nq = flash::testing::view_bytes(a.dq), ns = flash::testing::view_bytes(*a.dsinks);
    std::vector<unsigned char> first(nq + ns), again(nq + ns);
    int differing_runs = 0;
    for (int run = 0; run < 10; ++run) {
      flash::testing::poison(a.dq);
      flash::testing::poison(*a.dsinks);
      flash::attention_backward(a);
      auto& dst = run == 0 ? first : again;
      ASSERT_EQ(cudaMemcpy(dst.data(), a.dq.data, nq, cudaMemcpyDeviceToHost), cudaSuccess);
      ASSERT_EQ(cudaMemcpy(dst.data() + nq, a.dsinks->data, ns, cudaMemcpyDeviceToHost), cudaSuccess);
      if (run > 0) differing_runs += std::memcmp(first.data(), again.data(), first.size()) != 0;
    }
    EXPECT_EQ(differing_runs, 0) << name << ": deterministic runs differ from the first (dq or dsinks)";
    const auto r = flash::testing::run_and_check_backward(prob, name, true);
    EXPECT_TRUE(r.ok) << name << ": " << describe(r);
  }
}

// Negative controls: a call that leaves out the softcap or the slopes must
// fail the check (O and the LSE come from the reference with them). Sinks
// change only dsinks in the backward (P = exp(S - LSE) and the LSE holds the
// sink), which the check compares element by element.
TEST(BackwardScoresChecker, FailsWithoutTheSoftcapOrTheSlopes) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 2, .seqlen_q = 113, .seqlen_k = 203, .heads_q = 8, .heads_kv = 2, .head_dim = 64,
                .softcap = 15.0f, .alibi = flash::testing::Alibi::per_batch, .sinks = true, .qk_gain = 4.0};
  auto prob = flash::testing::make_bwd_problem(s, DType::bf16, true, Layout::bshd, base_seed());
  for (const std::string& name : score_variants(DType::bf16, 64)) {
    EXPECT_TRUE(flash::testing::run_and_check_backward(prob, name).ok) << name << ": with every modifier";
    prob.args.softcap = 0.0f;
    auto r = flash::testing::run_and_check_backward(prob, name);
    EXPECT_FALSE(r.ok) << name << ": passed without the softcap (" << describe(r) << ")";
    prob.args.softcap = s.softcap;
    prob.args.alibi_slopes.reset();
    r = flash::testing::run_and_check_backward(prob, name);
    EXPECT_FALSE(r.ok) << name << ": passed without the ALiBi slopes (" << describe(r) << ")";
    prob.scores.apply(prob.args);
  }
}

// The Hopper rung's tiles (see BackwardTiles) under a softcap and ALiBi,
// whose gradient recovers tanh from P and the LSE: a key block with one key,
// query steps of one row or mostly padding (LSE +inf, P = 0), rows that see
// no key (causal, seqlen_q > seqlen_k), GQA 8; full, causal and a window.
// Every variant that takes the modifiers, in both modes.
TEST(BackwardScoresEdges, RaggedTilesWithModifiers) {
  SKIP_WITHOUT_GPU();
  const std::pair<int, int> lengths[] = {{1, 17}, {17, 1}, {200, 333}, {300, 40}};
  for (int d : {64, 128})
    for (int i = 0; i < 4; ++i) {
      const auto [sq, sk] = lengths[i];
      const int mask = (i + d / 64) % 3;  // 0 full, 1 causal, 2 window (100, 30)
      const Shape s{.batch = 1, .seqlen_q = sq, .seqlen_k = sk, .heads_q = 8, .heads_kv = 1, .head_dim = d,
                    .window_left = mask == 2 ? 100 : -1, .window_right = mask == 2 ? 30 : -1, .softcap = 30.0f,
                    .alibi = flash::testing::Alibi::per_head, .qk_gain = 4.0};
      const DType dtype = (sq + d) % 2 ? DType::f16 : DType::bf16;
      auto prob = flash::testing::make_bwd_problem(s, dtype, mask == 1, Layout::bshd, base_seed() + sq * 7 + sk + d);
      SCOPED_TRACE(flash::gpu_test::score_trace(base_seed() + sq * 7 + sk + d, s, dtype, mask == 1, prob.scores));
      check_scores_all_variants(prob);
    }
}

// BHSD memory through strided views, and several key blocks per CTA walk.
TEST(BackwardLayouts, StridedBhsdViews) {
  SKIP_WITHOUT_GPU();
  for (bool causal : {false, true})
    for (int d : {64, 128, 256}) {
      const Shape s{.batch = 2, .seqlen_q = 300, .seqlen_k = 520, .heads_q = 4, .heads_kv = 2, .head_dim = d};
      SCOPED_TRACE(fmt::format("bhsd d{} causal {}", d, causal));
      auto prob = flash::testing::make_bwd_problem(s, DType::bf16, causal, Layout::bhsd, base_seed() + d + causal);
      check_all_variants(prob);
    }
}

// k and v expanded over the batch (batch stride 0; dk and dv BSHD, one per
// sequence): every variant that takes the call, in each of its modes, and
// auto (the Hopper rungs refuse such views by name).
TEST(BackwardLayouts, KvExpandedOverTheBatch) {
  SKIP_WITHOUT_GPU();
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      const Shape s{.batch = 3, .seqlen_q = 130, .seqlen_k = 200, .heads_q = 4, .heads_kv = 2, .head_dim = d};
      SCOPED_TRACE(fmt::format("kv expanded d{} causal {}", d, causal));
      auto prob = flash::testing::make_bwd_problem(s, DType::bf16, causal, Layout::kv_expanded, base_seed() + d + causal);
      ASSERT_EQ(prob.args.k.stride[0], 0);
      ASSERT_NE(prob.args.dk.stride[0], 0);
      int checked = 0;
      for (const auto& v : flash::backward_variants()) {
        if (!runnable(v, DType::bf16, d)) continue;
        for (bool deterministic : modes(v)) {
          const auto r = flash::testing::run_and_check_backward(prob, v.name, deterministic);
          if (!r.error.empty() && r.error.find("stride") != std::string::npos) continue;  // refused by name
          ++checked;
          EXPECT_TRUE(r.ok) << v.name << (deterministic ? " deterministic" : "") << ": " << describe(r);
        }
      }
      EXPECT_GT(checked, 0) << "no built variant takes expanded k and v";
      const auto r = flash::testing::run_and_check_backward(prob, "auto");
      EXPECT_TRUE(r.ok) << "auto: " << describe(r);
    }
}

// The Hopper rung's tiles (bwd_03_wgmma: 128-key blocks, query tiles of 64
// rows at hdim 128 and 128 at hdim 64, two 64-key warpgroups): lengths off
// both tile sizes, a key block with a single key, query tiles with one row
// (and 128-row tiles whose second 64 rows are all padding, or partly: 200),
// and GQA group 8 (the steps walk every query head of the group), full,
// causal and a window.
TEST(BackwardTiles, RaggedLengthsAndWideGroups) {
  SKIP_WITHOUT_GPU();
  const std::pair<int, int> lengths[] = {{1000, 1000}, {129, 1000}, {1000, 129}, {65, 257}, {1, 17}, {17, 1}, {200, 333}};
  for (int d : {64, 128})
    for (auto [sq, sk] : lengths)
      for (int mask = 0; mask < 3; ++mask) {
        const Shape s{.batch = 1, .seqlen_q = sq, .seqlen_k = sk, .heads_q = 8, .heads_kv = 1, .head_dim = d,
                      .window_left = mask == 2 ? 100 : -1, .window_right = mask == 2 ? 30 : -1};
        const DType dtype = (sq + d) % 2 ? DType::f16 : DType::bf16;
        SCOPED_TRACE(fmt::format("sq {} sk {} d{} {} {}", sq, sk, d, flash::dtype_name(dtype),
                                 mask == 0 ? "full" : mask == 1 ? "causal" : "window (100, 30)"));
        auto prob = flash::testing::make_bwd_problem(s, dtype, mask == 1, Layout::bshd, base_seed() + sq * 7 + sk + d);
        check_all_variants(prob);
      }
}

// Causal calls whose pairs the Hopper rungs take two at a time
// (bwd_head_group: the replay of 12 pairs of 12 key blocks of 1500 causal
// rows on 132 SMs, the H200's, ends >= 3% sooner in groups of 2; other GPUs
// may keep the grid's order, which the other suites cover): GQA (2 query
// heads a KV head), both 16-bit dtypes, wgmma non-deterministic.
TEST(BackwardTiles, CausalPairsInGroups) {
  SKIP_WITHOUT_GPU();
  bool found = false;
  for (const auto& v : flash::backward_variants())
    found = found || (v.name == std::string("wgmma") && runnable(v, DType::bf16, 128));
  if (!found) GTEST_SKIP() << "wgmma does not run here (sm_90a only)";
  for (DType dtype : {DType::bf16, DType::f16}) {
    const Shape s{.batch = 4, .seqlen_q = 1500, .seqlen_k = 1500, .heads_q = 6, .heads_kv = 3, .head_dim = 128};
    SCOPED_TRACE(flash::dtype_name(dtype));
    auto prob = flash::testing::make_bwd_problem(s, dtype, true, Layout::bshd, base_seed() + 1500);
    const auto r = flash::testing::run_and_check_backward(prob, "wgmma", false);
    EXPECT_TRUE(r.ok) << describe(r);
  }
}

// A variant without kFeatureDeterministic refuses deterministic = true by
// name, writing nothing, and auto then takes one that has it.
TEST(BackwardEdges, DeterministicNeedsTheFeature) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 1, .seqlen_q = 77, .seqlen_k = 91, .heads_q = 4, .heads_kv = 2, .head_dim = 64};
  auto prob = flash::testing::make_bwd_problem(s, DType::bf16, true, Layout::bshd, base_seed());
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, DType::bf16, 64) || (v.features & flash::kFeatureDeterministic)) continue;
    const auto r = flash::testing::run_and_check_backward(prob, v.name, true);
    EXPECT_NE(r.error.find("deterministic"), std::string::npos) << v.name << ": " << r.error;
    std::size_t written = 0;
    for (double x : flash::testing::download(prob.args.dq)) written += !std::isnan(x);
    EXPECT_EQ(written, 0u) << v.name << ": a refused call wrote dq";
  }
  flash::BackwardArgs a = prob.args;
  a.deterministic = true;
  const std::string picked = flash::plan_backward(a).kernel;
  for (const auto& v : flash::backward_variants())
    if (v.name == picked) EXPECT_TRUE(v.features & flash::kFeatureDeterministic) << picked;
}

// Query rows that see no key (causal with seqlen_q > seqlen_k) get dQ = 0,
// and keys no query sees get dK = dV = 0; both must still be written.
TEST(BackwardEdges, CausalRowsAndKeysWithoutPartners) {
  SKIP_WITHOUT_GPU();
  for (auto [sq, sk] : {std::pair{300, 40}, std::pair{40, 300}}) {
    const Shape s{.batch = 1, .seqlen_q = sq, .seqlen_k = sk, .heads_q = 4, .heads_kv = 1, .head_dim = 128};
    SCOPED_TRACE(fmt::format("sq {} sk {}", sq, sk));
    auto prob = flash::testing::make_bwd_problem(s, DType::f16, true, Layout::bshd, base_seed() + sq);
    check_all_variants(prob);
  }
}

// Empty calls: no keys gives dQ = 0, no queries gives dK = dV = 0, no batch
// is a no-op; every variant, every element written.
TEST(BackwardEdges, EmptyCallsWriteZeros) {
  SKIP_WITHOUT_GPU();
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, DType::bf16, 64)) continue;
    for (Shape s : {Shape{.batch = 2, .seqlen_q = 5, .seqlen_k = 0, .heads_q = 4, .heads_kv = 2, .head_dim = 64},
                    Shape{.batch = 2, .seqlen_q = 0, .seqlen_k = 7, .heads_q = 4, .heads_kv = 2, .head_dim = 64},
                    Shape{.batch = 0, .seqlen_q = 5, .seqlen_k = 7, .heads_q = 4, .heads_kv = 2, .head_dim = 64}}) {
      auto prob = flash::testing::make_bwd_problem(s, DType::bf16, false, Layout::bshd, base_seed());
      const auto r = flash::testing::run_and_check_backward(prob, v.name);
      EXPECT_TRUE(r.ok) << v.name << " sq " << s.seqlen_q << " sk " << s.seqlen_k << ": " << describe(r);
    }
  }
}

// The number of runs among `runs` calls of `a` (deterministic) whose dq, dk
// and dv differ in any bit from the first run's; the outputs are poisoned
// before each run, so an element left unwritten counts as a difference.
int runs_differing_from_the_first(const flash::BackwardArgs& a, int runs) {
  const std::size_t nq = flash::testing::view_bytes(a.dq), nk = flash::testing::view_bytes(a.dk);
  std::vector<unsigned char> first(nq + 2 * nk), again(nq + 2 * nk);
  int differing = 0;
  for (int run = 0; run < runs; ++run) {
    flash::testing::poison(a.dq);
    flash::testing::poison(a.dk);
    flash::testing::poison(a.dv);
    flash::attention_backward(a);
    auto& dst = run == 0 ? first : again;
    EXPECT_EQ(cudaMemcpy(dst.data(), a.dq.data, nq, cudaMemcpyDeviceToHost), cudaSuccess) << a.kernel;
    EXPECT_EQ(cudaMemcpy(dst.data() + nq, a.dk.data, nk, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dst.data() + nq + nk, a.dv.data, nk, cudaMemcpyDeviceToHost), cudaSuccess);
    if (run > 0) differing += std::memcmp(first.data(), again.data(), first.size()) != 0;
  }
  return differing;
}

// deterministic = true: bit-identical gradients over 50 runs of a shape
// whose grid fills the GPU many times over (where atomics would reorder).
TEST(BackwardDeterminism, FiftyRunsAreBitIdentical) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 4, .seqlen_q = 1024, .seqlen_k = 1024, .heads_q = 16, .heads_kv = 4, .head_dim = 128};
  auto prob = flash::testing::make_bwd_problem(s, DType::bf16, false, Layout::bshd, base_seed());
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, DType::bf16, 128) || !(v.features & flash::kFeatureDeterministic)) continue;
    flash::BackwardArgs a = prob.args;
    a.kernel = v.name;
    a.deterministic = true;
    EXPECT_EQ(runs_differing_from_the_first(a, 50), 0) << v.name << ": deterministic runs differ from the first";
    // And the deterministic result is the right one.
    const auto r = flash::testing::run_and_check_backward(prob, v.name, true);
    EXPECT_TRUE(r.ok) << v.name << ": " << describe(r);
  }
}

// The fixed order of dQ additions (bwd_03: a counter per query tile of
// each query head, the key blocks adding one after another, CTAs waiting
// for CTAs launched before them): GQA group 8 (each query head of the group
// its own counters), causal with seqlen_q < seqlen_k (many key blocks, more
// CTAs than an H200 holds at once: 18 x 4 x 2 = 144, one per SM) and a
// window with seqlen_q > seqlen_k (query tiles that no key block visits),
// every head dim (hdim 256: bwd_04's ordered dQ writer): 30 bit-identical
// runs, then the reference. One test per head dim, so that sharded runs
// spread them (together they took 143 s, the backward suites' longest).
class OrderedDq : public ::testing::TestWithParam<int> {};

TEST_P(OrderedDq, UnderGqaAndMasks) {
  SKIP_WITHOUT_GPU();
  constexpr int kRuns = 30;
  const int d = GetParam();
  for (const Shape s : {Shape{.batch = 2, .seqlen_q = 600, .seqlen_k = 2200, .heads_q = 32, .heads_kv = 4, .head_dim = d},
                        Shape{.batch = 2, .seqlen_q = 1600, .seqlen_k = 1200, .heads_q = 16, .heads_kv = 2,
                              .head_dim = d, .window_left = 300, .window_right = 100}}) {
    const bool causal = s.window_left < 0;
    SCOPED_TRACE(fmt::format("d{} sq {} sk {} {}", d, s.seqlen_q, s.seqlen_k, causal ? "causal" : "window (300, 100)"));
    auto prob = flash::testing::make_bwd_problem(s, DType::bf16, causal, Layout::bshd, base_seed() + d + s.seqlen_q);
    for (const auto& v : flash::backward_variants()) {
      if (!runnable(v, DType::bf16, d) || !(v.features & flash::kFeatureDeterministic)) continue;
      flash::BackwardArgs a = prob.args;
      a.kernel = v.name;
      a.deterministic = true;
      EXPECT_EQ(runs_differing_from_the_first(a, kRuns), 0) << v.name << ": deterministic runs differ from the first";
      const auto r = flash::testing::run_and_check_backward(prob, v.name, true);
      EXPECT_TRUE(r.ok) << v.name << ": " << describe(r);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BackwardDeterminism, OrderedDq, ::testing::Values(64, 128, 256),
                         [](const ::testing::TestParamInfo<int>& info) { return fmt::format("d{}", info.param); });

TEST(BackwardEdges, CallerWorkspace) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 1, .seqlen_q = 77, .seqlen_k = 91, .heads_q = 2, .heads_kv = 1, .head_dim = 64};
  auto prob = flash::testing::make_bwd_problem(s, DType::f16, true, Layout::bshd, base_seed());
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, DType::f16, 64)) continue;
    for (bool deterministic : modes(v)) {
      flash::BackwardArgs a = prob.args;
      a.kernel = v.name;
      a.deterministic = deterministic;
      const auto plan = flash::plan_backward(a);
      EXPECT_EQ(plan.kernel, v.name);
      ASSERT_GT(plan.workspace_bytes, 0u);
      flash::testing::DeviceBuffer ws(plan.workspace_bytes);
      prob.args.workspace = ws.get();
      prob.args.workspace_bytes = plan.workspace_bytes;
      const auto r = flash::testing::run_and_check_backward(prob, v.name, deterministic);
      EXPECT_TRUE(r.ok) << v.name << ": " << describe(r);
      prob.args.workspace_bytes = plan.workspace_bytes - 1;
      const auto small = flash::testing::run_and_check_backward(prob, v.name, deterministic);
      EXPECT_NE(small.error.find("workspace_bytes"), std::string::npos) << v.name << ": " << small.error;
      prob.args.workspace = nullptr;
      prob.args.workspace_bytes = 0;
    }
  }
}

// A caller's workspace full of NaNs. Deterministic calls do not zero their
// dQ accumulator: each tile's first addition stores, and only the tiles
// whose rows see no key get zeros (common/hopper/bwd_tma.cuh, BwdDqOrder);
// a row the kernels left unwritten would read NaN and fail the check. Rows
// that see no key (causal with seqlen_q > seqlen_k, a window below the
// diagonal's reach), tiles that hold both kinds, ragged tails and GQA, at
// every head dim, in both modes. (A tile with padding rows that no key
// block sees, which only a sequence without keys has, is
// VarlenBwdEdges.AutoAndCallerWorkspace's case.)
TEST(BackwardEdges, PoisonedCallerWorkspace) {
  SKIP_WITHOUT_GPU();
  int checked = 0;
  for (int d : {64, 128, 256})
    for (const Shape s : {Shape{.batch = 2, .seqlen_q = 333, .seqlen_k = 190, .heads_q = 4, .heads_kv = 2, .head_dim = d},
                          Shape{.batch = 1, .seqlen_q = 700, .seqlen_k = 200, .heads_q = 2, .heads_kv = 1, .head_dim = d,
                                .window_left = 30, .window_right = 10},
                          Shape{.batch = 1, .seqlen_q = 257, .seqlen_k = 300, .heads_q = 3, .heads_kv = 1, .head_dim = d,
                                .window_left = -1, .window_right = 5}}) {
      const bool causal = s.seqlen_q > s.seqlen_k && s.window_left < 0;
      SCOPED_TRACE(fmt::format("d{} sq {} sk {} window ({}, {}){}", d, s.seqlen_q, s.seqlen_k, s.window_left,
                               s.window_right, causal ? " causal" : ""));
      auto prob = flash::testing::make_bwd_problem(s, DType::bf16, causal, Layout::bshd, base_seed() + d + s.seqlen_q);
      for (const auto& v : flash::backward_variants()) {
        if (!runnable(v, DType::bf16, d)) continue;
        for (bool deterministic : modes(v)) {
          flash::BackwardArgs a = prob.args;
          a.kernel = v.name;
          a.deterministic = deterministic;
          const auto plan = flash::plan_backward(a);
          if (plan.workspace_bytes == 0) continue;
          flash::testing::DeviceBuffer ws(plan.workspace_bytes);
          ASSERT_EQ(cudaMemset(ws.get(), 0xFF, plan.workspace_bytes), cudaSuccess);
          prob.args.workspace = ws.get();
          prob.args.workspace_bytes = plan.workspace_bytes;
          const auto r = flash::testing::run_and_check_backward(prob, v.name, deterministic);
          ++checked;
          EXPECT_TRUE(r.ok) << v.name << (deterministic ? " deterministic" : "") << ": " << describe(r);
          prob.args.workspace = nullptr;
          prob.args.workspace_bytes = 0;
        }
      }
    }
  EXPECT_GT(checked, 0) << "no backward variant with a workspace was built";
}

// Negative controls: the checker must fail when the kernel computes
// something else, or the grid above would prove nothing.
TEST(BackwardChecker, FailsWhenTheMaskDiffers) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 1, .seqlen_q = 113, .seqlen_k = 203, .heads_q = 4, .heads_kv = 2, .head_dim = 64};
  auto prob = flash::testing::make_bwd_problem(s, DType::bf16, false, Layout::bshd, base_seed());
  prob.args.causal = true;  // the kernel runs causal against a non-causal reference
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, DType::bf16, 64)) continue;
    const auto r = flash::testing::run_and_check_backward(prob, v.name);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.ok) << v.name << ": a causal gradient passed a non-causal reference (" << describe(r) << ")";
  }
}

TEST(BackwardChecker, PoisonRevealsAnUnwrittenRow) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 1, .seqlen_q = 40, .seqlen_k = 40, .heads_q = 2, .heads_kv = 2, .head_dim = 64};
  auto prob = flash::testing::make_bwd_problem(s, DType::f16, false, Layout::bshd, base_seed());
  for (const auto& v : flash::backward_variants()) {
    if (!runnable(v, DType::f16, 64)) continue;
    // Hand the kernel views of the first 39 query rows: row 39 of dq keeps its poison.
    flash::BackwardArgs a = prob.args;
    a.kernel = v.name;
    a.q.shape[1] = a.o.shape[1] = a.dout.shape[1] = a.dq.shape[1] = a.lse.shape[2] = 39;
    flash::testing::poison(prob.args.dq);
    flash::attention_backward(a);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::size_t nan = 0;
    for (double x : flash::testing::download(prob.args.dq)) nan += std::isnan(x);
    EXPECT_EQ(nan, std::size_t(2 * 64)) << v.name << ": exactly row 39 of both heads stays poisoned";
  }
}

TEST(BackwardEdges, AutoPicksTheLastSupportingVariant) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 1, .seqlen_q = 16, .seqlen_k = 16, .heads_q = 1, .heads_kv = 1, .head_dim = 64};
  auto prob = flash::testing::make_bwd_problem(s, DType::bf16, false, Layout::bshd, base_seed());
  std::string expected;
  for (const auto& v : flash::backward_variants())
    if (runnable(v, DType::bf16, 64)) expected = v.name;
  EXPECT_EQ(flash::plan_backward(prob.args).kernel, expected);
}

}  // namespace
