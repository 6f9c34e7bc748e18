// Decode with a different number of new tokens per sequence
// (DecodeArgs::cu_seqlens_q, issue 17: speculative decoding): every invalid
// host-side argument raises flash::Error naming the argument and writes
// nothing. As in test_api.cpp, validation runs before any device access, so
// host buffers stand in for device memory and these tests run without a
// GPU; valid calls are only planned (plan_decode). The metadata's values
// are checked on the device: tests/test_decode_varlen_gpu.cpp.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "cpu_test.h"
#include "flash/flash.h"
#include "flash/variants.h"

namespace {

using flash::cpu_test::names_argument;

using flash::DType;
using flash::cpu_test::expect_valid;

// Three sequences with 1 to a few new tokens each, packed into kTotalQ rows,
// over a contiguous cache of kCap keys per sequence or kPages pages of
// kPageSize (the metadata's values are never read here).
constexpr int kBatch = 3, kTotalQ = 12, kH = 4, kHkv = 2, kD = flash::cpu_test::kTestHeadDim, kCap = 32;
constexpr int kPages = 6, kPageSize = 16, kMaxPages = 2;
constexpr std::uint16_t kPattern = 0x7e57;
constexpr float kLsePattern = 123.0f;

void* fake_address(std::uintptr_t i) { return reinterpret_cast<void*>((i + 1) << 44); }

struct Buffers {
  alignas(256) std::uint16_t q[kTotalQ * kH * kD];
  alignas(256) std::uint16_t kc[kBatch * kCap * kHkv * kD];
  alignas(256) std::uint16_t vc[kBatch * kCap * kHkv * kD];
  alignas(256) std::uint16_t kn[kBatch * 2 * kHkv * kD];
  alignas(256) std::uint16_t vn[kBatch * 2 * kHkv * kD];
  alignas(256) std::uint16_t o[kTotalQ * kH * kD];
  alignas(256) float lse[(kH + 1) * (kTotalQ + 1)];  // room for the wrong shapes below
  alignas(256) std::int32_t cu_q[2 * (kBatch + 2)];  // room for strided and longer views
  alignas(256) std::int32_t lens[kBatch + 1];
  alignas(256) std::int32_t table[(kBatch + 1) * kMaxPages];
  alignas(256) std::int32_t status[8];
  alignas(256) float slopes[(kBatch + 1) * kH];
  alignas(256) float sinks[kH];
};

class DecodeVarlenApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!flash::cpu_test::decode_variant_built("splitkv")) GTEST_SKIP() << "splitkv is not built (FLASH_VARIANTS)";
    args_ = {};
    std::memset(&buf_, 0, sizeof(buf_));
    for (auto& x : buf_.o) x = kPattern;
    for (auto& x : buf_.kc) x = kPattern;
    for (auto& x : buf_.lse) x = kLsePattern;
    for (auto& x : buf_.status) x = 7;
    args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kTotalQ, kH, kD});
    args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH, kD});
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ});
    args_.k_cache = flash::make_contiguous(buf_.kc, DType::bf16, {kBatch, kCap, kHkv, kD});
    args_.v_cache = flash::make_contiguous(buf_.vc, DType::bf16, {kBatch, kCap, kHkv, kD});
    args_.cache_seqlens = flash::make_contiguous(buf_.lens, DType::i32, {kBatch});
    args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {kBatch + 1});
    args_.max_seqlen_q = 8;
    args_.causal = true;
    args_.kernel = "splitkv";
  }
  void make_paged() {
    args_.k_cache = flash::make_contiguous(buf_.kc, DType::bf16, {kPages, kPageSize, kHkv, kD});
    args_.v_cache = flash::make_contiguous(buf_.vc, DType::bf16, {kPages, kPageSize, kHkv, kD});
    args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch, kMaxPages});
  }

  // Expects flash::Error from attention_decode and plan_decode whose message
  // names every argument in `names` and holds every fragment, and o, lse,
  // the cache and status untouched.
  void expect_error(std::initializer_list<const char*> names, std::initializer_list<const char*> fragments = {}) {
    for (int plan = 0; plan < 2; ++plan) {
      try {
        if (plan) flash::plan_decode(args_);
        else flash::attention_decode(args_);
        ADD_FAILURE() << "no flash::Error thrown (" << (plan ? "plan_decode" : "attention_decode") << ")";
      } catch (const flash::Error& e) {
        for (const char* n : names) EXPECT_TRUE(names_argument(e.what(), n)) << "message: " << e.what() << "\ndoes not name: " << n;
        for (const char* f : fragments)
          EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << "message: " << e.what() << "\nmissing: " << f;
      }
    }
    for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
    for (auto x : buf_.kc) ASSERT_EQ(x, kPattern) << "k_cache was written";
    for (auto x : buf_.lse) ASSERT_EQ(x, kLsePattern) << "lse was written";
    for (auto x : buf_.status) ASSERT_EQ(x, 7) << "status was written";
  }

  Buffers buf_;
  flash::DecodeArgs args_;
};

