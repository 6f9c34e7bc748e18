// GPU tests (ctest label gpu): every built variant against the fp64 reference
// over the foundation grid, by FlashAttention's rule
//   max|out - ref| <= 2 * max|out_lowp - ref| + floor(dtype) * max|ref|,
// LSE too, with outputs poisoned (NaN) before each call and every element
// checked written. Fresh random inputs for every case: the base seed is
// random unless FLASH_TEST_SEED is set, and printed so a failure can be rerun.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <random>
#include <string>
#include <tuple>

#include "flash/flash.h"
#include "gpu_test.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::testing::Layout;
using flash::testing::Shape;

using flash::gpu_test::base_seed;
using flash::gpu_test::no_gpu_reason;

using flash::gpu_test::runnable;

struct Heads {
  const char* name;
  int q, kv;
};
constexpr Heads kHeads[] = {{"mha", 2, 2}, {"gqa4", 8, 2}, {"mqa", 3, 1}};
constexpr int kSeqlens[][2] = {{1, 1}, {17, 17}, {113, 203}, {128, 128}, {257, 129}, {1023, 1024}};
constexpr int kHeadDims[] = {32, 64, 96, 128, 256};

// One variant's result on a problem: no error, every output written, O and
// the LSE within their bounds.
void expect_passed(const flash::testing::CheckResult& r, const std::string& name) {
  EXPECT_TRUE(r.error.empty()) << name << ": " << r.error;
  EXPECT_EQ(r.unwritten, 0u) << name << ": output elements left unwritten";
  EXPECT_LE(r.max_err, r.bound) << name << ": O error over the bound";
  EXPECT_LE(r.lse_err, r.lse_bound) << name << ": LSE error over the bound";
}

// Runs every built variant that supports (dtype, head_dim) on one problem.
void check_all_variants(const Shape& s, DType dtype, bool causal, Layout layout, std::uint64_t seed) {
  auto prob = flash::testing::make_problem(s, dtype, causal, layout, seed);
  int checked = 0;
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, dtype, s.head_dim)) continue;
    ++checked;
    expect_passed(flash::testing::run_and_check(prob, v.name), v.name);
  }
  EXPECT_GT(checked, 0) << "no built variant supports this case";
}

using GridParam = std::tuple<DType, int, bool, int, int>;  // dtype, head dim, causal, seqlen index, heads index

class ForwardGrid : public ::testing::TestWithParam<GridParam> {};

TEST_P(ForwardGrid, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [dtype, head_dim, causal, seq_idx, heads_idx] = GetParam();
  Shape s;
  s.batch = 2;
  s.seqlen_q = kSeqlens[seq_idx][0];
  s.seqlen_k = kSeqlens[seq_idx][1];
  s.heads_q = kHeads[heads_idx].q;
  s.heads_kv = kHeads[heads_idx].kv;
  s.head_dim = head_dim;
  const std::uint64_t seed = flash::gpu_test::test_seed();
  SCOPED_TRACE(fmt::format("seed {} shape b{} sq{} sk{} hq{} hkv{} d{} {}{}", seed, s.batch, s.seqlen_q, s.seqlen_k,
                           s.heads_q, s.heads_kv, s.head_dim, flash::dtype_name(dtype), causal ? " causal" : ""));
  check_all_variants(s, dtype, causal, Layout::bshd, seed);
}

std::string grid_name(const ::testing::TestParamInfo<GridParam>& info) {
  const auto [dtype, head_dim, causal, seq_idx, heads_idx] = info.param;
  return fmt::format("{}_d{}_{}_sq{}_sk{}_{}", flash::dtype_name(dtype), head_dim, causal ? "causal" : "full",
                     kSeqlens[seq_idx][0], kSeqlens[seq_idx][1], kHeads[heads_idx].name);
}

INSTANTIATE_TEST_SUITE_P(Grid, ForwardGrid,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16, DType::f32),
                                            ::testing::ValuesIn(kHeadDims), ::testing::Bool(),
                                            ::testing::Range(0, 6), ::testing::Range(0, 3)),
                         grid_name);

