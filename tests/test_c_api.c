/* The C ABI's error paths, compiled as C and run on the CPU (ctest c_api).
 * Every call here either is rejected by the argument checks, which come
 * before any device query, or is a plan_* call, which launches nothing: so
 * the views point at made-up, well-separated addresses and no memory is
 * touched, with or without a GPU. */
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "c_api_test.h"

/* Distinct, 256-byte aligned addresses far enough apart that no two views
 * of this file overlap. */
#define ADDR(n) ((void*)(uintptr_t)(0x10000000ull * (n)))

/* The calls' head dim: 64, or (tests/CMakeLists.txt) the first head dim of a
 * FLASH_HEAD_DIMS subset without it, so that the valid calls stay valid. */
#ifndef FLASH_TEST_HEAD_DIM
#define FLASH_TEST_HEAD_DIM 64
#endif
enum { kBatch = 2, kSeqQ = 16, kSeqK = 32, kHeadsQ = 4, kHeadsKv = 2, kHeadDim = FLASH_TEST_HEAD_DIM };

/* A valid forward call: bf16, GQA, seqlen_q != seqlen_k, with the LSE. */
static flash_forward_args forward_args(void) {
  flash_forward_args a;
  flash_forward_args_init(&a);
  a.q = view(ADDR(1), FLASH_BF16, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.k = view(ADDR(2), FLASH_BF16, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  a.v = view(ADDR(3), FLASH_BF16, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  a.o = view(ADDR(4), FLASH_BF16, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.lse = view(ADDR(5), FLASH_F32, 3, kBatch, kHeadsQ, kSeqQ, 0);
  return a;
}

static flash_backward_args backward_args(void) {
  flash_backward_args a;
  flash_backward_args_init(&a);
  a.q = view(ADDR(1), FLASH_F16, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.k = view(ADDR(2), FLASH_F16, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  a.v = view(ADDR(3), FLASH_F16, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  a.o = view(ADDR(4), FLASH_F16, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.lse = view(ADDR(5), FLASH_F32, 3, kBatch, kHeadsQ, kSeqQ, 0);
  a.dout = view(ADDR(6), FLASH_F16, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.dq = view(ADDR(7), FLASH_F16, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.dk = view(ADDR(8), FLASH_F16, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  a.dv = view(ADDR(9), FLASH_F16, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  return a;
}

/* A paged cache: 8 pages of 16 keys, 4 pages per sequence, one new token. */
static flash_decode_args decode_args(void) {
  flash_decode_args a;
  flash_decode_args_init(&a);
  a.q = view(ADDR(1), FLASH_BF16, 4, kBatch, 1, kHeadsQ, kHeadDim);
  a.k_cache = view(ADDR(2), FLASH_BF16, 4, 8, 16, kHeadsKv, kHeadDim);
  a.v_cache = view(ADDR(3), FLASH_BF16, 4, 8, 16, kHeadsKv, kHeadDim);
  a.page_table = view(ADDR(4), FLASH_I32, 2, kBatch, 4, 0, 0);
  a.cache_seqlens = view(ADDR(5), FLASH_I32, 1, kBatch, 0, 0, 0);
  a.k_new = view(ADDR(6), FLASH_BF16, 4, kBatch, 1, kHeadsKv, kHeadDim);
  a.v_new = view(ADDR(7), FLASH_BF16, 4, kBatch, 1, kHeadsKv, kHeadDim);
  a.o = view(ADDR(8), FLASH_BF16, 4, kBatch, 1, kHeadsQ, kHeadDim);
  a.sync_check = 0;
  return a;
}

/* A call that the argument checks accept: it plans, or without a GPU it
 * stops at the device query with FLASH_ERROR_NO_DEVICE. */
static void expect_valid(const char* what, int32_t status, const flash_plan* plan, int line) {
  ++c_test_checks;
  if (status == FLASH_OK) {
    if (plan != NULL && plan->kernel[0] == '\0') {
      ++c_test_failures;
      fprintf(stderr, "line %d: %s: planned without a kernel name\n", line, what);
    }
    return;
  }
  if (status != FLASH_ERROR_NO_DEVICE || strstr(flash_last_error(), "no usable CUDA device") == NULL) {
    ++c_test_failures;
    fprintf(stderr, "line %d: %s: status %d, \"%s\"\n", line, what, (int)status, flash_last_error());
  }
}
#define EXPECT_VALID(call, plan) expect_valid(#call, (call), (plan), __LINE__)

/* Why a valid decode (backward) call cannot plan in this build, or empty:
 * when FLASH_VARIANTS leaves every decode (backward) variant out, planning
 * one says "not built". The C++ tests ask the registry; the C ABI has none,
 * so main plans decode_args() and backward_args() once before the checks
 * (a probe sets flash_last_error, so it cannot run between a check's call
 * and its reading of the message). */
static char decode_not_built[256], backward_not_built[256];

static void probe_not_built(int32_t status, char* why_out, size_t size) {
  if (status != FLASH_ERROR_INVALID_ARGUMENT || strstr(flash_last_error(), "not built (CMake option FLASH_VARIANTS)") == NULL)
    return;
  const char* why = strrchr(flash_last_error(), '\n'); /* the last variant's line: "splitkv: not built (...)" */
  why = why != NULL ? why + strspn(why, "\n ") : flash_last_error();
  snprintf(why_out, size, "%s", why);
}

static void probe_variants(void) {
  flash_plan plan;
  flash_decode_args d = decode_args();
  probe_not_built(flash_plan_decode(&d, &plan), decode_not_built, sizeof decode_not_built);
  flash_backward_args b = backward_args();
  probe_not_built(flash_plan_backward(&b, &plan), backward_not_built, sizeof backward_not_built);
}

/* EXPECT_VALID for a decode (backward) call, skipped (saying why) in a
 * build without the variants it needs. */
static void expect_valid_unless(const char* not_built, const char* what, int32_t status, const flash_plan* plan,
                                int line) {
  if (not_built[0] != '\0') {
    ++c_test_skipped;
    printf("line %d: %s: skipped: %s\n", line, what, not_built);
    return;
  }
  expect_valid(what, status, plan, line);
}
#define EXPECT_DECODE_VALID(call, plan) expect_valid_unless(decode_not_built, #call, (call), (plan), __LINE__)
#define EXPECT_BACKWARD_VALID(call, plan) expect_valid_unless(backward_not_built, #call, (call), (plan), __LINE__)

static void test_version_and_message(void) {
  CHECK(flash_c_abi_version() == FLASH_C_ABI_VERSION);
  CHECK(FLASH_C_ABI_VERSION == 6);
  CHECK(flash_last_error() != NULL);
  CHECK(sizeof(flash_tensor) == 80);
  /* 64-bit Linux; python/flash_ladder/_capi.py mirrors these. */
  CHECK(sizeof(flash_forward_args) == 1048 && offsetof(flash_forward_args, softcap) == 464 &&
        offsetof(flash_forward_args, cu_seqlens_q) == 632 && offsetof(flash_forward_args, page_table) == 968);
  CHECK(sizeof(flash_backward_args) == 1368 && offsetof(flash_backward_args, softcap) == 784 &&
        offsetof(flash_backward_args, cu_seqlens_q) == 1032);
  CHECK(sizeof(flash_decode_args) == 1040 && offsetof(flash_decode_args, softcap) == 872);
}

/* The init functions leave every score modifier off: softcap 0 and the
 * optional tensors absent (rank 0). */
static void test_score_defaults(void) {
  flash_forward_args f;
  flash_backward_args b;
  flash_decode_args d;
  memset(&f, 0x5a, sizeof f);
  memset(&b, 0x5a, sizeof b);
  memset(&d, 0x5a, sizeof d);
  flash_forward_args_init(&f);
  flash_backward_args_init(&b);
  flash_decode_args_init(&d);
  CHECK(f.softcap == 0.0f && f.reserved3 == 0 && f.alibi_slopes.rank == 0 && f.sinks.rank == 0);
  CHECK(b.softcap == 0.0f && b.reserved3 == 0 && b.alibi_slopes.rank == 0 && b.sinks.rank == 0 && b.dsinks.rank == 0);
  CHECK(d.softcap == 0.0f && d.reserved3 == 0 && d.alibi_slopes.rank == 0 && d.sinks.rank == 0);
  CHECK(f.alibi_slopes.data == NULL && f.sinks.data == NULL && b.dsinks.data == NULL);
}

static void test_null_and_struct_size(void) {
  flash_plan plan;
  flash_forward_args f = forward_args();
  flash_backward_args b = backward_args();
  flash_decode_args d = decode_args();
  EXPECT_INVALID(flash_attention_forward(NULL), "flash_forward_args is null");
  EXPECT_INVALID(flash_attention_backward(NULL), "flash_backward_args is null");
  EXPECT_INVALID(flash_attention_decode(NULL), "flash_decode_args is null");
  EXPECT_INVALID(flash_plan_forward(NULL, &plan), "flash_forward_args is null");
  EXPECT_INVALID(flash_plan_forward(&f, NULL), "plan is null");
  EXPECT_INVALID(flash_plan_backward(&b, NULL), "plan is null");
  EXPECT_INVALID(flash_plan_decode(&d, NULL), "plan is null");
  f.struct_size = sizeof f - 8;
  EXPECT_INVALID(flash_attention_forward(&f), "struct_size");
  b.struct_size = 0;
  EXPECT_INVALID(flash_attention_backward(&b), "flash_backward_args_init");
  d.struct_size = sizeof d + 8;
  EXPECT_INVALID(flash_attention_decode(&d), "struct_size");
  f = forward_args();
  f.struct_size = offsetof(flash_forward_args, softcap) + 8; /* no version's size */
  EXPECT_INVALID(flash_attention_forward(&f), "flash_forward_args->struct_size = 472");
  EXPECT_INVALID(flash_attention_forward(&f), "or 632 for version 3");
  EXPECT_INVALID(flash_attention_forward(&f), "or 968 for version 4");
  b = backward_args();
  b.struct_size = offsetof(flash_backward_args, cu_seqlens_q) + 16; /* no version's size */
  EXPECT_INVALID(flash_attention_backward(&b), "flash_backward_args->struct_size = 1048; this library's "
                                               "flash_backward_args has 1368 bytes, or 784 for version 2, "
                                               "or 1032 for versions 3 to 5");
}

/* Version 4's forward fields: the init leaves the batch padded (no
 * cu_seqlens_q) with sync_check on, as the C++ API's defaults. */
static void test_varlen_defaults(void) {
  flash_forward_args f;
  memset(&f, 0x5a, sizeof f);
  flash_forward_args_init(&f);
  CHECK(f.cu_seqlens_q.rank == 0 && f.cu_seqlens_k.rank == 0 && f.seqused_k.rank == 0 && f.status.rank == 0);
  CHECK(f.cu_seqlens_q.data == NULL && f.status.data == NULL);
  CHECK(f.max_seqlen_q == 0 && f.max_seqlen_k == 0 && f.sync_check == 1 && f.reserved4 == 0);
  CHECK(f.page_table.rank == 0 && f.page_table.data == NULL); /* version 5: not paged */
  /* Version 6: the backward's too. */
  flash_backward_args b;
  memset(&b, 0x5a, sizeof b);
  flash_backward_args_init(&b);
  CHECK(b.cu_seqlens_q.rank == 0 && b.cu_seqlens_k.rank == 0 && b.seqused_k.rank == 0 && b.status.rank == 0);
  CHECK(b.cu_seqlens_q.data == NULL && b.seqused_k.data == NULL && b.status.data == NULL);
  CHECK(b.max_seqlen_q == 0 && b.max_seqlen_k == 0 && b.sync_check == 1 && b.reserved6 == 0);
}

enum { kTotalQ = 40, kTotalK = 70, kMaxSeqQ = 24, kMaxSeqK = 40 };

/* A valid variable-length forward: kBatch packed sequences, GQA, the LSE. */
static flash_forward_args varlen_args(void) {
  flash_forward_args a;
  flash_forward_args_init(&a);
  a.q = view(ADDR(1), FLASH_BF16, 3, kTotalQ, kHeadsQ, kHeadDim, 0);
  a.k = view(ADDR(2), FLASH_BF16, 3, kTotalK, kHeadsKv, kHeadDim, 0);
  a.v = view(ADDR(3), FLASH_BF16, 3, kTotalK, kHeadsKv, kHeadDim, 0);
  a.o = view(ADDR(4), FLASH_BF16, 3, kTotalQ, kHeadsQ, kHeadDim, 0);
  a.lse = view(ADDR(5), FLASH_F32, 2, kHeadsQ, kTotalQ, 0, 0);
  a.cu_seqlens_q = view(ADDR(13), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  a.cu_seqlens_k = view(ADDR(14), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  a.max_seqlen_q = kMaxSeqQ;
  a.max_seqlen_k = kMaxSeqK;
  return a;
}

/* A caller compiled against version 3 of the header: its forward struct ends
 * where cu_seqlens_q begins, so the batch is padded whatever follows. */
static void test_version3_structs(void) {
  flash_plan plan;
  flash_forward_args f = forward_args();
  f.struct_size = offsetof(flash_forward_args, cu_seqlens_q);
  /* Not part of a version-3 struct: values the library must not read. */
  f.cu_seqlens_q = view(ADDR(13), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  f.cu_seqlens_k.dtype = 9;
  f.cu_seqlens_k.rank = 1;
  f.max_seqlen_q = -7;
  f.sync_check = 0;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  /* Its version-3 fields are still read. */
  f.softcap = -1.0f;
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "softcap");
  /* The same struct at its full size reads the varlen fields. */
  f = forward_args();
  f.cu_seqlens_k.dtype = 9;
  f.cu_seqlens_k.rank = 1;
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "cu_seqlens_k.dtype = 9 is not a flash_dtype");
}

/* A caller compiled against version 4 of the header: its forward struct ends
 * where page_table begins, so k and v are not paged whatever follows. */
static void test_version4_structs(void) {
  flash_plan plan;
  flash_forward_args f = forward_args();
  f.struct_size = offsetof(flash_forward_args, page_table);
  f.page_table.dtype = 9; /* not part of a version-4 struct: never read */
  f.page_table.rank = 2;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.struct_size = sizeof f;
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "page_table.dtype = 9 is not a flash_dtype");
}

enum { kPages = 12, kPageSize = 16, kMaxPages = 4 };

/* Paged KV (version 5): dense and packed queries against kPages pages of
 * kPageSize keys; bad calls name the argument. */
static void test_paged_arguments(void) {
  flash_plan plan;
  flash_forward_args f = forward_args();
  f.k = view(ADDR(2), FLASH_BF16, 4, kPages, kPageSize, kHeadsKv, kHeadDim);
  f.v = view(ADDR(3), FLASH_BF16, 4, kPages, kPageSize, kHeadsKv, kHeadDim);
  f.page_table = view(ADDR(17), FLASH_I32, 2, kBatch, kMaxPages, 0, 0);
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan); /* every key of the table */
  f.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch, 0, 0, 0);
  f.causal = 1;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.page_table = view(ADDR(17), FLASH_F32, 2, kBatch, kMaxPages, 0, 0);
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "page_table.dtype is f32; expected i32");
  f.page_table = view(ADDR(17), FLASH_I32, 2, kBatch + 1, kMaxPages, 0, 0);
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "page_table.shape[0] (batch)");
  f.page_table = view(ADDR(17), FLASH_I32, 2, kBatch, kMaxPages, 0, 0);
  f.k = view(ADDR(2), FLASH_BF16, 4, kPages, 8, kHeadsKv, kHeadDim);
  f.v = view(ADDR(3), FLASH_BF16, 4, kPages, 8, kHeadsKv, kHeadDim);
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "k.shape[1] (page_size) = 8; expected a power of two (16 to 2^30)");
  /* Packed queries: seqused_k gives the keys; cu_seqlens_k is not used. */
  f = varlen_args();
  f.k = view(ADDR(2), FLASH_BF16, 4, kPages, kPageSize, kHeadsKv, kHeadDim);
  f.v = view(ADDR(3), FLASH_BF16, 4, kPages, kPageSize, kHeadsKv, kHeadDim);
  f.page_table = view(ADDR(17), FLASH_I32, 2, kBatch, kMaxPages, 0, 0);
  f.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch, 0, 0, 0);
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "cu_seqlens_k is set with page_table");
  memset(&f.cu_seqlens_k, 0, sizeof f.cu_seqlens_k);
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  memset(&f.seqused_k, 0, sizeof f.seqused_k);
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "seqused_k is not set");
}

/* Variable-length batches: valid calls plan (or stop at the device query),
 * bad ones name the argument. */
static void test_varlen_arguments(void) {
  flash_plan plan;
  flash_forward_args f = varlen_args();
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch, 0, 0, 0);
  f.status = view(ADDR(16), FLASH_I32, 1, 4, 0, 0, 0);
  f.causal = 1;
  f.sync_check = 0;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f = varlen_args();
  f.lse.rank = 0;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);

  f = varlen_args();
  f.cu_seqlens_k.rank = 0;
  EXPECT_INVALID(flash_attention_forward(&f), "cu_seqlens_k");
  f = varlen_args();
  f.cu_seqlens_q.dtype = FLASH_F32;
  EXPECT_INVALID(flash_attention_forward(&f), "cu_seqlens_q");
  f = varlen_args();
  f.cu_seqlens_k = view(ADDR(14), FLASH_I32, 1, kBatch + 2, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "cu_seqlens_k");
  f = varlen_args();
  f.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "seqused_k");
  f = varlen_args();
  f.max_seqlen_q = -1;
  EXPECT_INVALID(flash_attention_forward(&f), "max_seqlen_q = -1");
  f = varlen_args();
  f.max_seqlen_k = kTotalK + 1;
  EXPECT_INVALID(flash_attention_forward(&f), "max_seqlen_k = 71");
  f = varlen_args();
  f.status = view(ADDR(16), FLASH_I32, 1, 3, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "status");
  f.status.dtype = 7;
  EXPECT_INVALID(flash_attention_forward(&f), "status.dtype = 7 is not a flash_dtype");
  f = varlen_args();
  f.q = view(ADDR(1), FLASH_BF16, 4, 1, kTotalQ, kHeadsQ, kHeadDim); /* padded, not packed */
  EXPECT_INVALID(flash_attention_forward(&f), "q: expected a rank-3 packed view");
  f = varlen_args();
  f.lse = view(ADDR(5), FLASH_F32, 3, 1, kHeadsQ, kTotalQ, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "lse");
  /* Without cu_seqlens_q, cu_seqlens_k has no meaning; seqused_k is one
   * length per sequence of any call, [batch]. */
  f = forward_args();
  f.cu_seqlens_k = view(ADDR(14), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "cu_seqlens_k is set but cu_seqlens_q is not");
  f = forward_args();
  f.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "seqused_k.shape[0] (batch)");
}

