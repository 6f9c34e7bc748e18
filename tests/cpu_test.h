// Helpers shared by the CPU test files (test_cpu): no kernel runs here.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <string>

#include "common/head_dims.h"
#include "flash/error.h"
#include "flash/variants.h"
#include "testing/testing.h"

namespace flash::cpu_test {

// The head dim of the API tests' calls: 64 where the build has it, else the
// first head dim it has (a FLASH_HEAD_DIMS subset, e.g. the dev preset's
// 128), so that their valid calls stay valid in any build.
inline constexpr int kTestHeadDim = flash::detail::head_dim_built(64)    ? 64
                                    : flash::detail::head_dim_built(128) ? 128
                                    : flash::detail::head_dim_built(32)  ? 32
                                    : flash::detail::head_dim_built(96)  ? 96
                                                                         : 256;

// Whether an error says only that the variants the call could take are
// left out of this build (FLASH_VARIANTS): "kernel 'x': not built (...)", or
// auto's list whose every line says so.
inline bool only_not_built(const std::string& msg) {
  constexpr const char* kNotBuilt = "not built (CMake option FLASH_VARIANTS)";
  if (msg.find(kNotBuilt) == std::string::npos) return false;
  std::size_t start = 0;
  bool first = true;
  while (start <= msg.size()) {
    const std::size_t end = std::min(msg.find('\n', start), msg.size());
    const std::string line = msg.substr(start, end - start);
    // (auto's first line names no variant: "kernel auto: no ... supports this call:")
    if (!(first && line.find(kNotBuilt) == std::string::npos && line.back() == ':') &&
        line.find(kNotBuilt) == std::string::npos)
      return false;
    first = false;
    start = end + 1;
  }
  return true;
}

// A call that validation accepts: it returns, or, without a GPU, stops at
// the device query, which comes after every argument check; in a subset
// build (FLASH_VARIANTS) without the variants the call could take, it stops
// at "not built", which is noted, not failed. Only plan_* calls and calls
// that launch nothing are passed here, so host memory is safe on a GPU
// machine too.
inline void expect_valid(const std::function<void()>& call) {
  try {
    call();
  } catch (const flash::Error& e) {
    if (only_not_built(e.what())) {
      std::printf("[   NOTE   ] not checked in this build: %s\n", e.what());
      return;
    }
    std::string why;
    if (flash::testing::gpu_available(&why)) ADD_FAILURE() << e.what();
    else EXPECT_NE(std::string(e.what()).find("no usable CUDA device"), std::string::npos) << e.what();
  }
}

// Whether the decode variant `name` is in this build (FLASH_VARIANTS may
// leave it out; tests that name it skip then, saying why).
inline bool decode_variant_built(const std::string& name) {
  for (const auto& v : flash::decode_variants())
    if (v.name == name) return v.built;
  return false;
}

// True when `name` occurs in msg as a whole argument name, not inside a
// longer identifier ("q" is not found in "cu_seqlens_q", "heads_q" or "dq").
inline bool names_argument(const std::string& msg, const std::string& name) {
  auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (std::size_t at = msg.find(name); at != std::string::npos; at = msg.find(name, at + 1)) {
    const bool starts = at == 0 || !ident(msg[at - 1]);
    const bool ends = at + name.size() == msg.size() || !ident(msg[at + name.size()]);
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace flash::cpu_test
