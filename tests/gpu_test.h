// Shared by the GPU test files: the random base seed (printed once, or taken
// from FLASH_TEST_SEED to rerun a failure), a per-test seed, and the skip when
// there is no GPU.
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "flash/variants.h"
#include "testing/testing.h"

namespace flash::gpu_test {

inline std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("FLASH_TEST_SEED");
    const std::uint64_t s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    fmt::print("FLASH_TEST_SEED={}\n", s);
    return s;
  }();
  return seed;
}

// The base seed mixed with the running test's suite and name (two suites'
// tests of one name draw different inputs).
inline std::uint64_t test_seed() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return base_seed() * 1000003u + std::hash<std::string>{}(std::string(info->test_suite_name()) + "." + info->name());
}

// Empty when a CUDA device is usable, else why not.
inline const std::string& no_gpu_reason() {
  static const std::string why = [] {
    std::string w;
    return flash::testing::gpu_available(&w) ? std::string() : w;
  }();
  return why;
}

// The current device's compute capability (major * 10 + minor), 0 without one.
inline int compute_capability() {
  static const int cc = [] {
    int dev = 0, major = 0, minor = 0;
    if (cudaGetDevice(&dev) != cudaSuccess) return 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev);
    cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev);
    return major * 10 + minor;
  }();
  return cc;
}

// Built, supports (dtype, head_dim), and this GPU can run it.
inline bool runnable(const flash::VariantInfo& v, flash::DType dtype, int head_dim) {
  return v.supports(dtype, head_dim) && v.runs_on(compute_capability());
}


// n sequence lengths of 0-300 in no order, repeating past 61 (ties): packed
// batches over several groups of 32, which the Hopper rungs schedule longest
// first within each group (AttnParams::seq_order).
inline std::vector<int> spread_lengths(int n, int step) {
  std::vector<int> v(n);
  for (int i = 0; i < n; ++i) v[i] = i * step % 61 * 5;
  return v;
}

// Sliding windows that the forward and backward suites cross with lengths
// (FlashAttention's window_size, with and without causal): the diagonal
// alone, one key back, 127 back, wider than the sequence, left-only,
// right-only, both sides; over ragged lengths with seqlen_q above, equal to
// and below seqlen_k, so that rows with no visible key, tiles wholly outside
// the window and tiles cut on both sides all occur.
struct WindowCase {
  const char* name;
  bool causal;
  int left, right;
};
inline constexpr WindowCase kWindows[] = {
    {"causal_l0", true, 0, -1},       {"causal_l1", true, 1, -1}, {"causal_l127", true, 127, -1},
    {"causal_l4096", true, 4096, -1}, {"left127", false, 127, -1}, {"right1", false, -1, 1},
    {"l64_r32", false, 64, 32},       {"l0_r0", false, 0, 0},     {"causal_l511", true, 511, -1},
    // fwd_09: a non-causal window wider than 2048 keys takes the dynamic schedule (the grid until
    // session 34); at hdim 64, the persistent walk
    {"l1500_r600", false, 1500, 600},
    // fwd_10 at hdim 64: spans of 513 to 1025 keys keep its one-CTA-per-tile grid (narrower ones
    // walk since session 34; hdim 128 windows wider than 384 keys run fwd_09's walk)
    {"causal_l700", true, 700, -1},
};
inline constexpr int kNumWindows = sizeof(kWindows) / sizeof(kWindows[0]);
inline constexpr int kWindowSeqlens[][2] = {{17, 17}, {113, 203}, {257, 129}, {1023, 1024}};
inline constexpr int kNumWindowSeqlens = sizeof(kWindowSeqlens) / sizeof(kWindowSeqlens[0]);

using WindowParam = std::tuple<DType, int, int, int>;  // dtype, head dim, window index, seqlen index

inline std::string window_name(const ::testing::TestParamInfo<WindowParam>& info) {
  const auto [dtype, head_dim, win_idx, seq_idx] = info.param;
  return fmt::format("{}_d{}_{}_sq{}_sk{}", dtype_name(dtype), head_dim, kWindows[win_idx].name,
                     kWindowSeqlens[seq_idx][0], kWindowSeqlens[seq_idx][1]);
}

// Score modifiers that the ForwardScores, BackwardScores and DecodeScores
// suites cross with masks and shapes: the two softcaps of issue 16 over
// scores of about 64 (q and k drawn with standard deviation 8), where 15
// saturates and 50 bends; sinks (random, both signs, some large); ALiBi
// slopes per head and per sequence; all three together (cap 30 over scores
// of about 16, sinks around them).
struct ScoreCase {
  const char* name;
  float softcap;
  testing::Alibi alibi;
  bool sinks;
  double qk_gain;  // q and k's standard deviation: scores of about qk_gain^2
};
inline constexpr ScoreCase kScoreCases[] = {
    {"cap15", 15.0f, testing::Alibi::none, false, 8.0},
    {"cap50", 50.0f, testing::Alibi::none, false, 8.0},
    {"sinks", 0.0f, testing::Alibi::none, true, 1.0},
    {"alibi_head", 0.0f, testing::Alibi::per_head, false, 1.0},
    {"alibi_batch", 0.0f, testing::Alibi::per_batch, false, 1.0},
    {"cap30_alibi_batch_sinks", 30.0f, testing::Alibi::per_batch, true, 4.0},
};
inline constexpr int kNumScoreCases = sizeof(kScoreCases) / sizeof(kScoreCases[0]);

