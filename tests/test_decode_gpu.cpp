// GPU tests of flash::attention_decode (ctest label gpu): contiguous and
// paged caches (shuffled page tables, unused entries -1), ragged lengths in
// one batch including 0 and 1, append then attend, GQA ratios 1, 4 and 8,
// seqlen_q 1 and 4, both masks, every head dim and f16/bf16, against the fp64
// reference by FlashAttention's rule. O and LSE are poisoned before each call
// and checked written; the caches are compared element by element with the
// expected append. Bad metadata must throw and write nothing.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <tuple>

#include "flash/flash.h"
#include "gpu_test.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::testing::DecodeSpec;
using flash::testing::ragged_lens;

using flash::gpu_test::test_seed;

int decode_variants_checked(flash::testing::DecodeProblem& prob) {
  int checked = 0;
  for (const auto& v : flash::decode_variants()) {
    if (!v.supports(prob.spec.dtype, prob.spec.head_dim)) continue;
    const auto r = flash::testing::run_and_check_decode(prob, v.name);
    ++checked;
    EXPECT_TRUE(r.error.empty()) << v.name << ": " << r.error;
    EXPECT_EQ(r.unwritten, 0u) << v.name << ": output elements left unwritten";
    EXPECT_EQ(r.cache_mismatch, 0u) << v.name << ": cache elements differ from the expected append";
    EXPECT_LE(r.max_err, r.bound) << v.name << ": O error over the bound";
    EXPECT_LE(r.lse_err, r.lse_bound) << v.name << ": LSE error over the bound";
  }
  return checked;
}

// dtype, head dim, page size (0: contiguous), GQA ratio, seqlen_q, causal.
using GridParam = std::tuple<DType, int, int, int, int, bool>;
class DecodeGrid : public ::testing::TestWithParam<GridParam> {};

TEST_P(DecodeGrid, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [dtype, head_dim, page_size, ratio, seqlen_q, causal] = GetParam();
  DecodeSpec s;
  s.dtype = dtype;
  s.head_dim = head_dim;
  s.page_size = page_size;
  s.batch = 5;
  s.heads_kv = 2;
  s.heads_q = 2 * ratio;
  s.seqlen_q = seqlen_q;
  s.capacity = 768;
  // Causal calls append their tokens (the usual decode step); the rest
  // attend to the cache as it is.
  s.seqlen_new = causal ? seqlen_q : 0;
  s.causal = causal;
  const std::uint64_t seed = test_seed();
  s.lens = ragged_lens(s.batch, s.capacity, s.seqlen_new, seed);
  SCOPED_TRACE(fmt::format("seed {} lens {},{},{},{},{}", seed, s.lens[0], s.lens[1], s.lens[2], s.lens[3], s.lens[4]));
  auto prob = flash::testing::make_decode_problem(s, seed);
  EXPECT_GT(decode_variants_checked(prob), 0) << "no built decode variant supports this case";
}

std::string grid_name(const ::testing::TestParamInfo<GridParam>& info) {
  const auto [dtype, head_dim, page_size, ratio, seqlen_q, causal] = info.param;
  return fmt::format("{}_d{}_{}_gqa{}_sq{}_{}", flash::dtype_name(dtype), head_dim,
                     page_size ? fmt::format("page{}", page_size) : std::string("contiguous"), ratio, seqlen_q,
                     causal ? "causal_append" : "full");
}

INSTANTIATE_TEST_SUITE_P(Grid, DecodeGrid,
                         ::testing::Combine(::testing::Values(DType::bf16, DType::f16), ::testing::Values(64, 128, 256),
                                            ::testing::Values(0, 16, 256), ::testing::Values(1, 4, 8),
                                            ::testing::Values(1, 4), ::testing::Bool()),
                         grid_name);

