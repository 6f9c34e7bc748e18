/* The C ABI on a GPU (ctest c_api_gpu, label gpu): a forward in f32 on a
 * stream of its own against a plain fp64 attention, the LSE included (and
 * with the score modifiers: softcap, ALiBi slopes, sinks), decode's
 * device-side metadata check reported through sync_check and through the
 * status words, and the backward of a variable-length batch (version 6)
 * against the dense backward of each sequence alone, with its metadata
 * check. Without a GPU it prints why and ctest reports it skipped. */
#include <cuda_runtime_api.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_api_test.h"

enum { kBatch = 2, kSeqQ = 33, kSeqK = 70, kHeadsQ = 4, kHeadsKv = 2, kHeadDim = 64 };

/* The score modifiers of the forward with scores: a cap that bends these
 * inputs' scores (~0.1 in size), ALiBi's 2^(-8 (h + 1) / heads) slopes, and
 * sinks on both sides of the scores. */
static const float kSoftcap = 0.5f;
static const float kSlopes[kHeadsQ] = {0.25f, 0.0625f, 0.015625f, 0.00390625f};
static const float kSinks[kHeadsQ] = {-2.0f, 0.0f, 1.0f, 3.0f};

static void* device_copy(const void* host, size_t bytes) {
  void* d = NULL;
  if (cudaMalloc(&d, bytes) != cudaSuccess) {
    fprintf(stderr, "cudaMalloc(%zu) failed\n", bytes);
    exit(1);
  }
  if (host != NULL) cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice);
  else cudaMemset(d, 0, bytes);
  return d;
}

/* o and lse of one (batch, query row, query head) in fp64, causal bottom-right aligned;
 * with scores, capped, ALiBi-biased and with the head's sink in the denominator. */
static void reference_row(const float* q, const float* k, const float* v, int b, int i, int h, int causal, int scores,
                          double* o, double* lse) {
  const int hk = h / (kHeadsQ / kHeadsKv);
  const double scale = 1.0 / sqrt((double)kHeadDim);
  double s[kSeqK];
  double row_max = -INFINITY, sum = 0.0;
  const float* qi = q + (((size_t)b * kSeqQ + i) * kHeadsQ + h) * kHeadDim;
  for (int j = 0; j < kSeqK; ++j) {
    s[j] = -INFINITY;
    if (causal && j > i + kSeqK - kSeqQ) continue;
    const float* kj = k + (((size_t)b * kSeqK + j) * kHeadsKv + hk) * kHeadDim;
    double dot = 0.0;
    for (int d = 0; d < kHeadDim; ++d) dot += (double)qi[d] * kj[d];
    s[j] = dot * scale;
    if (scores) s[j] = kSoftcap * tanh(s[j] / kSoftcap) - kSlopes[h] * fabs((double)(i + kSeqK - kSeqQ - j));
    if (s[j] > row_max) row_max = s[j];
  }
  if (scores && kSinks[h] > row_max) row_max = kSinks[h];
  if (scores) sum = exp(kSinks[h] - row_max);
  for (int d = 0; d < kHeadDim; ++d) o[d] = 0.0;
  for (int j = 0; j < kSeqK; ++j) {
    if (s[j] == -INFINITY) continue;
    const double p = exp(s[j] - row_max);
    const float* vj = v + (((size_t)b * kSeqK + j) * kHeadsKv + hk) * kHeadDim;
    sum += p;
    for (int d = 0; d < kHeadDim; ++d) o[d] += p * vj[d];
  }
  for (int d = 0; d < kHeadDim; ++d) o[d] /= sum;
  *lse = row_max + log(sum);
}