// Masks and shapes under the score modifiers: causal with seqlen_q below
// seqlen_k (GQA 4), full and causal with seqlen_q above it (MQA; causal rows
// that see no key, whose LSE is the sink), a two-sided window and a causal
// window over ragged 1023 x 1024 tails.
struct ScoreGeometry {
  const char* name;
  int seqlen_q, seqlen_k, heads_q, heads_kv;
  bool causal;
  int left, right;
};
inline constexpr ScoreGeometry kScoreGeometries[] = {
    {"causal_sq113_sk203_gqa4", 113, 203, 8, 2, true, -1, -1},
    {"full_sq257_sk129_mqa", 257, 129, 3, 1, false, -1, -1},
    {"causal_sq257_sk129_gqa2", 257, 129, 4, 2, true, -1, -1},
    {"l64_r32_sq1023_sk1024_mha", 1023, 1024, 2, 2, false, 64, 32},
    {"causal_l127_sq1023_sk1024_gqa4", 1023, 1024, 8, 2, true, 127, -1},
};
inline constexpr int kNumScoreGeometries = sizeof(kScoreGeometries) / sizeof(kScoreGeometries[0]);

// A sparse cross, not the full product: each (case, geometry) pair runs at
// one head dim, rotating over 64, 128 and 256, so that every case meets
// every head dim and every geometry too.
inline constexpr int kScoreHeadDims[] = {64, 128, 256};
inline int score_head_dim(int case_idx, int geometry_idx) { return kScoreHeadDims[(case_idx + geometry_idx) % 3]; }

using ScoreParam = std::tuple<int, int, DType>;  // score case, geometry, dtype

inline std::string score_name(const ::testing::TestParamInfo<ScoreParam>& info) {
  const auto [case_idx, geo_idx, dtype] = info.param;
  return fmt::format("{}_d{}_{}_{}", dtype_name(dtype), score_head_dim(case_idx, geo_idx), kScoreCases[case_idx].name,
                     kScoreGeometries[geo_idx].name);
}

// The SCOPED_TRACE line of a score case: seed, sizes, mask and modifiers.
inline std::string score_trace(std::uint64_t seed, const testing::Shape& s, DType dtype, bool causal,
                               const testing::ScoreInputs& scores) {
  return fmt::format("seed {} sq{} sk{} hq{} hkv{} d{} {} window ({}, {}){} softcap {} slopes {} sinks {}", seed,
                     s.seqlen_q, s.seqlen_k, s.heads_q, s.heads_kv, s.head_dim, dtype_name(dtype), s.window_left,
                     s.window_right, causal ? " causal" : "", s.softcap, fmt::join(scores.alibi, ","),
                     fmt::join(scores.sinks, ","));
}

// The shape of one (case, geometry, head dim), batch 2.
inline testing::Shape score_shape(const ScoreCase& c, const ScoreGeometry& g, int head_dim) {
  return testing::Shape{.batch = 2, .seqlen_q = g.seqlen_q, .seqlen_k = g.seqlen_k, .heads_q = g.heads_q,
                        .heads_kv = g.heads_kv, .head_dim = head_dim, .window_left = g.left, .window_right = g.right,
                        .softcap = c.softcap, .alibi = c.alibi, .sinks = c.sinks, .qk_gain = c.qk_gain};
}

// The Feature bits (flash/variants.h) a forward or backward call of shape s
// needs; lse: it writes the LSE (the forward's kFeatureLse).
inline unsigned needed_features(const testing::Shape& s, bool causal, bool lse) {
  unsigned f = 0;
  if (causal) f |= kFeatureCausal;
  if (s.heads_q != s.heads_kv) f |= kFeatureGqa;
  if (lse) f |= kFeatureLse;
  if (s.seqlen_q != s.seqlen_k) f |= kFeatureUnequalSeqlens;
  if (s.window_left >= 0 || (!causal && s.window_right >= 0)) f |= kFeatureWindow;
  if (s.softcap > 0.0f) f |= kFeatureSoftcap;
  if (s.alibi != testing::Alibi::none) f |= kFeatureAlibi;
  if (s.sinks) f |= kFeatureSinks;
  return f;
}

// A variant that lacks a score modifier's bit must refuse the call with a
// flash::Error naming the argument ("softcap", "alibi_slopes" or "sinks").
inline void expect_refusal(const std::string& error, unsigned missing, const std::string& variant) {
  const std::pair<unsigned, const char*> names[] = {
      {kFeatureSoftcap, "softcap"}, {kFeatureAlibi, "alibi_slopes"}, {kFeatureSinks, "sinks"}};
  bool named = false;
  for (const auto& [bit, name] : names) named = named || ((missing & bit) && error.find(name) != std::string::npos);
  EXPECT_TRUE(named) << variant << " lacks a score modifier's feature bit but did not refuse the call naming it; "
                     << "error: '" << error << "'";
}

}  // namespace flash::gpu_test

#define SKIP_WITHOUT_GPU()                                                                          \
  do {                                                                                              \
    if (!flash::gpu_test::no_gpu_reason().empty()) GTEST_SKIP() << flash::gpu_test::no_gpu_reason(); \
  } while (0)