// Sliding windows (gpu_test.h: kWindows, kWindowSeqlens).
using flash::gpu_test::WindowParam;
using flash::gpu_test::kWindows;
using flash::gpu_test::kWindowSeqlens;

class ForwardWindow : public ::testing::TestWithParam<WindowParam> {};

TEST_P(ForwardWindow, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [dtype, head_dim, win_idx, seq_idx] = GetParam();
  const flash::gpu_test::WindowCase& w = kWindows[win_idx];
  Shape s{.batch = 2, .seqlen_q = kWindowSeqlens[seq_idx][0], .seqlen_k = kWindowSeqlens[seq_idx][1], .heads_q = 8,
          .heads_kv = 2, .head_dim = head_dim, .window_left = w.left, .window_right = w.right};
  const std::uint64_t seed = flash::gpu_test::test_seed();
  SCOPED_TRACE(fmt::format("seed {} sq{} sk{} d{} {} window ({}, {}){}", seed, s.seqlen_q, s.seqlen_k, head_dim,
                           flash::dtype_name(dtype), w.left, w.right, w.causal ? " causal" : ""));
  check_all_variants(s, dtype, w.causal, Layout::bshd, seed);
}

INSTANTIATE_TEST_SUITE_P(Window, ForwardWindow,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16, DType::f32),
                                            ::testing::Values(64, 128, 256), ::testing::Range(0, flash::gpu_test::kNumWindows),
                                            ::testing::Range(0, flash::gpu_test::kNumWindowSeqlens)),
                         flash::gpu_test::window_name);

// Causal windows wide enough for fwd_09's dynamic schedule (span >= 2048)
// whose left side binds (kWindows' wide causal window, 4096, is wider than
// its sequences), so that the schedule's tiles range from one key tile to
// the full span; seqlen_q above and below seqlen_k (rows that see no key
// when it is above). And two-sided windows as wide that do not cover every
// key (hdim 64 takes the dynamic schedule for them since session 51, the
// walk only where they do, as kWindows' l1500_r600 over its sequences).
// Last, a plain causal call past 4096 keys: dense causal calls up to 8192
// keys take the dynamic schedule since session 51 (window (-1, -1)).
class ForwardWindowWide : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(ForwardWindowWide, MatchesReference) {
  SKIP_WITHOUT_GPU();
  constexpr int kCases[][5] = {{2300, 2400, 2047, -1, 1},  // seqlen_q, seqlen_k, left, right, causal
                               {2400, 2300, 2100, -1, 1},
                               {2300, 2400, 1100, 1000, 0},
                               {2400, 2300, 1500, 700, 0},
                               {1000, 5000, -1, -1, 1}};
  const auto [head_dim, idx] = GetParam();
  const bool causal = kCases[idx][4] != 0;
  Shape s{.batch = 2, .seqlen_q = kCases[idx][0], .seqlen_k = kCases[idx][1], .heads_q = 4, .heads_kv = 2,
          .head_dim = head_dim, .window_left = kCases[idx][2], .window_right = kCases[idx][3]};
  const std::uint64_t seed = flash::gpu_test::test_seed();
  SCOPED_TRACE(fmt::format("seed {} sq{} sk{} d{} window ({}, {}){}", seed, s.seqlen_q, s.seqlen_k, head_dim,
                           s.window_left, s.window_right, causal ? " causal" : ""));
  check_all_variants(s, DType::bf16, causal, Layout::bshd, seed);
}

INSTANTIATE_TEST_SUITE_P(Window, ForwardWindowWide, ::testing::Combine(::testing::Values(64, 128, 256), ::testing::Range(0, 5)),
                         [](const ::testing::TestParamInfo<std::tuple<int, int>>& info) {
                           return fmt::format("d{}_case{}", std::get<0>(info.param), std::get<1>(info.param));
                         });

