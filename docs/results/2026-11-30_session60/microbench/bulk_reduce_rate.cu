// Session 60 probe (not part of the library): how fast one SM's copy engine
// moves a 32 KB fp32 block from shared memory into global memory by
// cp.reduce.async.bulk .add.f32 (bwd_04's deterministic dQ writer) against a
// plain bulk store, issued as 1..16 operations, on one SM and on every SM at
// once; and the same 32 KB added by 128 threads with RED.128 and a fence.
// Clocks per 32 KB, the median CTA's mean over 64 repetitions.
// nvcc -arch=sm_90a -O3 -o bulk_reduce_rate bulk_reduce_rate.cu && ./bulk_reduce_rate
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>

constexpr int kBytes = 32 * 1024, kReps = 64;

__device__ __forceinline__ unsigned smem_u32(const void* p) { return static_cast<unsigned>(__cvta_generic_to_shared(p)); }

// mode 0: reduce, 1: store, 2: RED.128 by 128 threads + fence.release.gpu
__global__ void probe(float* g, int mode, int chunks, long long* out_read, long long* out_done) {
  extern __shared__ __align__(128) float s[];
  for (int i = threadIdx.x; i < kBytes / 4; i += blockDim.x) s[i] = 1.0f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  float* dst = g + static_cast<long long>(blockIdx.x) * (kBytes / 4);
  long long read = 0, done = 0;
  for (int r = 0; r < kReps; ++r) {
    __syncthreads();
    const long long t0 = clock64();
    if (mode < 2) {
      if (threadIdx.x == 0) {
        const int part = kBytes / chunks;
        for (int c = 0; c < chunks; ++c) {
          if (mode == 0)
            asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;" ::"l"(dst + c * part / 4),
                         "r"(smem_u32(s + c * part / 4)), "r"(part) : "memory");
          else
            asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(dst + c * part / 4),
                         "r"(smem_u32(s + c * part / 4)), "r"(part) : "memory");
        }
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        const long long t1 = clock64();
        asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
        const long long t2 = clock64();
        read += t1 - t0;
        done += t2 - t0;
      }
    } else {
      const float4* src = reinterpret_cast<const float4*>(s);
      float4* d4 = reinterpret_cast<float4*>(dst);
      for (int i = threadIdx.x; i < kBytes / 16; i += blockDim.x) atomicAdd(d4 + i, src[i]);
      const long long t1 = clock64();
      asm volatile("fence.release.gpu;" ::: "memory");
      const long long t2 = clock64();
      __syncthreads();
      if (threadIdx.x == 0) {
        read += t1 - t0;
        done += clock64() - t0;
        (void)t2;
      }
    }
  }
  if (threadIdx.x == 0) {
    out_read[blockIdx.x] = read / kReps;
    out_done[blockIdx.x] = done / kReps;
  }
}

int main() {
  int sms = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
  float* g;
  long long *rd, *dn;
  cudaMalloc(&g, static_cast<size_t>(sms) * kBytes);
  cudaMemset(g, 0, static_cast<size_t>(sms) * kBytes);
  cudaMalloc(&rd, sms * sizeof(long long));
  cudaMalloc(&dn, sms * sizeof(long long));
  cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, kBytes);
  const char* names[] = {"bulk reduce", "bulk store", "RED.128 x128 thr + fence"};
  for (int mode = 0; mode < 3; ++mode)
    for (int chunks : {1, 2, 4, 8, 16}) {
      if (mode == 2 && chunks > 1) break;
      for (int grid : {1, sms}) {
        probe<<<grid, 128, kBytes>>>(g, mode, chunks, rd, dn);
        std::vector<long long> r(grid), d(grid);
        cudaMemcpy(r.data(), rd, grid * sizeof(long long), cudaMemcpyDeviceToHost);
        cudaMemcpy(d.data(), dn, grid * sizeof(long long), cudaMemcpyDeviceToHost);
        std::sort(r.begin(), r.end());
        std::sort(d.begin(), d.end());
        std::printf("%-26s ops %2d  SMs %3d  read/issued %6lld  complete %6lld clocks (max %lld)\n", names[mode], chunks, grid,
                    r[grid / 2], d[grid / 2], d[grid - 1]);
      }
    }
  const cudaError_t e = cudaDeviceSynchronize();
  std::printf("%s\n", cudaGetErrorString(e));
  return 0;
}