static void test_forward_f32(int causal, int scores) {
  const size_t nq = (size_t)kBatch * kSeqQ * kHeadsQ * kHeadDim, nk = (size_t)kBatch * kSeqK * kHeadsKv * kHeadDim;
  const size_t nl = (size_t)kBatch * kHeadsQ * kSeqQ;
  float* q = malloc(nq * sizeof(float));
  float* k = malloc(nk * sizeof(float));
  float* v = malloc(nk * sizeof(float));
  float* o = malloc(nq * sizeof(float));
  float* lse = malloc(nl * sizeof(float));
  srand(7);
  for (size_t i = 0; i < nq; ++i) q[i] = (float)rand() / RAND_MAX - 0.5f;
  for (size_t i = 0; i < nk; ++i) k[i] = (float)rand() / RAND_MAX - 0.5f;
  for (size_t i = 0; i < nk; ++i) v[i] = (float)rand() / RAND_MAX - 0.5f;

  cudaStream_t stream;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  flash_forward_args a;
  flash_forward_args_init(&a);
  a.q = view(device_copy(q, nq * 4), FLASH_F32, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.k = view(device_copy(k, nk * 4), FLASH_F32, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  a.v = view(device_copy(v, nk * 4), FLASH_F32, 4, kBatch, kSeqK, kHeadsKv, kHeadDim);
  a.o = view(device_copy(NULL, nq * 4), FLASH_F32, 4, kBatch, kSeqQ, kHeadsQ, kHeadDim);
  a.lse = view(device_copy(NULL, nl * 4), FLASH_F32, 3, kBatch, kHeadsQ, kSeqQ, 0);
  a.causal = causal;
  a.stream = stream;
  if (scores) {
    a.softcap = kSoftcap;
    a.alibi_slopes = view(device_copy(kSlopes, sizeof kSlopes), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
    a.sinks = view(device_copy(kSinks, sizeof kSinks), FLASH_F32, 1, kHeadsQ, 0, 0, 0);
  }
  flash_plan plan;
  CHECK(flash_plan_forward(&a, &plan) == FLASH_OK);
  const int32_t status = flash_attention_forward(&a);
  CHECK(status == FLASH_OK);
  if (status != FLASH_OK) fprintf(stderr, "forward: %s\n", flash_last_error());
  CHECK(cudaMemcpyAsync(o, a.o.data, nq * 4, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  CHECK(cudaMemcpyAsync(lse, a.lse.data, nl * 4, cudaMemcpyDeviceToHost, stream) == cudaSuccess);
  CHECK(cudaStreamSynchronize(stream) == cudaSuccess);

  double max_err = 0.0, max_lse_err = 0.0;
  double ref[kHeadDim], ref_lse = 0.0;
  for (int b = 0; b < kBatch; ++b)
    for (int i = 0; i < kSeqQ; ++i)
      for (int h = 0; h < kHeadsQ; ++h) {
        reference_row(q, k, v, b, i, h, causal, scores, ref, &ref_lse);
        const float* oi = o + (((size_t)b * kSeqQ + i) * kHeadsQ + h) * kHeadDim;
        for (int d = 0; d < kHeadDim; ++d) max_err = fmax(max_err, fabs(oi[d] - ref[d]));
        max_lse_err = fmax(max_lse_err, fabs(lse[((size_t)b * kHeadsQ + h) * kSeqQ + i] - ref_lse));
      }
  printf("forward f32 %s%s (%s): max |o - ref| = %.3g, max |lse - ref| = %.3g\n", causal ? "causal" : "full",
         scores ? " + softcap, alibi, sinks" : "", plan.kernel, max_err, max_lse_err);
  CHECK(max_err < 1e-4);
  CHECK(max_lse_err < 1e-4);
  cudaFree(a.q.data), cudaFree(a.k.data), cudaFree(a.v.data), cudaFree(a.o.data), cudaFree(a.lse.data);
  if (scores) cudaFree(a.alibi_slopes.data), cudaFree(a.sinks.data);
  cudaStreamDestroy(stream);
  free(q), free(k), free(v), free(o), free(lse);
}

/* A length past the cache's end: sync_check reports it as an invalid
 * argument naming the entry; without sync_check the status words do. */
static void test_decode_metadata(void) {
  enum { kCapacity = 64 };
  const int32_t lens[kBatch] = {10, kCapacity + 5};
  flash_decode_args d;
  flash_decode_args_init(&d);
  d.q = view(device_copy(NULL, (size_t)kBatch * kHeadsQ * kHeadDim * 2), FLASH_BF16, 4, kBatch, 1, kHeadsQ, kHeadDim);
  d.k_cache = view(device_copy(NULL, (size_t)kBatch * kCapacity * kHeadsKv * kHeadDim * 2), FLASH_BF16, 4, kBatch,
                   kCapacity, kHeadsKv, kHeadDim);
  d.v_cache = view(device_copy(NULL, (size_t)kBatch * kCapacity * kHeadsKv * kHeadDim * 2), FLASH_BF16, 4, kBatch,
                   kCapacity, kHeadsKv, kHeadDim);
  d.cache_seqlens = view(device_copy(lens, sizeof lens), FLASH_I32, 1, kBatch, 0, 0, 0);
  d.o = view(device_copy(NULL, (size_t)kBatch * kHeadsQ * kHeadDim * 2), FLASH_BF16, 4, kBatch, 1, kHeadsQ, kHeadDim);
  EXPECT_INVALID(flash_attention_decode(&d), "cache_seqlens[1] = 69 exceeds the cache capacity");

  int32_t words[4] = {0, 0, 0, 0};
  char message[256];
  d.sync_check = 0;
  d.status = view(device_copy(NULL, sizeof words), FLASH_I32, 1, 4, 0, 0, 0);
  CHECK(flash_attention_decode(&d) == FLASH_OK);
  CHECK(cudaMemcpy(words, d.status.data, sizeof words, cudaMemcpyDeviceToHost) == cudaSuccess);
  flash_describe_decode_status(words, message, sizeof message);
  printf("decode status words: {%d, %d, %d, %d}: %s\n", words[0], words[1], words[2], words[3], message);
  CHECK(words[0] != 0 && strstr(message, "cache_seqlens[1] = 69") != NULL);
  cudaFree(d.q.data), cudaFree(d.k_cache.data), cudaFree(d.v_cache.data), cudaFree(d.cache_seqlens.data);
  cudaFree(d.o.data), cudaFree(d.status.data);
}

/* bf16 <-> float, round to nearest even (no NaN inputs here). */
static uint16_t to_bf16(float x) {
  uint32_t u;
  memcpy(&u, &x, sizeof u);
  return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float from_bf16(uint16_t h) {
  const uint32_t u = (uint32_t)h << 16;
  float x;
  memcpy(&x, &u, sizeof x);
  return x;
}

/* Two packed sequences for the variable-length backward: queries 33 and 17,
 * keys 70 and 20, of which the first uses 60 (seqused_k). */
enum { kVarBatch = 2, kVarTotalQ = 50, kVarTotalK = 90 };
static const int32_t kCuQ[kVarBatch + 1] = {0, 33, 50};
static const int32_t kCuK[kVarBatch + 1] = {0, 70, 90};
static const int32_t kUsedK[kVarBatch] = {60, 20};

/* A packed [rows, heads, kHeadDim] bf16 view at row `row0` of `base`, rank 3,
 * or as the dense [1, rows, heads, kHeadDim] view of one sequence. */
static flash_tensor packed_rows(uint16_t* base, int64_t row0, int64_t rows, int64_t heads, int dense) {
  void* data = base + row0 * heads * kHeadDim;
  return dense ? view(data, FLASH_BF16, 4, 1, rows, heads, kHeadDim) : view(data, FLASH_BF16, 3, rows, heads, kHeadDim, 0);
}

/* The varlen forward, then its backward through the C ABI; each sequence's
 * gradients against the dense backward of that sequence alone (its rows of
 * the same packed buffers, its seqused_k keys, its slice of the packed LSE),
 * to bf16 rounding of sums taken in another order; dk = dv = 0 exactly on
 * the keys past seqused_k. Causal, GQA, deterministic and not. */
static void test_varlen_backward(int deterministic) {
  const size_t nq = (size_t)kVarTotalQ * kHeadsQ * kHeadDim, nk = (size_t)kVarTotalK * kHeadsKv * kHeadDim;
  uint16_t *hq = malloc(nq * 2), *hk = malloc(nk * 2), *hv = malloc(nk * 2), *hdo = malloc(nq * 2);
  uint16_t *g_var[3] = {malloc(nq * 2), malloc(nk * 2), malloc(nk * 2)};
  uint16_t *g_dense[3] = {malloc(nq * 2), malloc(nk * 2), malloc(nk * 2)};
  srand(11);
  for (size_t i = 0; i < nq; ++i) hq[i] = to_bf16((float)rand() / RAND_MAX - 0.5f);
  for (size_t i = 0; i < nq; ++i) hdo[i] = to_bf16((float)rand() / RAND_MAX - 0.5f);
  for (size_t i = 0; i < nk; ++i) hk[i] = to_bf16((float)rand() / RAND_MAX - 0.5f);
  for (size_t i = 0; i < nk; ++i) hv[i] = to_bf16((float)rand() / RAND_MAX - 0.5f);
  uint16_t *q = device_copy(hq, nq * 2), *k = device_copy(hk, nk * 2), *v = device_copy(hv, nk * 2);
  uint16_t *dout = device_copy(hdo, nq * 2), *o = device_copy(NULL, nq * 2);
  float* lse = device_copy(NULL, (size_t)kHeadsQ * kVarTotalQ * 4);
  uint16_t* grads[2][3];
  for (int r = 0; r < 2; ++r) {
    grads[r][0] = device_copy(NULL, nq * 2);
    grads[r][1] = device_copy(NULL, nk * 2);
    grads[r][2] = device_copy(NULL, nk * 2);
    for (int g = 0; g < 3; ++g) cudaMemset(grads[r][g], 0xff, g == 0 ? nq * 2 : nk * 2); /* NaN: unwritten shows */
  }
  int32_t *cu_q = device_copy(kCuQ, sizeof kCuQ), *cu_k = device_copy(kCuK, sizeof kCuK);
  int32_t* used_k = device_copy(kUsedK, sizeof kUsedK);

  flash_forward_args f;
  flash_forward_args_init(&f);
  f.q = packed_rows(q, 0, kVarTotalQ, kHeadsQ, 0);
  f.k = packed_rows(k, 0, kVarTotalK, kHeadsKv, 0);
  f.v = packed_rows(v, 0, kVarTotalK, kHeadsKv, 0);
  f.o = packed_rows(o, 0, kVarTotalQ, kHeadsQ, 0);
  f.lse = view(lse, FLASH_F32, 2, kHeadsQ, kVarTotalQ, 0, 0);
  f.cu_seqlens_q = view(cu_q, FLASH_I32, 1, kVarBatch + 1, 0, 0, 0);
  f.cu_seqlens_k = view(cu_k, FLASH_I32, 1, kVarBatch + 1, 0, 0, 0);
  f.seqused_k = view(used_k, FLASH_I32, 1, kVarBatch, 0, 0, 0);
  f.max_seqlen_q = 33;
  f.max_seqlen_k = 70;
  f.causal = 1;
  CHECK(flash_attention_forward(&f) == FLASH_OK);

  flash_backward_args b;
  flash_backward_args_init(&b);
  b.q = f.q, b.k = f.k, b.v = f.v, b.o = f.o, b.lse = f.lse;
  b.dout = packed_rows(dout, 0, kVarTotalQ, kHeadsQ, 0);
  b.dq = packed_rows(grads[0][0], 0, kVarTotalQ, kHeadsQ, 0);
  b.dk = packed_rows(grads[0][1], 0, kVarTotalK, kHeadsKv, 0);
  b.dv = packed_rows(grads[0][2], 0, kVarTotalK, kHeadsKv, 0);
  b.cu_seqlens_q = f.cu_seqlens_q, b.cu_seqlens_k = f.cu_seqlens_k, b.seqused_k = f.seqused_k;
  b.max_seqlen_q = f.max_seqlen_q, b.max_seqlen_k = f.max_seqlen_k;
  b.causal = 1;
  b.deterministic = deterministic;
  flash_plan plan;
  CHECK(flash_plan_backward(&b, &plan) == FLASH_OK);
  const int32_t status = flash_attention_backward(&b);
  CHECK(status == FLASH_OK);
  if (status != FLASH_OK) fprintf(stderr, "varlen backward: %s\n", flash_last_error());

  for (int s = 0; s < kVarBatch; ++s) { /* the dense backward of sequence s alone */
    const int q0 = kCuQ[s], sq = kCuQ[s + 1] - kCuQ[s], k0 = kCuK[s], sk = kUsedK[s];
    flash_backward_args d;
    flash_backward_args_init(&d);
    d.q = packed_rows(q, q0, sq, kHeadsQ, 1);
    d.k = packed_rows(k, k0, sk, kHeadsKv, 1);
    d.v = packed_rows(v, k0, sk, kHeadsKv, 1);
    d.o = packed_rows(o, q0, sq, kHeadsQ, 1);
    d.lse = view(lse + q0, FLASH_F32, 3, 1, kHeadsQ, sq, 0);
    d.lse.strides[1] = kVarTotalQ;
    d.dout = packed_rows(dout, q0, sq, kHeadsQ, 1);
    d.dq = packed_rows(grads[1][0], q0, sq, kHeadsQ, 1);
    d.dk = packed_rows(grads[1][1], k0, sk, kHeadsKv, 1);
    d.dv = packed_rows(grads[1][2], k0, sk, kHeadsKv, 1);
    d.causal = 1;
    d.deterministic = 1;
    const int32_t dense_status = flash_attention_backward(&d);
    CHECK(dense_status == FLASH_OK);
    if (dense_status != FLASH_OK) fprintf(stderr, "dense backward of sequence %d: %s\n", s, flash_last_error());
  }
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  for (int g = 0; g < 3; ++g) {
    cudaMemcpy(g_var[g], grads[0][g], g == 0 ? nq * 2 : nk * 2, cudaMemcpyDeviceToHost);
    cudaMemcpy(g_dense[g], grads[1][g], g == 0 ? nq * 2 : nk * 2, cudaMemcpyDeviceToHost);
  }
  static const char* kNames[3] = {"dq", "dk", "dv"};
  for (int g = 0; g < 3; ++g) {
    const int heads = g == 0 ? kHeadsQ : kHeadsKv;
    const int total = g == 0 ? kVarTotalQ : kVarTotalK;
    double max_err = 0.0, max_ref = 0.0;
    int past_used_nonzero = 0, unwritten = 0;
    for (int row = 0; row < total; ++row) {
      const int s = g == 0 ? (row >= kCuQ[1]) : (row >= kCuK[1]);
      const int past_used = g > 0 && row - kCuK[s] >= kUsedK[s];
      for (int e = 0; e < heads * kHeadDim; ++e) {
        const size_t i = (size_t)row * heads * kHeadDim + e;
        const float got = from_bf16(g_var[g][i]);
        if (got != got) ++unwritten;
        if (past_used) {
          past_used_nonzero += got != 0.0f;
          continue;
        }
        const float want = from_bf16(g_dense[g][i]);
        max_err = fmax(max_err, fabs((double)got - want));
        max_ref = fmax(max_ref, fabs((double)want));
      }
    }
    printf("varlen backward %s (%s%s): max |varlen - dense per sequence| = %.3g (max |dense| %.3g)\n", kNames[g],
           plan.kernel, deterministic ? ", deterministic" : "", max_err, max_ref);
    CHECK(unwritten == 0);
    CHECK(past_used_nonzero == 0);
    CHECK(max_ref > 0.0 && max_err <= 0.02 * max_ref); /* a few bf16 roundings of the same sums */
  }

  /* Bad metadata (sequence 1's keys end before they start): sync_check names
   * the entry; without it the status words say so. Nothing is written. */
  const int32_t bad_cu_k[kVarBatch + 1] = {0, 70, 60};
  int32_t* bad = device_copy(bad_cu_k, sizeof bad_cu_k);
  for (int g = 0; g < 3; ++g) cudaMemset(grads[0][g], 0xff, g == 0 ? nq * 2 : nk * 2);
  b.cu_seqlens_k = view(bad, FLASH_I32, 1, kVarBatch + 1, 0, 0, 0);
  EXPECT_INVALID(flash_attention_backward(&b), "cu_seqlens_k[2] = 60 is less than the entry before it");
  int32_t words[4] = {0, 0, 0, 0};
  b.sync_check = 0;
  b.status = view(device_copy(NULL, sizeof words), FLASH_I32, 1, 4, 0, 0, 0);
  CHECK(flash_attention_backward(&b) == FLASH_OK);
  CHECK(cudaMemcpy(words, b.status.data, sizeof words, cudaMemcpyDeviceToHost) == cudaSuccess);
  printf("varlen backward status words: {%d, %d, %d, %d}\n", words[0], words[1], words[2], words[3]);
  CHECK(words[0] != 0 && words[1] == 1 && words[2] == 2 && words[3] == 60);
  int written = 0;
  for (int g = 0; g < 3; ++g) {
    cudaMemcpy(g_var[g], grads[0][g], g == 0 ? nq * 2 : nk * 2, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < (g == 0 ? nq : nk); ++i) written += g_var[g][i] != 0xffff;
  }
  CHECK(written == 0);

  cudaFree(q), cudaFree(k), cudaFree(v), cudaFree(dout), cudaFree(o), cudaFree(lse), cudaFree(cu_q), cudaFree(cu_k);
  cudaFree(used_k), cudaFree(bad), cudaFree(b.status.data);
  for (int r = 0; r < 2; ++r)
    for (int g = 0; g < 3; ++g) cudaFree(grads[r][g]);
  for (int g = 0; g < 3; ++g) free(g_var[g]), free(g_dense[g]);
  free(hq), free(hk), free(hv), free(hdo);
}

int main(void) {
  /* A plan of a valid call tells whether there is a device to run on. */
  flash_forward_args probe;
  flash_plan plan;
  flash_forward_args_init(&probe);
  probe.q = view((void*)(uintptr_t)0x10000000, FLASH_F32, 4, 1, 1, 1, kHeadDim);
  probe.k = view((void*)(uintptr_t)0x20000000, FLASH_F32, 4, 1, 1, 1, kHeadDim);
  probe.v = view((void*)(uintptr_t)0x30000000, FLASH_F32, 4, 1, 1, 1, kHeadDim);
  probe.o = view((void*)(uintptr_t)0x40000000, FLASH_F32, 4, 1, 1, 1, kHeadDim);
  if (flash_plan_forward(&probe, &plan) == FLASH_ERROR_NO_DEVICE) {
    printf("no CUDA device: %s\n", flash_last_error());
    return 0;
  }
  test_forward_f32(0, 0);
  test_forward_f32(1, 0);
  test_forward_f32(0, 1);
  test_forward_f32(1, 1);
  test_decode_metadata();
  test_varlen_backward(0);
  test_varlen_backward(1);
  return c_test_summary("test_c_api_gpu");
}