// The fixture's call and its valid variations pass validation.
TEST_F(DecodeVarlenApiErrors, ValidCallsPassValidation) {
  expect_valid([&] { flash::plan_decode(args_); });
  args_.lse.reset();  // optional, as in a dense call
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {4});
  args_.sync_check = false;
  args_.window_left = 5;
  args_.num_splits = 3;
  expect_valid([&] { flash::plan_decode(args_); });
  // Every score modifier; ALiBi slopes per sequence are [batch, heads_q]
  // with batch = cu_seqlens_q.shape[0] - 1.
  args_.softcap = 30.0f;
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kBatch, kH});
  args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kH});
  expect_valid([&] { flash::plan_decode(args_); });
  SetUp();
  make_paged();
  expect_valid([&] { flash::plan_decode(args_); });
  // max_seqlen_q from 0 to total_q; packed views with strides (q and o
  // heads-major, lse with padded heads).
  SetUp();
  for (int m : {0, 1, kTotalQ}) {
    args_.max_seqlen_q = m;
    expect_valid([&] { flash::plan_decode(args_); });
  }
  args_.q = flash::make_view(buf_.q, DType::bf16, {kTotalQ, kH, kD}, {kD, kTotalQ * kD, 1});
  args_.o = flash::make_view(buf_.o, DType::bf16, {kTotalQ, kH, kD}, {kD, kTotalQ * kD, 1});
  args_.lse = flash::make_view(buf_.lse, DType::f32, {kH, kTotalQ}, {kTotalQ + 1, 1});
  expect_valid([&] { flash::plan_decode(args_); });
  // A batch of none: nothing to check or compute (on a GPU it launches nothing).
  SetUp();
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {1});
  args_.cache_seqlens = flash::make_contiguous(buf_.lens, DType::i32, {0});
  args_.k_cache.shape[0] = args_.v_cache.shape[0] = 0;
  expect_valid([&] { flash::attention_decode(args_); });
}

// k_new / v_new with cu_seqlens_q: refused, naming both (the new tokens'
// keys are expected in the cache already).
TEST_F(DecodeVarlenApiErrors, AppendIsRefused) {
  args_.k_new = flash::make_contiguous(buf_.kn, DType::bf16, {kBatch, 2, kHkv, kD});
  args_.v_new = flash::make_contiguous(buf_.vn, DType::bf16, {kBatch, 2, kHkv, kD});
  expect_error({"k_new", "cu_seqlens_q"}, {"not supported"});
  args_.k_new.reset();
  expect_error({"v_new", "cu_seqlens_q"}, {"not supported"});
  // Packed like q, as FlashAttention 3 would take them: still refused.
  args_.k_new = flash::make_contiguous(buf_.kn, DType::bf16, {kTotalQ / 2, kHkv, kD});
  args_.v_new = flash::make_contiguous(buf_.vn, DType::bf16, {kTotalQ / 2, kHkv, kD});
  expect_error({"k_new", "cu_seqlens_q"});
}

TEST_F(DecodeVarlenApiErrors, PackedRanks) {
  args_.q = flash::make_contiguous(buf_.q, DType::bf16, {1, kTotalQ, kH, kD});
  expect_error({"q"}, {"rank-3 packed view"});
  SetUp();
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {1, kTotalQ, kH, kD});
  expect_error({"o"}, {"rank-3 packed view"});
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {1, kH, kTotalQ});
  expect_error({"lse"}, {"rank-2 packed view"});
}

TEST_F(DecodeVarlenApiErrors, PackedShapes) {
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ - 1, kH, kD});
  expect_error({"o"});
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ + 1});
  expect_error({"lse"});
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH + 1, kTotalQ});
  expect_error({"lse"});
  SetUp();
  args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kTotalQ, 3, kD});
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, 3, kD});
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {3, kTotalQ});
  expect_error({"heads_q", "heads_kv"}, {"multiple"});
}

TEST_F(DecodeVarlenApiErrors, CuSeqlensQ) {
  args_.cu_seqlens_q->dtype = DType::f32;
  expect_error({"cu_seqlens_q"}, {"i32"});
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {2, kBatch + 1});
  expect_error({"cu_seqlens_q"});
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {0});
  expect_error({"cu_seqlens_q"}, {"batch + 1"});
  // A longer cu_seqlens_q is a larger batch: cache_seqlens no longer matches.
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {kBatch + 2});
  expect_error({"cache_seqlens", "cu_seqlens_q"});
}

TEST_F(DecodeVarlenApiErrors, MaxSeqlenQ) {
  for (int m : {-1, kTotalQ + 1}) {
    args_.max_seqlen_q = m;
    expect_error({"max_seqlen_q", "total_q"});
  }
}

// The batch comes from cu_seqlens_q: the cache, its lengths, the page table
// and per-sequence slopes must agree with it, and the messages say so.
TEST_F(DecodeVarlenApiErrors, BatchFromCuSeqlensQ) {
  args_.cache_seqlens = flash::make_contiguous(buf_.lens, DType::i32, {kBatch + 1});
  expect_error({"cache_seqlens", "cu_seqlens_q"});
  SetUp();
  args_.k_cache.shape[0] = args_.v_cache.shape[0] = kBatch - 1;
  expect_error({"k_cache", "cu_seqlens_q", "page_table"});
  SetUp();
  make_paged();
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch + 1, kMaxPages});
  expect_error({"page_table", "cu_seqlens_q"});
  SetUp();
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kBatch + 1, kH});
  expect_error({"alibi_slopes"});
}

