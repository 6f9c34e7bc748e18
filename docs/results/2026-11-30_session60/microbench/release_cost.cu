// Session 60 probe (not part of the library): what the deterministic dQ
// writer's count costs one thread after its bulk reduction completed: the
// release (MEMBAR.GPU) against a relaxed red, with and without the proxy
// fence; and an idle release (no bulk operation before it). Clocks per
// count, the median CTA's mean over 64 repetitions, on 1 SM and on all.
// nvcc -arch=sm_90a -O3 -o release_cost release_cost.cu && ./release_cost
#include <cstdio>
#include <vector>
#include <algorithm>

constexpr int kBytes = 32 * 1024, kReps = 64;

__global__ void probe(float* g, int* counters, int mode, long long* out) {
  extern __shared__ __align__(128) float s[];
  for (int i = threadIdx.x; i < kBytes / 4; i += blockDim.x) s[i] = 1.0f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x != 0) return;
  float* dst = g + static_cast<long long>(blockIdx.x) * (kBytes / 4);
  int* c = counters + blockIdx.x * 32;
  long long sum = 0;
  for (int r = 0; r < kReps; ++r) {
    if (mode != 4) {
      asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst),
                   "r"(static_cast<unsigned>(__cvta_generic_to_shared(s))), "r"(kBytes) : "memory");
      asm volatile("cp.async.bulk.commit_group;" ::: "memory");
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    const long long t0 = clock64();
    if (mode == 0 || mode == 4) {
      asm volatile("fence.proxy.async.global;" ::: "memory");
      asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(c) : "memory");
    } else if (mode == 1) {
      asm volatile("red.release.gpu.global.add.s32 [%0], 1;" ::"l"(c) : "memory");
    } else if (mode == 2) {
      asm volatile("red.relaxed.gpu.global.add.s32 [%0], 1;" ::"l"(c) : "memory");
    } else if (mode == 3) {
      int v;
      asm volatile("ld.global.relaxed.gpu.b32 %0, [%1];" : "=r"(v) : "l"(c) : "memory");
      asm volatile("fence.acquire.gpu;" ::: "memory");
      if (v == -1) c[1] = v;
    }
    const long long t1 = clock64();
    sum += t1 - t0;
  }
  out[blockIdx.x] = sum / kReps;
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* g;
  int* cnt;
  long long* o;
  cudaMalloc(&g, static_cast<size_t>(sms) * kBytes);
  cudaMemset(g, 0, static_cast<size_t>(sms) * kBytes);
  cudaMalloc(&cnt, sms * 32 * sizeof(int));
  cudaMemset(cnt, 0, sms * 32 * sizeof(int));
  cudaMalloc(&o, sms * sizeof(long long));
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
  const char* names[] = {"proxy fence + red.release (count())", "red.release", "red.relaxed",
                         "ld.relaxed + fence.acquire", "proxy fence + red.release, idle"};
  for (int mode = 0; mode < 5; ++mode)
    for (int grid : {1, sms}) {
      probe<<<grid, 128, kBytes>>>(g, cnt, mode, o);
      std::vector<long long> v(grid);
      cudaMemcpy(v.data(), o, grid * sizeof(long long), cudaMemcpyDeviceToHost);
      std::sort(v.begin(), v.end());
      std::printf("%-38s SMs %3d  %6lld clocks (max %lld)\n", names[mode], grid, v[grid / 2], v[grid - 1]);
    }
  std::printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
