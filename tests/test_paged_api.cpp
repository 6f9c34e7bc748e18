// Paged prefill (ForwardArgs::page_table) and seqused_k with dense calls:
// every invalid host-side argument raises flash::Error naming the argument,
// and writes nothing. As in test_varlen_api.cpp, validation runs before any
// device access, so host buffers stand in for device memory and these tests
// run without a GPU; valid calls are only planned (plan_forward). The page
// table's and seqused_k's values are checked on the device:
// tests/test_paged_prefill_gpu.cpp.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <string>

#include "cpu_test.h"
#include "flash/flash.h"
#include "flash/variants.h"

namespace {

using flash::cpu_test::names_argument;

using flash::DType;
using flash::cpu_test::expect_valid;

// Dense queries [kBatch, kSq, kH, kD] against pages [kPages, kPage, kHkv,
// kD] through a [kBatch, kMaxPages] table; the packed form has kTotalQ rows.
constexpr int kBatch = 3, kSq = 8, kH = 4, kHkv = 2, kD = flash::cpu_test::kTestHeadDim;
constexpr int kPages = 10, kPage = 16, kMaxPages = 4, kTotalQ = kBatch * kSq;
constexpr std::uint16_t kPattern = 0x7e57;
constexpr float kLsePattern = 123.0f;

// A large address nothing lives at (16-byte aligned): pages of any size
// there overlap no buffer below. Never dereferenced: only valid calls are
// planned, and validation reads no tensor.
void* fake_address(std::uintptr_t i) { return reinterpret_cast<void*>((i + 1) << 44); }

struct Buffers {
  alignas(256) std::uint16_t q[kTotalQ * kH * kD];
  alignas(256) std::uint16_t k[kPages * kPage * kHkv * kD];
  alignas(256) std::uint16_t v[kPages * kPage * kHkv * kD];
  alignas(256) std::uint16_t o[kTotalQ * kH * kD];
  alignas(256) float lse[(kH + 1) * (kTotalQ + 1)];
  alignas(256) std::int32_t table[2 * (kBatch + 1) * (kMaxPages + 1)];  // room for strided and larger views
  alignas(256) std::int32_t cu_q[kBatch + 2];
  alignas(256) std::int32_t cu_k[kBatch + 2];
  alignas(256) std::int32_t seqused_k[2 * (kBatch + 1)];
  alignas(256) std::int32_t status[8];
  alignas(256) float slopes[kBatch * kH];
  alignas(256) float sinks[kH];
};

class PagedApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    args_ = {};
    std::memset(&buf_, 0, sizeof(buf_));
    for (auto& x : buf_.o) x = kPattern;
    for (auto& x : buf_.lse) x = kLsePattern;
    for (auto& x : buf_.status) x = 7;
    args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kBatch, kSq, kH, kD});
    args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kPages, kPage, kHkv, kD});
    args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages, kPage, kHkv, kD});
    args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kBatch, kSq, kH, kD});
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kBatch, kH, kSq});
    args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch, kMaxPages});
    args_.kernel = "tiled";
  }

  // The fixture's pages, queries packed: cu_seqlens_q and seqused_k, no cu_seqlens_k.
  void make_varlen() {
    args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kTotalQ, kH, kD});
    args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH, kD});
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ});
    args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {kBatch + 1});
    args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});
    args_.max_seqlen_q = kSq;
    args_.max_seqlen_k = kMaxPages * kPage;
  }

  // Pages of page_size rows at fake addresses (any size fits there).
  void make_pages(std::int64_t page_size, std::int64_t max_pages = kMaxPages) {
    args_.k = flash::make_contiguous(fake_address(0), DType::bf16, {kPages, page_size, kHkv, kD});
    args_.v = flash::make_contiguous(fake_address(1), DType::bf16, {kPages, page_size, kHkv, kD});
    args_.page_table = flash::make_contiguous(fake_address(2), DType::i32, {kBatch, max_pages});
  }

  // Expects flash::Error whose message names `name` (and contains `detail`
  // when given), from attention_forward and plan_forward, and O, LSE and
  // status untouched.
  void expect_error(const char* name, const char* detail = nullptr) {
    try {
      flash::attention_forward(args_);
      ADD_FAILURE() << "no flash::Error thrown (expected one naming " << name << ")";
    } catch (const flash::Error& e) {
      EXPECT_TRUE(names_argument(e.what(), name)) << "message: " << e.what() << "\ndoes not name: " << name;
      if (detail != nullptr) EXPECT_NE(std::string(e.what()).find(detail), std::string::npos) << e.what();
    }
    EXPECT_THROW(flash::plan_forward(args_), flash::Error) << name;
    for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
    for (auto x : buf_.lse) ASSERT_EQ(x, kLsePattern) << "lse was written";
    for (auto x : buf_.status) ASSERT_EQ(x, 7) << "status was written";
  }

  Buffers buf_;
  flash::ForwardArgs args_;
};

