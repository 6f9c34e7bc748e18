// The registry, as the runner, the tests and the bench enumerate it.
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/head_dims.h"
#include "flash/flash.h"

namespace {

TEST(Registry, ListsTheLadderInOrder) {
  const auto variants = flash::forward_variants();
  const std::vector<std::string> ladder = {"naive", "tiled", "wmma", "mma", "mma_swizzle", "mma_pipeline"};
  ASSERT_GE(variants.size(), ladder.size());
  for (std::size_t i = 0; i < ladder.size(); ++i) EXPECT_EQ(variants[i].name, ladder[i]);
  std::set<std::string> names;
  for (const auto& v : variants) {
    EXPECT_TRUE(names.insert(v.name).second) << "duplicate variant " << v.name;
    EXPECT_FALSE(v.description.empty()) << v.name;
  }
}

TEST(Registry, BuiltVariantsDeclareWhatTheySupport) {
  for (const auto& v : flash::forward_variants()) {
    if (!v.built) {
      EXPECT_TRUE(v.dtypes.empty()) << v.name;
      EXPECT_FALSE(v.supports(flash::DType::bf16, 128)) << v.name;
      EXPECT_FALSE(v.runs_on(90)) << v.name;
      continue;
    }
    EXPECT_GE(v.min_compute_capability, 80) << v.name;
    if (v.max_compute_capability != 0) EXPECT_GE(v.max_compute_capability, v.min_compute_capability) << v.name;
    EXPECT_TRUE(v.runs_on(v.min_compute_capability)) << v.name;
    EXPECT_EQ(v.runs_on(200), v.max_compute_capability == 0) << v.name;
    EXPECT_FALSE(v.runs_on(v.min_compute_capability - 1)) << v.name;
    EXPECT_FALSE(v.dtypes.empty()) << v.name;
    EXPECT_GT(v.max_head_dim, 0) << v.name;
    for (int d : v.head_dims) EXPECT_TRUE(v.supports(v.dtypes[0], d)) << v.name << " " << d;
    EXPECT_FALSE(v.supports(v.dtypes[0], v.max_head_dim + 1)) << v.name;
    EXPECT_FALSE(v.supports(v.dtypes[0], 0)) << v.name;
  }
}

TEST(Registry, TensorCoreVariantsCoverF16Bf16AndTheirHeadDims) {
  for (const auto& v : flash::forward_variants()) {
    if (!v.built || (v.name.rfind("mma", 0) != 0 && v.name != "wmma")) continue;
    for (int d : {64, 128, 256}) {
      if (!flash::detail::head_dim_built(d)) continue;  // a FLASH_HEAD_DIMS subset
      EXPECT_TRUE(v.supports(flash::DType::bf16, d)) << v.name << " " << d;
      EXPECT_TRUE(v.supports(flash::DType::f16, d)) << v.name << " " << d;
    }
    EXPECT_FALSE(v.supports(flash::DType::f32, 128)) << v.name;
    // wmma, a teaching rung, leaves the score modifiers to the rungs after it;
    // mma and mma_swizzle take dense calls with sinks but without a softcap or
    // ALiBi (their Config's kEveryCall); mma_pipeline takes every call.
    const unsigned expected = v.name == "wmma" ? flash::kAllFeatures & ~flash::kScoreFeatures
                              : v.name == "mma_pipeline"
                                  ? flash::kAllFeatures | flash::kFeatureVarlen | flash::kFeaturePaged
                                  : flash::kAllFeatures & ~(flash::kFeatureSoftcap | flash::kFeatureAlibi);
    EXPECT_EQ(v.features, expected) << v.name;
  }
}

TEST(Registry, FoundationVariantsCoverEveryDtypeAndHeadDim) {
  for (const auto& v : flash::forward_variants()) {
    if (!v.built || (v.name != "naive" && v.name != "tiled")) continue;
    for (auto t : {flash::DType::f32, flash::DType::f16, flash::DType::bf16})
      for (int d : {32, 64, 96, 128, 256})
        if (flash::detail::head_dim_built(d)) EXPECT_TRUE(v.supports(t, d)) << v.name << " " << d;
    EXPECT_EQ(v.features,
              flash::kAllFeatures | (v.name == "tiled" ? flash::kFeatureVarlen | flash::kFeaturePaged : 0u))
        << v.name;
  }
  const auto variants = flash::forward_variants();
  EXPECT_TRUE(variants[0].built == false || variants[0].supports(flash::DType::bf16, 48)) << "naive takes any head dim";
  EXPECT_TRUE(variants[1].built == false || !variants[1].supports(flash::DType::bf16, 48)) << "tiled instantiates fixed head dims";
}

TEST(Registry, DecodeVariantsAreListedApartFromForward) {
  const auto decode = flash::decode_variants();
  ASSERT_FALSE(decode.empty());
  EXPECT_EQ(decode.back().name, "splitkv");
  for (const auto& v : flash::forward_variants()) EXPECT_NE(v.name, "splitkv") << "decode variants are not forward variants";
  for (const auto& v : decode) {
    if (!v.built || v.head_dims.empty()) continue;
    const int head_dim = v.head_dims.front();  // one this build instantiated
    EXPECT_TRUE(v.supports(flash::DType::bf16, head_dim)) << v.name;
    EXPECT_FALSE(v.supports(flash::DType::f32, head_dim)) << v.name;
    EXPECT_FALSE(v.supports(flash::DType::bf16, 96)) << v.name;
  }
}

}  // namespace
