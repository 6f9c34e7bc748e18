// The testing library's own helpers (src/testing): the bench's random
// inputs (random_bytes) are normal, rounded to the dtype, and the same for a
// seed whatever the thread count.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "testing/testing.h"

namespace {

using flash::DType;

std::vector<double> decode(const std::vector<unsigned char>& bytes, DType dtype) {
  std::vector<double> out;
  if (dtype == DType::f32) {
    out.resize(bytes.size() / 4);
    for (std::size_t i = 0; i < out.size(); ++i) {
      float f;
      std::memcpy(&f, &bytes[4 * i], 4);
      out[i] = f;
    }
  } else {  // bf16: the high half of a float
    out.resize(bytes.size() / 2);
    for (std::size_t i = 0; i < out.size(); ++i) {
      std::uint32_t w = (static_cast<std::uint32_t>(bytes[2 * i + 1]) << 24) | (static_cast<std::uint32_t>(bytes[2 * i]) << 16);
      float f;
      std::memcpy(&f, &w, 4);
      out[i] = f;
    }
  }
  return out;
}

// shape: also the mass within one sigma (unrounded values only: rounding to
// bf16 piles values onto the representable bounds mean +- stddev).
void expect_normal(const std::vector<double>& x, double mean, double stddev, bool shape) {
  double sum = 0, sq = 0;
  std::size_t within = 0;
  for (double v : x) {
    ASSERT_TRUE(std::isfinite(v));
    sum += v;
    sq += v * v;
    within += std::abs(v - mean) <= stddev;
  }
  const double n = static_cast<double>(x.size()), m = sum / n, sd = std::sqrt(sq / n - m * m);
  EXPECT_NEAR(m, mean, 5e-3 * stddev);
  EXPECT_NEAR(sd, stddev, 1e-2 * stddev);
  if (shape) EXPECT_NEAR(within / n, 0.6827, 3e-3);  // a normal's mass within one sigma (a uniform's: 0.577)
}

TEST(RandomBytes, NormalWithTheGivenMeanAndDeviation) {
  constexpr std::size_t kN = std::size_t{1} << 20;
  expect_normal(decode(flash::testing::random_bytes(kN, DType::f32, 7), DType::f32), 0.0, 1.0, true);
  expect_normal(decode(flash::testing::random_bytes(kN, DType::bf16, 8, 0.5, 2.0), DType::bf16), 2.0, 0.5, false);
}

TEST(RandomBytes, RoundedToTheDtype) {
  const auto f32 = decode(flash::testing::random_bytes(1001, DType::f32, 3), DType::f32);
  const auto bf = decode(flash::testing::random_bytes(1001, DType::bf16, 3), DType::bf16);
  ASSERT_EQ(bf.size(), 1001u);  // an odd count: the last pair's second value is dropped
  for (std::size_t i = 0; i < bf.size(); ++i) {
    // The same value, rounded to bf16's 8 significant bits: within half an ulp.
    EXPECT_LE(std::abs(bf[i] - f32[i]), std::ldexp(std::abs(f32[i]), -8) + 1e-30) << i;
    float f = static_cast<float>(bf[i]);
    std::uint32_t w;
    std::memcpy(&w, &f, 4);
    EXPECT_EQ(w & 0xffffu, 0u) << "not a bf16 value at " << i;
  }
}

TEST(RandomBytes, TheSameForASeedWhateverTheThreads) {
  constexpr std::size_t kN = 3 * 65536 * 4 + 5;  // enough pairs for several threads, and an odd tail
  const auto one = flash::testing::random_bytes(kN, DType::bf16, 42, 1.0, 0.0, 1);
  EXPECT_EQ(flash::testing::random_bytes(kN, DType::bf16, 42, 1.0, 0.0, 5), one);
  EXPECT_EQ(flash::testing::random_bytes(kN, DType::bf16, 42), one);
  EXPECT_NE(flash::testing::random_bytes(kN, DType::bf16, 43), one);
}

}  // namespace

namespace {

TEST(UploadRandom, RefusesAStridedView) {
  // [2, 3, 4] with a padded middle stride: not contiguous. Refused before
  // any device call (the pointer is never touched).
  const flash::TensorView strided =
      flash::make_view(reinterpret_cast<void*>(0x1000), DType::bf16, {2, 3, 4}, {16, 5, 1});
  // The message names the reason (a failed copy would throw flash::Error too).
  try {
    flash::testing::upload_random(strided, 1);
    ADD_FAILURE() << "a strided view was accepted";
  } catch (const flash::Error& e) {
    EXPECT_NE(std::string(e.what()).find("contiguous"), std::string::npos) << e.what();
  }
}

}  // namespace