// The fixture's call and its valid variations pass validation: seqused_k,
// status, every mask and score modifier, GQA/MQA, packed queries, strided
// pages, a strided table, large pages.
TEST_F(PagedApiErrors, ValidCallsPassValidation) {
  expect_valid([&] { flash::plan_forward(args_); });
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {4});
  args_.sync_check = false;
  expect_valid([&] { flash::plan_forward(args_); });
  args_.causal = true;
  args_.window_left = 5;
  args_.softcap = 30.0f;
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kBatch, kH});
  args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kH});
  expect_valid([&] { flash::plan_forward(args_); });
  args_.lse.reset();  // optional, as in a dense call
  expect_valid([&] { flash::plan_forward(args_); });
  // MQA: one KV head.
  SetUp();
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kPages, kPage, 1, kD});
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages, kPage, 1, kD});
  expect_valid([&] { flash::plan_forward(args_); });
  // K and V pages interleaved in one [pages, page, 2, heads_kv, dim] buffer; a strided table.
  SetUp();
  args_.k = flash::make_view(buf_.k, DType::bf16, {kPages / 2, kPage, kHkv, kD},
                             {kPage * 2 * kHkv * kD, 2 * kHkv * kD, kD, 1});
  args_.v = flash::make_view(buf_.k + kHkv * kD, DType::bf16, {kPages / 2, kPage, kHkv, kD},
                             {kPage * 2 * kHkv * kD, 2 * kHkv * kD, kD, 1});
  args_.page_table = flash::make_view(buf_.table, DType::i32, {kBatch, kMaxPages}, {2 * kMaxPages, 1});
  expect_valid([&] { flash::plan_forward(args_); });
  // Heads-major pages [pages, heads_kv, page, dim] in memory.
  SetUp();
  args_.k = flash::make_view(buf_.k, DType::bf16, {kPages, kPage, kHkv, kD}, {kHkv * kPage * kD, kD, kPage * kD, 1});
  args_.v = flash::make_view(buf_.v, DType::bf16, {kPages, kPage, kHkv, kD}, {kHkv * kPage * kD, kD, kPage * kD, 1});
  expect_valid([&] { flash::plan_forward(args_); });
  // Packed queries.
  SetUp();
  make_varlen();
  expect_valid([&] { flash::plan_forward(args_); });
  args_.max_seqlen_k = 0;  // a bound of 0: every seqused_k must be 0 (checked on the device)
  expect_valid([&] { flash::plan_forward(args_); });
  // Page sizes: every power of two from 16.
  for (std::int64_t page_size : {16, 32, 64, 256, 4096, 1 << 20}) {
    SetUp();
    make_pages(page_size, page_size >= 4096 ? 2 : kMaxPages);
    expect_valid([&] { flash::plan_forward(args_); });
  }
}

// batch 0, seqlen_q 0 and a table of no pages (every sequence without
// keys) are valid.
TEST_F(PagedApiErrors, EmptyCallsAreValid) {
  args_.q = flash::make_contiguous(buf_.q, DType::bf16, {0, kSq, kH, kD});
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {0, kSq, kH, kD});
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {0, kH, kSq});
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {0, kMaxPages});
  expect_valid([&] { flash::plan_forward(args_); });
  SetUp();
  args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kBatch, 0, kH, kD});
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kBatch, 0, kH, kD});
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kBatch, kH, 0});
  expect_valid([&] { flash::plan_forward(args_); });
  SetUp();
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch, 0});
  expect_valid([&] { flash::plan_forward(args_); });
  for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
}

