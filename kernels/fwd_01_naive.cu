// fwd_01_naive: the textbook unfused pipeline, the ladder's first rung.
//
// What it does: three kernels through an N x N fp32 workspace.
//   1. fwd_01_naive_scores_kernel:  S = scale * Q K^T, masked entries -inf
//      (16 x 16 shared-memory tiled GEMM, one output per thread).
//   2. fwd_01_naive_softmax_kernel: P = softmax(S) row by row in place, one
//      CTA per row, max and sum by shared-memory tree reductions; writes LSE.
//   3. fwd_01_naive_pv_kernel:      O = P V (the same tiled GEMM).
// Why it is slow: S and P make a round trip through HBM (B * H * Sq * Sk * 4
// bytes written and read twice), and the GEMMs run on CUDA cores with one
// multiply-add per shared-memory load. It is here as the readable baseline
// every later step is measured against, and it handles any head dim.
// Measured on the H200 (2026-11-21, bf16, hdim 128, 16k tokens): 6.0 TFLOPS
// at seq 4096 (91 ms), 3.0 causal (it computes the whole matrix either way).
// Resources: 2.1 KB static shared memory per CTA for the GEMMs, 1 KB for the softmax.
// Run it: ./runner --kernel naive ; ./bench --kernel naive --seq 4096 --dhead 128
#include <cmath>
#include <string>

#include "common/launch_limits.h"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/params.h"
#include "common/scores.h"
#include "common/variant.h"
#include "flash/variants.h"

