// Variable-length backward calls (BackwardArgs::cu_seqlens_q, issue 17):
// every invalid host-side argument raises flash::Error naming the argument,
// and writes nothing (dq, dk, dv, dsinks and status keep their patterns). As
// in test_varlen_api.cpp, validation runs before any device access, so host
// buffers stand in for device memory and these tests run without a GPU;
// valid calls are only planned (plan_backward). The metadata's values are
// checked on the device: tests/test_varlen_bwd_gpu.cpp.
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

// Three sequences packed into kTotalQ query rows and kTotalK key rows (the
// metadata's values are never read here).
constexpr int kBatch = 3, kTotalQ = 24, kTotalK = 20, kH = 4, kHkv = 2, kD = flash::cpu_test::kTestHeadDim;
constexpr std::uint16_t kPattern = 0x7e57;
constexpr float kDsinksPattern = 321.0f;

struct Buffers {
  alignas(256) std::uint16_t q[kTotalQ * kH * kD];
  alignas(256) std::uint16_t o[kTotalQ * kH * kD];
  alignas(256) std::uint16_t dout[kTotalQ * kH * kD];
  alignas(256) std::uint16_t dq[kTotalQ * kH * kD];
  alignas(256) std::uint16_t k[kTotalK * kHkv * kD];
  alignas(256) std::uint16_t v[kTotalK * kHkv * kD];
  alignas(256) std::uint16_t dk[kTotalK * kHkv * kD];
  alignas(256) std::uint16_t dv[kTotalK * kHkv * kD];
  alignas(256) float lse[(kH + 1) * (kTotalQ + 1)];  // room for the wrong shapes below
  alignas(256) std::int32_t cu_q[2 * (kBatch + 2)];  // room for strided and longer views
  alignas(256) std::int32_t cu_k[2 * (kBatch + 2)];
  alignas(256) std::int32_t seqused_k[2 * (kBatch + 1)];
  alignas(256) std::int32_t status[8];
  alignas(256) float slopes[(kBatch + 1) * kH];
  alignas(256) float sinks[kH];
  alignas(256) float dsinks[kH];
  // One [total, heads_q + 2 heads_kv, head_dim] buffer for the packed-qkv gradients (kTotalQ rows).
  alignas(256) std::uint16_t dqkv[kTotalQ * (kH + 2 * kHkv) * kD];
};

// The variant the tests name: the last built backward variant that takes
// variable-length batches, every score modifier, deterministic mode and the
// tests' head dim (wgmma in a build with sm_90a), so that a build of a
// subset of variants (FLASH_VARIANTS) passes too.
std::string last_built_variant() {
  constexpr unsigned kEvery = flash::kFeatureVarlen | flash::kScoreFeatures | flash::kFeatureDeterministic;
  std::string name = "mma";
  for (const auto& v : flash::backward_variants())
    if (v.built && (v.features & kEvery) == kEvery && v.supports(DType::bf16, kD)) name = v.name;
  return name;
}

