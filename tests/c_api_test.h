/* Shared by the C tests of the C ABI (test_c_api.c, test_c_api_gpu.c): a
 * check macro that counts failures, views built from a shape, and checks of
 * a call's status and message. Plain C11. */
#ifndef FLASH_TESTS_C_API_TEST_H
#define FLASH_TESTS_C_API_TEST_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "flash/flash_c.h"

static int c_test_failures = 0;
static int c_test_checks = 0;
static int c_test_skipped = 0; /* checks this build cannot make (each says why) */

#define CHECK(cond)                                                           \
  do {                                                                        \
    ++c_test_checks;                                                          \
    if (!(cond)) {                                                            \
      ++c_test_failures;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                         \
  } while (0)

/* A row-major view of rank 1 to 4 (the other sizes ignored). */
static flash_tensor view(void* data, flash_dtype dtype, int rank, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  flash_tensor t;
  const int64_t dims[4] = {d0, d1, d2, d3};
  int64_t stride = 1;
  memset(&t, 0, sizeof t);
  t.data = data;
  t.dtype = dtype;
  t.rank = rank;
  for (int i = rank - 1; i >= 0; --i) {
    t.shape[i] = dims[i];
    t.strides[i] = stride;
    stride *= dims[i];
  }
  return t;
}

/* The call returned `expected` and left a message containing `needle`. */
static void expect_status(const char* what, int32_t got, int32_t expected, const char* needle, int line) {
  const char* message = flash_last_error();
  ++c_test_checks;
  if (got != expected || message == NULL || strstr(message, needle) == NULL) {
    ++c_test_failures;
    fprintf(stderr, "line %d: %s: status %d (expected %d), message \"%s\" (expected to contain \"%s\")\n", line, what,
            (int)got, (int)expected, message ? message : "(null)", needle);
  }
}
#define EXPECT_STATUS(call, expected, needle) expect_status(#call, (call), (expected), (needle), __LINE__)
#define EXPECT_INVALID(call, needle) EXPECT_STATUS(call, FLASH_ERROR_INVALID_ARGUMENT, needle)

/* Prints the summary line and returns main's exit code. */
static int c_test_summary(const char* name) {
  printf("%s: %d checks, %d failed", name, c_test_checks, c_test_failures);
  if (c_test_skipped > 0) printf(", %d skipped", c_test_skipped);
  printf("\n");
  return c_test_failures == 0 ? 0 : 1;
}

#endif /* FLASH_TESTS_C_API_TEST_H */
