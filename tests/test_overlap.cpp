// Outputs that share memory with an input or with another output are
// rejected before anything is written, by attention_* and plan_* alike;
// views that interleave without sharing a byte (packed qkv, packed
// gradients, a K/V cache in one buffer) are accepted. The overlap check
// itself is compared with brute force and timed on serving-sized shapes.
// Validation runs before any device access, so host buffers stand in for
// device memory and nothing here needs a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cpu_test.h"
#include "flash/flash.h"
#include "validate.h"

namespace {

using flash::DType;
using flash::TensorView;
using flash::detail::Overlap;
using flash::detail::views_overlap;

// A fake device address: the check compares addresses and never reads them.
char* const kBase = reinterpret_cast<char*>(std::uintptr_t{1} << 40);

// Every byte a view covers, by enumeration (small views only).
std::set<std::uintptr_t> bytes_of(const TensorView& t) {
  std::set<std::uintptr_t> out;
  const std::int64_t n = t.numel();
  const std::size_t esize = flash::dtype_size(t.dtype);
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t rest = i, off = 0;
    for (int d = t.rank - 1; d >= 0; --d) {
      off += (rest % t.shape[d]) * t.stride[d];
      rest /= t.shape[d];
    }
    for (std::size_t b = 0; b < esize; ++b)
      out.insert(reinterpret_cast<std::uintptr_t>(t.data) + static_cast<std::uintptr_t>(off) * esize + b);
  }
  return out;
}

TensorView random_view(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> rank_dist(1, 4), size_dist(1, 6), stride_dist(0, 40), offset_dist(0, 200);
  TensorView t;
  t.dtype = rng() % 2 ? DType::bf16 : DType::f32;
  t.rank = rank_dist(rng);
  for (int d = 0; d < t.rank; ++d) {
    t.shape[d] = rng() % 50 == 0 ? 0 : size_dist(rng);
    t.stride[d] = stride_dist(rng);
  }
  t.data = kBase + offset_dist(rng) * flash::dtype_size(t.dtype);
  return t;
}

// Random views of up to 4 dimensions, any strides (zero and overlapping
// ones too), bf16 and f32 mixed: the answer is brute force's, and both
// answers occur, including interleaved views that share no byte.
TEST(OverlapCheck, AgreesWithBruteForce) {
  std::mt19937_64 rng(13);
  int shared = 0, interleaved = 0;
  for (int i = 0; i < 10000; ++i) {
    const TensorView a = random_view(rng), b = random_view(rng);
    const auto bytes_a = bytes_of(a), bytes_b = bytes_of(b);
    bool expected = false;
    for (auto x : bytes_b) expected = expected || bytes_a.count(x) > 0;
    const Overlap got = views_overlap(a, b);
    ASSERT_NE(got, Overlap::undecided) << "pair " << i;
    ASSERT_EQ(got == Overlap::shared, expected) << "pair " << i;
    shared += expected;
    interleaved += !expected && !bytes_a.empty() && !bytes_b.empty() && *bytes_a.begin() < *bytes_b.rbegin() &&
                   *bytes_b.begin() < *bytes_a.rbegin();
  }
  EXPECT_GT(shared, 2000);
  EXPECT_GT(interleaved, 1000) << "pairs whose byte ranges intersect without a shared byte";
}

