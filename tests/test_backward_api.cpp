// attention_backward rejects every class of invalid call with flash::Error
// naming the argument, and writes nothing. Validation runs before any device
// access, so host buffers stand in for device memory (no GPU needed).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/bwd_params.h"  // bwd_grouped_cta
#include "cpu_test.h"
#include "flash/flash.h"
#include "flash/variants.h"
#include "testing/testing.h"

namespace {

using flash::DType;

constexpr int kB = 2, kSq = 8, kSk = 12, kH = 4, kHkv = 2, kD = flash::cpu_test::kTestHeadDim;
constexpr std::uint16_t kPattern = 0x7e57;
constexpr float kDsinksPattern = 321.0f;

// The variant the tests name: the last built one that takes every score
// modifier, deterministic mode and the tests' head dim (wgmma in a build
// with sm_90a, else mma), so that a build of a subset of variants
// (FLASH_VARIANTS) passes too.
std::string last_built_variant() {
  constexpr unsigned kEvery = flash::kScoreFeatures | flash::kFeatureDeterministic;
  std::string name = "mma";
  for (const auto& v : flash::backward_variants())
    if (v.built && (v.features & kEvery) == kEvery && v.supports(DType::bf16, kD)) name = v.name;
  return name;
}

// Tests of one variant's own refusals need a built one (a FLASH_VARIANTS
// subset may have none).
#define SKIP_WITHOUT_VARIANT(name)                                           \
  if (!flash::cpu_test::variant_built(flash::backward_variants(), name)) \
  GTEST_SKIP() << (name) << " is not built (FLASH_VARIANTS)"

struct Buffers {
  alignas(256) std::uint16_t q[kB * kSq * kH * kD];
  alignas(256) std::uint16_t o[kB * kSq * kH * kD];
  alignas(256) std::uint16_t dout[kB * kSq * kH * kD];
  alignas(256) std::uint16_t dq[kB * kSq * kH * kD];
  alignas(256) std::uint16_t k[kB * kSk * kHkv * kD];
  alignas(256) std::uint16_t v[kB * kSk * kHkv * kD];
  alignas(256) std::uint16_t dk[kB * kSk * kHkv * kD];
  alignas(256) std::uint16_t dv[kB * kSk * kHkv * kD];
  alignas(256) float lse[kB * kH * kSq];
  alignas(256) float slopes[kB * kH];
  alignas(256) float sinks[kH];
  alignas(256) float dsinks[kH];
};

class BackwardApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    args_ = {};
    std::memset(&buf_, 0, sizeof(buf_));
    for (auto& x : buf_.dq) x = kPattern;
    for (auto& x : buf_.dk) x = kPattern;
    for (auto& x : buf_.dv) x = kPattern;
    for (auto& x : buf_.dsinks) x = kDsinksPattern;
    auto qv = [](void* p) { return flash::make_contiguous(p, DType::bf16, {kB, kSq, kH, kD}); };
    auto kv = [](void* p) { return flash::make_contiguous(p, DType::bf16, {kB, kSk, kHkv, kD}); };
    args_.q = qv(buf_.q), args_.o = qv(buf_.o), args_.dout = qv(buf_.dout), args_.dq = qv(buf_.dq);
    args_.k = kv(buf_.k), args_.v = kv(buf_.v), args_.dk = kv(buf_.dk), args_.dv = kv(buf_.dv);
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kB, kH, kSq});
    args_.kernel = kernel_ = last_built_variant();
  }

  // Expects flash::Error whose message contains every fragment, and the
  // gradients untouched.
  void expect_error(std::initializer_list<const char*> fragments) {
    try {
      flash::attention_backward(args_);
      ADD_FAILURE() << "no flash::Error thrown";
    } catch (const flash::Error& e) {
      const std::string msg = e.what();
      for (const char* f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "message: " << msg << "\nmissing: " << f;
    }
    for (auto x : buf_.dq) ASSERT_EQ(x, kPattern) << "dq was written";
    for (auto x : buf_.dk) ASSERT_EQ(x, kPattern) << "dk was written";
    for (auto x : buf_.dv) ASSERT_EQ(x, kPattern) << "dv was written";
    for (auto x : buf_.dsinks) ASSERT_EQ(x, kDsinksPattern) << "dsinks was written";
  }

  // Sinks and their gradient, valid.
  void with_sinks() {
    args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kH});
    args_.dsinks = flash::make_contiguous(buf_.dsinks, DType::f32, {kH});
  }

  Buffers buf_;
  flash::BackwardArgs args_;
  std::string kernel_;
};

