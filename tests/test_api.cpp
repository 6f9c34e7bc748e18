// Every class of invalid call raises flash::Error naming the argument, and
// writes nothing. Validation runs before any device access, so host buffers
// stand in for device memory and these tests run without a GPU. Valid edge
// cases (empty calls, the largest sizes) are checked to pass validation.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "cpu_test.h"
#include "flash/flash.h"
#include "flash/variants.h"
#include "testing/testing.h"
#include "validate.h"

namespace {

using flash::DType;

constexpr int kB = 2, kS = 8, kH = 4, kHkv = 2, kD = flash::cpu_test::kTestHeadDim;
constexpr std::uint16_t kPattern = 0x7e57;

// Fake device addresses for views that validation only compares (never
// reads): far apart, so they overlap nothing.
void* fake_address(std::uintptr_t i) { return reinterpret_cast<void*>((i + 1) << 44); }

using flash::cpu_test::expect_valid;

struct Buffers {
  alignas(256) std::uint16_t q[kB * kS * kH * kD];
  alignas(256) std::uint16_t k[kB * kS * kHkv * kD];
  alignas(256) std::uint16_t v[kB * kS * kHkv * kD + 1];  // + 1: room for v shifted by one element
  alignas(256) std::uint16_t o[kB * kS * kH * kD];
  alignas(256) float lse[kB * kH * kS];
  alignas(256) float slopes[kB * kH + 1];  // + 1: room for a view shifted by one element
  alignas(256) float sinks[kH + 1];
};

class ApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    args_ = {};
    std::memset(&buf_, 0, sizeof(buf_));
    for (auto& x : buf_.o) x = kPattern;
    for (auto& x : buf_.lse) x = 123.0f;
    args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kB, kS, kH, kD});
    args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kB, kS, kHkv, kD});
    args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kB, kS, kHkv, kD});
    args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kB, kS, kH, kD});
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kB, kH, kS});
    args_.kernel = "tiled";
  }

  // Expects flash::Error whose message contains every fragment, and O and
  // LSE untouched.
  void expect_error(std::initializer_list<const char*> fragments) {
    try {
      flash::attention_forward(args_);
      ADD_FAILURE() << "no flash::Error thrown";
    } catch (const flash::Error& e) {
      const std::string msg = e.what();
      for (const char* f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "message: " << msg << "\nmissing: " << f;
    }
    for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
    for (auto x : buf_.lse) ASSERT_EQ(x, 123.0f) << "lse was written";
  }

  Buffers buf_;
  flash::ForwardArgs args_;
};

TEST_F(ApiErrors, NullPointer) {
  args_.k.data = nullptr;
  expect_error({"k.data", "null"});
}

TEST_F(ApiErrors, PointerNotElementAligned) {
  args_.q.data = reinterpret_cast<char*>(buf_.q) + 1;
  expect_error({"q.data", "aligned"});
}

TEST_F(ApiErrors, PointerNotAlignedForTheVariant) {
  args_.v.data = buf_.v + 1;  // element-aligned, not 16-byte aligned
  expect_error({"tiled", "v.data", "16-byte"});
}

TEST_F(ApiErrors, StrideNotAlignedForTheVariant) {
  args_.q.stride[2] = kD + 1;  // 130-byte head stride: tiled loads rows 16 bytes at a time
  expect_error({"tiled", "q.stride[2]", "16 bytes"});
}

// k and v expanded over the batch (batch stride 0, as torch's expand gives)
// are valid inputs: the Hopper rungs, whose TMA maps step whole rows, refuse
// them by name, and a variant without maps (tiled) takes the call.
TEST_F(ApiErrors, ZeroStrideInputsFallToAVariantWithoutMaps) {
  args_.k.stride[0] = 0;
  args_.v.stride[0] = 0;
  expect_valid([&] { flash::plan_forward(args_); });  // tiled
  if (!flash::cpu_test::variant_built(flash::forward_variants(), "wgmma_persistent"))
    GTEST_SKIP() << "wgmma_persistent is not built here (FLASH_VARIANTS or CMAKE_CUDA_ARCHITECTURES)";
  args_.kernel = "wgmma_persistent";
  expect_error({"wgmma_persistent", "k.stride[0] = 0", "head_dim"});
}