// An output against itself: random views (any strides, zero ones too) are
// rejected exactly when brute force finds two elements at one offset, and
// views whose dimensions interleave without nesting (o [1, 3, 2, 64] with
// strides {0, 128, 192, 1}) pass.
TEST(OverlapCheck, SelfOverlapAgreesWithBruteForce) {
  std::mt19937_64 rng(17);
  int rejected = 0, interleaved = 0;
  for (int i = 0; i < 10000; ++i) {
    TensorView t = random_view(rng);
    t.stride[t.rank - 1] = 1;  // as check_view requires of an output's last dimension
    // Two elements at one offset leave fewer distinct bytes than the elements hold.
    const bool repeats = bytes_of(t).size() < static_cast<std::size_t>(t.numel()) * flash::dtype_size(t.dtype);
    bool threw = false;
    try {
      flash::detail::check_no_self_overlap("o", t);
    } catch (const flash::Error& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find("o: its strides make elements overlap"), std::string::npos) << e.what();
    }
    ASSERT_EQ(threw, repeats) << "view " << i;
    rejected += threw;
    // Not nested: some stride below the extent of the smaller dimensions.
    std::vector<std::pair<std::int64_t, std::int64_t>> dims;
    for (int d = 0; d < t.rank; ++d)
      if (t.shape[d] > 1) dims.push_back({t.stride[d], t.shape[d]});
    std::sort(dims.begin(), dims.end());
    bool nested = true;
    std::int64_t extent = 1;
    for (const auto& [stride, size] : dims) {
      nested = nested && stride >= extent;
      extent += stride * (size - 1);
    }
    interleaved += !threw && !nested;
  }
  EXPECT_GT(rejected, 1000);
  EXPECT_GT(interleaved, 100) << "views that pass though their dimensions do not nest";
  const TensorView o = flash::make_view(kBase, DType::bf16, {1, 3, 2, 64}, {0, 128, 192, 1});
  EXPECT_NO_THROW(flash::detail::check_no_self_overlap("o", o));
}

// A caller's workspace is written by the call: the bytes it uses may share
// none with any view, input or output; past those bytes anything may lie.
TEST(OverlapCheck, WorkspaceSharesNothingWithTheViews) {
  const TensorView q = flash::make_contiguous(kBase, DType::bf16, {1, 8, 2, 64});    // 2 KB at kBase
  const TensorView o = flash::make_contiguous(kBase + 4096, DType::bf16, {1, 8, 2, 64});
  const flash::detail::NamedView inputs[] = {{"q", &q}, {"absent", nullptr}}, outputs[] = {{"o", &o}};
  auto message = [&](const void* ws, std::size_t bytes) -> std::string {
    try {
      flash::detail::check_workspace_overlap(ws, bytes, inputs, outputs);
    } catch (const flash::Error& e) {
      return e.what();
    }
    return {};
  };
  EXPECT_NE(message(kBase + 4096, 256).find("workspace overlaps o"), std::string::npos);
  EXPECT_NE(message(kBase + 1792, 512).find("workspace overlaps q"), std::string::npos);  // q's last 256 bytes
  EXPECT_EQ(message(kBase + 2048, 2048), "");  // between q and o
  EXPECT_EQ(message(kBase + 8192, 1 << 20), "");
  EXPECT_EQ(message(nullptr, 4096), "");  // the library's own
  EXPECT_EQ(message(kBase, 0), "");       // a call that needs none
}

TEST(OverlapCheck, EmptyViewsShareNothing) {
  const TensorView a = flash::make_contiguous(kBase, DType::bf16, {2, 0, 4, 64});
  const TensorView b = flash::make_contiguous(kBase, DType::bf16, {2, 8, 4, 64});
  EXPECT_EQ(views_overlap(a, b), Overlap::none);
  EXPECT_EQ(views_overlap(b, b), Overlap::shared);
}

// [batch, seqlen, parts, heads, head_dim] memory; part p as a [b, s, h, d] view.
TensorView packed_part(char* base, DType dtype, std::int64_t b, std::int64_t s, std::int64_t parts, std::int64_t h,
                       std::int64_t d, std::int64_t part) {
  const std::int64_t row = parts * h * d;
  const std::int64_t offset = part * h * d * static_cast<std::int64_t>(flash::dtype_size(dtype));
  return flash::make_view(base + offset, dtype, {b, s, h, d}, {s * row, row, d, 1});
}