// Score modifiers (gpu_test.h: kScoreCases x kScoreGeometries, a sparse
// cross over head dims). Every variant whose features have the bits the call
// needs matches the reference; a variant that lacks a score modifier's bit
// refuses the call with a flash::Error naming it, and writes nothing.
void check_scores_all_variants(flash::testing::Problem& prob) {
  const unsigned needed = flash::gpu_test::needed_features(prob.shape, prob.causal, /*lse=*/true);
  int checked = 0;
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, prob.dtype, prob.shape.head_dim)) continue;
    const unsigned missing = needed & ~v.features;
    if (missing & ~flash::kScoreFeatures) continue;  // a mask or shape it does not take: not this suite's concern
    const auto r = flash::testing::run_and_check(prob, v.name);
    if (missing != 0) {
      flash::gpu_test::expect_refusal(r.error, missing, v.name);
      std::size_t written = 0;
      for (double x : flash::testing::download(prob.vo)) written += !std::isnan(x);
      EXPECT_EQ(written, 0u) << v.name << ": a refused call wrote O";
      continue;
    }
    ++checked;
    EXPECT_TRUE(r.error.empty()) << v.name << ": " << r.error;
    EXPECT_EQ(r.unwritten, 0u) << v.name << ": output elements left unwritten";
    EXPECT_LE(r.max_err, r.bound) << v.name << ": O error over the bound";
    EXPECT_LE(r.lse_err, r.lse_bound) << v.name << ": LSE error over the bound";
  }
  EXPECT_GT(checked, 0) << "no built variant supports this case";
}

using flash::gpu_test::ScoreParam;
using flash::gpu_test::kScoreCases;
using flash::gpu_test::kScoreGeometries;

class ForwardScores : public ::testing::TestWithParam<ScoreParam> {};

TEST_P(ForwardScores, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, geo_idx, dtype] = GetParam();
  const auto& g = kScoreGeometries[geo_idx];
  const Shape s =
      flash::gpu_test::score_shape(kScoreCases[case_idx], g, flash::gpu_test::score_head_dim(case_idx, geo_idx));
  const std::uint64_t seed = flash::gpu_test::test_seed();
  auto prob = flash::testing::make_problem(s, dtype, g.causal, Layout::bshd, seed);
  SCOPED_TRACE(flash::gpu_test::score_trace(seed, s, dtype, g.causal, prob.scores));
  check_scores_all_variants(prob);
}

INSTANTIATE_TEST_SUITE_P(Scores, ForwardScores,
                         ::testing::Combine(::testing::Range(0, flash::gpu_test::kNumScoreCases),
                                            ::testing::Range(0, flash::gpu_test::kNumScoreGeometries),
                                            ::testing::Values(DType::bf16, DType::f16)),
                         flash::gpu_test::score_name);
// f32 (the variants that take it) on the two smaller geometries.
INSTANTIATE_TEST_SUITE_P(ScoresF32, ForwardScores,
                         ::testing::Combine(::testing::Range(0, flash::gpu_test::kNumScoreCases),
                                            ::testing::Values(0, 1), ::testing::Values(DType::f32)),
                         flash::gpu_test::score_name);

// seqlen_k 0: every row sees no key, O = 0 and LSE = the sink of its head.
TEST(ForwardScoresEdges, NoKeysGivesTheSinkAsLse) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 2, .seqlen_q = 5, .seqlen_k = 0, .heads_q = 4, .heads_kv = 2, .head_dim = 64, .softcap = 20.0f,
                .alibi = flash::testing::Alibi::per_batch, .sinks = true};
  auto p = flash::testing::make_problem(s, DType::bf16, false, Layout::bshd, base_seed());
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::bf16, 64) || (v.features & flash::kScoreFeatures) != flash::kScoreFeatures) continue;
    const auto r = flash::testing::run_and_check(p, v.name);
    EXPECT_TRUE(r.ok) << v.name << " " << r.error << " unwritten " << r.unwritten << " err " << r.max_err << " lse err "
                      << r.lse_err;
  }
}

