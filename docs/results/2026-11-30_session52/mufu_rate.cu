// Session 52: MUFU throughput per SM per clock on the H200, per operation and
// precision (f32, f16 / bf16 halves), one op kind per kernel, 8 independent
// chains per thread, 4 warps per SM sub-partition. Prints lane-ops / clock / SM.
#include <cstdio>
#include <cuda_runtime.h>
#define OP(name, asmstr, T, C)                                                              \
  __global__ void name(T* out, long long* cyc, int iters) {                                \
    T x[8];                                                                                 \
    for (int i = 0; i < 8; ++i) x[i] = (T)(threadIdx.x * 8 + i);                           \
    __syncthreads();                                                                        \
    long long t0 = clock64();                                                               \
    for (int it = 0; it < iters; ++it)                                                      \
      _Pragma("unroll") for (int i = 0; i < 8; ++i) asm volatile(asmstr : "+" C(x[i]));     \
    __syncthreads();                                                                        \
    long long t1 = clock64();                                                               \
    T s = 0;                                                                                \
    for (int i = 0; i < 8; ++i) s += x[i];                                                  \
    out[blockIdx.x * blockDim.x + threadIdx.x] = s;                                         \
    if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;                                        \
  }
OP(k_ex2_f32, "ex2.approx.ftz.f32 %0, %0;", float, "f")
OP(k_tanh_f32, "tanh.approx.f32 %0, %0;", float, "f")
OP(k_rcp_f32, "rcp.approx.ftz.f32 %0, %0;", float, "f")
OP(k_ex2_f16x2, "ex2.approx.f16x2 %0, %0;", unsigned, "r")
OP(k_tanh_f16x2, "tanh.approx.f16x2 %0, %0;", unsigned, "r")
OP(k_tanh_bf16x2, "tanh.approx.bf16x2 %0, %0;", unsigned, "r")
OP(k_ex2_bf16x2, "ex2.approx.ftz.bf16x2 %0, %0;", unsigned, "r")
OP(k_ffma, "fma.rn.f32 %0, %0, %0, %0;", float, "f")
OP(k_hfma2, "fma.rn.f16x2 %0, %0, %0, %0;", unsigned, "r")
OP(k_cvt_pack, "cvt.rn.bf16x2.f32 %0, %0, %0;", unsigned, "r")
// the softcapped softmax's MUFU pair: tanh then ex2 on the same value
__global__ void k_tanh_ex2(float* out, long long* cyc, int iters) {
  float x[8];
  for (int i = 0; i < 8; ++i) x[i] = threadIdx.x * 8 + i;
  __syncthreads();
  long long t0 = clock64();
  for (int it = 0; it < iters; ++it)
#pragma unroll
    for (int i = 0; i < 8; ++i) asm volatile("tanh.approx.f32 %0, %0;\n\tex2.approx.ftz.f32 %0, %0;" : "+f"(x[i]));
  __syncthreads();
  long long t1 = clock64();
  float s = 0;
  for (int i = 0; i < 8; ++i) s += x[i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
  if (threadIdx.x == 0) cyc[blockIdx.x] = t1 - t0;
}
template <class K> void run(const char* name, K k, int lanes_per_op, int ops_per_iter = 1) {
  const int blocks = 132, threads = 512, iters = 4096;
  void* out; long long* cyc; cudaMalloc(&out, blocks * threads * 8); cudaMalloc(&cyc, blocks * 8);
  k<<<blocks, threads>>>((float*)out, cyc, 16);
  cudaDeviceSynchronize();
  k<<<blocks, threads>>>((float*)out, cyc, iters);
  long long h[132]; cudaMemcpy(h, cyc, sizeof h, cudaMemcpyDeviceToHost);
  double mean = 0; for (int i = 0; i < blocks; ++i) mean += h[i]; mean /= blocks;
  double ops = double(threads) * iters * 8 * ops_per_iter;
  printf("%-14s %8.2f instr-lanes/clk/SM  (%5.2f warp-instr/clk/SMSP, %5.2f clk per warp instr per SMSP)  elems %d\n", name,
         ops / mean, ops / mean / 128, 128.0 / (ops / mean), lanes_per_op);
  cudaFree(out); cudaFree(cyc);
}
int main() {
  run("ex2_f32", k_ex2_f32, 1); run("tanh_f32", k_tanh_f32, 1); run("rcp_f32", k_rcp_f32, 1);
  run("tanh_ex2", k_tanh_ex2, 1, 2);
  run("ex2_f16x2", (void (*)(float*, long long*, int))k_ex2_f16x2, 2);
  run("tanh_f16x2", (void (*)(float*, long long*, int))k_tanh_f16x2, 2);
  run("tanh_bf16x2", (void (*)(float*, long long*, int))k_tanh_bf16x2, 2);
  run("ex2_bf16x2", (void (*)(float*, long long*, int))k_ex2_bf16x2, 2);
  run("ffma", k_ffma, 1); run("hfma2", (void (*)(float*, long long*, int))k_hfma2, 2);
  run("cvt_pack", (void (*)(float*, long long*, int))k_cvt_pack, 2);
  return 0;
}
