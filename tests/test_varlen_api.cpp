// Variable-length forward calls (ForwardArgs::cu_seqlens_q, issue 17): every
// invalid host-side argument raises flash::Error naming the argument, and
// writes nothing. As in test_api.cpp, validation runs before any device
// access, so host buffers stand in for device memory and these tests run
// without a GPU; valid calls are only planned (plan_forward), since a
// variable-length call that runs reads its metadata on the device. The
// metadata's values (decreasing, past the total, a length above the bound)
// are checked on the device: tests/test_varlen_gpu.cpp.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>

#include "common/varlen.h"  // metadata_workspace
#include "cpu_test.h"
#include "flash/flash.h"
#include "flash/variants.h"

namespace {

using flash::cpu_test::names_argument;

using flash::DType;
using flash::cpu_test::expect_valid;

// Three sequences packed into kTotalQ query rows and kTotalK key rows (the
// metadata's values are never read here).
constexpr int kBatch = 3, kTotalQ = 24, kTotalK = 20, kH = 4, kHkv = 2, kD = flash::cpu_test::kTestHeadDim;
constexpr std::uint16_t kPattern = 0x7e57;
constexpr float kLsePattern = 123.0f;

struct Buffers {
  alignas(256) std::uint16_t q[kTotalQ * kH * kD];
  alignas(256) std::uint16_t k[kTotalK * kHkv * kD];
  alignas(256) std::uint16_t v[kTotalK * kHkv * kD];
  alignas(256) std::uint16_t o[kTotalQ * kH * kD];
  alignas(256) float lse[(kH + 1) * (kTotalQ + 1)];  // room for the wrong shapes below
  alignas(256) std::int32_t cu_q[2 * (kBatch + 2)];  // room for strided and longer views
  alignas(256) std::int32_t cu_k[2 * (kBatch + 2)];
  alignas(256) std::int32_t seqused_k[2 * (kBatch + 1)];
  alignas(256) std::int32_t status[8];
  alignas(256) float slopes[(kBatch + 1) * kH];
};

// The workspace of a call with device metadata (kernels/common/varlen.h):
// after the variant's bytes, 256-byte aligned, the sequences' order (packed
// queries: room for kVarlenOrderMaxSequences, whatever the batch) and the
// status words (unless the caller's); the regions do not overlap, and a call
// without packed queries keeps the layout it had before the order existed.
TEST(VarlenApiHelpers, MetadataWorkspaceLayout) {
  using flash::detail::kVarlenOrderMaxSequences;
  using flash::detail::metadata_workspace;
  const std::size_t order_bytes = 2 * sizeof(int) * kVarlenOrderMaxSequences;
  for (const std::size_t variant : {0, 1, 4, 255, 256, 257, 100000})
    for (const bool packed : {false, true})
      for (const bool own_status : {false, true}) {
        SCOPED_TRACE(testing::Message() << "variant " << variant << ", packed " << packed << ", own status " << own_status);
        const auto w = metadata_workspace(variant, packed, own_status);
        const std::size_t aligned = (variant + 255) / 256 * 256;
        EXPECT_EQ(w.order, aligned);
        EXPECT_EQ(w.order % 256, 0u);
        EXPECT_EQ(w.status % 256, 0u);
        EXPECT_EQ(w.status, w.order + (packed ? order_bytes : 0));
        if (own_status) EXPECT_EQ(w.bytes, w.status + 256);
        else EXPECT_EQ(w.bytes, packed ? w.status : variant);
        EXPECT_GE(w.bytes, variant);
      }
  EXPECT_TRUE(flash::detail::varlen_ordered(true, 1));
  EXPECT_TRUE(flash::detail::varlen_ordered(true, kVarlenOrderMaxSequences));
  EXPECT_FALSE(flash::detail::varlen_ordered(true, kVarlenOrderMaxSequences + 1));
  EXPECT_FALSE(flash::detail::varlen_ordered(false, 7));
}

TEST(VarlenApiHelpers, NamesArgumentMatchesWholeNamesOnly) {
  EXPECT_TRUE(names_argument("q: expected a rank-3 view", "q"));
  EXPECT_TRUE(names_argument("lse.shape[1] (heads_q) = 5", "lse"));
  EXPECT_TRUE(names_argument("o overlaps cu_seqlens_q: ...", "cu_seqlens_q"));
  EXPECT_FALSE(names_argument("cu_seqlens_q.dtype is f32", "q"));
  EXPECT_FALSE(names_argument("heads_q is not a multiple of heads_kv", "q"));
  EXPECT_FALSE(names_argument("max_seqlen_q = -1", "seqlen_q"));
}

class VarlenApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    args_ = {};
    std::memset(&buf_, 0, sizeof(buf_));
    for (auto& x : buf_.o) x = kPattern;
    for (auto& x : buf_.lse) x = kLsePattern;
    for (auto& x : buf_.status) x = 7;
    args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kTotalQ, kH, kD});
    args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kTotalK, kHkv, kD});
    args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kTotalK, kHkv, kD});
    args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH, kD});
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ});
    args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {kBatch + 1});
    args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1});
    args_.max_seqlen_q = 10;
    args_.max_seqlen_k = 10;
    args_.kernel = "tiled";
  }

  // Expects flash::Error whose message names `name`, and O, LSE and status
  // untouched.
  void expect_error(const char* name) {
    try {
      flash::attention_forward(args_);
      ADD_FAILURE() << "no flash::Error thrown (expected one naming " << name << ")";
    } catch (const flash::Error& e) {
      EXPECT_TRUE(names_argument(e.what(), name)) << "message: " << e.what() << "\ndoes not name: " << name;
    }
    EXPECT_THROW(flash::plan_forward(args_), flash::Error) << name;
    for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
    for (auto x : buf_.lse) ASSERT_EQ(x, kLsePattern) << "lse was written";
    for (auto x : buf_.status) ASSERT_EQ(x, 7) << "status was written";
  }

  // A dense call (rank-4 views, no cu_seqlens_q) over the same buffers.
  void make_dense() {
    args_.q = flash::make_contiguous(buf_.q, DType::bf16, {1, kTotalQ, kH, kD});
    args_.k = flash::make_contiguous(buf_.k, DType::bf16, {1, kTotalK, kHkv, kD});
    args_.v = flash::make_contiguous(buf_.v, DType::bf16, {1, kTotalK, kHkv, kD});
    args_.o = flash::make_contiguous(buf_.o, DType::bf16, {1, kTotalQ, kH, kD});
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {1, kH, kTotalQ});
    args_.cu_seqlens_q.reset();
    args_.cu_seqlens_k.reset();
    args_.max_seqlen_q = args_.max_seqlen_k = 0;
  }

  Buffers buf_;
  flash::ForwardArgs args_;
};