namespace flash::detail {
namespace {

constexpr int kTile = 16;            // GEMM tile edge: a 16 x 16 CTA, one output each
constexpr int kSoftmaxThreads = 256;  // one CTA per softmax row
constexpr int kMaxHeadDim = 512;

// The workspace holds S, then P in place: [batch * heads_q, seqlen_q, seqlen_k] fp32.
std::size_t naive_workspace_bytes(const FwdParams& p) {
  return static_cast<std::size_t>(p.batch) * p.heads_q * p.seqlen_q * p.seqlen_k * sizeof(float);
}

template <class T>
__global__ void fwd_01_naive_scores_kernel(const __grid_constant__ FwdParams p, float* gS) {
  __shared__ float sQ[kTile][kTile + 1];  // +1: column reads of sK hit 16 different banks
  __shared__ float sK[kTile][kTile + 1];
  const int bh = blockIdx.z;
  const int b = bh / p.heads_q, h = bh % p.heads_q, h_kv = h / p.group_size;
  const int i0 = blockIdx.y * kTile, j0 = blockIdx.x * kTile;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const T* gQ = static_cast<const T*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride;
  const T* gK = static_cast<const T*>(p.k) + b * p.k_batch_stride + h_kv * p.k_head_stride;

  float acc = 0.0f;
  for (int d0 = 0; d0 < p.head_dim; d0 += kTile) {
    const int d = d0 + tx;
    sQ[ty][tx] = (i0 + ty < p.seqlen_q && d < p.head_dim) ? to_float(gQ[(i0 + ty) * p.q_row_stride + d]) : 0.0f;
    sK[ty][tx] = (j0 + ty < p.seqlen_k && d < p.head_dim) ? to_float(gK[(j0 + ty) * p.k_row_stride + d]) : 0.0f;
    __syncthreads();  // both tiles are complete before any thread reads them
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += sQ[ty][kk] * sK[tx][kk];
    __syncthreads();  // every thread is done reading before the next tiles overwrite them
  }
  const int i = i0 + ty, j = j0 + tx;
  if (i < p.seqlen_q && j < p.seqlen_k) {
    // Scores in natural-log units, -inf where the mask hides the key.
    const ScoreMod scores(p, b, h, p.mask_for().diag);
    const float s = scores.score(acc, i, j) * scores.lse_scale();
    gS[(static_cast<std::int64_t>(bh) * p.seqlen_q + i) * p.seqlen_k + j] = p.mask_for().visible(i, j) ? s : -INFINITY;
  }
}

// Tree reduction of one value per thread over the CTA through shared memory.
// Returns the result to every thread; red[] may be reused after it returns.
template <class Op> __device__ float block_reduce(float x, float* red, Op op) {
  red[threadIdx.x] = x;
  __syncthreads();  // all partial values are in red[]
  for (int stride = kSoftmaxThreads / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) red[threadIdx.x] = op(red[threadIdx.x], red[threadIdx.x + stride]);
    __syncthreads();  // this level is complete before the next reads it
  }
  const float result = red[0];
  __syncthreads();  // everyone has read red[0] before red[] is reused
  return result;
}

__global__ void __launch_bounds__(kSoftmaxThreads) fwd_01_naive_softmax_kernel(const __grid_constant__ FwdParams p, float* workspace) {
  __shared__ float red[kSoftmaxThreads];
  const std::int64_t row = blockIdx.x;  // (b * heads_q + h) * seqlen_q + i
  float* gS = workspace + row * p.seqlen_k;

  float row_max = -INFINITY;
  for (int j = threadIdx.x; j < p.seqlen_k; j += kSoftmaxThreads) row_max = fmaxf(row_max, gS[j]);
  row_max = block_reduce(row_max, red, [](float a, float b) { return fmaxf(a, b); });

  float row_sum = 0.0f;
  if (row_max != -INFINITY) {  // a fully masked row keeps P = 0
    for (int j = threadIdx.x; j < p.seqlen_k; j += kSoftmaxThreads) {
      const float e = expf(gS[j] - row_max);
      gS[j] = e;
      row_sum += e;
    }
  }
  row_sum = block_reduce(row_sum, red, [](float a, float b) { return a + b; });

  // The sink joins the denominator (add_sink): P shrinks by the returned factor.
  const int i = static_cast<int>(row % p.seqlen_q);
  const int bh = static_cast<int>(row / p.seqlen_q);
  const int b = bh / p.heads_q, h = bh % p.heads_q;
  float lse = row_lse(row_max, row_sum);
  const float inv_sum = (row_sum > 0.0f ? 1.0f / row_sum : 0.0f) * add_sink(lse, ScoreMod::sink(p, h));
  for (int j = threadIdx.x; j < p.seqlen_k; j += kSoftmaxThreads) gS[j] = row_max == -INFINITY ? 0.0f : gS[j] * inv_sum;

  if (threadIdx.x == 0 && p.lse != nullptr) p.lse[p.lse_offset(b, h, i)] = lse;
}

template <class T>
__global__ void fwd_01_naive_pv_kernel(const __grid_constant__ FwdParams p, const float* workspace) {
  __shared__ float sP[kTile][kTile + 1];
  __shared__ float sV[kTile][kTile + 1];
  const int bh = blockIdx.z;
  const int b = bh / p.heads_q, h = bh % p.heads_q, h_kv = h / p.group_size;
  const int i0 = blockIdx.y * kTile, d0 = blockIdx.x * kTile;
  const int ty = threadIdx.y, tx = threadIdx.x;
  const float* gP = workspace + static_cast<std::int64_t>(bh) * p.seqlen_q * p.seqlen_k;
  const T* gV = static_cast<const T*>(p.v) + b * p.v_batch_stride + h_kv * p.v_head_stride;

  float acc = 0.0f;
  for (int j0 = 0; j0 < p.seqlen_k; j0 += kTile) {
    sP[ty][tx] = (i0 + ty < p.seqlen_q && j0 + tx < p.seqlen_k) ? gP[static_cast<std::int64_t>(i0 + ty) * p.seqlen_k + j0 + tx] : 0.0f;
    sV[ty][tx] = (j0 + ty < p.seqlen_k && d0 + tx < p.head_dim) ? to_float(gV[(j0 + ty) * p.v_row_stride + d0 + tx]) : 0.0f;
    __syncthreads();  // both tiles are complete before any thread reads them
#pragma unroll
    for (int jj = 0; jj < kTile; ++jj) acc += sP[ty][jj] * sV[jj][tx];
    __syncthreads();  // every thread is done reading before the next tiles overwrite them
  }
  const int i = i0 + ty, d = d0 + tx;
  if (i < p.seqlen_q && d < p.head_dim) {
    T* gO = static_cast<T*>(p.o) + b * p.o_batch_stride + h * p.o_head_stride;
    gO[i * p.o_row_stride + d] = from_float<T>(acc);
  }
}

std::string naive_check(const FwdParams& p, const DeviceInfo&) {
  const long long bh = static_cast<long long>(p.batch) * p.heads_q;
  if (std::string why = grid_yz_reason("batch * heads_q", bh); !why.empty()) return why;
  if (std::string why = grid_yz_reason("seqlen_q / 16", (p.seqlen_q + kTile - 1) / kTile); !why.empty()) return why;
  if (bh * p.seqlen_q > INT32_MAX) return "batch * heads_q * seqlen_q exceeds naive's limit of 2^31 - 1 softmax rows";
  return {};
}

cudaError_t naive_run(const FwdParams& p, void* workspace, cudaStream_t stream) {
  float* gS = static_cast<float*>(workspace);
  return dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const dim3 block(kTile, kTile);
    const unsigned bh = static_cast<unsigned>(p.batch * p.heads_q);
    const unsigned q_tiles = static_cast<unsigned>((p.seqlen_q + kTile - 1) / kTile);
    fwd_01_naive_scores_kernel<T><<<dim3((p.seqlen_k + kTile - 1) / kTile, q_tiles, bh), block, 0, stream>>>(p, gS);
    fwd_01_naive_softmax_kernel<<<bh * static_cast<unsigned>(p.seqlen_q), kSoftmaxThreads, 0, stream>>>(p, gS);
    fwd_01_naive_pv_kernel<T><<<dim3((p.head_dim + kTile - 1) / kTile, q_tiles, bh), block, 0, stream>>>(p, gS);
    return cudaGetLastError();
  });
}

}  // namespace

const FwdVariant* variant_naive() {
  static const FwdVariant v = [] {
    FwdVariant v;
    v.min_compute_capability = 80;
    v.dtype_mask = dtype_bit(DType::f32) | dtype_bit(DType::f16) | dtype_bit(DType::bf16);
    v.max_head_dim = kMaxHeadDim;  // any head dim: the GEMMs tile it with bounds checks
    v.alignment = 0;               // element alignment is enough: scalar loads
    v.features = kAllFeatures;
    v.check = naive_check;
    v.workspace_bytes = naive_workspace_bytes;
    v.run = naive_run;
    return v;
  }();
  return &v;
}

}  // namespace flash::detail
