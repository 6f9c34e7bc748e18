// The kernels every backward variant shares (kernels/common/backward.cu).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "common/bwd_params.h"
#include "common/launch_limits.h"
#include "flash/variants.h"
#ifdef __CUDACC__
#include "common/pdl.cuh"  // launch_after, for bwd_launch
#endif

namespace flash::detail {

// Before the main kernels: per (sequence, head_q, row) of the padded rows,
// dpsum = rowsum(dO * O) in fp32 and lse_log2 = LSE * log2(e) (+inf where
// the LSE is -inf, and in the padding); zeroes dq_accum (and kv_done) and dq_semaphore
// when they are bound; then dsinks when it is bound (it needs every row's dpsum and LSE).
// Variable-length calls (p.cu_seqlens_q): each sequence's rows (ws_row0),
// and dK = dV = 0 on the keys past seqused_k[b] of each sequence, which no
// variant's dK/dV kernel visits; with bad metadata (p.status[0] != 0) they
// read and write nothing.
cudaError_t bwd_preprocess(const BwdParams& p, cudaStream_t stream);

// dsinks = 0 (empty calls with sinks: no row, or no key and so O = 0).
cudaError_t bwd_zero_dsinks(const BwdParams& p, cudaStream_t stream);

// Zero gradients for empty dense calls: dq when seqlen_k == 0 (no key: no
// gradient), dk and dv when seqlen_q == 0. (A variable-length call's empty
// sequences are the variant's: its kernels write their zeros.)
cudaError_t bwd_fill_zero(const BwdParams& p, cudaStream_t stream);

// The registry entry of a backward variant: f16/bf16 on sm_80 and up, rows
// copied 16 bytes at a time, variable-length batches, deterministic mode,
// the given head dims and entry points.
template <class HeadDims>
BwdVariant bwd_variant(std::string (*check)(const BwdParams&, const DeviceInfo&),
                       std::size_t (*workspace_bytes)(const BwdParams&),
                       cudaError_t (*run)(const BwdParams&, void*, cudaStream_t)) {
  BwdVariant v;
  v.min_compute_capability = 80;
  v.dtype_mask = dtype_bit(DType::f16) | dtype_bit(DType::bf16);
  v.head_dims = HeadDims::data();
  v.num_head_dims = HeadDims::size();
  v.alignment = 16;
  // Every backward takes the LSE as input (no kFeatureLse).
  v.features = kFeatureCausal | kFeatureGqa | kFeatureUnequalSeqlens | kFeatureWindow | kScoreFeatures | kFeatureVarlen |
               kFeatureDeterministic;
  v.check = check;
  v.workspace_bytes = workspace_bytes;
  v.run = run;
  return v;
}

#ifdef __CUDACC__
// Sets the kernel's dynamic shared memory limit and launches it with p, the
// BwdParams or a variant's struct around them (kernel translation units only);
// pdl: by programmatic dependent launch after the kernel before it
// (launch_after, common/pdl.cuh: the kernel waits for that one itself).
template <class Kernel, class Params>
cudaError_t bwd_launch(Kernel kernel, dim3 grid, int threads, std::size_t smem, const Params& p,
                       cudaStream_t stream, bool pdl = false) {
  cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
  if (err != cudaSuccess) return err;
  if (pdl) return launch_after(true, kernel, grid, dim3(threads), smem, stream, p);
  kernel<<<grid, threads, smem, stream>>>(p);
  return cudaGetLastError();
}
#endif

}  // namespace flash::detail