// Sliding windows over the cache (contiguous and paged, with and without an
// append): only the keys inside the window are read, so the splits are cut
// over the window and pages before it are never touched.
TEST(DecodeWindow, MatchesReference) {
  SKIP_WITHOUT_GPU();
  struct { bool causal; int left, right; } windows[] = {{true, 0, -1}, {true, 100, -1}, {true, 1000, -1},
                                                        {false, 300, -1}, {false, 64, 16}};
  for (int page_size : {0, 16})
    for (const auto& w : windows)
      for (int seqlen_q : {1, 4}) {
        DecodeSpec s{.dtype = DType::bf16, .batch = 5, .seqlen_q = seqlen_q, .heads_q = 8, .heads_kv = 2,
                     .head_dim = 128, .capacity = 768, .page_size = page_size, .seqlen_new = w.causal ? seqlen_q : 0,
                     .causal = w.causal, .window_left = w.left, .window_right = w.right};
        const std::uint64_t seed = test_seed() + page_size + w.left + seqlen_q;
        s.lens = ragged_lens(s.batch, s.capacity, s.seqlen_new, seed);
        SCOPED_TRACE(fmt::format("seed {} page {} window ({}, {}){} sq {}", seed, page_size, w.left, w.right,
                                 w.causal ? " causal" : "", seqlen_q));
        auto prob = flash::testing::make_decode_problem(s, seed);
        EXPECT_GT(decode_variants_checked(prob), 0);
      }
}

// Score modifiers (gpu_test.h: kScoreCases) over contiguous and paged
// caches, in two modes: one new token appended and attended causally (the
// usual step; the split count the heuristic's), and four query tokens
// without an append under a left window of 300, split in 3 (the sinks enter
// the combine once), where the empty sequence's rows see no key (LSE = the
// sink). dtype and head dim rotate over the cases. A variant that lacks a
// score modifier's bit refuses the call with a flash::Error naming it.
using DecodeScoreParam = std::tuple<int, int, int>;  // score case, page size, mode
class DecodeScores : public ::testing::TestWithParam<DecodeScoreParam> {};

DecodeSpec decode_score_spec(int case_idx, int page_size, int mode) {
  const auto& c = flash::gpu_test::kScoreCases[case_idx];
  DecodeSpec s{.dtype = (case_idx + mode) % 2 ? DType::f16 : DType::bf16, .batch = 5, .capacity = 768,
               .page_size = page_size};
  s.head_dim = flash::gpu_test::kScoreHeadDims[(case_idx + mode + (page_size > 0)) % 3];
  if (mode == 0) {
    s.seqlen_q = 1, s.heads_q = 8, s.heads_kv = 2, s.seqlen_new = 1, s.causal = true;
  } else {
    s.seqlen_q = 4, s.heads_q = 4, s.heads_kv = 1, s.seqlen_new = 0, s.window_left = 300, s.num_splits = 3;
  }
  s.softcap = c.softcap, s.alibi = c.alibi, s.sinks = c.sinks, s.qk_gain = c.qk_gain;
  return s;
}

