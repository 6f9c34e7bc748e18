// Session 67: the floor that the MUFU pipe puts under a softcapped forward.
// A capped score takes two MUFU operations on sm_90 (tanh.approx for the cap,
// ex2.approx for the softmax). This kernel issues exactly that pair for every
// visible score of a call and nothing else of consequence (8 independent
// chains a thread, 16 warps an SM sub-partition at most, no memory traffic
// inside the loop), timed as ./bench times attention: back to back for 0.5 s
// after 0.2 s of warm-up, CUDA events, the median. It also reads each CTA's
// SM clock (clock64 over %globaltimer) and prints the mean, so the figure can
// be set against the pipe's 16 lanes / clock / SM (session 52's mufu_rate.cu).
// Build: nvcc -O3 -arch=sm_90a -o softcap_ceiling softcap_ceiling.cu
// Run:   softcap_ceiling B H SEQ [pairs|single]  (causal: SEQ (SEQ + 1) / 2 visible scores a head)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

template <bool kPair>
__global__ void __launch_bounds__(1024) mufu_floor(float* out, long long* clk, unsigned long long* ns, int iters) {
  float x[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) x[i] = 0.001f * (threadIdx.x % 97) + 0.1f * i;
  long long c0 = clock64();
  unsigned long long t0 = global_ns();
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      if (kPair)
        asm volatile("tanh.approx.f32 %0, %0;\n\tex2.approx.ftz.f32 %0, %0;" : "+f"(x[i]));
      else
        asm volatile("ex2.approx.ftz.f32 %0, %0;" : "+f"(x[i]));
    }
  }
  long long c1 = clock64();
  unsigned long long t1 = global_ns();
  float s = 0;
#pragma unroll
  for (int i = 0; i < 8; ++i) s += x[i];
  if (s == 12345.0f) out[threadIdx.x] = s;  // keeps the chains alive, never true in practice
  if (threadIdx.x == 0) {
    clk[blockIdx.x] = c1 - c0;
    ns[blockIdx.x] = t1 - t0;
  }
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s B H SEQ [pairs|single]\n", argv[0]);
    return 2;
  }
  const double b = std::atof(argv[1]), h = std::atof(argv[2]), s = std::atof(argv[3]);
  const bool pair = argc < 5 || std::strcmp(argv[4], "single") != 0;
  const double scores = b * h * s * (s + 1) / 2;  // causal, visible
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const int blocks = 2 * sms, threads = 1024;
  const double per_thread = scores / (double(blocks) * threads);
  const int iters = int(per_thread / 8 + 0.999);  // 8 chains an iteration
  const double issued = double(iters) * 8 * blocks * threads;
  float* out;
  long long* clk;
  unsigned long long* ns;
  cudaMalloc(&out, 4096);
  cudaMalloc(&clk, blocks * sizeof(long long));
  cudaMalloc(&ns, blocks * sizeof(unsigned long long));
  auto launch = [&] {
    if (pair)
      mufu_floor<true><<<blocks, threads>>>(out, clk, ns, iters);
    else
      mufu_floor<false><<<blocks, threads>>>(out, clk, ns, iters);
  };
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  // warm-up 0.2 s
  cudaEventRecord(e0);
  for (float ms = 0; ms < 200;) {
    for (int i = 0; i < 10; ++i) launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
  }
  std::vector<float> times;
  double clock_sum = 0;
  int clock_n = 0;
  std::vector<long long> hc(blocks);
  std::vector<unsigned long long> hn(blocks);
  for (float total = 0; total < 500;) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    times.push_back(ms);
    total += ms;
    cudaMemcpy(hc.data(), clk, blocks * sizeof(long long), cudaMemcpyDeviceToHost);
    cudaMemcpy(hn.data(), ns, blocks * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    for (int i = 0; i < blocks; ++i)
      if (hn[i] > 0) clock_sum += double(hc[i]) / double(hn[i]), ++clock_n;
  }
  if (cudaGetLastError() != cudaSuccess) {
    std::fprintf(stderr, "CUDA error\n");
    return 1;
  }
  std::sort(times.begin(), times.end());
  const double med = times[times.size() / 2];
  const double ops = issued * (pair ? 2 : 1);
  const double ghz = clock_sum / clock_n;
  std::printf("%s B=%g H=%g seq=%g causal: %.4g visible scores, %.4g MUFU ops; median %.4f ms over %zu launches; "
              "SM clock %.3f GHz (in-kernel); %.2f MUFU lanes / clock / SM\n",
              pair ? "tanh+ex2" : "ex2 only", b, h, s, scores, ops, med, times.size(), ghz,
              ops / (med * 1e-3) / (ghz * 1e9) / sms);
  return 0;
}