TEST_F(BackwardApiErrors, NullPointers) {
  args_.dout.data = nullptr;
  expect_error({"dout.data", "null"});
  SetUp();
  args_.dk.data = nullptr;
  expect_error({"dk.data", "null"});
}

TEST_F(BackwardApiErrors, MisalignedForTheVariant) {
  SKIP_WITHOUT_VARIANT(kernel_);
  args_.dq.data = buf_.dq + 1;  // element-aligned, not 16-byte aligned
  args_.dq.shape[1] = kSq - 1;   // keep it inside the buffer
  args_.q.shape[1] = args_.o.shape[1] = args_.dout.shape[1] = args_.lse.shape[2] = kSq - 1;
  expect_error({kernel_.c_str(), "dq.data", "16-byte"});
}

TEST_F(BackwardApiErrors, ShapeMismatches) {
  args_.dout.shape[1] = kSq - 1;
  expect_error({"dout.shape[1]", "seqlen_q"});
  SetUp();
  args_.dv.shape[1] = kSk + 1;
  expect_error({"dv.shape[1]", "seqlen_k"});
  SetUp();
  args_.dk.shape[2] = kH;
  expect_error({"dk.shape[2]", "heads_kv"});
  SetUp();
  args_.o.shape[3] = 32;
  expect_error({"o.shape[3]", "head_dim"});
}

TEST_F(BackwardApiErrors, DtypeMismatches) {
  args_.dq.dtype = DType::f16;
  expect_error({"dq.dtype", "bf16"});
  SetUp();
  args_.lse.dtype = DType::bf16;
  expect_error({"lse.dtype", "f32"});
}

TEST_F(BackwardApiErrors, LseShape) {
  args_.lse.shape[1] = kHkv;
  expect_error({"lse.shape[1]", "heads_q"});
}

TEST_F(BackwardApiErrors, HeadsNotAMultiple) {
  args_.q.shape[2] = args_.o.shape[2] = args_.dout.shape[2] = args_.dq.shape[2] = args_.lse.shape[1] = 3;
  expect_error({"heads_q", "multiple", "heads_kv"});
}

TEST_F(BackwardApiErrors, UnsupportedHeadDimAndDtype) {
  SKIP_WITHOUT_VARIANT(kernel_);
  for (auto* t : {&args_.q, &args_.o, &args_.dout, &args_.dq, &args_.k, &args_.v, &args_.dk, &args_.dv}) t->shape[3] = 48;
  expect_error({kernel_.c_str(), "head_dim 48"});
  SetUp();
  for (auto* t : {&args_.q, &args_.o, &args_.dout, &args_.dq, &args_.k, &args_.v, &args_.dk, &args_.dv})
    *t = flash::make_contiguous(t->data, DType::f32, {t->shape[0], t->shape[1], t->shape[2], kD / 2});  // the same bytes
  expect_error({kernel_.c_str(), "dtype f32"});
}

TEST_F(BackwardApiErrors, SeqlenBeyondTheWorkspaceIndex) {
  const std::int64_t huge = (std::int64_t{1} << 31) - 100;  // a valid view size, past the padded int range
  args_.q.shape[1] = args_.o.shape[1] = args_.dout.shape[1] = args_.dq.shape[1] = args_.lse.shape[2] = huge;
  for (auto* t : {&args_.q, &args_.o, &args_.dout, &args_.dq}) t->stride[1] = 0, t->stride[0] = 0, t->stride[2] = 0;
  args_.lse.stride[2] = 0, args_.lse.stride[1] = 0, args_.lse.stride[0] = 0;
  expect_error({"seqlen_q", "limit"});
}

