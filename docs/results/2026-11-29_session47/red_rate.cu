// Session 47: the rate of fp32 reductions into L2, per SM and in all, for bwd_04's dQ writer.
// One CTA per SM (grid = SMs x ctas), each adding `bytes` of fp32 from shared memory to its own
// global region (or all CTAs to one region: --shared-target) `reps` times, by
//   bulk:  one thread, cp.reduce.async.bulk (.add.f32), waiting for each op's read (writer-like)
//   bulk2: the same, two ops in flight
//   store: one thread, cp.async.bulk (a plain copy), for comparison
//   red:   256 threads, red.global.add.v4.f32 (the non-deterministic path)
// Prints bytes per SM cycle and TB/s in all. (Session 47 call 9 added the one-region cases.)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <cuda_runtime.h>

__global__ void k_bulk(float* g, int bytes, int reps, int inflight, int plain, int shared_target, unsigned long long* cyc) {
  extern __shared__ __align__(128) float s[];
  for (int i = threadIdx.x; i < bytes / 4; i += blockDim.x) s[i] = 1.0f;
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  float* dst = g + (shared_target ? 0 : (size_t)blockIdx.x * (bytes / 4));
  unsigned sa = (unsigned)__cvta_generic_to_shared(s);
  unsigned long long t0 = clock64();
  if (threadIdx.x == 0) {
    for (int r = 0; r < reps; ++r) {
      if (plain)
        asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n" ::"l"(dst), "r"(sa), "r"(bytes) : "memory");
      else
        asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(sa), "r"(bytes) : "memory");
      asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
      if (inflight == 1) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
      else asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
    }
    asm volatile("cp.async.bulk.wait_group 0;\n" ::: "memory");
  }
  __syncthreads();
  if (threadIdx.x == 0) cyc[blockIdx.x] = clock64() - t0;
}

__global__ void k_red(float* g, int bytes, int reps, int shared_target, unsigned long long* cyc) {
  float* dst = g + (shared_target ? 0 : (size_t)blockIdx.x * (bytes / 4));
  unsigned long long t0 = clock64();
  for (int r = 0; r < reps; ++r)
    for (int i = threadIdx.x * 4; i < bytes / 4; i += blockDim.x * 4)
      asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};\n" ::"l"(dst + i), "f"(1.0f), "f"(1.0f), "f"(1.0f), "f"(1.0f) : "memory");
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) cyc[blockIdx.x] = clock64() - t0;
}

int main(int argc, char** argv) {
  int sms = 0, clk = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  cudaDeviceGetAttribute(&clk, cudaDevAttrClockRate, 0);
  const int reps = 200;
  float* g;
  cudaMalloc(&g, (size_t)sms * 65536 * 2);
  cudaMemset(g, 0, (size_t)sms * 65536 * 2);
  unsigned long long* cyc;
  cudaMallocManaged(&cyc, sms * 8 * sizeof(unsigned long long));
  cudaFuncSetAttribute(k_bulk, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536);
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  struct Case { const char* name; int mode, bytes, inflight, plain, shared_target, ctas; };
  const Case cases[] = {
      {"bulk red 32 KB, 1 in flight, 1 CTA/SM", 0, 32768, 1, 0, 0, 1},
      {"bulk red 32 KB, 2 in flight, 1 CTA/SM", 0, 32768, 2, 0, 0, 1},
      {"bulk red 16 KB, 2 in flight, 1 CTA/SM", 0, 16384, 2, 0, 0, 1},
      {"bulk red 32 KB, 1 in flight, 1 CTA on 1 SM", 0, 32768, 1, 0, 0, -1},
      {"bulk store 32 KB, 1 in flight, 1 CTA/SM", 0, 32768, 1, 1, 0, 1},
      {"RED.128 256 thr 32 KB, 1 CTA/SM", 1, 32768, 1, 0, 0, 1},
      {"RED.128 256 thr 32 KB, 1 CTA on 1 SM", 1, 32768, 1, 0, 0, -1},
      {"bulk red 32 KB, 1 in flight, all CTAs -> one region", 0, 32768, 1, 0, 1, 1},
      {"RED.128 256 thr 32 KB, all CTAs -> one region", 1, 32768, 1, 0, 1, 1},
      {"bulk red 32 KB, 1 in flight, 2 CTAs/SM", 0, 32768, 1, 0, 0, 2},
  };
  for (const Case& c : cases) {
    const int grid = c.ctas < 0 ? 1 : sms * c.ctas;
    for (int it = 0; it < 2; ++it) {
      cudaEventRecord(e0);
      if (c.mode == 0) k_bulk<<<grid, 256, c.bytes>>>(g, c.bytes, reps, c.inflight, c.plain, c.shared_target, cyc);
      else k_red<<<grid, 256>>>(g, c.bytes, reps, c.shared_target, cyc);
      cudaEventRecord(e1);
      cudaEventSynchronize(e1);
    }
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    unsigned long long mx = 0, sum = 0;
    for (int i = 0; i < grid; ++i) mx = cyc[i] > mx ? cyc[i] : mx, sum += cyc[i];
    const double bytes = (double)grid * c.bytes * reps;
    printf("%-46s %8.3f ms  %7.2f TB/s in all  %6.1f B/cycle per CTA (mean %llu cycles)  %s\n", c.name, ms,
           bytes / (ms * 1e-3) / 1e12, (double)c.bytes * reps / ((double)sum / grid), sum / grid,
           cudaGetErrorString(cudaGetLastError()));
  }
  return 0;
}