TEST_P(DecodeScores, MatchesReference) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, page_size, mode] = GetParam();
  DecodeSpec s = decode_score_spec(case_idx, page_size, mode);
  const std::uint64_t seed = test_seed();
  s.lens = ragged_lens(s.batch, s.capacity, s.seqlen_new, seed);
  auto prob = flash::testing::make_decode_problem(s, seed);
  SCOPED_TRACE(fmt::format("seed {} lens {} softcap {} slopes {} sinks {}", seed, fmt::join(s.lens, ","), s.softcap,
                           fmt::join(prob.scores.alibi, ","), fmt::join(prob.scores.sinks, ",")));
  unsigned needed = 0;
  if (s.softcap > 0.0f) needed |= flash::kFeatureSoftcap;
  if (s.alibi != flash::testing::Alibi::none) needed |= flash::kFeatureAlibi;
  if (s.sinks) needed |= flash::kFeatureSinks;
  int checked = 0;
  for (const auto& v : flash::decode_variants()) {
    if (!v.supports(s.dtype, s.head_dim)) continue;
    if (const unsigned missing = needed & ~v.features; missing != 0) {
      const auto r = flash::testing::run_and_check_decode(prob, v.name);
      flash::gpu_test::expect_refusal(r.error, missing, v.name);
      continue;
    }
    const auto r = flash::testing::run_and_check_decode(prob, v.name);
    ++checked;
    EXPECT_TRUE(r.error.empty()) << v.name << ": " << r.error;
    EXPECT_EQ(r.unwritten, 0u) << v.name << ": output elements left unwritten";
    EXPECT_EQ(r.cache_mismatch, 0u) << v.name << ": cache elements differ from the expected append";
    EXPECT_LE(r.max_err, r.bound) << v.name << ": O error over the bound";
    EXPECT_LE(r.lse_err, r.lse_bound) << v.name << ": LSE error over the bound";
  }
  EXPECT_GT(checked, 0) << "no built decode variant supports this case";
}

std::string decode_score_name(const ::testing::TestParamInfo<DecodeScoreParam>& info) {
  const auto [case_idx, page_size, mode] = info.param;
  const DecodeSpec s = decode_score_spec(case_idx, page_size, mode);
  return fmt::format("{}_d{}_{}_{}_{}", flash::dtype_name(s.dtype), s.head_dim,
                     flash::gpu_test::kScoreCases[case_idx].name, page_size ? fmt::format("page{}", page_size) : std::string("contiguous"),
                     mode == 0 ? "sq1_causal_append" : "sq4_left300_splits3");
}

INSTANTIATE_TEST_SUITE_P(Scores, DecodeScores,
                         ::testing::Combine(::testing::Range(0, flash::gpu_test::kNumScoreCases),
                                            ::testing::Values(0, 16), ::testing::Values(0, 1)),
                         decode_score_name);

// Negative controls: a call that leaves out one modifier must fail the check.
TEST(DecodeScoresChecker, FailsWithoutEachModifier) {
  SKIP_WITHOUT_GPU();
  DecodeSpec s{.dtype = DType::bf16, .batch = 5, .seqlen_q = 4, .heads_q = 8, .heads_kv = 2, .head_dim = 128,
               .capacity = 768, .page_size = 16, .seqlen_new = 4, .causal = true, .softcap = 15.0f,
               .alibi = flash::testing::Alibi::per_batch, .sinks = true, .qk_gain = 8.0};
  s.lens = ragged_lens(s.batch, s.capacity, s.seqlen_new, test_seed());
  auto prob = flash::testing::make_decode_problem(s, test_seed());
  for (const auto& v : flash::decode_variants()) {
    if (!v.supports(s.dtype, s.head_dim) || (v.features & flash::kScoreFeatures) != flash::kScoreFeatures) continue;
    EXPECT_TRUE(flash::testing::run_and_check_decode(prob, v.name).ok) << v.name << ": with every modifier";
    prob.args.softcap = 0.0f;
    EXPECT_FALSE(flash::testing::run_and_check_decode(prob, v.name).ok) << v.name << ": passed without the softcap";
    prob.scores.apply(prob.args);
    prob.args.alibi_slopes.reset();
    EXPECT_FALSE(flash::testing::run_and_check_decode(prob, v.name).ok) << v.name << ": passed without the slopes";
    prob.scores.apply(prob.args);
    prob.args.sinks.reset();
    EXPECT_FALSE(flash::testing::run_and_check_decode(prob, v.name).ok) << v.name << ": passed without the sinks";
    prob.scores.apply(prob.args);
  }
}