// The fixture's call, and its variations that are valid, pass validation.
TEST_F(VarlenApiErrors, ValidCallsPassValidation) {
  expect_valid([&] { flash::plan_forward(args_); });
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {4});
  args_.sync_check = false;
  expect_valid([&] { flash::plan_forward(args_); });
  args_.lse.reset();  // optional, as in a dense call
  args_.causal = true;
  args_.window_left = 7;
  expect_valid([&] { flash::plan_forward(args_); });
  // The score modifiers; ALiBi slopes per sequence are [batch, heads_q] with
  // batch = cu_seqlens_q.shape[0] - 1.
  args_.softcap = 30.0f;
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kBatch, kH});
  expect_valid([&] { flash::plan_forward(args_); });
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kH});
  expect_valid([&] { flash::plan_forward(args_); });
  // Strided packed views (here q, k and v as parts of one [total, 3, heads, dim] buffer's rows).
  SetUp();
  args_.q = flash::make_view(buf_.q, DType::bf16, {kTotalQ / 3, kH / 2, kD}, {3 * kH / 2 * kD, kD, 1});
  args_.o = flash::make_view(buf_.o, DType::bf16, {kTotalQ / 3, kH / 2, kD}, {3 * kH / 2 * kD, kD, 1});
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH / 2, kTotalQ / 3});
  args_.max_seqlen_q = kTotalQ / 3;
  expect_valid([&] { flash::plan_forward(args_); });
  // auto takes a variant with kFeatureVarlen.
  SetUp();
  args_.kernel = "auto";
  expect_valid([&] {
    const std::string kernel = flash::plan_forward(args_).kernel;
    for (const auto& v : flash::forward_variants())
      if (v.name == kernel) EXPECT_TRUE(v.features & flash::kFeatureVarlen) << kernel;
  });
}

// batch 0 (cu_seqlens of one entry), empty packed tensors, and a bound of 0
// with rows past the last sequence (every sequence empty) are valid.
TEST_F(VarlenApiErrors, EmptyCallsAreValid) {
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {1});
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {1});
  expect_valid([&] { flash::plan_forward(args_); });
  SetUp();
  args_.q = flash::make_contiguous(buf_.q, DType::bf16, {0, kH, kD});
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {0, kH, kD});
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, 0});
  args_.max_seqlen_q = 0;
  expect_valid([&] { flash::plan_forward(args_); });
  SetUp();
  args_.max_seqlen_q = 0;  // all sequences empty; rows past cu_seqlens_q[batch] are not written
  args_.max_seqlen_k = 0;
  expect_valid([&] { flash::plan_forward(args_); });
  for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
}

