#include <cstdio>
#include <cuda_runtime.h>
__global__ void k(int* x) { extern __shared__ int s[]; if (x) x[threadIdx.x] = s[threadIdx.x]; }
int main() {
  int dev = 0; cudaDeviceProp prop; cudaGetDeviceProperties(&prop, dev);
  printf("%s SMs %d\n", prop.name, prop.multiProcessorCount);
  for (int smem : {100 * 1024, 160 * 1024, 224 * 1024 + 1024}) {
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
    cudaFuncSetAttribute(k, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    for (int cs : {1, 2, 4}) {
      cudaLaunchAttribute attr[1];
      attr[0].id = cudaLaunchAttributeClusterDimension;
      attr[0].val.clusterDim.x = cs; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
      cudaLaunchConfig_t cfg = {};
      cfg.gridDim = dim3(132 * 4); cfg.blockDim = dim3(384); cfg.dynamicSmemBytes = smem; cfg.attrs = attr; cfg.numAttrs = 1;
      int n = -1; cudaError_t e = cudaOccupancyMaxActiveClusters(&n, k, &cfg);
      printf("smem %d KB cluster %d: max active clusters %d (%d CTAs) %s\n", smem / 1024, cs, n, n * cs, cudaGetErrorString(e));
    }
  }
}
