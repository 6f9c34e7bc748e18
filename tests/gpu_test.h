// Shared by the GPU test files: the random base seed (printed once, or taken
// from FLASH_TEST_SEED to rerun a failure), a per-test seed, and the skip when
// there is no GPU.
#pragma once

#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <tuple>

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

// The base seed mixed with the running test's name.
inline std::uint64_t test_seed() {
  return base_seed() * 1000003u +
         std::hash<std::string>{}(::testing::UnitTest::GetInstance()->current_test_info()->name());
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
    {"l64_r32", false, 64, 32},       {"l0_r0", false, 0, 0},
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

}  // namespace flash::gpu_test

#define SKIP_WITHOUT_GPU()                                                                          \
  do {                                                                                              \
    if (!flash::gpu_test::no_gpu_reason().empty()) GTEST_SKIP() << flash::gpu_test::no_gpu_reason(); \
  } while (0)