// Every power-of-two page size from 16 to 256, with an append that crosses pages.
TEST(DecodePaged, EveryPageSize) {
  SKIP_WITHOUT_GPU();
  for (int page_size : {16, 32, 64, 128, 256}) {
    DecodeSpec s{.dtype = DType::bf16, .batch = 4, .seqlen_q = 4, .heads_q = 8, .heads_kv = 2, .head_dim = 128,
                 .capacity = 1024, .page_size = page_size, .seqlen_new = 4, .causal = true};
    s.lens = ragged_lens(s.batch, s.capacity, s.seqlen_new, test_seed() + page_size);
    SCOPED_TRACE(fmt::format("page size {}", page_size));
    auto prob = flash::testing::make_decode_problem(s, test_seed() + page_size);
    decode_variants_checked(prob);
  }
}

// Forced split counts (1, odd, more splits than tiles) and the heuristic on
// a long sequence, where batch 1 needs many splits. Pages of 16 / 32 keys in
// these small grids take the staged page-table entries (dec_01), over more
// tiles a split than the staging ring holds at 1, 3 and 7 splits.
TEST(DecodeSplits, ForcedAndChosen) {
  SKIP_WITHOUT_GPU();
  for (int splits : {1, 3, 7, 64, 0}) {
    for (int page_size : {0, 16, 32, 64}) {
      DecodeSpec s{.dtype = DType::bf16, .batch = 2, .seqlen_q = 1, .heads_q = 8, .heads_kv = 2, .head_dim = 128,
                   .capacity = 8192, .page_size = page_size, .seqlen_new = 1, .causal = true, .num_splits = splits};
      s.lens = {8191, 5000};
      SCOPED_TRACE(fmt::format("splits {} page {}", splits, page_size));
      auto prob = flash::testing::make_decode_problem(s, test_seed() + splits + page_size);
      if (splits == 0) EXPECT_GT(flash::plan_decode(prob.args).num_splits, 1) << "batch 2 should be split";
      decode_variants_checked(prob);
    }
  }
}

// MHA and MQA with 16 query heads, seqlen_q 4 (a 64-row GQA tile: 4 m-blocks).
TEST(DecodeHeads, MqaManyRows) {
  SKIP_WITHOUT_GPU();
  DecodeSpec s{.dtype = DType::f16, .batch = 3, .seqlen_q = 4, .heads_q = 16, .heads_kv = 1, .head_dim = 64,
               .capacity = 512, .page_size = 32, .seqlen_new = 0, .causal = true};
  s.lens = {300, 3, 512};
  auto prob = flash::testing::make_decode_problem(s, test_seed());
  decode_variants_checked(prob);
}

// Strided views: q and o in BHSD memory, the cache with padded rows.
TEST(DecodeLayouts, StridedViews) {
  SKIP_WITHOUT_GPU();
  DecodeSpec s{.dtype = DType::bf16, .batch = 2, .seqlen_q = 2, .heads_q = 4, .heads_kv = 2, .head_dim = 128,
               .capacity = 300, .seqlen_new = 2, .causal = true};
  s.lens = {100, 298};
  auto prob = flash::testing::make_decode_problem(s, test_seed());
  // Re-home q, o and the caches in bigger buffers with other strides, same values.
  const std::int64_t D = 128, pad = 64;
  flash::testing::DeviceBuffer q2(2 * 4 * 2 * D * 2), o2(2 * 4 * 2 * D * 2);
  flash::testing::DeviceBuffer kc2(2 * 300 * (2 * D + pad) * 2), vc2(2 * 300 * (2 * D + pad) * 2);
  auto& a = prob.args;
  a.q = flash::make_view(q2.get(), DType::bf16, {2, 2, 4, D}, {4 * 2 * D, D, 2 * D, 1});
  a.o = flash::make_view(o2.get(), DType::bf16, {2, 2, 4, D}, {4 * 2 * D, D, 2 * D, 1});
  a.k_cache = flash::make_view(kc2.get(), DType::bf16, {2, 300, 2, D}, {300 * (2 * D + pad), 2 * D + pad, D, 1});
  a.v_cache = flash::make_view(vc2.get(), DType::bf16, {2, 300, 2, D}, {300 * (2 * D + pad), 2 * D + pad, D, 1});
  flash::testing::upload(prob.q, a.q);
  decode_variants_checked(prob);
}