TEST_F(ApiErrors, WrongRank) {
  args_.q.rank = 3;
  expect_error({"q", "rank-4"});
}

TEST_F(ApiErrors, BatchMismatch) {
  args_.k.shape[0] = 1;
  expect_error({"k.shape[0]", "batch", "expected 2"});
}

TEST_F(ApiErrors, VShapeDiffersFromK) {
  args_.v.shape[1] = kS - 1;
  expect_error({"v.shape[1]", "seqlen_k"});
}

TEST_F(ApiErrors, OShapeDiffersFromQ) {
  args_.o.shape[2] = kH / 2;
  expect_error({"o.shape[2]", "heads_q"});
}

TEST_F(ApiErrors, HeadDimMismatch) {
  args_.k.shape[3] = kD / 2;
  expect_error({"k.shape[3]", "head_dim"});
}

TEST_F(ApiErrors, LastDimensionNotContiguous) {
  args_.q.stride[3] = 2;
  expect_error({"q.stride[3]", "contiguous"});
}

TEST_F(ApiErrors, NegativeStride) {
  args_.k.stride[1] = -args_.k.stride[1];
  expect_error({"k.stride[1]", ">= 0"});
}

TEST_F(ApiErrors, NegativeSize) {
  args_.q.shape[1] = -1;
  expect_error({"q.shape[1]", ">= 0"});
}

TEST_F(ApiErrors, DtypeMismatch) {
  args_.k.dtype = DType::f16;
  expect_error({"k.dtype", "f16", "bf16"});
}

TEST_F(ApiErrors, OutputDtypeMismatch) {
  args_.o.dtype = DType::f32;
  expect_error({"o.dtype", "f32"});
}

TEST_F(ApiErrors, LseDtype) {
  args_.lse->dtype = DType::bf16;
  expect_error({"lse.dtype", "f32"});
}

TEST_F(ApiErrors, LseShape) {
  args_.lse->shape[2] = kS + 1;
  expect_error({"lse.shape[2]", "seqlen_q"});
}

TEST_F(ApiErrors, HeadsNotAMultiple) {
  args_.k.shape[2] = args_.v.shape[2] = 3;
  args_.k.stride[1] = args_.v.stride[1] = 3 * kD;
  args_.k.stride[0] = args_.v.stride[0] = kS * 3 * kD;
  expect_error({"heads_q", "not a multiple", "heads_kv"});
}

TEST_F(ApiErrors, ZeroKvHeads) {
  args_.k.shape[2] = args_.v.shape[2] = 0;
  expect_error({"heads_kv", ">= 1"});
}

TEST_F(ApiErrors, UnsupportedHeadDim) {
  for (auto* t : {&args_.q, &args_.k, &args_.v, &args_.o}) t->shape[3] = 48;
  expect_error({"tiled", "head_dim 48", "not supported"});
}

TEST_F(ApiErrors, WindowSideBelowMinusOne) {
  args_.window_left = -2;
  expect_error({"window_left = -2", "-1 (unbounded) or >= 0"});
  args_.window_left = 16;
  args_.window_right = -5;
  expect_error({"window_right = -5", "-1 (unbounded) or >= 0"});
}

TEST_F(ApiErrors, CausalWithAWindowPastTheDiagonal) {
  args_.causal = true;
  args_.window_right = 3;
  expect_error({"window_right = 3", "causal", "window_right = 0"});
}

