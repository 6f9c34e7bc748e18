// Session 67: how fast could any forward kernel run a causal call's tensor work and its softmax
// arithmetic if the two overlapped perfectly? A synthetic kernel, not attention: per 64 x 128
// tile of scores a warpgroup issues the call's wgmma work (S = Q K^T, m64n128k16 x hdim / 16;
// O += P V, m64n{hdim}k16 x 8, P from registers) on random tiles that stay in shared memory (no
// global loads), and while it runs does the minimal softmax arithmetic of that tile's 64 scores a
// thread on independent registers (nothing depends on the products, so nothing waits):
//   capped:   FMUL (1 / c), MUFU.TANH, FFMA (c log2 e, the fixed max), MUFU.EX2, FADD, F2FP / 2
//   uncapped: FMNMX (the row max), FFMA, MUFU.EX2, FADD, F2FP / 2
// Two such warpgroups a CTA (three at hdim 64 on request), one CTA an SM, as many tiles as the call's visible scores fill
// (diagonal tiles' masked halves left out, so the bound is generous); timed as ./bench times
// attention (0.2 s warm-up, back to back over 0.5 s, median of CUDA events), with the SM clock
// read in the kernel (clock64 over %globaltimer).
// Build (from the repository root): nvcc -O3 -std=c++20 -arch=sm_90a -Ikernels -o ideal_softmax ideal_softmax.cu
// Run: ideal_softmax HDIM B H SEQ cap|plain [WARPGROUPS: 2, or 3 at hdim 64 [EXP2 ON FMA of every 8
//      capped scores at hdim 64 with two warpgroups: 0, 2, 3, 4]]; 4 at hdim 64: one warpgroup issues
//      every product, two do all the arithmetic (roles apart), 5: the same with 3 / 8 exp2 on FMA;
//      6 / 7: roles apart with S (fp32) and P (bf16) through shared memory, as such a kernel needs
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda_runtime.h>

#include "common/hopper/wgmma.cuh"