// Every variant that takes a softcap on shape s (its softcap and head dim
// replaced), at each of `caps`, bf16 and f16, head dims 64, 128 and 256.
void check_softcap_cross(Shape s, bool causal, std::initializer_list<float> caps) {
  for (const float cap : caps)
    for (const DType dtype : {DType::bf16, DType::f16})
      for (const int head_dim : {64, 128, 256}) {
        s.softcap = cap;
        s.head_dim = head_dim;
        const std::uint64_t seed = flash::gpu_test::test_seed();
        auto prob = flash::testing::make_problem(s, dtype, causal, Layout::bshd, seed);
        SCOPED_TRACE(flash::gpu_test::score_trace(seed, s, dtype, causal, prob.scores));
        check_scores_all_variants(prob);
      }
}

// Softcapped rows whose every score sits at the cap's floor: q and k drawn
// around opposite means give scores near -head_dim * 2.25 (tanh(s / c) near
// or at -1). A kernel that fixes the row max under a softcap instead of
// tracking it (tried 2026-11-25, docs/NOTES.md session 20) puts these rows'
// probabilities at the bottom of their range; had it gone under fp32's
// range, P would flush to 0 and O would come out 0, LSE -inf.
TEST(ForwardScoresEdges, SoftcapRowsAtTheFloor) {
  SKIP_WITHOUT_GPU();
  check_softcap_cross({.batch = 2, .seqlen_q = 257, .seqlen_k = 300, .heads_q = 4, .heads_kv = 2, .qk_mean = 1.5},
                      /*causal=*/true, {15.0f, 50.0f});
}

// Softcapped rows that see one key: O must be that key's v (P / sum P = 1,
// whatever P is). With the running max that P is exactly 1; under a fixed
// max (tried 2026-11-25) bf16 P in P V against an fp32 row sum left O 1 ulp
// off v, over the bound, on a one-key varlen sequence. Non-causal calls with
// one key, and causal ones of one query and one key.
TEST(ForwardScoresEdges, SoftcapRowsOfOneKey) {
  SKIP_WITHOUT_GPU();
  for (const bool causal : {false, true})
    check_softcap_cross({.batch = 3, .seqlen_q = causal ? 1 : 7, .seqlen_k = 1, .heads_q = 8, .heads_kv = 2,
                         .qk_gain = 8.0},
                        causal, {15.0f, 30.0f, 50.0f});
}

// Negative controls: with the same inputs, a call that leaves out one
// modifier must fail the check, or the suite above would not show that the
// kernels apply it (the cap bites, the slopes and the sinks matter).
TEST(ForwardScoresChecker, FailsWithoutEachModifier) {
  SKIP_WITHOUT_GPU();
  const Shape s{.batch = 2, .seqlen_q = 113, .seqlen_k = 203, .heads_q = 8, .heads_kv = 2, .head_dim = 64,
                .softcap = 15.0f, .alibi = flash::testing::Alibi::per_head, .sinks = true, .qk_gain = 8.0};
  auto p = flash::testing::make_problem(s, DType::bf16, true, Layout::bshd, base_seed());
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::bf16, 64) || (v.features & flash::kScoreFeatures) != flash::kScoreFeatures) continue;
    EXPECT_TRUE(flash::testing::run_and_check(p, v.name).ok) << v.name << ": with every modifier";
    const float softcap = p.scores.softcap;
    p.scores.softcap = 0.0f;
    auto r = flash::testing::run_and_check(p, v.name);
    EXPECT_FALSE(r.ok) << v.name << ": passed without the softcap (err " << r.max_err << ", bound " << r.bound << ")";
    p.scores.softcap = softcap;
    const auto slopes = p.scores.alibi_view;
    p.scores.alibi_view.reset();
    r = flash::testing::run_and_check(p, v.name);
    EXPECT_FALSE(r.ok) << v.name << ": passed without the ALiBi slopes (err " << r.max_err << ", bound " << r.bound
                       << ")";
    p.scores.alibi_view = slopes;
    const auto sinks = p.scores.sinks_view;
    p.scores.sinks_view.reset();
    r = flash::testing::run_and_check(p, v.name);
    EXPECT_FALSE(r.ok) << v.name << ": passed without the sinks (err " << r.max_err << ", bound " << r.bound << ")";
    p.scores.sinks_view = sinks;
  }
}