class VarlenBwdApiErrors : public ::testing::Test {
 protected:
  void SetUp() override {
    args_ = {};
    std::memset(&buf_, 0, sizeof(buf_));
    for (auto* grad : {buf_.dq, buf_.dk, buf_.dv}) (void)grad;
    for (auto& x : buf_.dq) x = kPattern;
    for (auto& x : buf_.dk) x = kPattern;
    for (auto& x : buf_.dv) x = kPattern;
    for (auto& x : buf_.dqkv) x = kPattern;
    for (auto& x : buf_.dsinks) x = kDsinksPattern;
    for (auto& x : buf_.status) x = 7;
    auto q_like = [](void* p) { return flash::make_contiguous(p, DType::bf16, {kTotalQ, kH, kD}); };
    auto k_like = [](void* p) { return flash::make_contiguous(p, DType::bf16, {kTotalK, kHkv, kD}); };
    args_.q = q_like(buf_.q), args_.o = q_like(buf_.o), args_.dout = q_like(buf_.dout), args_.dq = q_like(buf_.dq);
    args_.k = k_like(buf_.k), args_.v = k_like(buf_.v), args_.dk = k_like(buf_.dk), args_.dv = k_like(buf_.dv);
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ});
    args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {kBatch + 1});
    args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1});
    args_.max_seqlen_q = 10;
    args_.max_seqlen_k = 10;
    args_.kernel = kernel_ = last_built_variant();
  }

  // Sinks and their gradient, valid.
  void with_sinks() {
    args_.sinks = flash::make_contiguous(buf_.sinks, DType::f32, {kH});
    args_.dsinks = flash::make_contiguous(buf_.dsinks, DType::f32, {kH});
  }

  // Expects flash::Error whose message names `name`, and the gradients,
  // dsinks and status untouched.
  void expect_error(const char* name) {
    try {
      flash::attention_backward(args_);
      ADD_FAILURE() << "no flash::Error thrown (expected one naming " << name << ")";
    } catch (const flash::Error& e) {
      EXPECT_TRUE(names_argument(e.what(), name)) << "message: " << e.what() << "\ndoes not name: " << name;
    }
    EXPECT_THROW(flash::plan_backward(args_), flash::Error) << name;
    for (auto x : buf_.dq) ASSERT_EQ(x, kPattern) << "dq was written";
    for (auto x : buf_.dk) ASSERT_EQ(x, kPattern) << "dk was written";
    for (auto x : buf_.dv) ASSERT_EQ(x, kPattern) << "dv was written";
    for (auto x : buf_.dqkv) ASSERT_EQ(x, kPattern) << "dqkv was written";
    for (auto x : buf_.dsinks) ASSERT_EQ(x, kDsinksPattern) << "dsinks was written";
    for (auto x : buf_.status) ASSERT_EQ(x, 7) << "status was written";
  }

  // A dense call (rank-4 views, lse [1, heads_q, total_q], no cu_seqlens_q) over the same buffers.
  void make_dense() {
    auto dense = [](flash::TensorView& t) {
      t = flash::make_contiguous(t.data, t.dtype, {1, t.shape[0], t.shape[1], t.shape[2]});
    };
    for (auto* t : {&args_.q, &args_.o, &args_.dout, &args_.dq, &args_.k, &args_.v, &args_.dk, &args_.dv}) dense(*t);
    args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {1, kH, kTotalQ});
    args_.cu_seqlens_q.reset();
    args_.cu_seqlens_k.reset();
    args_.max_seqlen_q = args_.max_seqlen_k = 0;
  }

  Buffers buf_;
  flash::BackwardArgs args_;
  std::string kernel_;
};

// The fixture's call, and its variations that are valid, pass validation.
TEST_F(VarlenBwdApiErrors, ValidCallsPassValidation) {
  expect_valid([&] { flash::plan_backward(args_); });
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {4});
  args_.sync_check = false;
  args_.deterministic = true;
  expect_valid([&] { flash::plan_backward(args_); });
  args_.causal = true;
  args_.window_left = 7;
  expect_valid([&] { flash::plan_backward(args_); });
  // The score modifiers; ALiBi slopes per sequence are [batch, heads_q] with
  // batch = cu_seqlens_q.shape[0] - 1; dsinks sums over the sequences.
  args_.softcap = 30.0f;
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kBatch, kH});
  with_sinks();
  expect_valid([&] { flash::plan_backward(args_); });
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kH});
  args_.dsinks.reset();
  expect_valid([&] { flash::plan_backward(args_); });
  // FlashAttention's packed-qkv backward: dq, dk and dv interleaved in one
  // [total, heads_q + 2 heads_kv, head_dim] buffer (self-attention: total_k = total_q).
  SetUp();
  constexpr std::int64_t kW = kH + 2 * kHkv;
  args_.k = flash::make_contiguous(buf_.q, DType::bf16, {kTotalQ, kHkv, kD});
  args_.v = flash::make_contiguous(buf_.q, DType::bf16, {kTotalQ, kHkv, kD});
  args_.dq = flash::make_view(buf_.dqkv, DType::bf16, {kTotalQ, kH, kD}, {kW * kD, kD, 1});
  args_.dk = flash::make_view(buf_.dqkv + kH * kD, DType::bf16, {kTotalQ, kHkv, kD}, {kW * kD, kD, 1});
  args_.dv = flash::make_view(buf_.dqkv + (kH + kHkv) * kD, DType::bf16, {kTotalQ, kHkv, kD}, {kW * kD, kD, 1});
  expect_valid([&] { flash::plan_backward(args_); });
  // Heads-major gradients ([heads, total, head_dim] memory).
  SetUp();
  args_.dq = flash::make_view(buf_.dq, DType::bf16, {kTotalQ, kH, kD}, {kD, kTotalQ * kD, 1});
  args_.dk = flash::make_view(buf_.dk, DType::bf16, {kTotalK, kHkv, kD}, {kD, kTotalK * kD, 1});
  expect_valid([&] { flash::plan_backward(args_); });
  // auto takes a variant with kFeatureVarlen.
  SetUp();
  args_.kernel = "auto";
  expect_valid([&] {
    const std::string kernel = flash::plan_backward(args_).kernel;
    for (const auto& v : flash::backward_variants())
      if (v.name == kernel) EXPECT_TRUE(v.features & flash::kFeatureVarlen) << kernel;
  });
}