// Powers of two from 16 to 2^30; nothing else (the pages at fake addresses,
// so that large ones overlap nothing).
TEST_F(PagedApiErrors, PageSizeMustBeAPowerOfTwoFrom16) {
  for (std::int64_t page_size : {0, 1, 2, 8, 12, 48, 1000}) {
    SCOPED_TRACE(page_size);
    SetUp();
    make_pages(page_size);
    expect_error("page_size", "expected a power of two (16 to 2^30)");
  }
  SetUp();
  make_varlen();
  make_pages(8);
  expect_error("page_size", "expected a power of two (16 to 2^30)");
}

// max_pages * page_size is each sequence's capacity and must fit an int.
TEST_F(PagedApiErrors, CapacityMustFitAnInt) {
  make_pages(1 << 20, 2048);  // 2^31 keys
  expect_error("page_table", "2^31 - 1");
  SetUp();
  make_pages(1 << 20, 2047);
  expect_valid([&] { flash::plan_forward(args_); });
}

TEST_F(PagedApiErrors, PageTableDtypeRankAndShape) {
  args_.page_table->dtype = DType::f32;
  expect_error("page_table", "i32");
  SetUp();
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch * kMaxPages});
  expect_error("page_table");
  SetUp();
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch, kMaxPages, 1});
  expect_error("page_table");
  SetUp();
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch + 1, kMaxPages});  // batch is q.shape[0]
  expect_error("page_table", "q.shape[0]");
  SetUp();
  args_.page_table = flash::make_view(buf_.table, DType::i32, {kBatch, kMaxPages}, {kMaxPages, 2});  // entries strided
  expect_error("page_table", "contiguous");
  SetUp();
  args_.page_table->data = nullptr;
  expect_error("page_table");
  SetUp();
  make_varlen();
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kBatch - 1, kMaxPages});
  expect_error("page_table", "cu_seqlens_q.shape[0] - 1");
}

// With page_table, k and v are the cache's pages: rank 4 also when the
// queries are packed; v's shape is k's; the heads and head dim agree with q.
TEST_F(PagedApiErrors, PagesShape) {
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kPages * kPage, kHkv, kD});
  expect_error("k", "rank-4");
  SetUp();
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages * kPage, kHkv, kD});
  expect_error("v", "rank-4");
  SetUp();
  make_varlen();
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kPages * kPage, kHkv, kD});
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages * kPage, kHkv, kD});
  expect_error("k", "rank-4");
  SetUp();
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages - 1, kPage, kHkv, kD});
  expect_error("v");
  SetUp();
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages / 2, 2 * kPage, kHkv, kD});
  expect_error("v");
  SetUp();
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kPages, kPage, 3, kD});  // heads_q 4 is not a multiple of 3
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages, kPage, 3, kD});
  expect_error("k", "multiple");
  SetUp();
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kPages, kPage, kHkv, kD / 2});
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kPages, kPage, kHkv, kD / 2});
  expect_error("k", "head_dim");
  SetUp();
  args_.k.dtype = DType::f16;
  expect_error("k", "dtype");
  SetUp();
  args_.v.stride[3] = 2;  // last dimension not contiguous
  expect_error("v");
}

// Packed queries with a page table: seqused_k gives the keys of each
// sequence (required), cu_seqlens_k is not used (an error when given, as in
// FA4), and max_seqlen_k is at most the table's capacity.
TEST_F(PagedApiErrors, PackedQueriesTakeSequsedK) {
  make_varlen();
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1});
  expect_error("cu_seqlens_k", "seqused_k");
  SetUp();
  make_varlen();
  args_.seqused_k.reset();
  expect_error("seqused_k", "page_table");
  SetUp();
  make_varlen();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch + 1});
  expect_error("seqused_k");
  SetUp();
  make_varlen();
  args_.max_seqlen_k = kMaxPages * kPage + 1;
  expect_error("max_seqlen_k", "max_pages * page_size");
  SetUp();
  make_varlen();
  args_.max_seqlen_k = -1;
  expect_error("max_seqlen_k");
  SetUp();
  make_varlen();
  args_.max_seqlen_q = kTotalQ + 1;
  expect_error("max_seqlen_q");
}