// BHSD memory ([batch, heads, seqlen, head_dim]) through strided views.
TEST(ForwardLayouts, StridedBhsdViews) {
  SKIP_WITHOUT_GPU();
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      Shape s{.batch = 2, .seqlen_q = 113, .seqlen_k = 203, .heads_q = 8, .heads_kv = 2, .head_dim = d};
      SCOPED_TRACE(fmt::format("bhsd d{} causal {}", d, causal));
      check_all_variants(s, DType::bf16, causal, Layout::bhsd, base_seed() + d + causal);
    }
}

// k and v expanded over the batch (batch stride 0: torch's expand of one
// sequence's keys, a prefix shared by every sequence of the batch). The
// Hopper rungs refuse such views by name (TMA maps step whole rows) and
// auto falls back to a variant that addresses by strides: every variant
// that takes the call must match the reference, and auto must take it.
TEST(ForwardLayouts, KvExpandedOverTheBatch) {
  SKIP_WITHOUT_GPU();
  for (bool causal : {false, true})
    for (int d : {64, 128}) {
      const Shape s{.batch = 3, .seqlen_q = 113, .seqlen_k = 203, .heads_q = 8, .heads_kv = 2, .head_dim = d};
      SCOPED_TRACE(fmt::format("kv expanded d{} causal {}", d, causal));
      auto prob = flash::testing::make_problem(s, DType::bf16, causal, Layout::kv_expanded, base_seed() + d + causal);
      ASSERT_EQ(prob.vk.stride[0], 0);
      int checked = 0;
      for (const auto& v : flash::forward_variants()) {
        if (!runnable(v, DType::bf16, d)) continue;
        const auto r = flash::testing::run_and_check(prob, v.name);
        if (!r.error.empty() && r.error.find("stride") != std::string::npos) continue;  // refused by name
        ++checked;
        expect_passed(r, v.name);
      }
      EXPECT_GT(checked, 0) << "no built variant takes expanded k and v";
      expect_passed(flash::testing::run_and_check(prob, "auto"), "auto");
    }
}

flash::ForwardArgs args_for(flash::testing::Problem& p, const std::string& kernel) {
  flash::ForwardArgs a;
  a.q = p.vq, a.k = p.vk, a.v = p.vv, a.o = p.vo, a.lse = p.vlse;
  a.kernel = kernel;
  return a;
}

TEST(ForwardEdges, EmptyBatchOrQueriesIsANoOp) {
  SKIP_WITHOUT_GPU();
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::bf16, 64)) continue;
    for (Shape s : {Shape{.batch = 0, .seqlen_q = 16, .seqlen_k = 16, .heads_q = 2, .heads_kv = 2, .head_dim = 64},
                    Shape{.batch = 2, .seqlen_q = 0, .seqlen_k = 16, .heads_q = 2, .heads_kv = 2, .head_dim = 64}}) {
      auto p = flash::testing::make_problem(s, DType::bf16, false, Layout::bshd, base_seed());
      EXPECT_NO_THROW(flash::attention_forward(args_for(p, v.name))) << v.name;
      EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    }
  }
}

TEST(ForwardEdges, NoKeysGivesZeroOutputAndMinusInfLse) {
  SKIP_WITHOUT_GPU();
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::bf16, 64)) continue;
    Shape s{.batch = 2, .seqlen_q = 5, .seqlen_k = 0, .heads_q = 4, .heads_kv = 2, .head_dim = 64};
    auto p = flash::testing::make_problem(s, DType::bf16, false, Layout::bshd, base_seed());
    const auto r = flash::testing::run_and_check(p, v.name);
    EXPECT_TRUE(r.ok) << v.name << " " << r.error << " unwritten " << r.unwritten << " err " << r.max_err;
  }
}