using namespace flash::detail;

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ float mufu_tanh(float x) {
  float y;
  asm volatile("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
__device__ __forceinline__ float mufu_ex2(float x) {
  float y;
  asm volatile("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}
// 2^x on the FMA pipe (sessions 33 / 45's form): x = j + f by the 1.5 * 2^23 rounding, 2^f by a
// degree-3 polynomial, j added to the exponent field; eight FMA-pipe / integer instructions.
__device__ __forceinline__ float fma_ex2(float x) {
  constexpr float kRound = 12582912.0f;
  x = fmaxf(x, -127.0f);
  const float t = __fadd_rn(x, kRound);
  const float f = __fadd_rn(x, -__fadd_rn(t, -kRound));
  const float q = fmaf(fmaf(fmaf(0.05550411f, f, 0.24022651f), f, 0.69314718f), f, 1.0f);
  return __int_as_float(__float_as_int(q) + (__float_as_int(t) << 23));
}

template <int kHd, bool kCap, int kWgs, int kEmu, int kSplit = 0>
__global__ void __launch_bounds__(128 * kWgs, 1) ideal(float* out, long long* clk, unsigned long long* ns, int tiles) {
#if FLASH_SM90A_DEVICE
  extern __shared__ __align__(1024) unsigned char smem[];
  // Q: kWgs x 64 x kHd, K: 128 x kHd, V: 128 x kHd (bf16), random bits of moderate size
  constexpr int kQ = 64 * kHd * 2, kKV = 128 * kHd * 2;
  for (int i = threadIdx.x; i < (kWgs * kQ + 2 * kKV) / 4; i += blockDim.x) {
    unsigned h = (i + 1) * 2654435761u ^ blockIdx.x * 40503u;
    h ^= h >> 13;
    // two bf16 in [-2, 2): sign, exponent 126..128, random mantissa
    auto one = [](unsigned r) { return ((r & 1u) << 15) | ((126u + (r >> 1) % 3u) << 7) | ((r >> 4) & 0x7Fu); };
    reinterpret_cast<unsigned*>(smem)[i] = one(h) | one(h >> 16) << 16;
  }
  __syncthreads();
  const int wg = warpgroup_index();
  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint32_t q = base + wg * kQ, k = base + kWgs * kQ, v = k + kKV;
  float s[64], o[kHd / 2];
  std::uint32_t p[8][4];
#pragma unroll
  for (int i = 0; i < kHd / 2; ++i) o[i] = 0.0f;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      p[i][j] = 0x3F803F80u ^ (threadIdx.x * 97u + i * 4 + j);
      if constexpr (kSplit != 2) asm volatile("" : "+r"(p[i][j]));  // opaque: not rematerialized inside the loop
    }
  float x0[8], acc[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) x0[i] = 0.01f * (threadIdx.x % 31) + 0.1f * i - 0.4f, acc[i] = 0.0f;
  std::uint32_t packed = 0;
  const float in = 1.0f / 30.0f, k2 = 30.0f * 1.4426950f, m2 = 30.0f * 1.4426950f;
  auto issue = [&] {
    wgmma_fence();
    // S = Q K^T: K-major, 64-column blocks of 64 x 128 B rows (SBO 1024)
#pragma unroll
    for (int kk = 0; kk < kHd / 16; ++kk) {
      const std::uint32_t off_q = (kk / 4) * 64 * 128 + (kk % 4) * 32, off_k = (kk / 4) * 128 * 128 + (kk % 4) * 32;
      WgmmaOp<128>::template ss<__nv_bfloat16>(s, wgmma_desc_sw128(q, off_q, 0, 1024), wgmma_desc_sw128(k, off_k, 0, 1024), kk > 0 ? 1 : 0);
    }
    // O += P V: V MN-major (LBO = 128 rows x 128 B between 64-column blocks), 16 keys a k-step
#pragma unroll
    for (int kk = 0; kk < 8; ++kk)
      WgmmaOp<kHd>::template rs<__nv_bfloat16>(o, p[kk], wgmma_desc_sw128(v, kk * 2048, 128 * 128, 1024), 1);
    wgmma_commit();
  };
  // the softmax's arithmetic for 64 scores, on registers the products do not touch
  // Roles apart through shared memory: S (fp32) as the product wrote it, one 32 KB buffer for each
  // arithmetic warpgroup, P (bf16) in one 16 KB buffer that O += P V reads; no synchronization
  // (the values are garbage either way), only the traffic.
  const std::uint32_t s_buf = v + kKV, p_buf = s_buf + 2 * 32768;
  auto arith_smem = [&](int t) {
    const int w = wg - 1, lane128 = threadIdx.x % 128;
#pragma unroll
    for (int c = 0; c < 16; ++c) {  // 64 scores a thread: 16 x 16 bytes in, 8 x 16 bytes out
      float x[4];
      asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(x[0]), "=f"(x[1]), "=f"(x[2]), "=f"(x[3])
                   : "r"(s_buf + w * 32768 + (c * 128 + lane128) * 16));
      float e[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        if constexpr (kCap) {
          const float y = fmaf(mufu_tanh(x[j] * in), k2, -m2);
          e[j] = (4 * c + j) % 8 < kEmu ? fma_ex2(y) : mufu_ex2(y);
        } else {
          acc[j] = fmaxf(acc[j], x[j]);
          e[j] = mufu_ex2(fmaf(x[j], k2, -m2));
        }
        acc[(j + 4) % 8] += e[j];
      }
      const std::uint32_t lo = pack2<__nv_bfloat16>(e[0], e[1]), hi = pack2<__nv_bfloat16>(e[2], e[3]);
      if (c % 2 == 0) {
        packed = lo;
        asm volatile("" : "+r"(packed));
        x0[0] = __uint_as_float(hi);
      } else {
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(p_buf + ((c / 2) * 128 + lane128) * 16),
                     "r"(packed), "r"(__float_as_uint(x0[0])), "r"(lo), "r"(hi) : "memory");
      }
    }
    (void)t;
  };
  auto arith = [&](int t) {
    const float tf = static_cast<float>(t & 1023) * 1e-4f;
#pragma unroll
    for (int i = 0; i < 64; i += 2) {
      float e[2];
#pragma unroll
      for (int j = 0; j < 2; ++j) {
        const float x = x0[(i + j) % 8] + tf + (i + j) * 1e-3f;
        if constexpr (kCap) {
          const float y = fmaf(mufu_tanh(x * in), k2, -m2);
          e[j] = (i + j) % 8 < kEmu ? fma_ex2(y) : mufu_ex2(y);  // kEmu of every 8 on the FMA pipe
        } else {
          acc[(i + j) % 8] = fmaxf(acc[(i + j) % 8], x);  // stands for the row max
          e[j] = mufu_ex2(fmaf(x, k2, -m2));
        }
        acc[(i + j + 4) % 8] += e[j];
      }
      packed ^= pack2<__nv_bfloat16>(e[0], e[1]);
    }
  };
  long long c0 = clock64();
  unsigned long long t0 = global_ns();
  if constexpr (kSplit) {
    // Roles apart (no Hopper attention kernel can do this with S in the issuing warps' registers:
    // the most generous form): warpgroup 0 issues every product of the CTA back to back, the
    // other two do all the arithmetic.
    if (wg == 0 && kSplit == 1) {
      for (int t = 0; t < 2 * tiles; ++t) {
        issue();
        wgmma_wait<1>();
      }
      wgmma_wait<0>();
      fence_registers(s);
      fence_registers(o);
    } else if (wg == 0) {
      // O += P V with P read from shared memory (K-major A, 64 x 128 bf16 in two 64-column
      // blocks); after each tile's products S is stored (16 x 16 bytes a thread) for the
      // arithmetic warpgroup whose turn it is. (Two accumulator sets in turn spilled at 168
      // registers; the tensor pipe is not what bounds here.)
      for (int t = 0; t < 2 * tiles; ++t) {
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < kHd / 16; ++kk) {
          const std::uint32_t off_q = (kk / 4) * 64 * 128 + (kk % 4) * 32, off_k = (kk / 4) * 128 * 128 + (kk % 4) * 32;
          WgmmaOp<128>::template ss<__nv_bfloat16>(s, wgmma_desc_sw128(q, off_q, 0, 1024),
                                                   wgmma_desc_sw128(k, off_k, 0, 1024), kk > 0 ? 1 : 0);
        }
#pragma unroll
        for (int kk = 0; kk < 8; ++kk) {
          const std::uint32_t off_p = (kk / 4) * 64 * 128 + (kk % 4) * 32;
          WgmmaOp<kHd>::template ss_b_nmajor<__nv_bfloat16>(o, wgmma_desc_sw128(p_buf, off_p, 0, 1024),
                                                            wgmma_desc_sw128(v, kk * 2048, 128 * 128, 1024), 1);
        }
        wgmma_commit();
        wgmma_wait<0>();
        fence_registers(s);
#pragma unroll
        for (int c = 0; c < 16; ++c)
          asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(s_buf + (t & 1) * 32768 + (c * 128 + threadIdx.x) * 16),
                       "f"(s[4 * c]), "f"(s[4 * c + 1]), "f"(s[4 * c + 2]), "f"(s[4 * c + 3]) : "memory");
      }
      fence_registers(o);
    } else if (kSplit == 2) {
      for (int t = 0; t < tiles; ++t) arith_smem(t);
    } else {
      for (int t = 0; t < tiles; ++t) arith(t);
    }
  } else {
    for (int t = 0; t < tiles; ++t) {
      issue();
      arith(t);
      wgmma_wait_after_all<0>(acc);  // a branch on the sums keeps ptxas from hoisting the wait
      fence_registers(s);
      fence_registers(o);
    }
  }
  long long c1 = clock64();
  unsigned long long t1 = global_ns();
  float keep = static_cast<float>(packed & 1);