// Bad metadata: a flash::Error naming the entry, and nothing written (O still
// poisoned, caches as they were), with sync_check; with it off and a status
// tensor, the same check reports through the status words.
TEST(DecodeErrors, BadMetadataWritesNothing) {
  SKIP_WITHOUT_GPU();
  struct Bad {
    const char* what;
    int page_size;
    std::vector<int> lens;
    int seqlen_new;
    int bad_page_entry;  // not -1: page_table[1][0] set to this
    const char* message;
  };
  const Bad cases[] = {
      {"negative length", 0, {5, -1}, 0, -1, "cache_seqlens[1] = -1 is negative"},
      {"length past capacity", 0, {5, 257}, 0, -1, "cache_seqlens[1] = 257 exceeds the cache capacity"},
      {"append past the end", 32, {5, 255}, 2, -1, "appending k_new past the end"},
      {"page index out of range", 32, {5, 20}, 1, 1000, "page_table[1][0] = 1000 is not a page"},
      // Without an append: bad pages caught by the check's independent loads,
      // and (contiguous caches) bad lengths that dec_01 reads, clamped, before
      // the check's verdict must neither fault nor be written.
      {"page index out of range, no append", 32, {5, 20}, 0, 1000, "page_table[1][0] = 1000 is not a page"},
      {"negative page index, no append", 16, {5, 10}, 0, -7, "page_table[1][0] = -7 is not a page"},
      {"length far past capacity", 0, {5, 1 << 30}, 0, -1, "cache_seqlens[1] = 1073741824 exceeds the cache capacity"},
      {"length past capacity, paged", 16, {5, 300}, 0, -1, "cache_seqlens[1] = 300 exceeds the cache capacity"},
  };
  // hdim 128 too: its pages of 16 / 32 keys take the page-table entries
  // staged in shared memory (dec_01's kStagedTable), read before the verdict.
  for (const int head_dim : {64, 128})
  for (const Bad& c : cases) {
    SCOPED_TRACE(::testing::Message() << c.what << ", hdim " << head_dim);
    DecodeSpec s{.dtype = DType::bf16, .batch = 2, .seqlen_q = 1, .heads_q = 4, .heads_kv = 2, .head_dim = head_dim,
                 .capacity = 256, .page_size = c.page_size, .seqlen_new = c.seqlen_new};
    s.lens = {5, 5};  // a valid problem first, then the bad metadata
    auto prob = flash::testing::make_decode_problem(s, test_seed());
    flash::testing::upload(std::vector<double>(c.lens.begin(), c.lens.end()), prob.args.cache_seqlens);
    if (c.bad_page_entry != -1) {
      prob.page_table[prob.max_pages] = c.bad_page_entry;
      flash::testing::upload(std::vector<double>(prob.page_table.begin(), prob.page_table.end()), *prob.args.page_table);
    }
    for (bool sync : {true, false}) {
      flash::testing::poison(prob.args.o);
      flash::DecodeArgs a = prob.args;
      flash::testing::DeviceBuffer status(16);
      a.sync_check = sync;
      a.status = flash::make_contiguous(status.get(), DType::i32, {4});
      if (sync) {
        try {
          flash::attention_decode(a);
          ADD_FAILURE() << "no flash::Error";
        } catch (const flash::Error& e) {
          EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
        }
      } else {
        EXPECT_NO_THROW(flash::attention_decode(a));
      }
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto st = flash::testing::download(*a.status);
      EXPECT_NE(st[0], 0) << "status words report the error";
      const int words[4] = {int(st[0]), int(st[1]), int(st[2]), int(st[3])};
      EXPECT_NE(flash::describe_decode_status(words).find(c.message), std::string::npos)
          << flash::describe_decode_status(words);
      for (double x : flash::testing::download(a.o)) ASSERT_TRUE(std::isnan(x)) << "O was written";
      EXPECT_EQ(flash::testing::download(a.k_cache), prob.k_cache) << "k_cache was written";
      EXPECT_EQ(flash::testing::download(a.v_cache), prob.v_cache) << "v_cache was written";
    }
  }
}