// Device metadata and no key anywhere (k with no rows, seqused_k all 0):
// every variant that takes seqused_k writes O = 0 and LSE = -inf, as
// without the metadata; a seqused_k past those 0 keys is refused naming
// seqused_k, and nothing is written.
TEST(ForwardEdges, NoKeysWithSequsedK) {
  SKIP_WITHOUT_GPU();
  Shape s{.batch = 2, .seqlen_q = 5, .seqlen_k = 0, .heads_q = 4, .heads_kv = 2, .head_dim = 64};
  auto p = flash::testing::make_problem(s, DType::bf16, false, Layout::bshd, base_seed());
  flash::testing::DeviceBuffer d_used(2 * sizeof(std::int32_t));
  const flash::TensorView used = flash::make_contiguous(d_used.get(), DType::i32, {2});
  int ran = 0;
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::bf16, 64) || !(v.features & flash::kFeatureVarlen)) continue;
    ++ran;
    flash::ForwardArgs a = args_for(p, v.name);
    a.seqused_k = used;
    for (const std::vector<double>& lens : {std::vector<double>{0, 0}, std::vector<double>{0, 1}}) {
      SCOPED_TRACE(fmt::format("{}: seqused_k {}", v.name, lens));
      flash::testing::upload(lens, used);
      flash::testing::poison(p.vo);
      flash::testing::poison(*a.lse);
      if (lens[1] == 0) {
        EXPECT_NO_THROW(flash::attention_forward(a));
        for (double x : flash::testing::download(p.vo)) ASSERT_EQ(x, 0.0);
        for (double x : flash::testing::download(*a.lse)) ASSERT_EQ(x, -INFINITY);
      } else {
        try {
          flash::attention_forward(a);
          ADD_FAILURE() << "no flash::Error";
        } catch (const flash::Error& e) {
          EXPECT_NE(std::string(e.what()).find("seqused_k"), std::string::npos) << e.what();
        }
        for (double x : flash::testing::download(p.vo)) ASSERT_TRUE(std::isnan(x)) << "o was written";
        for (double x : flash::testing::download(*a.lse)) ASSERT_TRUE(std::isnan(x)) << "lse was written";
      }
    }
  }
  EXPECT_GT(ran, 0) << "no built variant with kFeatureVarlen runs bf16 d64";
}

// Causal calls with several tiles per SM: the grid above has at most 128
// tiles, so a persistent CTA there takes one; here (GQA, seqlen_q !=
// seqlen_k, 576 / 768 tiles) wgmma_persistent's dynamic schedule hands each
// CTA four to six, reusing its two index slots. Sampled rows against the
// reference; every element must be written.
TEST(ForwardEdges, CausalCallsWithManyTilesPerSm) {
  SKIP_WITHOUT_GPU();
  for (int head_dim : {64, 128}) {
    const Shape s{.batch = 3, .seqlen_q = 1021, .seqlen_k = 1500, .heads_q = 32, .heads_kv = 8, .head_dim = head_dim};
    const std::uint64_t seed = flash::gpu_test::test_seed();
    auto prob = flash::testing::make_problem(s, DType::bf16, true, Layout::bshd, seed,
                                             flash::testing::sample_rows(s.seqlen_q, 96, seed));
    int checked = 0;
    for (const auto& v : flash::forward_variants()) {
      if (!runnable(v, DType::bf16, head_dim)) continue;
      const auto r = flash::testing::run_and_check(prob, v.name);
      ++checked;
      EXPECT_TRUE(r.error.empty()) << v.name << " d" << head_dim << ": " << r.error;
      EXPECT_EQ(r.unwritten, 0u) << v.name << " d" << head_dim << ": output elements left unwritten";
      EXPECT_LE(r.max_err, r.bound) << v.name << " d" << head_dim << ": O error over the bound (seed " << seed << ")";
      EXPECT_LE(r.lse_err, r.lse_bound) << v.name << " d" << head_dim << ": LSE error over the bound";
    }
    EXPECT_GT(checked, 0) << "no built variant takes hdim " << head_dim;
  }
}