// The workspace of a variable-length call holds the metadata check's status
// words unless the caller passes `status`: 256 bytes more.
TEST_F(VarlenBwdApiErrors, WorkspaceHoldsTheStatusWords) {
  expect_valid([&] {
    const std::size_t own = flash::plan_backward(args_).workspace_bytes;
    args_.status = flash::make_contiguous(buf_.status, DType::i32, {4});
    const std::size_t given = flash::plan_backward(args_).workspace_bytes;
    EXPECT_GT(given, 0u);
    EXPECT_EQ(own, given + 256);
  });
}

// batch 0 (cu_seqlens of one entry) launches nothing; empty packed tensors
// and bounds of 0 (every sequence empty) are valid.
TEST_F(VarlenBwdApiErrors, EmptyCallsAreValid) {
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {1});
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {1});
  expect_valid([&] { flash::attention_backward(args_); });
  for (auto x : buf_.dq) ASSERT_EQ(x, kPattern) << "dq was written";
  SetUp();
  for (auto* t : {&args_.q, &args_.o, &args_.dout, &args_.dq}) t->shape[0] = 0;
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, 0});
  args_.max_seqlen_q = 0;
  expect_valid([&] { flash::plan_backward(args_); });
  SetUp();
  for (auto* t : {&args_.k, &args_.v, &args_.dk, &args_.dv}) t->shape[0] = 0;
  args_.max_seqlen_k = 0;
  expect_valid([&] { flash::plan_backward(args_); });
  SetUp();
  args_.max_seqlen_q = args_.max_seqlen_k = 0;
  expect_valid([&] { flash::plan_backward(args_); });
}

TEST_F(VarlenBwdApiErrors, CuSeqlensQWithoutCuSeqlensK) {
  args_.cu_seqlens_k.reset();
  expect_error("cu_seqlens_k");
}

// cu_seqlens_k and seqused_k belong to a variable-length call: with a dense
// one they are errors, not ignored.
TEST_F(VarlenBwdApiErrors, KeyMetadataWithoutCuSeqlensQ) {
  make_dense();
  expect_valid([&] { flash::plan_backward(args_); });
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1});
  expect_error("cu_seqlens_k");
  make_dense();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch});
  expect_error("seqused_k");
}

TEST_F(VarlenBwdApiErrors, MetadataDtypeRankAndStride) {
  args_.cu_seqlens_q->dtype = DType::f32;
  expect_error("cu_seqlens_q");
  SetUp();
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 1, 1});
  expect_error("cu_seqlens_k");
  SetUp();
  args_.seqused_k = flash::make_view(buf_.seqused_k, DType::i32, {kBatch}, {2});
  expect_error("seqused_k");
  SetUp();
  args_.cu_seqlens_q->data = nullptr;
  expect_error("cu_seqlens_q");
}

// cu_seqlens_q sets the batch (its length - 1): cu_seqlens_k must have the
// same length, seqused_k one less; an empty cu_seqlens_q is no batch at all.
TEST_F(VarlenBwdApiErrors, MetadataShapes) {
  args_.cu_seqlens_q = flash::make_contiguous(buf_.cu_q, DType::i32, {0});
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {0});
  expect_error("cu_seqlens_q");
  SetUp();
  args_.cu_seqlens_k = flash::make_contiguous(buf_.cu_k, DType::i32, {kBatch + 2});
  expect_error("cu_seqlens_k");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.seqused_k, DType::i32, {kBatch + 1});
  expect_error("seqused_k");
}