// A paged cache of no pages (k_cache and v_cache [0, page_size, heads_kv,
// head_dim]) under lengths that need pages: a flash::Error and nothing
// written. dec_01 reads a paged cache before the check's verdict only where
// it can clamp each page index into the pool, so this call must not.
TEST(DecodeErrors, NoPagesWritesNothing) {
  SKIP_WITHOUT_GPU();
  for (const int head_dim : {64, 128}) {
    SCOPED_TRACE(::testing::Message() << "hdim " << head_dim);
    DecodeSpec s{.dtype = DType::bf16, .batch = 2, .seqlen_q = 1, .heads_q = 4, .heads_kv = 2, .head_dim = head_dim,
                 .capacity = 256, .page_size = 16};
    s.lens = {5, 40};
    auto prob = flash::testing::make_decode_problem(s, test_seed());
    flash::DecodeArgs a = prob.args;
    const std::int64_t D = head_dim;
    a.k_cache = flash::make_view(a.k_cache.data, DType::bf16, {0, 16, 2, D}, {16 * 2 * D, 2 * D, D, 1});
    a.v_cache = flash::make_view(a.v_cache.data, DType::bf16, {0, 16, 2, D}, {16 * 2 * D, 2 * D, D, 1});
    a.sync_check = true;
    flash::testing::poison(a.o);
    EXPECT_THROW(flash::attention_decode(a), flash::Error);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    for (double x : flash::testing::download(a.o)) ASSERT_TRUE(std::isnan(x)) << "O was written";
  }
}

// A valid call through the asynchronous path leaves status 0.
TEST(DecodeErrors, AsyncStatusIsZeroWhenValid) {
  SKIP_WITHOUT_GPU();
  DecodeSpec s{.dtype = DType::bf16, .batch = 3, .seqlen_q = 1, .heads_q = 8, .heads_kv = 2, .head_dim = 128,
               .capacity = 512, .page_size = 16, .seqlen_new = 1, .causal = true};
  s.lens = {0, 200, 511};
  auto prob = flash::testing::make_decode_problem(s, test_seed());
  flash::testing::DeviceBuffer status(16);
  prob.args.sync_check = false;
  prob.args.status = flash::make_contiguous(status.get(), DType::i32, {4});
  flash::testing::upload({7, 7, 7, 7}, *prob.args.status);
  decode_variants_checked(prob);
  EXPECT_EQ(flash::testing::download(*prob.args.status)[0], 0);
}

// A caller-owned workspace sized by plan_decode works; one byte short is an error.
TEST(DecodeWorkspace, CallerOwned) {
  SKIP_WITHOUT_GPU();
  DecodeSpec s{.dtype = DType::bf16, .batch = 2, .seqlen_q = 1, .heads_q = 8, .heads_kv = 2, .head_dim = 128,
               .capacity = 4096, .page_size = 16, .seqlen_new = 1, .causal = true, .num_splits = 5};
  s.lens = {4000, 77};
  auto prob = flash::testing::make_decode_problem(s, test_seed());
  const auto plan = flash::plan_decode(prob.args);
  EXPECT_EQ(plan.num_splits, 5);
  flash::testing::DeviceBuffer ws(plan.workspace_bytes);
  prob.args.workspace = ws.get();
  prob.args.workspace_bytes = plan.workspace_bytes;
  decode_variants_checked(prob);
  prob.args.workspace_bytes = plan.workspace_bytes - 1;
  EXPECT_THROW(flash::attention_decode(prob.args), flash::Error);
}

}  // namespace