/* A valid variable-length backward: varlen_args()'s call and its gradients
 * (f16, GQA), the packed LSE [heads_q, total_q]. */
static flash_backward_args varlen_backward_args(void) {
  flash_backward_args a;
  flash_backward_args_init(&a);
  a.q = view(ADDR(1), FLASH_F16, 3, kTotalQ, kHeadsQ, kHeadDim, 0);
  a.k = view(ADDR(2), FLASH_F16, 3, kTotalK, kHeadsKv, kHeadDim, 0);
  a.v = view(ADDR(3), FLASH_F16, 3, kTotalK, kHeadsKv, kHeadDim, 0);
  a.o = view(ADDR(4), FLASH_F16, 3, kTotalQ, kHeadsQ, kHeadDim, 0);
  a.lse = view(ADDR(5), FLASH_F32, 2, kHeadsQ, kTotalQ, 0, 0);
  a.dout = view(ADDR(6), FLASH_F16, 3, kTotalQ, kHeadsQ, kHeadDim, 0);
  a.dq = view(ADDR(7), FLASH_F16, 3, kTotalQ, kHeadsQ, kHeadDim, 0);
  a.dk = view(ADDR(8), FLASH_F16, 3, kTotalK, kHeadsKv, kHeadDim, 0);
  a.dv = view(ADDR(9), FLASH_F16, 3, kTotalK, kHeadsKv, kHeadDim, 0);
  a.cu_seqlens_q = view(ADDR(13), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  a.cu_seqlens_k = view(ADDR(14), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  a.max_seqlen_q = kMaxSeqQ;
  a.max_seqlen_k = kMaxSeqK;
  return a;
}

/* A caller compiled against versions 3 to 5 of the header: its backward
 * struct ends where cu_seqlens_q begins, so the batch is padded whatever
 * follows. */
static void test_version5_backward_structs(void) {
  flash_plan plan;
  flash_backward_args b = backward_args();
  b.struct_size = offsetof(flash_backward_args, cu_seqlens_q);
  /* Not part of a version-5 struct: values the library must not read. */
  b.cu_seqlens_q = view(ADDR(13), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  b.cu_seqlens_k.dtype = 9;
  b.cu_seqlens_k.rank = 1;
  b.max_seqlen_q = -7;
  b.sync_check = 0;
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  /* Its version-3 fields are still read. */
  b.softcap = -1.0f;
  EXPECT_INVALID(flash_plan_backward(&b, &plan), "softcap");
  /* A varlen call's struct at version 5's size is a dense call over rank-3 views. */
  b = varlen_backward_args();
  b.struct_size = offsetof(flash_backward_args, cu_seqlens_q);
  EXPECT_INVALID(flash_plan_backward(&b, &plan), "q: expected a rank-4 view, got rank 3");
  /* The same struct at its full size reads the varlen fields. */
  b = backward_args();
  b.cu_seqlens_k.dtype = 9;
  b.cu_seqlens_k.rank = 1;
  EXPECT_INVALID(flash_plan_backward(&b, &plan), "cu_seqlens_k.dtype = 9 is not a flash_dtype");
}

/* The backward of a variable-length batch (version 6): valid calls plan (or
 * stop at the device query), bad ones name the argument. */
static void test_varlen_backward_arguments(void) {
  flash_plan plan;
  flash_backward_args b = varlen_backward_args();
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  b.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch, 0, 0, 0);
  b.status = view(ADDR(16), FLASH_I32, 1, 4, 0, 0, 0);
  b.causal = 1;
  b.window_left = 5;
  b.sync_check = 0;
  b.deterministic = 1;
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  /* Score modifiers: ALiBi slopes per sequence, the sinks' gradient summed over the sequences. */
  b = varlen_backward_args();
  b.softcap = 30.0f;
  b.alibi_slopes = view(ADDR(10), FLASH_F32, 2, kBatch, kHeadsQ, 0, 0);
  b.sinks = view(ADDR(11), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  b.dsinks = view(ADDR(12), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  b.alibi_slopes = view(ADDR(10), FLASH_F32, 2, kBatch + 1, kHeadsQ, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "alibi_slopes");

  b = varlen_backward_args();
  b.cu_seqlens_k.rank = 0;
  EXPECT_INVALID(flash_attention_backward(&b), "cu_seqlens_k");
  b = varlen_backward_args();
  b.cu_seqlens_q.dtype = FLASH_F32;
  EXPECT_INVALID(flash_attention_backward(&b), "cu_seqlens_q");
  b = varlen_backward_args();
  b.cu_seqlens_k = view(ADDR(14), FLASH_I32, 1, kBatch + 2, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "cu_seqlens_k");
  b = varlen_backward_args();
  b.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "seqused_k");
  b = varlen_backward_args();
  b.max_seqlen_q = -1;
  EXPECT_INVALID(flash_attention_backward(&b), "max_seqlen_q");
  b = varlen_backward_args();
  b.max_seqlen_k = kTotalK + 1;
  EXPECT_INVALID(flash_attention_backward(&b), "max_seqlen_k");
  b = varlen_backward_args();
  b.status = view(ADDR(16), FLASH_I32, 1, 3, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "status");
  b = varlen_backward_args();
  b.lse = view(ADDR(5), FLASH_F32, 3, 1, kHeadsQ, kTotalQ, 0); /* the dense layout */
  EXPECT_INVALID(flash_attention_backward(&b), "lse");
  b = varlen_backward_args();
  b.lse = view(ADDR(5), FLASH_F32, 2, kTotalQ, kHeadsQ, 0, 0); /* transposed */
  EXPECT_INVALID(flash_attention_backward(&b), "lse");
  b = varlen_backward_args();
  b.dq = view(ADDR(7), FLASH_F16, 4, 1, kTotalQ, kHeadsQ, kHeadDim); /* a dense gradient */
  EXPECT_INVALID(flash_attention_backward(&b), "dq");
  b = varlen_backward_args();
  b.dk = view(ADDR(8), FLASH_F16, 3, kTotalK - 1, kHeadsKv, kHeadDim, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "dk");
  b = varlen_backward_args();
  b.dout = view(ADDR(6), FLASH_BF16, 3, kTotalQ, kHeadsQ, kHeadDim, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "dout");
  b = varlen_backward_args();
  b.status = view(ADDR(9), FLASH_I32, 1, 4, 0, 0, 0); /* on dv */
  EXPECT_INVALID(flash_attention_backward(&b), "status");
  /* Key metadata belongs to a variable-length call. */
  b = backward_args();
  b.seqused_k = view(ADDR(15), FLASH_I32, 1, kBatch, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "seqused_k");
  b = backward_args();
  b.cu_seqlens_k = view(ADDR(14), FLASH_I32, 1, kBatch + 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "cu_seqlens_k");
}

/* A caller compiled against version 2 of the header: its struct ends where
 * softcap begins. The library reads nothing past struct_size, and the fields
 * version 3 appended are off, whatever the bytes after the struct hold. */
static void test_version2_structs(void) {
  flash_plan plan;
  flash_forward_args f = forward_args();
  flash_backward_args b = backward_args();
  flash_decode_args d = decode_args();
  f.struct_size = offsetof(flash_forward_args, softcap);
  b.struct_size = offsetof(flash_backward_args, softcap);
  d.struct_size = offsetof(flash_decode_args, softcap);
  /* Not part of a version-2 struct: bad values the library must not read. */
  f.softcap = b.softcap = d.softcap = -1.0f;
  f.alibi_slopes.dtype = b.sinks.dtype = b.dsinks.dtype = d.sinks.dtype = 9;
  f.alibi_slopes.rank = b.sinks.rank = b.dsinks.rank = d.sinks.rank = 1;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  EXPECT_DECODE_VALID(flash_plan_decode(&d, &plan), &plan);
  /* Its version-2 fields are still read. */
  f.window_left = -5;
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "window_left = -5");
  b.q.dtype = 9;
  EXPECT_INVALID(flash_attention_backward(&b), "q.dtype = 9 is not a flash_dtype");
  d.num_splits = 300;
  EXPECT_INVALID(flash_attention_decode(&d), "num_splits = 300");
  /* The same struct at its full size reads the score fields. */
  f = forward_args();
  f.alibi_slopes.dtype = 9;
  f.alibi_slopes.rank = 1;
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "alibi_slopes.dtype = 9 is not a flash_dtype");
}

/* The score modifiers: valid values plan (or stop at the device query), bad
 * ones are rejected with a message naming the argument. The C++ API's
 * validation words the rest of the message; only the name is matched here. */
static void test_score_modifiers(void) {
  flash_plan plan;
  flash_forward_args f = forward_args();
  f.softcap = 30.0f;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f = forward_args();
  f.alibi_slopes = view(ADDR(10), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.alibi_slopes = view(ADDR(10), FLASH_F32, 2, kBatch, kHeadsQ, 0, 0);
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f = forward_args();
  f.sinks = view(ADDR(11), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.softcap = 50.0f;
  f.alibi_slopes = view(ADDR(10), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  f.causal = 1;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);

  const float bad_caps[] = {-1.0f, NAN, INFINITY, -INFINITY};
  for (int i = 0; i < 4; ++i) {
    f = forward_args();
    f.softcap = bad_caps[i];
    EXPECT_INVALID(flash_plan_forward(&f, &plan), "softcap");
    EXPECT_INVALID(flash_attention_forward(&f), "softcap");
  }
  f = forward_args();
  f.alibi_slopes = view(ADDR(10), FLASH_BF16, 1, kHeadsQ, 0, 0, 0); /* not f32 */
  EXPECT_INVALID(flash_attention_forward(&f), "alibi_slopes");
  f.alibi_slopes = view(ADDR(10), FLASH_F32, 1, kHeadsKv, 0, 0, 0); /* heads_kv, not heads_q */
  EXPECT_INVALID(flash_attention_forward(&f), "alibi_slopes");
  f.alibi_slopes = view(ADDR(10), FLASH_F32, 2, kBatch + 1, kHeadsQ, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "alibi_slopes");
  f.alibi_slopes = view(ADDR(10), FLASH_F32, 3, 1, kBatch, kHeadsQ, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "alibi_slopes");
  f.alibi_slopes = view(NULL, FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "alibi_slopes");
  f = forward_args();
  f.sinks = view(ADDR(11), FLASH_F16, 1, kHeadsQ, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "sinks");
  f.sinks = view(ADDR(11), FLASH_F32, 1, kHeadsQ + 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "sinks");
  f.sinks = view(ADDR(11), FLASH_F32, 2, 1, kHeadsQ, 0, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "sinks");
  f.sinks.dtype = 9;
  EXPECT_INVALID(flash_attention_forward(&f), "sinks.dtype = 9 is not a flash_dtype");

  flash_backward_args b = backward_args();
  b.softcap = 20.0f;
  b.alibi_slopes = view(ADDR(10), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  b.sinks = view(ADDR(11), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  b.dsinks = view(ADDR(12), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  b.dsinks.rank = 0; /* the sinks' gradient is optional */
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  b.softcap = NAN;
  EXPECT_INVALID(flash_attention_backward(&b), "softcap");
  b = backward_args();
  b.alibi_slopes = view(ADDR(10), FLASH_F32, 1, kHeadsQ - 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "alibi_slopes");
  b = backward_args();
  b.sinks = view(ADDR(11), FLASH_BF16, 1, kHeadsQ, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "sinks");
  b = backward_args();
  b.sinks = view(ADDR(11), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  b.dsinks = view(ADDR(12), FLASH_F32, 1, kHeadsQ + 2, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "dsinks");
  b.dsinks = view(ADDR(12), FLASH_F16, 1, kHeadsQ, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "dsinks");
  b.dsinks = view(ADDR(11), FLASH_F32, 1, kHeadsQ, 0, 0, 0); /* on top of the sinks it is the gradient of */
  EXPECT_INVALID(flash_attention_backward(&b), "dsinks");
  b = backward_args();
  b.dsinks = view(ADDR(12), FLASH_F32, 1, kHeadsQ, 0, 0, 0); /* a gradient of no sinks */
  EXPECT_INVALID(flash_attention_backward(&b), "dsinks");
  b.dsinks.dtype = -3;
  EXPECT_INVALID(flash_attention_backward(&b), "dsinks.dtype = -3 is not a flash_dtype");

  flash_decode_args d = decode_args();
  d.softcap = 30.0f;
  d.alibi_slopes = view(ADDR(10), FLASH_F32, 2, kBatch, kHeadsQ, 0, 0);
  d.sinks = view(ADDR(11), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  EXPECT_DECODE_VALID(flash_plan_decode(&d, &plan), &plan);
  d.softcap = -0.5f;
  EXPECT_INVALID(flash_attention_decode(&d), "softcap");
  d = decode_args();
  d.alibi_slopes = view(ADDR(10), FLASH_F32, 2, kBatch, kHeadsKv, 0, 0);
  EXPECT_INVALID(flash_attention_decode(&d), "alibi_slopes");
  d = decode_args();
  d.sinks = view(ADDR(11), FLASH_I32, 1, kHeadsQ, 0, 0, 0);
  EXPECT_INVALID(flash_attention_decode(&d), "sinks");
}

static void test_valid_calls_plan(void) {
  flash_plan plan;
  flash_forward_args f = forward_args();
  flash_backward_args b = backward_args();
  flash_decode_args d = decode_args();
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.causal = 1;
  f.has_softmax_scale = 1;
  f.softmax_scale = 0.5f;
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.window_left = 32; /* a causal sliding window */
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  f.window_right = 4; /* past the diagonal: causal says 0 */
  EXPECT_INVALID(flash_plan_forward(&f, &plan), "window_right = 4");
  f.window_right = -1;
  b.window_left = -3;
  EXPECT_INVALID(flash_plan_backward(&b, &plan), "window_left = -3");
  b.window_left = -1;
  d.window_right = -2;
  EXPECT_INVALID(flash_plan_decode(&d, &plan), "window_right = -2");
  d.window_right = -1;
  f.lse.rank = 0; /* absent */
  EXPECT_VALID(flash_plan_forward(&f, &plan), &plan);
  EXPECT_BACKWARD_VALID(flash_plan_backward(&b, &plan), &plan);
  EXPECT_DECODE_VALID(flash_plan_decode(&d, &plan), &plan);
  d.page_table.rank = 0; /* a contiguous cache [batch, capacity, ...] */
  d.k_cache = view(ADDR(2), FLASH_BF16, 4, kBatch, 64, kHeadsKv, kHeadDim);
  d.v_cache = view(ADDR(3), FLASH_BF16, 4, kBatch, 64, kHeadsKv, kHeadDim);
  EXPECT_DECODE_VALID(flash_plan_decode(&d, &plan), &plan);
}

static void test_tensor_fields(void) {
  flash_forward_args f = forward_args();
  f.q.dtype = 9;
  EXPECT_INVALID(flash_attention_forward(&f), "q.dtype = 9 is not a flash_dtype");
  f = forward_args();
  f.k.dtype = -1;
  EXPECT_INVALID(flash_attention_forward(&f), "k.dtype = -1 is not a flash_dtype");
  f = forward_args();
  f.v.rank = 5;
  EXPECT_INVALID(flash_attention_forward(&f), "v.rank = 5; expected 1 to 4");
  f = forward_args();
  f.o.rank = -2;
  EXPECT_INVALID(flash_attention_forward(&f), "o.rank = -2");
  f = forward_args();
  f.q = view(ADDR(1), FLASH_BF16, 3, kBatch, kSeqQ, kHeadsQ * kHeadDim, 0);
  EXPECT_INVALID(flash_attention_forward(&f), "q: expected a rank-4 view, got rank 3");
  f = forward_args();
  f.k.rank = 0; /* a required tensor left out */
  EXPECT_INVALID(flash_attention_forward(&f), "k: expected a rank-4 view, got rank 0");
  f = forward_args();
  f.q.data = NULL;
  EXPECT_INVALID(flash_attention_forward(&f), "q.data is null");
  f = forward_args();
  f.q.shape[1] = -1;
  EXPECT_INVALID(flash_attention_forward(&f), "q.shape[1] = -1");
}

static void test_forward_arguments(void) {
  flash_forward_args f = forward_args();
  f.k.dtype = FLASH_F16;
  EXPECT_INVALID(flash_attention_forward(&f), "k.dtype is f16; expected bf16");
  f = forward_args();
  f.k.shape[3] = 2 * kHeadDim;
  f.v.shape[3] = 2 * kHeadDim;
  char head_dim_message[64];
  snprintf(head_dim_message, sizeof head_dim_message, "k.shape[3] (head_dim) = %d; expected %d", 2 * kHeadDim,
           (int)kHeadDim);
  EXPECT_INVALID(flash_attention_forward(&f), head_dim_message);
  f = forward_args();
  f.v.shape[1] = kSeqK + 1;
  EXPECT_INVALID(flash_attention_forward(&f), "v.shape[1] (seqlen_k)");
  f = forward_args();
  f.k.shape[2] = 3;
  f.v.shape[2] = 3;
  EXPECT_INVALID(flash_attention_forward(&f), "is not a multiple of k.shape[2] (heads_kv) = 3");
  f = forward_args();
  f.o.shape[0] = 1;
  EXPECT_INVALID(flash_attention_forward(&f), "o.shape[0] (batch) = 1; expected 2");
  f = forward_args();
  f.q.strides[3] = 2;
  EXPECT_INVALID(flash_attention_forward(&f), "the last dimension must be contiguous");
  f = forward_args();
  f.lse.dtype = FLASH_BF16;
  EXPECT_INVALID(flash_attention_forward(&f), "lse.dtype is bf16; expected f32");
  f = forward_args();
  f.lse.shape[2] = kSeqK;
  EXPECT_INVALID(flash_attention_forward(&f), "lse.shape[2] (seqlen_q)");

  const float bad_scales[] = {0.0f, -1.0f, NAN, INFINITY};
  for (int i = 0; i < 4; ++i) {
    f = forward_args();
    f.has_softmax_scale = 1;
    f.softmax_scale = bad_scales[i];
    EXPECT_INVALID(flash_attention_forward(&f), "softmax_scale");
  }
  f = forward_args();
  f.kernel = "no_such_variant";
  EXPECT_INVALID(flash_attention_forward(&f), "unknown variant 'no_such_variant'");
  f = forward_args(); /* no variant has head_dim 600 */
  f.q = view(ADDR(1), FLASH_BF16, 4, kBatch, kSeqQ, kHeadsQ, 600);
  f.k = view(ADDR(2), FLASH_BF16, 4, kBatch, kSeqK, kHeadsKv, 600);
  f.v = view(ADDR(3), FLASH_BF16, 4, kBatch, kSeqK, kHeadsKv, 600);
  f.o = view(ADDR(4), FLASH_BF16, 4, kBatch, kSeqQ, kHeadsQ, 600);
  EXPECT_INVALID(flash_attention_forward(&f), "head_dim 600 is not supported");
}

static void test_aliasing(void) {
  flash_forward_args f = forward_args();
  f.o.data = f.q.data;
  EXPECT_INVALID(flash_attention_forward(&f), "o overlaps q");
  f = forward_args();
  f.lse.data = (char*)f.o.data + 64;
  EXPECT_INVALID(flash_attention_forward(&f), "lse overlaps o");
  f = forward_args();
  f.o.strides[1] = 0; /* every row of o on the same memory */
  EXPECT_INVALID(flash_attention_forward(&f), "o: its strides make elements overlap");

  flash_backward_args b = backward_args();
  b.dq.data = b.dout.data;
  EXPECT_INVALID(flash_attention_backward(&b), "dq overlaps dout");
  b = backward_args();
  b.dv.data = b.dk.data;
  EXPECT_INVALID(flash_attention_backward(&b), "dv overlaps dk");

  flash_decode_args d = decode_args();
  d.o.data = d.q.data;
  EXPECT_INVALID(flash_attention_decode(&d), "o overlaps q");
  d = decode_args();
  d.k_new.data = d.k_cache.data; /* the append writes k_cache */
  EXPECT_INVALID(flash_attention_decode(&d), "k_cache overlaps k_new");
}

static void test_backward_arguments(void) {
  flash_backward_args b = backward_args();
  b.lse.rank = 0;
  EXPECT_INVALID(flash_attention_backward(&b), "lse: expected a rank-3 view, got rank 0");
  b = backward_args();
  b.dk.dtype = FLASH_BF16;
  EXPECT_INVALID(flash_attention_backward(&b), "dk.dtype is bf16; expected f16");
  b = backward_args();
  b.dout.shape[1] = kSeqK;
  EXPECT_INVALID(flash_attention_backward(&b), "dout.shape[1] (seqlen_q)");
  b = backward_args();
  b.dv.shape[2] = kHeadsQ;
  EXPECT_INVALID(flash_attention_backward(&b), "dv.shape[2] (heads_kv)");
}

static void test_decode_arguments(void) {
  flash_decode_args d = decode_args();
  d.num_splits = 257;
  EXPECT_INVALID(flash_attention_decode(&d), "num_splits = 257");
  d = decode_args();
  d.v_new.rank = 0;
  EXPECT_INVALID(flash_attention_decode(&d), "k_new is set but v_new is not");
  d = decode_args();
  d.cache_seqlens.dtype = FLASH_F32;
  EXPECT_INVALID(flash_attention_decode(&d), "cache_seqlens.dtype is f32; expected i32");
  d = decode_args();
  d.cache_seqlens.shape[0] = 3;
  EXPECT_INVALID(flash_attention_decode(&d), "cache_seqlens.shape[0] (batch) = 3");
  d = decode_args();
  d.page_table.dtype = FLASH_F16;
  EXPECT_INVALID(flash_attention_decode(&d), "page_table.dtype is f16; expected i32");
  d = decode_args();
  d.k_cache.shape[1] = d.v_cache.shape[1] = 12;
  EXPECT_INVALID(flash_attention_decode(&d), "(page_size) = 12; expected a power of two");
  d = decode_args();
  d.status = view(ADDR(9), FLASH_I32, 1, 3, 0, 0, 0);
  EXPECT_INVALID(flash_attention_decode(&d), "status.shape[0] (size) = 3; expected 4");
}

static void test_describe_decode_status(void) {
  const int32_t ok[4] = {0, 0, -1, 0};
  const int32_t bad_page[4] = {4, 1, 0, 1000};
  char buf[128];
  char tiny[8];
  CHECK(flash_describe_decode_status(ok, buf, sizeof buf) == 0 && buf[0] == '\0');
  const size_t n = flash_describe_decode_status(bad_page, buf, sizeof buf);
  CHECK(n == strlen(buf));
  CHECK(strstr(buf, "page_table[1][0] = 1000 is not a page of k_cache") != NULL);
  CHECK(flash_describe_decode_status(bad_page, tiny, sizeof tiny) == n && strlen(tiny) == sizeof tiny - 1);
  CHECK(flash_describe_decode_status(NULL, buf, sizeof buf) == 0 && buf[0] == '\0');
  CHECK(strstr(flash_last_error(), "status is null") != NULL);
}

/* The message is per thread: a failure on another thread leaves this
 * thread's message alone. */
static void* fail_on_other_thread(void* unused) {
  (void)unused;
  flash_attention_forward(NULL);
  return NULL;
}

static void test_message_is_per_thread(void) {
  flash_forward_args f = forward_args();
  f.q.dtype = 7;
  flash_attention_forward(&f);
  pthread_t thread;
  CHECK(pthread_create(&thread, NULL, fail_on_other_thread, NULL) == 0);
  CHECK(pthread_join(thread, NULL) == 0);
  CHECK(strstr(flash_last_error(), "q.dtype = 7") != NULL);
}

int main(void) {
  probe_variants();
  test_version_and_message();
  test_score_defaults();
  test_null_and_struct_size();
  test_version2_structs();
  test_varlen_defaults();
  test_version3_structs();
  test_version4_structs();
  test_paged_arguments();
  test_varlen_arguments();
  test_version5_backward_structs();
  test_varlen_backward_arguments();
  test_score_modifiers();
  test_valid_calls_plan();
  test_tensor_fields();
  test_forward_arguments();
  test_aliasing();
  test_backward_arguments();
  test_decode_arguments();
  test_describe_decode_status();
  test_message_is_per_thread();
  return c_test_summary("test_c_api");
}
