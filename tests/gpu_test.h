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

}  // namespace flash::gpu_test

#define SKIP_WITHOUT_GPU()                                                                          \
  do {                                                                                              \
    if (!flash::gpu_test::no_gpu_reason().empty()) GTEST_SKIP() << flash::gpu_test::no_gpu_reason(); \
  } while (0)