#pragma unroll
  for (int i = 0; i < 8; ++i) keep += acc[i];
#pragma unroll
  for (int i = 0; i < 64; ++i) keep += s[i];
#pragma unroll
  for (int i = 0; i < kHd / 2; ++i) keep += o[i];
  if (keep == 1234.5f) out[threadIdx.x] = keep;
  if (threadIdx.x % 128 == 0 && wg < 2) {  // warpgroup 0's span, and warpgroup 1's (a role's own, roles apart)
    clk[2 * blockIdx.x + wg] = c1 - c0;
    ns[2 * blockIdx.x + wg] = t1 - t0;
  }
#endif
}

template <int kHd, bool kCap, int kWgs, int kEmu, int kSplit = 0> int run(double b, double h, double seq) {
  const double scores = b * h * seq * (seq + 1) / 2;
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  const double tiles_total = scores / (64.0 * 128.0);
  const int tiles = static_cast<int>(tiles_total / (double(kSplit ? 2 : kWgs) * sms) + 0.999);  // per warpgroup
  const int smem = kWgs * 64 * kHd * 2 + 2 * 128 * kHd * 2 + (kSplit == 2 ? 2 * 32768 + 16384 : 0);
  auto kern = ideal<kHd, kCap, kWgs, kEmu, kSplit>;
  cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  float* out;
  long long* clk;
  unsigned long long* ns;
  cudaMalloc(&out, 4096);
  cudaMalloc(&clk, 2 * sms * sizeof(long long));
  cudaMalloc(&ns, 2 * sms * sizeof(unsigned long long));
  auto launch = [&] { kern<<<sms, 128 * kWgs, smem>>>(out, clk, ns, tiles); };
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (float ms = 0; ms < 200;) {
    for (int i = 0; i < 10; ++i) launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
  }
  std::vector<float> times;
  std::vector<long long> hc(2 * sms);
  std::vector<unsigned long long> hn(2 * sms);
  double clock_sum = 0, role_ns[2] = {0, 0};
  int clock_n = 0;
  for (float total = 0; total < 500;) {
    cudaEventRecord(e0);
    launch();
    cudaEventRecord(e1);
    cudaEventSynchronize(e1);
    float ms = 0;
    cudaEventElapsedTime(&ms, e0, e1);
    times.push_back(ms);
    total += ms;
    cudaMemcpy(hc.data(), clk, 2 * sms * sizeof(long long), cudaMemcpyDeviceToHost);
    cudaMemcpy(hn.data(), ns, 2 * sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    for (int i = 0; i < 2 * sms; i += 2)
      if (hn[i] > 0) clock_sum += double(hc[i]) / double(hn[i]), ++clock_n;
    for (int i = 0; i < 2 * sms; ++i) role_ns[i % 2] += double(hn[i]) / sms;
  }
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) {
    std::fprintf(stderr, "CUDA error: %s\n", cudaGetErrorString(err));
    return 1;
  }
  std::sort(times.begin(), times.end());
  const double med = times[times.size() / 2];
  const double flops = 4.0 * b * h * seq * seq * kHd / 2;  // the call's causal FLOP count
  std::printf("ideal %d warpgroups%s, %d / 8 exp2 on FMA, %s hdim %d B=%g H=%g seq=%g: %d tiles a warpgroup, median %.4f ms over %zu launches, "
              "%.1f TFLOPS of the call's count, SM clock %.3f GHz; mean span of warpgroup 0 / 1 %.4f / %.4f ms\n",
              kWgs, kSplit == 2 ? " (roles apart, S and P through shared memory)" : kSplit ? " (roles apart)" : "", kEmu, kCap ? "capped  " : "uncapped", kHd, b, h, seq, tiles, med, times.size(), flops / (med * 1e-3) / 1e12,
              clock_sum / clock_n, role_ns[0] / times.size() * 1e-6, role_ns[1] / times.size() * 1e-6);
  return 0;
}

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s HDIM B H SEQ cap|plain [WARPGROUPS 2|3|4 (roles apart)|5 (roles apart, 3 / 8 on FMA)|6 (roles apart through shared memory)|7 (6, 3 / 8 on FMA) [EXP2 ON FMA, of 8: 0|2|3|4]]\n", argv[0]);
    return 2;
  }
  const int hd = std::atoi(argv[1]);
  const double b = std::atof(argv[2]), h = std::atof(argv[3]), seq = std::atof(argv[4]);
  const bool cap = std::strcmp(argv[5], "cap") == 0;
  const int wgs = argc > 6 ? std::atoi(argv[6]) : 2, emu = argc > 7 ? std::atoi(argv[7]) : 0;
  if (hd == 64 && wgs == 6) return cap ? run<64, true, 3, 0, 2>(b, h, seq) : run<64, false, 3, 0, 2>(b, h, seq);
  if (hd == 64 && cap && wgs == 7) return run<64, true, 3, 3, 2>(b, h, seq);
  if (hd == 64 && wgs == 4) return cap ? run<64, true, 3, 0, 1>(b, h, seq) : run<64, false, 3, 0, 1>(b, h, seq);
  if (hd == 64 && cap && wgs == 5) return run<64, true, 3, 3, 1>(b, h, seq);
  if (hd == 64 && wgs == 3) return cap ? run<64, true, 3, 0>(b, h, seq) : run<64, false, 3, 0>(b, h, seq);
  if (hd == 64 && cap && emu == 2) return run<64, true, 2, 2>(b, h, seq);
  if (hd == 64 && cap && emu == 3) return run<64, true, 2, 3>(b, h, seq);
  if (hd == 64 && cap && emu == 4) return run<64, true, 2, 4>(b, h, seq);
  if (hd == 64) return cap ? run<64, true, 2, 0>(b, h, seq) : run<64, false, 2, 0>(b, h, seq);
  if (hd == 128) return cap ? run<128, true, 2, 0>(b, h, seq) : run<128, false, 2, 0>(b, h, seq);
  std::fprintf(stderr, "hdim 64 or 128\n");
  return 2;
}