// k and v expanded over the batch (batch stride 0, as torch's expand gives):
// valid for auto, which takes a variant that addresses by strides; the
// Hopper rung refuses them by name (tests/test_backward_gpu.cpp,
// BackwardLayouts.KvExpandedOverTheBatch, runs them).
TEST_F(BackwardApiErrors, ZeroStrideInputsFallToAVariantWithoutMaps) {
  args_.k.stride[0] = 0;
  args_.v.stride[0] = 0;
  args_.kernel = "auto";
  flash::cpu_test::expect_valid([&] { flash::plan_backward(args_); });
  bool built = false;
  for (const auto& v : flash::backward_variants()) built = built || (v.name == "wgmma" && v.built);
  if (!built) GTEST_SKIP() << "wgmma is not built here (FLASH_VARIANTS or CMAKE_CUDA_ARCHITECTURES)";
  args_.kernel = "wgmma";
  expect_error({"wgmma", "k.stride[0] = 0", "head_dim"});
}

TEST_F(BackwardApiErrors, OverlappingGradient) {
  args_.dk.stride[1] = 0;  // every key row aliases the first
  expect_error({"dk", "overlap"});
}

TEST_F(BackwardApiErrors, UnknownKernelAndBadScale) {
  args_.kernel = "nope";
  expect_error({"kernel", "unknown backward variant 'nope'", "tiled", "mma"});
  SetUp();
  const float inf = std::numeric_limits<float>::infinity();
  for (float scale : {0.0f, -1.0f, std::nanf(""), inf, -inf}) {
    args_.softmax_scale = scale;
    expect_error({"softmax_scale", "expected a finite value > 0"});
  }
}

// The score modifiers and dsinks: a bad one is a flash::Error whose message
// names the argument, and nothing is written (dsinks included).
TEST_F(BackwardApiErrors, BadScoreModifiers) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float c : {-1.0f, std::nanf(""), inf, -inf}) {
    args_.softcap = c;
    expect_error({"softcap"});
  }
  SetUp();
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kH + 1});
  expect_error({"alibi_slopes"});
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kB, kHkv});
  expect_error({"alibi_slopes"});
  args_.alibi_slopes = flash::make_contiguous(nullptr, DType::f32, {kH});
  expect_error({"alibi_slopes"});
  SetUp();
  args_.sinks = flash::make_contiguous(buf_.sinks, DType::bf16, {kH});
  expect_error({"sinks"});
  args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kH - 1});
  expect_error({"sinks"});
}

TEST_F(BackwardApiErrors, BadDsinks) {
  args_.dsinks = flash::make_contiguous(buf_.dsinks, DType::f32, {kH});  // without sinks
  expect_error({"dsinks"});
  with_sinks();
  args_.dsinks->dtype = DType::bf16;
  expect_error({"dsinks"});
  with_sinks();
  args_.dsinks = flash::make_contiguous(buf_.dsinks, DType::f32, {kH - 1});
  expect_error({"dsinks"});
  args_.dsinks = flash::make_contiguous(buf_.dsinks, DType::f32, {1, kH});
  expect_error({"dsinks"});
  args_.dsinks = flash::make_contiguous(nullptr, DType::f32, {kH});
  expect_error({"dsinks"});
  args_.dsinks = flash::make_contiguous(reinterpret_cast<char*>(buf_.dsinks) + 2, DType::f32, {kH - 1});
  expect_error({"dsinks"});
  // Overlaps: the gradient in dq's memory, in the sinks' own memory, in the LSE's.
  with_sinks();
  args_.dsinks = flash::make_contiguous(buf_.dq, DType::f32, {kH});
  expect_error({"dsinks"});
  with_sinks();
  args_.dsinks = args_.sinks;
  expect_error({"dsinks"});
  with_sinks();
  args_.dsinks = flash::make_contiguous(buf_.lse + 1, DType::f32, {kH});
  expect_error({"dsinks"});
  // Valid: sinks with or without their gradient, with the other modifiers.
  with_sinks();
  args_.softcap = 30.0f;
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kB, kH});
  flash::cpu_test::expect_valid([&] { flash::plan_backward(args_); });
  args_.dsinks.reset();
  flash::cpu_test::expect_valid([&] { flash::plan_backward(args_); });
}