// Packed views are named in their own dimensions ([total, heads, head_dim];
// the checks see them with a unit batch in front).
TEST_F(VarlenApiErrors, PackedDimensionsAreNamedAsPassed) {
  const auto message = [&] {
    try {
      flash::plan_forward(args_);
    } catch (const flash::Error& e) {
      return std::string(e.what());
    }
    return std::string("no flash::Error");
  };
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH / 2, kD});
  std::string msg = message();
  EXPECT_NE(msg.find("o.shape[1] (heads_q)"), std::string::npos) << msg;
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ - 1, kH, kD});
  msg = message();
  EXPECT_NE(msg.find("o.shape[0] (total_q)"), std::string::npos) << msg;
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH, kD});
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kTotalK - 1, kHkv, kD});
  msg = message();
  EXPECT_NE(msg.find("v.shape[0] (total_k)"), std::string::npos) << msg;
}

TEST_F(VarlenApiErrors, CuSeqlensQWithoutCuSeqlensK) {
  args_.cu_seqlens_k.reset();
  expect_error("cu_seqlens_k");
}

// cu_seqlens_k belongs to a variable-length call: with a dense one (rank-4
// views, no cu_seqlens_q) it is an error, not ignored. seqused_k is one
// length per sequence of any call ([batch], batch = q.shape[0] here;
// tests/test_paged_api.cpp has the dense cases).
TEST_F(VarlenApiErrors, KeyMetadataWithoutCuSeqlensQ) {
  make_dense();
  expect_valid([&] { flash::plan_forward(args_); });
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1});
  expect_error("cu_seqlens_k");
  make_dense();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});  // q.shape[0] is 1
  expect_error("seqused_k");
  make_dense();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {1});
  expect_valid([&] { flash::plan_forward(args_); });
}

TEST_F(VarlenApiErrors, MetadataDtypeMustBeInt32) {
  args_.cu_seqlens_q->dtype = DType::f32;
  expect_error("cu_seqlens_q");
  SetUp();
  args_.cu_seqlens_k->dtype = DType::bf16;
  expect_error("cu_seqlens_k");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::f32, {kBatch});
  expect_error("seqused_k");
}

TEST_F(VarlenApiErrors, MetadataRankMustBeOne) {
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {1, kBatch + 1});
  expect_error("cu_seqlens_q");
  SetUp();
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1, 1});
  expect_error("cu_seqlens_k");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {1, kBatch});
  expect_error("seqused_k");
}

// The kernels index the metadata as plain arrays: a strided view is refused.
TEST_F(VarlenApiErrors, MetadataMustBeContiguous) {
  args_.cu_seqlens_q = flash::make_view(buf_.cu_q, DType::i32, {kBatch + 1}, {2});
  expect_error("cu_seqlens_q");
  SetUp();
  args_.cu_seqlens_k = flash::make_view(buf_.cu_k, DType::i32, {kBatch + 1}, {2});
  expect_error("cu_seqlens_k");
  SetUp();
  args_.seqused_k = flash::make_view(buf_.seqused_k, DType::i32, {kBatch}, {2});
  expect_error("seqused_k");
}

// cu_seqlens_q sets the batch (its length - 1): cu_seqlens_k must have the
// same length, seqused_k one less; an empty cu_seqlens_q is no batch at all.
TEST_F(VarlenApiErrors, MetadataShapes) {
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {0});
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {0});
  expect_error("cu_seqlens_q");
  SetUp();
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch});
  expect_error("cu_seqlens_k");
  SetUp();
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 2});
  expect_error("cu_seqlens_k");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch + 1});
  expect_error("seqused_k");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch - 1});
  expect_error("seqused_k");
}

TEST_F(VarlenApiErrors, NullMetadataPointer) {
  args_.cu_seqlens_q->data = nullptr;
  expect_error("cu_seqlens_q");
  SetUp();
  args_.cu_seqlens_k->data = nullptr;
  expect_error("cu_seqlens_k");
  SetUp();
  args_.seqused_k = flash::make_contiguous(nullptr, DType::i32, {kBatch});
  expect_error("seqused_k");
}

// q, k, v and o are packed rank-3 views with cu_seqlens_q: a rank-4 (dense)
// view or any other rank is an error naming the view.
TEST_F(VarlenApiErrors, PackedViewsMustBeRankThree) {
  args_.q = flash::make_contiguous(buf_.q, DType::bf16, {1, kTotalQ, kH, kD});
  expect_error("q");
  SetUp();
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {1, kTotalK, kHkv, kD});
  expect_error("k");
  SetUp();
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kTotalK * kHkv, kD});
  expect_error("v");
  SetUp();
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {1, kTotalQ, kH, kD});
  expect_error("o");
}