// The score modifiers: a bad one is a flash::Error whose message names the
// argument (softcap, alibi_slopes, sinks), and nothing is written.
TEST_F(ApiErrors, BadSoftcap) {
  const float inf = std::numeric_limits<float>::infinity();
  // (3e38: softcap * log2(e) overflows fp32; 1e-40: softmax_scale / softcap does.)
  for (float c : {-1.0f, -1e-30f, std::nanf(""), inf, -inf, 3e38f, 1e-40f}) {
    args_.softcap = c;
    expect_error({"softcap"});
    EXPECT_THROW(flash::plan_forward(args_), flash::Error) << c;
  }
  for (float c : {0.0f, 1e-3f, 30.0f, 1e30f}) {  // 0 is off; any finite cap > 0 is valid
    args_.softcap = c;
    expect_valid([&] { flash::plan_forward(args_); });
  }
}

TEST_F(ApiErrors, BadAlibiSlopes) {
  auto slopes = [&](std::initializer_list<std::int64_t> shape) {
    args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, shape);
  };
  slopes({kH});
  args_.alibi_slopes->dtype = DType::bf16;
  expect_error({"alibi_slopes"});
  slopes({kH + 1});
  expect_error({"alibi_slopes"});
  slopes({kH - 1});
  expect_error({"alibi_slopes"});
  slopes({kB + 1, kH});
  expect_error({"alibi_slopes"});
  slopes({kB, kH + 1});
  expect_error({"alibi_slopes"});
  slopes({1, kB, kH});  // rank 3
  expect_error({"alibi_slopes"});
  slopes({kH});
  args_.alibi_slopes->data = nullptr;
  expect_error({"alibi_slopes"});
  slopes({kH});
  args_.alibi_slopes->data = reinterpret_cast<char*>(buf_.slopes) + 2;  // not float-aligned
  expect_error({"alibi_slopes"});
  slopes({kH});
  args_.alibi_slopes->stride[0] = -1;
  expect_error({"alibi_slopes"});
  // Valid: one slope per query head, or one per sequence and query head.
  slopes({kH});
  expect_valid([&] { flash::plan_forward(args_); });
  slopes({kB, kH});
  expect_valid([&] { flash::plan_forward(args_); });
}

TEST_F(ApiErrors, BadSinks) {
  auto sinks = [&](std::initializer_list<std::int64_t> shape) {
    args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, shape);
  };
  sinks({kH});
  args_.sinks->dtype = DType::f16;
  expect_error({"sinks"});
  sinks({kH - 1});
  expect_error({"sinks"});
  sinks({kH + 1});
  expect_error({"sinks"});
  sinks({1, kH});  // rank 2
  expect_error({"sinks"});
  sinks({kB, kH});  // a sink per sequence is not a thing
  expect_error({"sinks"});
  sinks({kH});
  args_.sinks->data = nullptr;
  expect_error({"sinks"});
  sinks({kH});
  args_.sinks->data = reinterpret_cast<char*>(buf_.sinks) + 1;
  expect_error({"sinks"});
  sinks({kH});
  expect_valid([&] { flash::plan_forward(args_); });
  args_.softcap = 50.0f;  // all three together
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kB, kH});
  expect_valid([&] { flash::plan_forward(args_); });
}

// Outputs may not share memory with the modifiers (inputs of the call).
TEST_F(ApiErrors, OutputsOverlappingTheModifiers) {
  args_.sinks = flash::make_contiguous(buf_.o, DType::f32, {kH});  // the first bytes of o
  expect_error({"sinks"});
  SetUp();
  args_.alibi_slopes = flash::make_contiguous(buf_.lse, DType::f32, {kB, kH});  // the first elements of lse
  expect_error({"alibi_slopes"});
}