TEST(OverlapCheck, PackedLayoutsInterleaveWithoutSharing) {
  const TensorView dq = packed_part(kBase, DType::bf16, 2, 8, 3, 4, 64, 0);
  const TensorView dk = packed_part(kBase, DType::bf16, 2, 8, 3, 4, 64, 1);
  const TensorView dv = packed_part(kBase, DType::bf16, 2, 8, 3, 4, 64, 2);
  EXPECT_EQ(views_overlap(dq, dk), Overlap::none);
  EXPECT_EQ(views_overlap(dk, dv), Overlap::none);
  EXPECT_EQ(views_overlap(dv, dq), Overlap::none);
  // One element further and dk's last element is dv's first.
  TensorView shifted = dk;
  shifted.data = static_cast<char*>(dk.data) + 2;
  EXPECT_EQ(views_overlap(shifted, dv), Overlap::shared);
  // A paged K/V cache in one buffer: [pages, 2, page_size, heads, head_dim].
  const std::int64_t pages = 5, page = 16, h = 2, d = 128;
  const TensorView kc = flash::make_view(kBase, DType::f16, {pages, page, h, d}, {2 * page * h * d, h * d, d, 1});
  TensorView vc = kc;
  vc.data = kBase + page * h * d * 2;
  EXPECT_EQ(views_overlap(kc, vc), Overlap::none);
  // BSHD and BHSD views of the same bytes share them.
  const TensorView bshd = flash::make_contiguous(kBase, DType::bf16, {2, 8, 4, 64});
  const TensorView bhsd = flash::make_view(kBase, DType::bf16, {2, 8, 4, 64}, {8 * 4 * 64, 64, 8 * 64, 1});
  EXPECT_EQ(views_overlap(bshd, bhsd), Overlap::shared);
}

// Batch 64, seqlen 128k, 128 heads of 128: every pair is decided without
// search, so the whole backward check returns at once (no timing here; a
// slow check would show as a slow test).
TEST(OverlapCheck, ServingShapesAreDecidedAtOnce) {
  const std::int64_t b = 64, s = 131072, h = 128, d = 128;
  char* grads = kBase + (std::int64_t{1} << 44);
  const TensorView q = packed_part(kBase, DType::bf16, b, s, 3, h, d, 0);
  const TensorView k = packed_part(kBase, DType::bf16, b, s, 3, h, d, 1);
  const TensorView v = packed_part(kBase, DType::bf16, b, s, 3, h, d, 2);
  const TensorView dq = packed_part(grads, DType::bf16, b, s, 3, h, d, 0);
  const TensorView dk = packed_part(grads, DType::bf16, b, s, 3, h, d, 1);
  const TensorView dv = packed_part(grads, DType::bf16, b, s, 3, h, d, 2);
  char* const after = grads + (std::int64_t{1} << 42);
  const TensorView o = flash::make_contiguous(after, DType::bf16, {b, s, h, d});
  const TensorView dout = flash::make_contiguous(after + (std::int64_t{1} << 41), DType::bf16, {b, s, h, d});
  const TensorView lse = flash::make_contiguous(after + (std::int64_t{1} << 42), DType::f32, {b, h, s});
  for (std::int64_t budget : {std::int64_t{8}, flash::detail::kOverlapWorkBudget})
    EXPECT_NO_THROW(flash::detail::check_no_overlap(
        {{"q", &q}, {"k", &k}, {"v", &v}, {"o", &o}, {"lse", &lse}, {"dout", &dout}},
        {{"dq", &dq}, {"dk", &dk}, {"dv", &dv}}, budget));
  // Inputs and outputs interleaved in one [b, s, 6, h, d] buffer.
  std::vector<TensorView> parts;
  for (int p = 0; p < 6; ++p) parts.push_back(packed_part(kBase, DType::bf16, b, s, 6, h, d, p));
  EXPECT_NO_THROW(flash::detail::check_no_overlap({{"q", &parts[0]}, {"k", &parts[1]}, {"v", &parts[2]}},
                                                  {{"dq", &parts[3]}, {"dk", &parts[4]}, {"dv", &parts[5]}}, 8));
  // An alias and a one-element shift at the same scale.
  EXPECT_EQ(views_overlap(q, q, 8), Overlap::shared);
  TensorView shifted = k;
  shifted.data = static_cast<char*>(k.data) - 2;
  EXPECT_EQ(views_overlap(shifted, q, 8), Overlap::shared);
  // BHSD over BSHD bytes: found by a short search.
  const TensorView o_bhsd = flash::make_view(after, DType::bf16, {b, s, h, d}, {s * h * d, d, s * d, 1});
  EXPECT_EQ(views_overlap(o_bhsd, o), Overlap::shared);
}

