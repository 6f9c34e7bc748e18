// Helpers shared by the CPU test files (test_cpu): no kernel runs here.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "flash/error.h"
#include "testing/testing.h"

namespace flash::cpu_test {

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

}  // namespace flash::cpu_test