// Every packed view is rank 3 with cu_seqlens_q (lse rank 2): a rank-4
// (dense) view is an error naming it.
TEST_F(VarlenBwdApiErrors, PackedViewsMustBeRankThree) {
  const struct {
    const char* name;
    flash::TensorView flash::BackwardArgs::*view;
  } views[] = {{"q", &flash::BackwardArgs::q},       {"k", &flash::BackwardArgs::k},
               {"v", &flash::BackwardArgs::v},       {"o", &flash::BackwardArgs::o},
               {"dout", &flash::BackwardArgs::dout}, {"dq", &flash::BackwardArgs::dq},
               {"dk", &flash::BackwardArgs::dk},     {"dv", &flash::BackwardArgs::dv}};
  for (const auto& [name, view] : views) {
    SCOPED_TRACE(name);
    SetUp();
    flash::TensorView& t = args_.*view;
    t = flash::make_contiguous(t.data, t.dtype, {1, t.shape[0], t.shape[1], t.shape[2]});
    expect_error(name);
  }
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {1, kH, kTotalQ});  // the dense form
  expect_error("lse");
}

// dout and dq are shaped like q, dk and dv like k, all in q's dtype.
TEST_F(VarlenBwdApiErrors, GradientShapesAndDtypes) {
  args_.dout = flash::make_contiguous(buf_.dout, DType::bf16, {kTotalQ - 1, kH, kD});
  expect_error("dout");
  SetUp();
  args_.dq = flash::make_contiguous(buf_.dq, DType::bf16, {kTotalQ, kH / 2, kD});
  expect_error("dq");
  SetUp();
  args_.dk = flash::make_contiguous(buf_.dk, DType::bf16, {kTotalK - 1, kHkv, kD});
  expect_error("dk");
  SetUp();
  args_.dv = flash::make_contiguous(buf_.dv, DType::bf16, {kTotalK, kHkv, kD / 2});
  expect_error("dv");
  SetUp();
  args_.dq.dtype = DType::f16;
  expect_error("dq");
  SetUp();
  args_.o = flash::make_contiguous(buf_.o, DType::bf16, {kTotalQ, kH, kD / 2});
  expect_error("o");
  SetUp();
  args_.v = flash::make_contiguous(buf_.v, DType::bf16, {kTotalK - 1, kHkv, kD});
  expect_error("v");
  SetUp();
  args_.dk.stride[2] = 2;  // last dimension not contiguous
  expect_error("dk");
}

// max_seqlen_q / max_seqlen_k: 0 to the packed rows.
TEST_F(VarlenBwdApiErrors, MaxSeqlenBounds) {
  args_.max_seqlen_q = -1;
  expect_error("max_seqlen_q");
  SetUp();
  args_.max_seqlen_q = kTotalQ + 1;
  expect_error("max_seqlen_q");
  SetUp();
  args_.max_seqlen_k = -3;
  expect_error("max_seqlen_k");
  SetUp();
  args_.max_seqlen_k = kTotalK + 1;
  expect_error("max_seqlen_k");
}

// The packed LSE is fp32 [heads_q, total_q].
TEST_F(VarlenBwdApiErrors, LseShapeAndDtype) {
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kH, kTotalQ + 1});
  expect_error("lse");
  SetUp();
  args_.lse = flash::make_contiguous(buf_.lse, DType::f32, {kTotalQ, kH});  // transposed
  expect_error("lse");
  SetUp();
  args_.lse.dtype = DType::bf16;
  expect_error("lse");
}

// status: int32 [4], contiguous.
TEST_F(VarlenBwdApiErrors, StatusShapeAndDtype) {
  args_.status = flash::make_contiguous(buf_.status, DType::i32, {2});
  expect_error("status");
  SetUp();
  args_.status = flash::make_contiguous(buf_.status, DType::f32, {4});
  expect_error("status");
  SetUp();
  args_.status = flash::make_view(buf_.status, DType::i32, {4}, {2});
  expect_error("status");
}