// A variant whose features lack a modifier's bit refuses the call naming the
// modifier (checked before any device query, so without a GPU too).
TEST_F(ApiErrors, VariantsWithoutAModifierRefuseIt) {
  struct Modifier {
    unsigned bit;
    const char* name;
  };
  const Modifier modifiers[] = {
      {flash::kFeatureSoftcap, "softcap"}, {flash::kFeatureAlibi, "alibi_slopes"}, {flash::kFeatureSinks, "sinks"}};
  for (const Modifier& m : modifiers) {
    for (const auto& v : flash::forward_variants()) {
      if (!v.built || (v.features & m.bit)) continue;
      SCOPED_TRACE(v.name);
      SetUp();
      args_.kernel = v.name;
      if (m.bit == flash::kFeatureSoftcap) args_.softcap = 30.0f;
      if (m.bit == flash::kFeatureAlibi) args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kH});
      if (m.bit == flash::kFeatureSinks) args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kH});
      expect_error({v.name.c_str(), m.name});
    }
  }
}

TEST_F(ApiErrors, UnknownVariant) {
  args_.kernel = "warp-drive";
  expect_error({"kernel", "warp-drive", "naive"});
}

TEST_F(ApiErrors, OffsetsOverflow) {
  args_.q.shape[1] = 1 << 30;
  args_.q.stride[1] = std::int64_t(1) << 40;
  expect_error({"q", "overflow"});
}

TEST_F(ApiErrors, SizeBeyondIndexType) {
  args_.q.shape[1] = std::int64_t(1) << 32;
  expect_error({"q.shape[1]", "2^31"});
}

TEST_F(ApiErrors, OverlappingOutput) {
  args_.o.stride[1] = 1;  // rows overlap each other
  expect_error({"o", "overlap"});
}

// softmax_scale: finite and > 0, or a flash::Error (plan_forward too).
TEST_F(ApiErrors, BadSoftmaxScale) {
  const float inf = std::numeric_limits<float>::infinity();
  for (float scale : {0.0f, -0.0f, -1.0f, std::nanf(""), inf, -inf, 3e38f}) {  // 3e38: times log2(e) overflows
    args_.softmax_scale = scale;
    expect_error({"softmax_scale", "expected a finite value > 0"});
    EXPECT_THROW(flash::plan_forward(args_), flash::Error) << scale;
  }
  args_.softmax_scale = 1e-30f;  // tiny is fine
  expect_valid([&] { flash::plan_forward(args_); });
}

// batch 0 and seqlen_q 0 pass validation and write nothing; seqlen_k 0
// passes too (on a GPU it writes O = 0 and LSE = -inf, so only planned here).
TEST_F(ApiErrors, EmptyCallsAreValid) {
  for (auto* t : {&args_.q, &args_.k, &args_.v, &args_.o, &*args_.lse}) t->shape[0] = 0;
  expect_valid([&] { flash::attention_forward(args_); });
  expect_valid([&] { EXPECT_EQ(flash::plan_forward(args_).workspace_bytes, 0u); });
  SetUp();
  args_.q.shape[1] = args_.o.shape[1] = args_.lse->shape[2] = 0;
  expect_valid([&] { flash::attention_forward(args_); });
  SetUp();
  args_.k.shape[1] = args_.v.shape[1] = 0;
  expect_valid([&] { EXPECT_EQ(flash::plan_forward(args_).workspace_bytes, 0u); });
  for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
}