TEST(ForwardEdges, LseIsOptionalAndTheCallerMayOwnTheWorkspace) {
  SKIP_WITHOUT_GPU();
  Shape s{.batch = 1, .seqlen_q = 77, .seqlen_k = 91, .heads_q = 2, .heads_kv = 1, .head_dim = 64};
  auto p = flash::testing::make_problem(s, DType::f16, true, Layout::bshd, base_seed());
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::f16, 64)) continue;
    auto a = args_for(p, v.name);
    a.causal = true;
    a.lse.reset();
    const auto plan = flash::plan_forward(a);
    EXPECT_EQ(plan.kernel, v.name);
    flash::testing::DeviceBuffer ws(plan.workspace_bytes + 256);
    a.workspace = ws.get();
    a.workspace_bytes = plan.workspace_bytes;
    flash::testing::poison(p.vo);
    EXPECT_NO_THROW(flash::attention_forward(a)) << v.name;
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    const auto o = flash::testing::download(p.vo);
    double max_err = 0;
    for (std::size_t i = 0; i < o.size(); ++i) max_err = std::max(max_err, std::abs(o[i] - p.ref.o[i]));
    EXPECT_LT(max_err, 1e-2) << v.name;  // NaN (unwritten) fails this too
    if (plan.workspace_bytes > 0) {
      a.workspace_bytes = plan.workspace_bytes - 1;
      EXPECT_THROW(flash::attention_forward(a), flash::Error) << v.name;
    }
  }
}

// Negative controls: the check must fail when the kernel computes something
// else than the reference does, or the grid above would prove nothing.
TEST(ForwardChecker, FailsWhenTheMaskDiffers) {
  SKIP_WITHOUT_GPU();
  Shape s{.batch = 1, .seqlen_q = 113, .seqlen_k = 203, .heads_q = 4, .heads_kv = 2, .head_dim = 64};
  auto p = flash::testing::make_problem(s, DType::bf16, /*causal=*/false, Layout::bshd, base_seed());
  p.causal = true;  // the kernel now runs causal against a non-causal reference
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::bf16, 64)) continue;
    const auto r = flash::testing::run_and_check(p, v.name);
    EXPECT_TRUE(r.error.empty()) << r.error;
    EXPECT_FALSE(r.ok) << v.name << ": a causal result passed a non-causal reference (err " << r.max_err << ")";
  }
}

TEST(ForwardChecker, FailsWhenAnOutputRowIsLeftUnwritten) {
  SKIP_WITHOUT_GPU();
  Shape s{.batch = 1, .seqlen_q = 40, .seqlen_k = 40, .heads_q = 2, .heads_kv = 2, .head_dim = 64};
  auto p = flash::testing::make_problem(s, DType::f16, false, Layout::bshd, base_seed());
  // Hand the kernel a view of the first 39 rows only: row 39 keeps its poison.
  flash::TensorView full_o = p.vo, full_lse = p.vlse;
  flash::ForwardArgs a;
  a.q = p.vq, a.k = p.vk, a.v = p.vv, a.o = p.vo, a.lse = p.vlse;
  a.q.shape[1] = a.o.shape[1] = 39;
  a.lse->shape[2] = 39;
  flash::testing::poison(full_o);
  flash::testing::poison(full_lse);
  flash::attention_forward(a);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::size_t nan = 0;
  for (double x : flash::testing::download(full_o)) nan += std::isnan(x);
  EXPECT_EQ(nan, std::size_t(2 * 64)) << "exactly row 39 of both heads stays poisoned";
}

TEST(ForwardEdges, AutoPicksTheLastSupportingVariant) {
  SKIP_WITHOUT_GPU();
  Shape s{.batch = 1, .seqlen_q = 16, .seqlen_k = 16, .heads_q = 1, .heads_kv = 1, .head_dim = 64};
  auto p = flash::testing::make_problem(s, DType::bf16, false, Layout::bshd, base_seed());
  std::string expected;
  for (const auto& v : flash::forward_variants())
    if (runnable(v, DType::bf16, 64)) expected = v.name;
  EXPECT_EQ(flash::plan_forward(args_for(p, "auto")).kernel, expected);
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (!no_gpu_reason().empty()) fmt::print("gpu tests skip: {}\n", no_gpu_reason());
  base_seed();
  return RUN_ALL_TESTS();
}
