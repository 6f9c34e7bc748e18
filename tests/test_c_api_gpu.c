/* The C ABI on a GPU (ctest c_api_gpu, label gpu): a forward in f32 on a
 * stream of its own against a plain fp64 attention, the LSE included (and
 * with the score modifiers: softcap, ALiBi slopes, sinks), and
 * decode's device-side metadata check reported through sync_check and
 * through the status words. Without a GPU it prints why and ctest reports
 * it skipped. */
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
  return c_test_summary("test_c_api_gpu");
}