// The packed views agree as in a dense call: k and v the same rows, heads
// and head dim; o the shape of q; every view q's dtype.
TEST_F(VarlenApiErrors, PackedShapesAndDtypes) {
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kTotalK - 1, kHkv, kD});
  expect_error("v");
  SetUp();
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kTotalK, kHkv, kD / 2});
  expect_error("k");
  SetUp();
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ - 1, kH, kD});
  expect_error("o");
  SetUp();
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH / 2, kD});
  expect_error("o");
  SetUp();
  args_.k.dtype = DType::f16;
  expect_error("k");
  SetUp();
  args_.q.stride[2] = 2;  // last dimension not contiguous
  expect_error("q");
  SetUp();
  args_.k = flash::make_contiguous(buf_.k, DType::bf16, {kTotalK, 3, kD / 2});  // heads_q 4 is not a multiple of 3
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kTotalK, 3, kD / 2});
  args_.q = flash::make_contiguous(buf_.q, DType::bf16, {kTotalQ, kH, kD / 2});
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH, kD / 2});
  EXPECT_THROW(flash::attention_forward(args_), flash::Error);
}

// max_seqlen_q / max_seqlen_k bound every sequence (the grid is sized by
// them): negative is an error; 0 is valid (all sequences empty).
TEST_F(VarlenApiErrors, NegativeMaxSeqlen) {
  args_.max_seqlen_q = -1;
  expect_error("max_seqlen_q");
  SetUp();
  args_.max_seqlen_k = -3;
  expect_error("max_seqlen_k");
}

// The packed LSE is fp32 [heads_q, total_q].
TEST_F(VarlenApiErrors, LseShapeAndDtype) {
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ + 1});
  expect_error("lse");
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH + 1, kTotalQ});
  expect_error("lse");
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kTotalQ, kH});  // transposed
  expect_error("lse");
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {1, kH, kTotalQ});  // the dense rank-3 form
  expect_error("lse");
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH * kTotalQ});
  expect_error("lse");
  SetUp();
  args_.lse->dtype = DType::bf16;
  expect_error("lse");
  SetUp();
  args_.lse->stride[0] = 0;  // every head on the same elements
  expect_error("lse");
}

// status: int32 [4], contiguous, as DecodeArgs::status.
TEST_F(VarlenApiErrors, StatusShapeAndDtype) {
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {2});
  expect_error("status");
  SetUp();
  args_.status = flash::make_contiguous(buf_.status, DType::f32, {4});
  expect_error("status");
  SetUp();
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {1, 4});
  expect_error("status");
  SetUp();
  args_.status = flash::make_view(buf_.status, DType::i32, {4}, {2});
  expect_error("status");
}

// status is an output and the metadata are inputs: they may not share
// memory with o or lse (or status with any input).
TEST_F(VarlenApiErrors, MetadataAndStatusMayNotOverlapTheOutputs) {
  args_.cu_seqlens_q = flash::make_contiguous(buf_.o, DType::i32, {kBatch + 1});
  expect_error("cu_seqlens_q");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.lse, DType::i32, {kBatch});
  expect_error("seqused_k");
  SetUp();
  args_.status = flash::make_contiguous(buf_.o, DType::i32, {4});
  expect_error("status");
  SetUp();
  args_.status = flash::make_contiguous(buf_.cu_k, DType::i32, {4});
  expect_error("status");
}

// Per-sequence ALiBi slopes are [batch, heads_q] with the batch of cu_seqlens_q.
TEST_F(VarlenApiErrors, AlibiSlopesFollowTheVarlenBatch) {
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kBatch + 1, kH});
  expect_error("alibi_slopes");
  try {  // the message names where the batch comes from: the packed q has none
    flash::attention_forward(args_);
  } catch (const flash::Error& e) {
    EXPECT_NE(std::string(e.what()).find("cu_seqlens_q.shape[0] - 1"), std::string::npos) << e.what();
  }
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {1, kH});
  expect_error("alibi_slopes");
}

// A variant without kFeatureVarlen refuses the call naming the feature
// (before any device query, so without a GPU too); asked for by name only,
// since auto passes over it.
TEST_F(VarlenApiErrors, VariantsWithoutTheFeatureRefuseIt) {
  int refused = 0;
  for (const auto& v : flash::forward_variants()) {
    if (!v.built || (v.features & flash::kFeatureVarlen)) continue;
    SCOPED_TRACE(v.name);
    SetUp();
    args_.kernel = v.name;
    try {
      flash::attention_forward(args_);
      ADD_FAILURE() << v.name << " took a variable-length call";
    } catch (const flash::Error& e) {
      EXPECT_NE(std::string(e.what()).find("variable-length"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find(v.name), std::string::npos) << e.what();
    }
    for (auto x : buf_.o) ASSERT_EQ(x, kPattern) << "o was written";
    ++refused;
  }
  if (refused == 0) GTEST_SKIP() << "every built forward variant has kFeatureVarlen";
}

}  // namespace