// Sizes whose product does not fit in int64: numel() saturates, the strides
// make_contiguous cannot represent are INT64_MAX, and validation says so
// (no undefined behaviour on the way).
TEST_F(ApiErrors, SizesWhoseProductOverflows) {
  const std::int64_t big = std::numeric_limits<int>::max();  // each size is valid on its own
  const flash::TensorView t = flash::make_contiguous(buf_.q, DType::bf16, {big, big, big, kD});
  EXPECT_EQ(t.numel(), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(t.stride[2], kD);
  EXPECT_EQ(t.stride[1], big * kD);
  EXPECT_EQ(t.stride[0], std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(flash::make_contiguous(buf_.q, DType::bf16, {big, big, 0, kD}).numel(), 0);
  EXPECT_EQ(flash::make_view(buf_.q, DType::bf16, {big, big, big, big}, {0, 0, 0, 1}).numel(),
            std::numeric_limits<std::int64_t>::max());
  args_.q = t;
  const std::string shape = "q: shape [2147483647, 2147483647, 2147483647, " + std::to_string(kD) + "]";
  expect_error({shape.c_str(), "overflow 64 bits"});
  // The last element's offset is INT64_MAX: it fits, the end of the view does not.
  args_.q = flash::make_view(buf_.q, DType::bf16, {2, 1, 1, 1}, {std::numeric_limits<std::int64_t>::max(), 1, 1, 1});
  expect_error({"q: shape [2, 1, 1, 1]", "overflow 64 bits"});
}

// Packed views' messages in the caller's dimensions (validate.h).
TEST(ApiMessages, PackedMessageRenamesPackedDimensions) {
  using flash::detail::packed_message;
  EXPECT_EQ(packed_message("o.shape[1] (seqlen_q) = 9; expected 10 (q's shape)", {"q", "o"}, false),
            "o.shape[0] (total_q) = 9; expected 10 (q's shape)");
  EXPECT_EQ(packed_message("k.shape[3] (head_dim) = 8; expected 16 (q.shape[3])", {"q", "k"}, true),
            "k.shape[2] (head_dim) = 8; expected 16 (q.shape[2])");
  EXPECT_EQ(packed_message("v.shape[1] (seqlen_k) = 3", {"v"}, true), "v.shape[0] (total_k) = 3");
  // Whole names only, packed names only, and the unit batch's dimension 0 kept.
  EXPECT_EQ(packed_message("dq.stride[2] and cu_seqlens_q.shape[0] and k.stride[1]", {"q"}, false),
            "dq.stride[2] and cu_seqlens_q.shape[0] and k.stride[1]");
  EXPECT_EQ(packed_message("q.stride[1] = 5; q.shape[0] = 1", {"q"}, false), "q.stride[0] = 5; q.shape[0] = 1");
  EXPECT_EQ(packed_message("k_cache.shape[1] (seqlen_k) = 4", {"q", "o"}, false), "k_cache.shape[1] (seqlen_k) = 4");
}

TEST(ApiHeaders, ViewsCarryShapeAndStrides) {
  int dummy = 0;
  const auto t = flash::make_contiguous(&dummy, DType::f16, {2, 3, 4, 5});
  EXPECT_EQ(t.rank, 4);
  EXPECT_EQ(t.stride[0], 60);
  EXPECT_EQ(t.stride[3], 1);
  EXPECT_EQ(t.numel(), 120);
  EXPECT_EQ(flash::dtype_size(DType::bf16), 2u);
  EXPECT_EQ(flash::dtype_name(DType::f32), "f32");
}

// A caller's workspace: at least the planned size (more is fine) and
// 256-byte aligned. The entry points check it before launching (on a GPU:
// test_concurrency_gpu.cpp); here the rule itself.
TEST(ApiWorkspace, CallerWorkspaceSizeAndAlignment) {
  alignas(256) static unsigned char ws[1024];
  EXPECT_NO_THROW(flash::detail::check_caller_workspace(ws, 512, 512, "plan_forward"));
  EXPECT_NO_THROW(flash::detail::check_caller_workspace(ws + 256, 768, 512, "plan_forward"));
  try {
    flash::detail::check_caller_workspace(ws, 511, 512, "plan_backward");
    ADD_FAILURE() << "a short workspace passed";
  } catch (const flash::Error& e) {
    EXPECT_STREQ(e.what(), "workspace_bytes = 511; this call needs 512 (see plan_backward)");
  }
  try {
    flash::detail::check_caller_workspace(ws + 16, 1008, 512, "plan_decode");
    ADD_FAILURE() << "a misaligned workspace passed";
  } catch (const flash::Error& e) {
    EXPECT_STREQ(e.what(), "workspace is not 256-byte aligned");
  }
}

}  // namespace

// attention_decode: the host-side checks, before any device access.
namespace {

constexpr int kCap = 32, kPages = 6, kPageSize = 16, kMaxPages = 2;

struct DecodeBuffers {
  alignas(256) std::uint16_t q[kB * 1 * kH * kD];
  alignas(256) std::uint16_t kc[kB * kCap * kHkv * kD];
  alignas(256) std::uint16_t vc[kB * kCap * kHkv * kD];
  alignas(256) std::uint16_t kn[kB * 1 * kHkv * kD];
  alignas(256) std::uint16_t vn[kB * 1 * kHkv * kD];
  alignas(256) std::uint16_t o[kB * 1 * kH * kD];
  alignas(256) float lse[kB * kH * 1];
  alignas(256) std::int32_t lens[kB];
  alignas(256) std::int32_t table[kB * kMaxPages];
  alignas(256) float slopes[kB * kH];
  alignas(256) float sinks[kH];
};

class DecodeApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!flash::cpu_test::decode_variant_built("splitkv")) GTEST_SKIP() << "splitkv is not built (FLASH_VARIANTS)";
    args_ = {};
    std::memset(&buf_, 0, sizeof(buf_));
    for (auto& x : buf_.o) x = kPattern;
    for (auto& x : buf_.kc) x = kPattern;
    args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kB, 1, kH, kD});
    args_.k_cache = flash::make_contiguous(buf_.kc, DType::bf16, {kB, kCap, kHkv, kD});
    args_.v_cache = flash::make_contiguous(buf_.vc, DType::bf16, {kB, kCap, kHkv, kD});
    args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kB, 1, kH, kD});
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kB, kH, 1});
    args_.cache_seqlens = flash::make_contiguous(buf_.lens, DType::i32, {kB});
    args_.kernel = "splitkv";
  }
  void make_paged() {
    args_.k_cache = flash::make_contiguous(buf_.kc, DType::bf16, {kPages, kPageSize, kHkv, kD});
    args_.v_cache = flash::make_contiguous(buf_.vc, DType::bf16, {kPages, kPageSize, kHkv, kD});
    args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kB, kMaxPages});
  }
  void expect_error(std::initializer_list<const char*> fragments) {
    try {
      flash::attention_decode(args_);
      ADD_FAILURE() << "no flash::Error thrown";
    } catch (const flash::Error& e) {
      const std::string msg = e.what();
      for (const char* f : fragments) EXPECT_NE(msg.find(f), std::string::npos) << "message: " << msg << "\nmissing: " << f;
    }
    for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
    for (auto x : buf_.kc) ASSERT_EQ(x, kPattern) << "k_cache was written";
  }
  DecodeBuffers buf_;
  flash::DecodeArgs args_;
};

