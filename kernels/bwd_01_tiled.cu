// bwd_01_tiled: the attention backward on CUDA cores, the GPU reference of
// the backward ladder.
//
// What it does: the FlashAttention backward without tensor cores. The
// forward is recomputed tile by tile: P = exp2(S * scale * log2 e - LSE *
// log2 e) from the forward's LSE (no online softmax: the row statistics are
// already known), and dS = P * (dP - rowsum(dO * O)) with dP = dO V^T, so no
// N x N matrix exists. Two kernels, each owning its outputs:
//   dkv: a CTA owns kBlock keys of one (batch, KV head); it walks every query
//        tile of every query head in the GQA group, keeping dK and dV in
//        registers (thread = key x a stripe of dims);
//   dq:  a CTA owns kBlock query rows of one (batch, head); it walks the key
//        tiles, keeping dQ in registers.
// Each output element is summed by one thread in a fixed order: no atomics,
// so the result is deterministic whatever the `deterministic` flag says.
// The price is recomputing S and dP in both kernels (7 tile products per
// tile pair instead of 5), which the tensor-core variant avoids with fp32
// atomics for dQ.
// Tiles are fp32 in shared memory (rows padded by 4 floats); thread (i, j) of
// the 16 x 16 grid computes S, P, dP and dS for query i and key j.
// Measured on the H200 (2026-11-21, bf16, hdim 128, seq 2048, batch 8, 16
// heads): 8.0 TFLOPS (backward FLOPs = 2.5x the forward's), a quarter of
// the CUDA-core forward (fwd_02_tiled) and 32x below bwd_02_mma.
// Variable-length batches (cu_seqlens_q): each CTA takes its sequence's
// offsets, lengths and mask from seq_span(b) / grad_span(b) (a runtime
// branch: this is the reference rung) and CTAs past their sequence's keys
// (dkv) or rows (dq) exit; the grids are sized by max_seqlen_k / max_seqlen_q.
// Run it: ./runner --bwd --kernel tiled ; ./bench --bwd --kernel tiled --seq 4096 --dhead 128
#include <cmath>
#include <string>

#include "common/backward.h"
#include "common/bwd_params.h"
#include "common/head_dims.h"
#include "common/mask.h"
#include "common/numeric.cuh"
#include "common/scores.h"
#include "common/tile_copy.cuh"