// A backward variant whose features lack a modifier's bit refuses it by name.
TEST_F(BackwardApiErrors, VariantsWithoutAModifierRefuseIt) {
  for (const auto& v : flash::backward_variants()) {
    if (!v.built) continue;
    SCOPED_TRACE(v.name);
    if (!(v.features & flash::kFeatureSoftcap)) {
      SetUp();
      args_.kernel = v.name;
      args_.softcap = 30.0f;
      expect_error({"softcap"});
    }
    if (!(v.features & flash::kFeatureAlibi)) {
      SetUp();
      args_.kernel = v.name;
      args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kH});
      expect_error({"alibi_slopes"});
    }
    if (!(v.features & flash::kFeatureSinks)) {
      SetUp();
      args_.kernel = v.name;
      with_sinks();
      expect_error({"sinks"});
    }
  }
}

// deterministic = true needs kFeatureDeterministic: a variant without it
// refuses the call by name before any device check; every backward rung
// has it today (the loop checks the refusal for any future one that does not).
TEST_F(BackwardApiErrors, VariantsWithoutDeterminismRefuseIt) {
  for (const auto& v : flash::backward_variants()) {
    if (!v.built) continue;
    SCOPED_TRACE(v.name);
    if (v.name == "tiled" || v.name == "mma" || v.name == "wgmma") EXPECT_TRUE(v.features & flash::kFeatureDeterministic);
    if (v.features & flash::kFeatureDeterministic) continue;
    SetUp();
    args_.kernel = v.name;
    args_.deterministic = true;
    expect_error({"deterministic"});
  }
}

using flash::cpu_test::expect_valid;

// batch 0 passes validation and launches nothing; seqlen_q 0 and seqlen_k 0
// pass too (on a GPU they write zero gradients, so they are only planned).
TEST_F(BackwardApiErrors, EmptyCallsAreValid) {
  for (auto* t : {&args_.q, &args_.o, &args_.dout, &args_.dq, &args_.k, &args_.v, &args_.dk, &args_.dv, &args_.lse})
    t->shape[0] = 0;
  expect_valid([&] { flash::attention_backward(args_); });
  SetUp();
  args_.q.shape[1] = args_.o.shape[1] = args_.dout.shape[1] = args_.dq.shape[1] = args_.lse.shape[2] = 0;
  expect_valid([&] { EXPECT_EQ(flash::plan_backward(args_).workspace_bytes, 0u); });
  SetUp();
  args_.k.shape[1] = args_.v.shape[1] = args_.dk.shape[1] = args_.dv.shape[1] = 0;
  expect_valid([&] { EXPECT_EQ(flash::plan_backward(args_).workspace_bytes, 0u); });
  for (auto x : buf_.dq) ASSERT_EQ(x, kPattern) << "dq was written";
}