// status and the gradients are outputs, the metadata inputs: no output may
// share memory with an input or another output.
TEST_F(VarlenBwdApiErrors, OutputsMayNotOverlap) {
  args_.cu_seqlens_q = flash::make_contiguous(buf_.dq, DType::i32, {kBatch + 1});
  expect_error("cu_seqlens_q");
  SetUp();
  args_.seqused_k = flash::make_contiguous(buf_.dk, DType::i32, {kBatch});
  expect_error("seqused_k");
  SetUp();
  args_.status = flash::make_contiguous(buf_.dv, DType::i32, {4});
  expect_error("status");
  SetUp();
  args_.status = flash::make_contiguous(buf_.cu_k, DType::i32, {4});
  expect_error("status");
  SetUp();
  args_.dk = flash::make_contiguous(buf_.dq, DType::bf16, {kTotalK, kHkv, kD});
  expect_error("dk");
  SetUp();
  args_.dv.stride[0] = 0;  // every key row aliases the first
  expect_error("dv");
}

// Per-sequence ALiBi slopes are [batch, heads_q] with the batch of cu_seqlens_q.
TEST_F(VarlenBwdApiErrors, AlibiSlopesFollowTheVarlenBatch) {
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {kBatch + 1, kH});
  expect_error("alibi_slopes");
  args_.alibi_slopes = flash::make_contiguous(buf_.slopes, DType::f32, {1, kH});
  expect_error("alibi_slopes");
}

TEST_F(VarlenBwdApiErrors, DsinksNeedsSinks) {
  args_.dsinks = flash::make_contiguous(buf_.dsinks, DType::f32, {kH});
  expect_error("dsinks");
  with_sinks();
  args_.dsinks = flash::make_contiguous(buf_.dsinks, DType::f32, {kH - 1});
  expect_error("dsinks");
}

// The row arrays index total_q padded rows in int arithmetic.
TEST_F(VarlenBwdApiErrors, TotalQBeyondTheWorkspaceIndex) {
  const std::int64_t huge = (std::int64_t{1} << 31) - 100;  // a valid view size, past the padded int range
  for (auto* t : {&args_.q, &args_.o, &args_.dout, &args_.dq}) {
    t->shape[0] = huge;
    t->stride[0] = t->stride[1] = 0;
  }
  args_.lse.shape[1] = huge;
  args_.lse.stride[0] = args_.lse.stride[1] = 0;
  try {
    flash::plan_backward(args_);
    ADD_FAILURE() << "no flash::Error";
  } catch (const flash::Error& e) {
    const std::string msg = e.what();
    EXPECT_TRUE(names_argument(msg, "q") && msg.find("limit") != std::string::npos) << msg;
  }
}

// A backward variant without kFeatureVarlen (wgmma) refuses the call naming
// the feature (the test skips when every built one has it).
TEST_F(VarlenBwdApiErrors, VariantsWithoutTheFeatureRefuseIt) {
  int refused = 0;
  for (const auto& v : flash::backward_variants()) {
    if (!v.built || (v.features & flash::kFeatureVarlen)) continue;
    SCOPED_TRACE(v.name);
    SetUp();
    args_.kernel = v.name;
    try {
      flash::attention_backward(args_);
      ADD_FAILURE() << v.name << " took a variable-length call";
    } catch (const flash::Error& e) {
      EXPECT_NE(std::string(e.what()).find("variable-length"), std::string::npos) << e.what();
    }
    for (auto x : buf_.dq) ASSERT_EQ(x, kPattern) << "dq was written";
    ++refused;
  }
  if (refused == 0) GTEST_SKIP() << "every built backward variant has kFeatureVarlen";
}

// Every backward rung takes variable-length batches (the CUDA-core, the
// mma.sync and, since its ragged tensor maps, the Hopper rung).
TEST(VarlenBwdRegistry, EveryBackwardRungTakesVarlen) {
  for (const auto& v : flash::backward_variants()) {
    if (!v.built) continue;
    EXPECT_NE(v.features & flash::kFeatureVarlen, 0u) << v.name;
  }
}

}  // namespace
