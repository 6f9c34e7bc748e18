// Helpers shared by the CPU test files (test_cpu): no kernel runs here.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "common/head_dims.h"
#include "flash/error.h"
#include "flash/variants.h"
#include "testing/testing.h"

namespace flash::cpu_test {

// The head dim of the API tests' calls: tests/CMakeLists.txt's
// FLASH_TEST_HEAD_DIM (64, else a FLASH_HEAD_DIMS subset's first built head
// dim), so that their valid calls stay valid in any build.
inline constexpr int kTestHeadDim = FLASH_TEST_HEAD_DIM;
static_assert(flash::detail::head_dim_built(kTestHeadDim), "FLASH_TEST_HEAD_DIM is not a built head dim");

// Whether an error says only that the variants the call could take are
// left out of this build (FLASH_VARIANTS): "kernel 'x': not built (...)",
// or auto's list ("kernel auto: no ... supports this call:" then a line per
// variant) whose every variant line says so.
inline bool only_not_built(const std::string& msg) {
  constexpr const char* kNotBuilt = "not built (CMake option FLASH_VARIANTS)";
  std::size_t start = 0, lines = 0;
  for (std::size_t end; start <= msg.size(); start = end + 1, ++lines) {
    end = std::min(msg.find('\n', start), msg.size());
    const std::string line = msg.substr(start, end - start);
    const bool header = lines == 0 && !line.empty() && line.back() == ':';
    if (!header && line.find(kNotBuilt) == std::string::npos) return false;
  }
  return msg.find(kNotBuilt) != std::string::npos;
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

// Whether the variant `name` of a registry list (flash::forward_variants(),
// backward_variants(), decode_variants()) is in this build (FLASH_VARIANTS
// may leave it out; tests that name it skip then, saying why).
inline bool variant_built(const std::vector<flash::VariantInfo>& variants, const std::string& name) {
  for (const auto& v : variants)
    if (v.name == name) return v.built;
  return false;
}
inline bool decode_variant_built(const std::string& name) { return variant_built(flash::decode_variants(), name); }

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