// The backward's launch order in head groups (bwd_grouped_cta): over ragged
// grids, every (key block, KV head, batch) exactly once; each pair's key
// blocks in descending order of linear block index in deterministic mode
// (the deadlock argument of BwdDqOrder needs it), ascending otherwise; and
// any window of group-size x blocks consecutive CTAs inside a group touches
// at most group-size pairs; group size 1 is the plain order (pair by pair,
// key blocks descending, or the grid's own order).
TEST(BackwardDeterministicOrder, EveryCtaOnceKeyBlocksInOrderHeadsGrouped) {
  using flash::detail::bwd_grouped_cta;
  for (bool descending : {true, false})
  for (unsigned kGroup : {1u, 2u, 3u})
  for (unsigned blocks : {1u, 2u, 7u, 64u})
    for (unsigned heads : {1u, 3u, 4u, 8u})
      for (unsigned batch : {1u, 2u, 5u}) {
        SCOPED_TRACE(::testing::Message() << (descending ? "descending" : "ascending") << ", groups of " << kGroup
                                          << ", " << blocks << " blocks, " << heads << " heads, batch " << batch);
        const unsigned pairs = heads * batch;
        const int none = descending ? static_cast<int>(blocks) : -1, step = descending ? -1 : 1;
        std::vector<std::int64_t> launched(static_cast<std::size_t>(blocks) * pairs, -1);
        std::vector<int> last_block(pairs, none);  // the key block each pair took last
        for (unsigned z = 0; z < batch; ++z)
          for (unsigned y = 0; y < heads; ++y)
            for (unsigned x = 0; x < blocks; ++x) {
              const auto c = bwd_grouped_cta(x, y, z, blocks, heads, batch, kGroup, descending);
              ASSERT_TRUE(c.n_block >= 0 && c.n_block < static_cast<int>(blocks) && c.h_kv >= 0 &&
                          c.h_kv < static_cast<int>(heads) && c.b >= 0 && c.b < static_cast<int>(batch));
              const unsigned pair = c.h_kv + heads * c.b;
              auto& slot = launched[static_cast<std::size_t>(pair) * blocks + c.n_block];
              ASSERT_EQ(slot, -1) << "a CTA taken twice";
              slot = x + static_cast<std::int64_t>(blocks) * (y + heads * z);
              // Linear index order within a pair: x is fastest, so walking x, y, z
              // in this nest is walking the linear index upwards.
              EXPECT_EQ(c.n_block, last_block[pair] + step) << "pair " << pair << " skipped or repeated a key block";
              last_block[pair] = c.n_block;
              EXPECT_EQ(pair / kGroup, (y + heads * z) / kGroup) << "a CTA left its group";
              if (kGroup == 1)
                EXPECT_EQ(c.n_block, static_cast<int>(descending ? blocks - 1 - x : x)) << "group size 1 is the plain order";
            }
        for (int n : last_block) EXPECT_EQ(n, descending ? 0 : static_cast<int>(blocks) - 1);
      }
}

// The replay behind the non-deterministic head groups (bwd_replay_span,
// bwd_head_group): equal CTAs take ceil(CTAs / SMs) lifetimes; a long CTA
// handed out last sets the span alone, and groups of 2 hand it out sooner;
// and on issue 18's causal cells (hdim 128, 80-row steps, 128-key blocks,
// 132 SMs) bwd_head_group takes groups of 2 at 8k (16 heads, batch 2) and
// not at 16k (batch 1).
TEST(BackwardDeterministicOrder, ReplayOfTheGridsOrders) {
  using flash::detail::bwd_replay_span;
  const std::vector<long long> equal(64, 5);
  EXPECT_EQ(bwd_replay_span(equal.data(), 64, 32, 1, 132), 16 * 5);  // 2048 CTAs: 15.5 waves
  EXPECT_EQ(bwd_replay_span(equal.data(), 64, 32, 2, 132), 16 * 5);
  EXPECT_EQ(bwd_replay_span(equal.data(), 64, 1, 1, 64), 5);
  // Two pairs of [10, 1, 1, 1] on 4 SMs: the grid's order starts the second
  // pair's 10 at time 1 (span 11); groups of 2 start both at 0 (span 10).
  const long long uneven[] = {10, 1, 1, 1};
  EXPECT_EQ(bwd_replay_span(uneven, 4, 2, 1, 4), 11);
  EXPECT_EQ(bwd_replay_span(uneven, 4, 2, 2, 4), 10);
  for (int seq : {8192, 16384}) {
    const flash::detail::Mask m({true, -1, -1}, seq, seq);
    const int blocks = seq / 128, pairs = 16 * (16384 / seq);
    std::vector<long long> t(blocks);
    for (int n = 0; n < blocks; ++n) t[n] = 2LL * m.query_tiles<80>(n * 128, 128).count() + 3;
    const long long grid = bwd_replay_span(t.data(), blocks, pairs, 1, 132);
    const long long two = bwd_replay_span(t.data(), blocks, pairs, 2, 132);
    SCOPED_TRACE(::testing::Message() << "seq " << seq << ": grid order " << grid << ", groups of 2 " << two);
    EXPECT_LT(two, grid);
    // The rule itself (bwd_head_group, 80-row steps): groups at 8k only;
    // never for deterministic, unmasked or variable-length calls.
    flash::detail::BwdParams p;
    p.seqlen_q = p.seqlen_k = seq;
    p.heads_q = p.heads_kv = 16;
    p.batch = 16384 / seq;
    p.group_size = 1;
    p.sm_count = 132;
    p.call_mask = m;
    EXPECT_EQ((flash::detail::bwd_head_group<80, 128>(p)), seq == 8192 ? 2 : 1);
    p.deterministic = true;
    EXPECT_EQ((flash::detail::bwd_head_group<80, 128>(p)), 1);
    p.deterministic = false;
    p.call_mask = flash::detail::Mask({false, -1, -1}, seq, seq);
    EXPECT_EQ((flash::detail::bwd_head_group<80, 128>(p)), 1);
  }
}