TEST_F(DecodeApiErrors, CacheSeqlensMustBeInt32OfBatch) {
  args_.cache_seqlens.dtype = DType::f32;
  expect_error({"cache_seqlens.dtype", "i32"});
  args_.cache_seqlens = flash::make_contiguous(buf_.lens, DType::i32, {kB + 1});
  expect_error({"cache_seqlens.shape[0]", "batch"});
}

TEST_F(DecodeApiErrors, ContiguousCacheBatchMismatch) {
  args_.k_cache.shape[0] = args_.v_cache.shape[0] = kB - 1;
  expect_error({"k_cache.shape[0]", "page_table"});
}

TEST_F(DecodeApiErrors, CacheDtypeAndShapes) {
  args_.v_cache.dtype = DType::f16;
  expect_error({"v_cache.dtype", "bf16"});
  SetUp();
  args_.v_cache.shape[2] = 1;
  expect_error({"v_cache.shape[2]", "k_cache"});
  SetUp();
  args_.k_cache.shape[3] = args_.v_cache.shape[3] = 32;
  expect_error({"k_cache.shape[3]", "head_dim"});
}

TEST_F(DecodeApiErrors, HeadsNotAMultiple) {
  args_.q.shape[2] = args_.o.shape[2] = 3;
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kB, 3, 1});
  expect_error({"heads_q", "multiple", "heads_kv"});
}