TEST(OverlapCheck, OverBudgetIsRejectedAsMayOverlap) {
  const TensorView dq = packed_part(kBase, DType::bf16, 2, 8, 3, 4, 64, 0);
  const TensorView dk = packed_part(kBase, DType::bf16, 2, 8, 3, 4, 64, 1);
  EXPECT_EQ(views_overlap(dq, dk, 0), Overlap::undecided);
  try {
    flash::detail::check_no_overlap({}, {{"dq", &dq}, {"dk", &dk}}, 0);
    ADD_FAILURE() << "no flash::Error";
  } catch (const flash::Error& e) {
    EXPECT_NE(std::string(e.what()).find("dk may overlap dq"), std::string::npos) << e.what();
  }
}

TEST(OverlapCheck, InputsMayShareMemory) {
  const TensorView q = flash::make_contiguous(kBase, DType::bf16, {2, 8, 4, 64});
  const TensorView o = flash::make_contiguous(kBase + 8192, DType::bf16, {2, 8, 4, 64});
  EXPECT_NO_THROW(flash::detail::check_no_overlap({{"q", &q}, {"k", &q}, {"v", &q}}, {{"o", &o}, {"lse", nullptr}}));
}

// The calls below point their views into one pattern-filled arena and check
// after each rejected call that not a byte of it changed.
constexpr int kB = 2, kS = 8, kH = 4, kHkv = 2, kD = flash::cpu_test::kTestHeadDim;
constexpr std::size_t kQElems = kB * kS * kH * kD, kKvElems = kB * kS * kHkv * kD;
constexpr unsigned char kPattern = 0x5a;

class OverlapApi : public ::testing::Test {
 protected:
  void SetUp() override { std::memset(arena_, kPattern, sizeof(arena_)); }

  // A pointer `elems` bf16 elements into the arena.
  void* at(std::size_t elems) { return arena_ + 2 * elems; }