TEST_F(DecodeVarlenApiErrors, StatusAndSplits) {
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {3});
  expect_error({"status"});
  SetUp();
  args_.num_splits = 257;
  expect_error({"num_splits"});
}

// Outputs may not overlap cu_seqlens_q (or any other input), nor alias
// themselves.
TEST_F(DecodeVarlenApiErrors, Overlaps) {
  args_.status = flash::make_contiguous(buf_.cu_q, DType::i32, {4});
  args_.sync_check = false;
  expect_error({"status", "cu_seqlens_q"}, {"overlaps"});
  SetUp();
  args_.lse = flash::make_view(buf_.lse, DType::f32, {kH, kTotalQ}, {0, 1});  // every head on one row
  expect_error({"lse"});
}

// The kernels' int grids: max_seqlen_q * heads_q / heads_kv rows per KV
// head up to 134217712, total_q * heads_q up to 2^31 - 1. Every view sits
// at a fake address but cu_seqlens_q and cache_seqlens.
TEST_F(DecodeVarlenApiErrors, QueryRowLimits) {
  auto shape = [&](std::int64_t total_q, std::int64_t heads_q, std::int64_t heads_kv, int max_seqlen_q) {
    args_.q = flash::make_contiguous(fake_address(0), DType::bf16, {total_q, heads_q, kD});
    args_.o = flash::make_contiguous(fake_address(1), DType::bf16, {total_q, heads_q, kD});
    args_.k_cache = flash::make_contiguous(fake_address(2), DType::bf16, {kBatch, kCap, heads_kv, kD});
    args_.v_cache = flash::make_contiguous(fake_address(3), DType::bf16, {kBatch, kCap, heads_kv, kD});
    args_.lse.reset();
    args_.max_seqlen_q = max_seqlen_q;
  };
  constexpr std::int64_t kMaxRows = 134217712;  // 16 * ((2^31 - 1) / 256)
  shape(kMaxRows / 4, 8, 2, kMaxRows / 4);
  expect_valid([&] { flash::plan_decode(args_); });
  shape(kMaxRows / 4 + 1, 8, 2, kMaxRows / 4 + 1);
  expect_error({"max_seqlen_q"}, {"134217716", "exceeds the decode limit of 134217712 query rows per KV head"});
  shape(std::int64_t{1} << 25, 63, 63, 8);  // 2^31 - 2^25 rows in all
  expect_valid([&] { flash::plan_decode(args_); });
  shape(std::int64_t{1} << 25, 64, 64, 8);  // 2^31
  expect_error({"q"}, {"total_q * heads_q exceeds the decode limit of 2^31 - 1 query rows"});
}

// Packed q and o go through the variant's alignment rules with their own
// strides: a head stride of 8 bytes is refused, naming q.
TEST_F(DecodeVarlenApiErrors, MisalignedPackedQ) {
  args_.q = flash::make_view(buf_.q, DType::bf16, {kTotalQ / 2, kH, kD}, {2 * kH * kD, kD + 4, 1});
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ / 2, kH, kD});
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ / 2});
  args_.max_seqlen_q = 4;
  args_.kernel = "auto";
  expect_error({"q"}, {"16 bytes"});
}

// The status words of the device check, in words (no GPU needed).
TEST(DecodeVarlenStatus, DescribesCuSeqlensFaults) {
  struct Case {
    int words[4];
    const char* text;
  };
  const Case cases[] = {
      {{5, 0, -1, 3}, "cu_seqlens_q[0] = 3; expected 0"},
      {{6, 2, -1, 1}, "cu_seqlens_q[2] = 1 is less than the entry before it"},
      {{7, 3, -1, 70}, "cu_seqlens_q[3] = 70 is past the packed tensor's rows"},
      {{8, 1, -1, 9}, "sequence 1 of cu_seqlens_q has 9 rows, more than max_seqlen_q"},
  };
  for (const Case& c : cases) {
    const std::string msg = flash::describe_decode_status(c.words);
    EXPECT_NE(msg.find(c.text), std::string::npos) << msg;
  }
  const int ok[4] = {0, 0, 0, 0};
  EXPECT_EQ(flash::describe_decode_status(ok), "");
  const int page[4] = {4, 1, 0, 1000};
  EXPECT_NE(flash::describe_decode_status(page).find("page_table[1][0] = 1000"), std::string::npos);
}

// The decode variant takes variable-length calls (kFeatureVarlen).
TEST(DecodeVarlenRegistry, SplitKvHasTheFeature) {
  if (!flash::cpu_test::decode_variant_built("splitkv")) GTEST_SKIP() << "splitkv is not built (FLASH_VARIANTS)";
  for (const auto& v : flash::decode_variants())
    if (v.name == "splitkv") EXPECT_TRUE(v.features & flash::kFeatureVarlen);
}

}  // namespace