// Any power of two is a page size (the kernels look up each key's page on
// its own); nothing else is. The caches sit at fake addresses, so that
// large pages overlap nothing.
TEST_F(DecodeApiErrors, PageSizeMustBeAPowerOfTwo) {
  auto paged = [&](std::int64_t page_size) {
    make_paged();
    args_.k_cache = flash::make_contiguous(fake_address(0), DType::bf16, {kPages, page_size, kHkv, kD});
    args_.v_cache = flash::make_contiguous(fake_address(1), DType::bf16, {kPages, page_size, kHkv, kD});
  };
  for (std::int64_t page_size : {0, 3, 12, 48, 1000}) {
    paged(page_size);
    expect_error({"page_size", "expected a power of two (1 to 2^30)"});
  }
  for (std::int64_t page_size : {1, 2, 8, 16, 256, 4096, 1 << 20}) {
    paged(page_size);
    expect_valid([&] { flash::plan_decode(args_); });
  }
}

TEST_F(DecodeApiErrors, SoftmaxScale) {
  args_.softmax_scale = 0.0f;
  expect_error({"softmax_scale", "expected a finite value > 0"});
  args_.softmax_scale = std::numeric_limits<float>::infinity();
  expect_error({"softmax_scale", "expected a finite value > 0"});
}

// The kernels' int grids: seqlen_q * heads_q / heads_kv query rows per KV
// head up to 134217712, batch * heads_q * seqlen_q up to 2^31 - 1. Every
// view but cache_seqlens sits at a fake address.
TEST_F(DecodeApiErrors, QueryRowLimits) {
  auto shape = [&](std::int64_t batch, std::int64_t seqlen_q, std::int64_t heads_q, std::int64_t heads_kv) {
    args_.q = flash::make_contiguous(fake_address(0), DType::bf16, {batch, seqlen_q, heads_q, kD});
    args_.o = flash::make_contiguous(fake_address(1), DType::bf16, {batch, seqlen_q, heads_q, kD});
    args_.k_cache = flash::make_contiguous(fake_address(2), DType::bf16, {batch, kCap, heads_kv, kD});
    args_.v_cache = flash::make_contiguous(fake_address(3), DType::bf16, {batch, kCap, heads_kv, kD});
    args_.cache_seqlens = flash::make_contiguous(fake_address(4), DType::i32, {batch});
    args_.lse.reset();
  };
  constexpr std::int64_t kMaxRows = 134217712;  // 16 * ((2^31 - 1) / 256)
  shape(1, kMaxRows / 4, 8, 2);
  expect_valid([&] { flash::plan_decode(args_); });
  shape(1, kMaxRows / 4 + 1, 8, 2);
  expect_error({"seqlen_q", "134217716", "exceeds the decode limit of 134217712 query rows per KV head"});
  shape(1024, 32767, 64, 64);  // 2^31 - 2^16 rows in all
  expect_valid([&] { flash::plan_decode(args_); });
  shape(1024, 32768, 64, 64);  // 2^31
  expect_error({"batch * heads_q * seqlen_q exceeds the decode limit of 2^31 - 1 query rows"});
}

// batch 0 passes validation and launches nothing; seqlen_q 0 passes too
// (on a GPU it runs the metadata check and the append, so only planned).
TEST_F(DecodeApiErrors, EmptyCallsAreValid) {
  for (auto* t : {&args_.q, &args_.o, &args_.k_cache, &args_.v_cache, &args_.cache_seqlens, &*args_.lse})
    t->shape[0] = 0;
  expect_valid([&] { flash::attention_decode(args_); });
  SetUp();
  args_.q.shape[1] = args_.o.shape[1] = args_.lse->shape[2] = 0;
  expect_valid([&] { flash::plan_decode(args_); });
  for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
}