  // Expects both calls (attention_* and plan_*) to throw flash::Error whose
  // message contains every fragment, and the arena untouched.
  void expect_error(std::initializer_list<std::function<void()>> calls, std::initializer_list<const char*> fragments) {
    for (const auto& call : calls) {
      try {
        call();
        ADD_FAILURE() << "no flash::Error thrown";
      } catch (const flash::Error& e) {
        const std::string msg = e.what();
        for (const char* f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "message: " << msg << "\nmissing: " << f;
      }
      for (unsigned char x : arena_) ASSERT_EQ(x, kPattern) << "memory was written";
    }
  }

  // Expects the call to pass the overlap check: it returns, or (without a
  // GPU, or for a variant not built) throws for another reason.
  void expect_no_overlap_error(const std::function<void()>& plan) {
    try {
      plan();
    } catch (const flash::Error& e) {
      EXPECT_EQ(std::string(e.what()).find("overlap"), std::string::npos) << e.what();
    }
  }

  alignas(256) unsigned char arena_[16 * kQElems * 2];
};

class ForwardOverlap : public OverlapApi {
 protected:
  void SetUp() override {
    OverlapApi::SetUp();
    a_.q = flash::make_contiguous(at(0), DType::bf16, {kB, kS, kH, kD});
    a_.k = flash::make_contiguous(at(kQElems), DType::bf16, {kB, kS, kHkv, kD});
    a_.v = flash::make_contiguous(at(2 * kQElems), DType::bf16, {kB, kS, kHkv, kD});
    a_.o = flash::make_contiguous(at(3 * kQElems), DType::bf16, {kB, kS, kH, kD});
    a_.lse = flash::make_contiguous(at(4 * kQElems), DType::f32, {kB, kH, kS});
  }
  void expect_error(std::initializer_list<const char*> fragments) {
    OverlapApi::expect_error({[&] { flash::attention_forward(a_); }, [&] { flash::plan_forward(a_); }}, fragments);
  }
  flash::ForwardArgs a_;
};

TEST_F(ForwardOverlap, OutputAliasesQ) {
  a_.o.data = a_.q.data;
  expect_error({"o overlaps q", "must not share memory"});
}

TEST_F(ForwardOverlap, OutputOverlapsKPartially) {
  a_.o.data = at(kQElems + kKvElems - kD);  // o's first row is k's last
  expect_error({"o overlaps k"});
}

TEST_F(ForwardOverlap, LseOverlapsOutput) {
  a_.lse->data = at(3 * kQElems + 100);
  expect_error({"lse overlaps o"});
}

TEST_F(ForwardOverlap, PackedQkvAndOutputsNextToThemPass) {
  // q, k, v and o interleaved in one [b, s, 4, h, d] buffer (MHA), the LSE
  // right after it.
  a_.q = packed_part(static_cast<char*>(at(0)), DType::bf16, kB, kS, 4, kH, kD, 0);
  a_.k = packed_part(static_cast<char*>(at(0)), DType::bf16, kB, kS, 4, kH, kD, 1);
  a_.v = packed_part(static_cast<char*>(at(0)), DType::bf16, kB, kS, 4, kH, kD, 2);
  a_.o = packed_part(static_cast<char*>(at(0)), DType::bf16, kB, kS, 4, kH, kD, 3);
  a_.lse->data = at(4 * kQElems);
  expect_no_overlap_error([&] { flash::plan_forward(a_); });
}

class BackwardOverlap : public OverlapApi {
 protected:
  void SetUp() override {
    OverlapApi::SetUp();
    auto qv = [&](int slot) { return flash::make_contiguous(at(slot * kQElems), DType::bf16, {kB, kS, kH, kD}); };
    auto kv = [&](int slot) { return flash::make_contiguous(at(slot * kQElems), DType::bf16, {kB, kS, kHkv, kD}); };
    a_.q = qv(0), a_.o = qv(1), a_.dout = qv(2), a_.dq = qv(3);
    a_.k = kv(4), a_.v = kv(5), a_.dk = kv(6), a_.dv = kv(7);
    a_.lse = flash::make_contiguous(at(8 * kQElems), DType::f32, {kB, kH, kS});
  }
  void expect_error(std::initializer_list<const char*> fragments) {
    OverlapApi::expect_error({[&] { flash::attention_backward(a_); }, [&] { flash::plan_backward(a_); }}, fragments);
  }
  flash::BackwardArgs a_;
};

TEST_F(BackwardOverlap, GradientAliasesInput) {
  a_.dq.data = a_.q.data;
  expect_error({"dq overlaps q"});
}

TEST_F(BackwardOverlap, GradientsAliasEachOther) {
  a_.dv.data = a_.dk.data;
  expect_error({"dv overlaps dk"});
}

TEST_F(BackwardOverlap, GradientOverlapsDoutPartially) {
  a_.dq.data = at(2 * kQElems + kD);  // one row into dout
  expect_error({"dq overlaps dout"});
}

TEST_F(BackwardOverlap, PackedGradientsPass) {
  // FlashAttention's qkv-packed backward: dq, dk, dv in one [b, s, 3, h, d] buffer (MHA).
  a_.k = flash::make_contiguous(at(4 * kQElems), DType::bf16, {kB, kS, kH, kD});
  a_.v = flash::make_contiguous(at(5 * kQElems), DType::bf16, {kB, kS, kH, kD});
  char* grads = static_cast<char*>(at(9 * kQElems));
  a_.dq = packed_part(grads, DType::bf16, kB, kS, 3, kH, kD, 0);
  a_.dk = packed_part(grads, DType::bf16, kB, kS, 3, kH, kD, 1);
  a_.dv = packed_part(grads, DType::bf16, kB, kS, 3, kH, kD, 2);
  expect_no_overlap_error([&] { flash::plan_backward(a_); });
}

constexpr int kCap = 32;
constexpr std::size_t kCacheElems = kB * kCap * kHkv * kD;
constexpr std::size_t kRest = 2 * kQElems + 4 * kCacheElems;  // past room for two caches, or one of 6 K/V pages

class DecodeOverlap : public OverlapApi {
 protected:
  void SetUp() override {
    OverlapApi::SetUp();
    a_.q = flash::make_contiguous(at(0), DType::bf16, {kB, 1, kH, kD});
    a_.o = flash::make_contiguous(at(kQElems), DType::bf16, {kB, 1, kH, kD});
    a_.k_cache = flash::make_contiguous(at(2 * kQElems), DType::bf16, {kB, kCap, kHkv, kD});
    a_.v_cache = flash::make_contiguous(at(2 * kQElems + kCacheElems), DType::bf16, {kB, kCap, kHkv, kD});
    char* rest = static_cast<char*>(at(kRest));
    a_.lse = flash::make_contiguous(rest, DType::f32, {kB, kH, 1});
    a_.cache_seqlens = flash::make_contiguous(rest + 256, DType::i32, {kB});
    a_.status = flash::make_contiguous(rest + 512, DType::i32, {4});
  }
  void append() {
    char* rest = static_cast<char*>(at(kRest)) + 1024;
    a_.k_new = flash::make_contiguous(rest, DType::bf16, {kB, 1, kHkv, kD});
    a_.v_new = flash::make_contiguous(rest + 1024, DType::bf16, {kB, 1, kHkv, kD});
  }
  void expect_error(std::initializer_list<const char*> fragments) {
    OverlapApi::expect_error({[&] { flash::attention_decode(a_); }, [&] { flash::plan_decode(a_); }}, fragments);
  }
  flash::DecodeArgs a_;
};

TEST_F(DecodeOverlap, OutputAliasesTheCache) {
  a_.o.data = a_.k_cache.data;
  expect_error({"o overlaps k_cache"});
  append();  // the caches are outputs now: the same pair, named the other way round
  expect_error({"k_cache overlaps o"});
}

TEST_F(DecodeOverlap, OutputOverlapsVCachePartially) {
  a_.o.data = at(2 * kQElems + 2 * kCacheElems - kD);  // o's first row is v_cache's last
  expect_error({"o overlaps v_cache"});
}

TEST_F(DecodeOverlap, LseAndStatusOverlapTheOutput) {
  a_.lse->data = at(kQElems + kD);
  expect_error({"lse overlaps o"});
  SetUp();
  a_.status->data = at(kQElems + 8);
  expect_error({"status overlaps o"});
}

TEST_F(DecodeOverlap, AppendWritesTheCaches) {
  append();
  a_.v_cache.data = a_.k_cache.data;
  expect_error({"v_cache overlaps k_cache"});
  SetUp();
  append();
  a_.k_new->data = at(2 * kQElems + kD);  // the new keys inside the cache they are written to
  expect_error({"k_cache overlaps k_new"});
  SetUp();
  append();
  a_.cache_seqlens.data = at(2 * kQElems);
  expect_error({"k_cache overlaps cache_seqlens"});
}

TEST_F(DecodeOverlap, WithoutAppendTheCachesAreInputs) {
  // Without an append the caches are only read: they may alias each other.
  a_.v_cache.data = a_.k_cache.data;
  expect_no_overlap_error([&] { flash::plan_decode(a_); });
}

TEST_F(DecodeOverlap, OneBufferKvCachePasses) {
  // K and V pages interleaved in one [pages, 2, page_size, heads, head_dim] buffer, with an append.
  const std::int64_t pages = 6, page = 16;
  char* cache = static_cast<char*>(at(2 * kQElems));
  a_.k_cache = flash::make_view(cache, DType::bf16, {pages, page, kHkv, kD}, {2 * page * kHkv * kD, kHkv * kD, kD, 1});
  a_.v_cache = a_.k_cache;
  a_.v_cache.data = cache + page * kHkv * kD * 2;
  char* table = static_cast<char*>(at(kRest)) + 4096;
  a_.page_table = flash::make_contiguous(table, DType::i32, {kB, 2});
  append();
  expect_no_overlap_error([&] { flash::plan_decode(a_); });
}

}  // namespace
