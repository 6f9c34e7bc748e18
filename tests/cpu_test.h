// Helpers shared by the CPU test files (test_cpu): no kernel runs here.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
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

// A call that validation accepts: it returns, or, without a GPU, stops at
// the device query, which comes after every argument check. Only plan_*
// calls and calls that launch nothing are passed here, so host memory is
// safe on a GPU machine too.
inline void expect_valid(const std::function<void()>& call) {
  try {
    call();
  } catch (const flash::Error& e) {
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