TEST_F(DecodeApiErrors, PageTableShapeAndDtype) {
  make_paged();
  args_.page_table->dtype = DType::f32;
  expect_error({"page_table.dtype", "i32"});
  make_paged();
  args_.page_table = flash::make_contiguous(buf_.table, DType::i32, {kB - 1, kMaxPages});
  expect_error({"page_table.shape[0]", "batch"});
}

TEST_F(DecodeApiErrors, AppendNeedsBothAndMatchingShapes) {
  args_.k_new = flash::make_contiguous(buf_.kn, DType::bf16, {kB, 1, kHkv, kD});
  expect_error({"k_new is set but v_new is not"});
  args_.v_new = flash::make_contiguous(buf_.vn, DType::bf16, {kB, 1, kHkv + 1, kD});
  expect_error({"v_new.shape[2]", "heads_kv"});
  args_.v_new = flash::make_contiguous(buf_.vn, DType::bf16, {kB, 1, kHkv, kD});
  args_.k_new = flash::make_contiguous(buf_.kn, DType::bf16, {kB, kCap + 1, kHkv, kD});
  args_.v_new = flash::make_contiguous(buf_.vn, DType::bf16, {kB, kCap + 1, kHkv, kD});
  expect_error({"seqlen_new", "exceeds the cache capacity"});
}

TEST_F(DecodeApiErrors, UnsupportedHeadDimAndDtype) {
  args_.q.shape[3] = args_.o.shape[3] = args_.k_cache.shape[3] = args_.v_cache.shape[3] = 32;
  expect_error({"splitkv", "head_dim 32"});
  SetUp();
  for (auto* t : {&args_.q, &args_.o, &args_.k_cache, &args_.v_cache})
    *t = flash::make_contiguous(t->data, DType::f32, {t->shape[0], t->shape[1], t->shape[2], kD / 2});  // the same bytes
  expect_error({"splitkv", "dtype f32"});
}

TEST_F(DecodeApiErrors, MisalignedCache) {
  args_.k_cache.data = buf_.kc + 1;
  expect_error({"k_cache.data", "16-byte"});
}

TEST_F(DecodeApiErrors, NumSplitsAndStatus) {
  for (int splits : {-1, 257}) {
    args_.num_splits = splits;
    expect_error({"num_splits", "expected 0 (choose) to 256"});
  }
  for (int splits : {0, 1, 256}) {
    args_.num_splits = splits;
    expect_valid([&] { flash::plan_decode(args_); });
  }
  args_.num_splits = 0;
  args_.status = flash::make_contiguous(buf_.lens, DType::i32, {2});
  expect_error({"status.shape[0]", "4"});
}

// The score modifiers, as in the forward: a flash::Error naming the argument.
TEST_F(DecodeApiErrors, BadScoreModifiers) {
  for (float c : {-2.0f, std::nanf(""), std::numeric_limits<float>::infinity()}) {
    args_.softcap = c;
    expect_error({"softcap"});
  }
  SetUp();
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kB + 1, kH});
  expect_error({"alibi_slopes"});
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::bf16, {kH});
  expect_error({"alibi_slopes"});
  SetUp();
  args_.sinks = flash::make_contiguous(buf_.sinks, DType::i32, {kH});
  expect_error({"sinks"});
  args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kHkv});  // one per KV head: not the rule
  expect_error({"sinks"});
  SetUp();
  args_.softcap = 30.0f;
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kB, kH});
  args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kH});
  expect_valid([&] { flash::plan_decode(args_); });
  args_.sinks = flash::make_contiguous(buf_.o, DType::f32, {kH});  // inside the output
  expect_error({"sinks"});
}

TEST_F(DecodeApiErrors, UnknownKernel) {
  args_.kernel = "nope";
  expect_error({"unknown decode variant", "splitkv"});
}

}  // namespace