// Deterministic calls' accumulator (bwd_dq_row_needs_zero): every tile of
// tile_rows rows that the dQ convert reads (one starting below seqlen_q) is
// either zeroed whole by the preprocess (all its rows, padding included) or
// reached by some key block's walk (Mask::query_tiles, steps of kBlockM rows
// that tile_rows divides), whose first adder stores the step whole. Random
// lengths and masks; 64-row tiles under 64- and 128-row steps, bwd_03's
// 80-row steps; key blocks of 64 and 128.
template <int kBlockM> void expect_accumulator_tiles_covered(int tile_rows) {
  using flash::detail::Mask;
  using flash::detail::MaskSpec;
  std::mt19937 rng(48 + kBlockM);
  const MaskSpec specs[] = {{false, -1, -1}, {true, -1, -1}, {false, 128, 0}, {false, 30, 10},
                            {false, 0, 0},   {false, 7, 300}, {true, 50, -1}, {false, -1, 20}};
  int zeroed = 0, walked = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int sq = 1 + static_cast<int>(rng() % 700), sk = static_cast<int>(rng() % 700);
    for (const MaskSpec& spec : specs)
      for (int block_n : {64, 128}) {
        const Mask m(spec, sq, sk);
        for (int t0 = 0; t0 < sq; t0 += tile_rows) {
          bool reached = false;
          for (int n0 = 0; n0 < sk && !reached; n0 += block_n) {
            const auto steps = m.query_tiles<kBlockM>(n0, block_n);
            reached = steps.begin <= t0 / kBlockM && t0 / kBlockM < steps.end;
          }
          bool all_zero = true;
          for (int i = t0; i < t0 + tile_rows; ++i) all_zero = all_zero && flash::detail::bwd_dq_row_needs_zero(m, i, tile_rows);
          EXPECT_TRUE(reached || all_zero) << "tile " << t0 << " of " << sq << " x " << sk << " keys, window ("
                                           << spec.window_left << ", " << spec.window_right << ")"
                                           << (spec.causal ? " causal" : "");
          zeroed += all_zero && !reached;
          walked += reached;
        }
      }
  }
  EXPECT_GT(zeroed, 0) << "no case had a tile that no key block sees";
  EXPECT_GT(walked, 0);
}

TEST(BackwardDeterministicOrder, AccumulatorTilesAreZeroedOrStored) {
  expect_accumulator_tiles_covered<64>(64);
  expect_accumulator_tiles_covered<128>(64);
  expect_accumulator_tiles_covered<80>(80);
  // Without ordered additions every row is zeroed.
  const flash::detail::Mask m(flash::detail::MaskSpec{true, -1, -1}, 100, 100);
  EXPECT_TRUE(flash::detail::bwd_dq_row_needs_zero(m, 57, 0));
}