// seqused_k with a dense call (paged or not): int32 [batch], contiguous.
TEST_F(PagedApiErrors, DenseSequsedK) {
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});
  expect_valid([&] { flash::plan_forward(args_); });
  args_.page_table.reset();  // a dense contiguous cache [batch, capacity, heads_kv, dim]
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kBatch, kPage, kHkv, kD});
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kBatch, kPage, kHkv, kD});
  expect_valid([&] { flash::plan_forward(args_); });
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch + 1});
  expect_error("seqused_k", "q.shape[0]");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::f32, {kBatch});
  expect_error("seqused_k", "i32");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {1, kBatch});
  expect_error("seqused_k");
  SetUp();
  args_.seqused_k = flash::make_view(buf_.seqused_k, DType::i32, {kBatch}, {2});
  expect_error("seqused_k");
  // cu_seqlens_k stays a variable-length argument.
  SetUp();
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1});
  expect_error("cu_seqlens_k", "cu_seqlens_q");
}

// status: int32 [4], contiguous, with any call that has device metadata.
TEST_F(PagedApiErrors, StatusShapeAndDtype) {
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {2});
  expect_error("status");
  SetUp();
  args_.status = flash::make_contiguous(buf_.status, DType::f32, {4});
  expect_error("status");
  SetUp();
  args_.status = flash::make_view(buf_.status, DType::i32, {4}, {2});
  expect_error("status");
}

// The page table is an input: it may not share memory with o, lse or status.
TEST_F(PagedApiErrors, PageTableMayNotOverlapTheOutputs) {
  args_.page_table = flash::make_contiguous(buf_.o, DType::i32, {kBatch, kMaxPages});
  expect_error("page_table", "overlaps");
  SetUp();
  args_.page_table = flash::make_contiguous(buf_.lse, DType::i32, {kBatch, kMaxPages});
  expect_error("page_table", "overlaps");
  SetUp();
  args_.status = flash::make_contiguous(buf_.table, DType::i32, {4});
  expect_error("status", "overlaps");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.o, DType::i32, {kBatch});
  expect_error("seqused_k", "overlaps");
}

// kFeaturePaged is claimed by tiled, mma_pipeline and the paged Hopper rung
// only: kept out of kAllFeatures (as kFeatureVarlen).
TEST(PagedRegistry, WhoClaimsTheFeature) {
  EXPECT_EQ(flash::kAllFeatures & flash::kFeaturePaged, 0u);
  for (const auto& v : flash::forward_variants()) {
    if (!v.built) continue;
    const bool expected = v.name == "tiled" || v.name == "mma_pipeline" ||
                          v.name == "wgmma_persistent" ||  // the Hopper rung with kPagedKV
                          v.name == "wgmma_window";        // (its narrow windows; fwd_09's kernels for the rest)
    EXPECT_EQ((v.features & flash::kFeaturePaged) != 0, expected) << v.name;
    if (v.features & flash::kFeaturePaged) EXPECT_TRUE(v.features & flash::kFeatureVarlen) << v.name;
  }
}

// A variant without kFeaturePaged refuses a paged call naming page_table
// (and one without kFeatureVarlen a dense call with seqused_k), before any
// device query, and writes nothing; auto takes a variant with the feature.
TEST_F(PagedApiErrors, VariantsWithoutTheFeatureRefuseIt) {
  int refused = 0;
  for (const auto& v : flash::forward_variants()) {
    if (!v.built) continue;
    SCOPED_TRACE(v.name);
    if (!(v.features & flash::kFeaturePaged)) {
      SetUp();
      args_.kernel = v.name;
      expect_error("page_table", v.name.c_str());
      ++refused;
    }
    if (!(v.features & flash::kFeatureVarlen)) {
      SetUp();
      args_.page_table.reset();
      args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kBatch, kPage, kHkv, kD});
      args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kBatch, kPage, kHkv, kD});
      args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});
      args_.kernel = v.name;
      expect_error("seqused_k", v.name.c_str());
    }
  }
  SetUp();
  args_.kernel = "auto";
  expect_valid([&] {
    const std::string kernel = flash::plan_forward(args_).kernel;
    for (const auto& v : flash::forward_variants())
      if (v.name == kernel) EXPECT_TRUE(v.features & flash::kFeaturePaged) << kernel;
  });
  if (refused == 0) GTEST_SKIP() << "every built forward variant has kFeaturePaged";
}

}  // namespace