namespace flash::detail {
namespace {

constexpr int kBlock = 16;                // keys per dkv CTA, query rows per dq CTA, and the tile edge
constexpr int kThreads = kBlock * kBlock;  // one thread per (query, key) of a tile
constexpr int kPad = 4;

template <int kHeadDim> struct TiledBwd {
  static constexpr int kStride = kHeadDim + kPad;
  static constexpr int kDimsPerThread = kHeadDim / kBlock;  // dims of an output row per thread
  // Four [kBlock][kStride] tiles, then P (or dS) and dS tiles and two row vectors.
  static constexpr int kSmemFloats = 4 * kBlock * kStride + 2 * kBlock * (kBlock + 1) + 2 * kBlock;
  static constexpr std::size_t kSmemBytes = kSmemFloats * sizeof(float);
};

// Rows [row0, row0 + kBlock) of head h of the sequence at element offset
// `seq` of a [batch or total, seqlen, heads, head_dim] tensor into an fp32
// tile; rows at or past `rows` are zeros.
template <class T, int kHeadDim>
__device__ __forceinline__ void load_tile(const void* x, std::int64_t seq, std::int64_t row_stride,
                                          std::int64_t head_stride, int h, int row0, int rows, float* tile) {
  const T* src = static_cast<const T*>(x) + seq + h * head_stride + row0 * row_stride;
  copy_g2s_as_float<T, kBlock, kHeadDim, TiledBwd<kHeadDim>::kStride, kThreads>(src, row_stride, rows - row0, tile);
}

// S, P, dP and dS for (query row m0 + i, key n0 + j) from fp32 tiles:
// returns dS (times the softcap's derivative) and stores P in *p_out. Pairs
// the Mask hides give P = dS = 0.
template <int kHeadDim>
__device__ __forceinline__ float tile_ds(const Mask& mask, const ScoreMod& scores, const float* sQ, const float* sdO,
                                         const float* sK,
                                         const float* sV, float lse2, float dpsum, int i, int j, int row, int key,
                                         float* p_out) {
  constexpr int kStride = TiledBwd<kHeadDim>::kStride;
  float s = 0.0f, dp = 0.0f;
#pragma unroll 8
  for (int c = 0; c < kHeadDim; ++c) {
    s += sQ[i * kStride + c] * sK[j * kStride + c];
    dp += sdO[i * kStride + c] * sV[j * kStride + c];
  }
  float dcap;  // the softcap's derivative (1 without one)
  const float u = scores.score(s, row, key, &dcap);
  const float prob = mask.visible(row, key) ? exp2f(u * scores.exp2_scale() - lse2) : 0.0f;
  *p_out = prob;
  return prob * (dp - dpsum) * dcap;
}

template <class T, int kHeadDim>
__global__ void __launch_bounds__(kThreads) bwd_01_tiled_dkv_kernel(const __grid_constant__ BwdParams p) {
  using Cfg = TiledBwd<kHeadDim>;
  constexpr int kStride = Cfg::kStride;
  extern __shared__ float4 smem_f4[];
  float* sK = reinterpret_cast<float*>(smem_f4);
  float* sV = sK + kBlock * kStride;
  float* sQ = sV + kBlock * kStride;
  float* sdO = sQ + kBlock * kStride;
  float* sP = sdO + kBlock * kStride;  // [query][key], padded to kBlock + 1
  float* sdS = sP + kBlock * (kBlock + 1);
  float* sLse = sdS + kBlock * (kBlock + 1);
  float* sDpsum = sLse + kBlock;

  const int n0 = blockIdx.x * kBlock, h_kv = blockIdx.y, b = blockIdx.z;
  const int i = threadIdx.x / kBlock, j = threadIdx.x % kBlock;  // S-tile coordinates
  const int key_row = threadIdx.x / kBlock, dim0 = threadIdx.x % kBlock;  // output: key, dims dim0 + kBlock * u

  // This sequence (a variable-length batch: its packed rows; seq_span).
  if (p.status != nullptr && p.status[0] != 0) return;  // bad varlen metadata: nothing is written
  const auto seq = p.seq_span(b);
  const auto grad = p.grad_span(b);
  if (n0 >= seq.seqlen_k && p.cu_seqlens_q != nullptr) return;  // past this sequence's keys (grid: max_seqlen_k)
  load_tile<T, kHeadDim>(p.k, seq.k, p.k_row_stride, p.k_head_stride, h_kv, n0, seq.seqlen_k, sK);
  load_tile<T, kHeadDim>(p.v, seq.v, p.v_row_stride, p.v_head_stride, h_kv, n0, seq.seqlen_k, sV);

  float acc_dk[Cfg::kDimsPerThread] = {}, acc_dv[Cfg::kDimsPerThread] = {};
  // The query tiles that see some key of this block (common/mask.h).
  const Mask mask = p.mask_for(seq.seqlen_q, seq.seqlen_k);
  const TileRange q_tiles = mask.query_tiles<kBlock>(n0, kBlock);
  for (int h = h_kv * p.group_size; h < (h_kv + 1) * p.group_size; ++h) {
    const ScoreMod scores(p, b, h, mask.diag);
    const std::int64_t row_base = p.ws_row0(b, h, seq.lse_row0);
    for (int m0 = q_tiles.begin * kBlock; m0 < q_tiles.end * kBlock; m0 += kBlock) {
      __syncthreads();  // the previous tile's readers are done
      load_tile<T, kHeadDim>(p.q, seq.q, p.q_row_stride, p.q_head_stride, h, m0, seq.seqlen_q, sQ);
      load_tile<T, kHeadDim>(p.dout, grad.dout, p.do_row_stride, p.do_head_stride, h, m0, seq.seqlen_q, sdO);
      if (threadIdx.x < kBlock) {  // padded arrays: rows past the sequence's seqlen_q read P = 0, dpsum = 0
        sLse[threadIdx.x] = p.lse_log2[row_base + m0 + threadIdx.x];
        sDpsum[threadIdx.x] = p.dpsum[row_base + m0 + threadIdx.x];
      }
      __syncthreads();
      float prob;
      const float ds = tile_ds<kHeadDim>(mask, scores, sQ, sdO, sK, sV, sLse[i], sDpsum[i], i, j, m0 + i, n0 + j, &prob);
      sP[i * (kBlock + 1) + j] = prob;
      sdS[i * (kBlock + 1) + j] = ds;
      __syncthreads();
      // dV += P^T dO and dK += dS^T Q for this thread's key and dims.
#pragma unroll 4
      for (int r = 0; r < kBlock; ++r) {
        const float pr = sP[r * (kBlock + 1) + key_row], dsr = sdS[r * (kBlock + 1) + key_row];
#pragma unroll
        for (int u = 0; u < Cfg::kDimsPerThread; ++u) {
          acc_dv[u] += pr * sdO[r * kStride + dim0 + kBlock * u];
          acc_dk[u] += dsr * sQ[r * kStride + dim0 + kBlock * u];
        }
      }
    }
  }
  if (n0 + key_row >= seq.seqlen_k) return;
  T* dk = static_cast<T*>(p.dk) + grad.dk + h_kv * p.dk_head_stride + (n0 + key_row) * p.dk_row_stride;
  T* dv = static_cast<T*>(p.dv) + grad.dv + h_kv * p.dv_head_stride + (n0 + key_row) * p.dv_row_stride;
#pragma unroll
  for (int u = 0; u < Cfg::kDimsPerThread; ++u) {
    dk[dim0 + kBlock * u] = from_float<T>(acc_dk[u] * p.scale);
    dv[dim0 + kBlock * u] = from_float<T>(acc_dv[u]);
  }
}

template <class T, int kHeadDim>
__global__ void __launch_bounds__(kThreads) bwd_01_tiled_dq_kernel(const __grid_constant__ BwdParams p) {
  using Cfg = TiledBwd<kHeadDim>;
  constexpr int kStride = Cfg::kStride;
  extern __shared__ float4 smem_f4[];
  float* sK = reinterpret_cast<float*>(smem_f4);
  float* sV = sK + kBlock * kStride;
  float* sQ = sV + kBlock * kStride;
  float* sdO = sQ + kBlock * kStride;
  float* sdS = sdO + kBlock * kStride;

  const int m0 = blockIdx.x * kBlock, h = blockIdx.y, b = blockIdx.z, h_kv = h / p.group_size;
  const int i = threadIdx.x / kBlock, j = threadIdx.x % kBlock;
  const int q_row = threadIdx.x / kBlock, dim0 = threadIdx.x % kBlock;  // output: row, dims dim0 + kBlock * u

  // This sequence (a variable-length batch: its packed rows; seq_span).
  if (p.status != nullptr && p.status[0] != 0) return;  // bad varlen metadata: nothing is written
  const auto seq = p.seq_span(b);
  const auto grad = p.grad_span(b);
  if (m0 >= seq.seqlen_q && p.cu_seqlens_q != nullptr) return;  // past this sequence's rows (grid: max_seqlen_q)
  load_tile<T, kHeadDim>(p.q, seq.q, p.q_row_stride, p.q_head_stride, h, m0, seq.seqlen_q, sQ);
  load_tile<T, kHeadDim>(p.dout, grad.dout, p.do_row_stride, p.do_head_stride, h, m0, seq.seqlen_q, sdO);
  const std::int64_t row = p.ws_row0(b, h, seq.lse_row0) + m0 + i;
  const float lse2 = p.lse_log2[row], dpsum = p.dpsum[row];

  float acc_dq[Cfg::kDimsPerThread] = {};
  // The key tiles this block sees (common/mask.h); the rest are never loaded.
  const Mask mask = p.mask_for(seq.seqlen_q, seq.seqlen_k);
  const ScoreMod scores(p, b, h, mask.diag);
  const TileRange tiles = mask.key_tiles<kBlock>(m0, kBlock);
  for (int n0 = tiles.begin * kBlock; n0 < tiles.end * kBlock; n0 += kBlock) {
    __syncthreads();
    load_tile<T, kHeadDim>(p.k, seq.k, p.k_row_stride, p.k_head_stride, h_kv, n0, seq.seqlen_k, sK);
    load_tile<T, kHeadDim>(p.v, seq.v, p.v_row_stride, p.v_head_stride, h_kv, n0, seq.seqlen_k, sV);
    __syncthreads();
    float prob;
    sdS[i * (kBlock + 1) + j] = tile_ds<kHeadDim>(mask, scores, sQ, sdO, sK, sV, lse2, dpsum, i, j, m0 + i, n0 + j, &prob);
    __syncthreads();
#pragma unroll 4
    for (int c = 0; c < kBlock; ++c) {  // dQ += dS K
      const float ds = sdS[q_row * (kBlock + 1) + c];
#pragma unroll
      for (int u = 0; u < Cfg::kDimsPerThread; ++u) acc_dq[u] += ds * sK[c * kStride + dim0 + kBlock * u];
    }
  }
  if (m0 + q_row >= seq.seqlen_q) return;
  T* dq = static_cast<T*>(p.dq) + grad.dq + h * p.dq_head_stride + (m0 + q_row) * p.dq_row_stride;
#pragma unroll
  for (int u = 0; u < Cfg::kDimsPerThread; ++u) dq[dim0 + kBlock * u] = from_float<T>(acc_dq[u] * p.scale);
}

std::string check(const BwdParams& p, const DeviceInfo& dev) {
  std::size_t smem = 0;
  dispatch_head_dim(p.head_dim, [&](auto hd) { smem = TiledBwd<decltype(hd)::value>::kSmemBytes; });
  return check_head_batch_grid(p, dev, smem);
}

std::size_t workspace_bytes(const BwdParams& p) { return bwd_workspace_bytes(p, /*with_dq_accum=*/false); }

cudaError_t run(const BwdParams& params, void* workspace, cudaStream_t stream) {
  BwdParams p = params;
  bind_bwd_workspace(p, workspace, /*with_dq_accum=*/false);
  cudaError_t err = bwd_preprocess(p, stream);
  if (err != cudaSuccess) return err;
  err = cudaErrorInvalidValue;
  const auto go = [&](auto tag, auto hd) {
    using T = typename decltype(tag)::type;
    constexpr int kHeadDim = decltype(hd)::value;
    constexpr std::size_t smem = TiledBwd<kHeadDim>::kSmemBytes;
    // A variable-length call's grid is sized by max_seqlen_q / max_seqlen_k,
    // either of which may be 0 (every sequence empty on that side).
    err = cudaSuccess;
    if (p.seqlen_k > 0)
      err = bwd_launch(bwd_01_tiled_dkv_kernel<T, kHeadDim>,
                       dim3((p.seqlen_k + kBlock - 1) / kBlock, p.heads_kv, p.batch), kThreads, smem, p, stream);
    if (err == cudaSuccess && p.seqlen_q > 0)
      err = bwd_launch(bwd_01_tiled_dq_kernel<T, kHeadDim>, dim3((p.seqlen_q + kBlock - 1) / kBlock, p.heads_q, p.batch),
                       kThreads, smem, p, stream);
  };
  if (p.dtype == DType::f16) dispatch_head_dim(p.head_dim, [&](auto hd) { go(TypeTag<__half>{}, hd); });
  else dispatch_head_dim(p.head_dim, [&](auto hd) { go(TypeTag<__nv_bfloat16>{}, hd); });
  return err;
}

}  // namespace

const BwdVariant* variant_bwd_tiled() {
  static const BwdVariant v = bwd_variant<AllHeadDims>(check, workspace_bytes, run);
  return &v;
}

}  // namespace flash::detail