// The variable-length row arrays (bind_bwd_workspace, BwdParams::ws_row0):
// for random packings, every sequence's region, from its ws_row0 to the
// next one's, starts on a 64-row tile (the deterministic counters) and holds
// what the kernels touch there: the preprocess's rows (whole 128-row tiles,
// plus ws_seq_pad - 128) and the dkv kernel's whole steps (the convert's
// whole tiles), 64- or 128-row steps with the default padding and 80-row
// steps with bwd_03's (row_pad 640, 256 rows per sequence). And 128 rows per
// sequence would not hold the 80-row steps: the check can fail.
namespace {
bool regions_hold(const std::vector<int>& lens, int row_pad, int step) {
  flash::detail::BwdParams p;
  std::vector<int> cu(lens.size() + 1, 0);
  for (std::size_t b = 0; b < lens.size(); ++b) cu[b + 1] = cu[b] + lens[b];
  p.batch = static_cast<int>(lens.size());
  p.heads_q = 3;
  p.head_dim = 128;
  p.total_q = cu.back();
  p.cu_seqlens_q = cu.data();  // host memory: bind and ws_row0 only test it against null
  alignas(256) static char ws[256];
  flash::detail::bind_bwd_workspace(p, ws, /*with_dq_accum=*/false, /*with_dq_semaphore=*/false, row_pad);
  constexpr int kTile = flash::detail::kBwdRowPad;
  for (int h = 0; h < p.heads_q; ++h)
    for (int b = 0; b < p.batch; ++b) {
      const std::int64_t start = p.ws_row0(b, h, cu[b], p.ws_seq_pad);
      const std::int64_t end = b + 1 < p.batch ? p.ws_row0(b + 1, h, cu[b + 1], p.ws_seq_pad) : (h + 1) * p.ws_head_rows;
      const int len = lens[b];
      const std::int64_t preprocess = (len + kTile - 1) / kTile * kTile + (p.ws_seq_pad - kTile);
      const std::int64_t steps = (len + step - 1) / step * step;
      if (start % 64 != 0 || end - start < std::max(preprocess, steps)) return false;
    }
  return true;
}
}  // namespace

TEST(BackwardWorkspace, VariableLengthRegionsHoldEveryStep) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len_of(0, 700);
  const std::vector<std::vector<int>> fixed = {{1}, {250}, {129, 250, 1}, {79, 80, 81, 159, 160, 161}, {0, 0, 5}};
  bool pad128_holds_80 = true;
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<int> lens;
    if (trial < static_cast<int>(fixed.size())) {
      lens = fixed[trial];
    } else {
      lens.resize(1 + rng() % 9);
      for (int& l : lens) l = len_of(rng);
    }
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    EXPECT_TRUE(regions_hold(lens, flash::detail::kBwdRowPad, 64));
    EXPECT_TRUE(regions_hold(lens, flash::detail::kBwdRowPad, 128));
    EXPECT_TRUE(regions_hold(lens, 5 * flash::detail::kBwdRowPad, 80));
    pad128_holds_80 = pad128_holds_80 && regions_hold(lens, flash::detail::kBwdRowPad, 80);
  }
  EXPECT_FALSE(pad128_holds_80) << "128 rows per sequence should not hold 80-row steps (the check cannot fail)";
}

TEST(BackwardRegistry, ListsTheLadder) {
  const auto vs = flash::backward_variants();
  ASSERT_EQ(vs.size(), 4u);
  EXPECT_EQ(vs[0].name, "tiled");
  EXPECT_EQ(vs[1].name, "mma");
  EXPECT_EQ(vs[2].name, "wgmma");
  EXPECT_EQ(vs[3].name, "wgmma_wide");
  for (const auto& v : vs) {
    if (!v.built || v.head_dims.empty()) continue;
    const int head_dim = v.head_dims.front();  // one this build instantiated
    EXPECT_TRUE(v.supports(DType::bf16, head_dim)) << v.name;
    EXPECT_FALSE(v.supports(DType::f32, head_dim)) << v.name;
    EXPECT_TRUE(v.features & flash::kFeatureGqa) << v.name;
  }
}

}  // namespace
