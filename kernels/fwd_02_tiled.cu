// fwd_02_tiled: the FlashAttention-2 algorithm on CUDA cores.
//
// What changed from fwd_01_naive: one fused kernel. A CTA owns kBlockM query
// rows of one (batch, head); it walks the K/V sequence in tiles of kBlockN
// rows staged in shared memory, keeps a running row max and row sum (the
// online softmax) and rescales its fp32 O accumulator as the max grows, so S
// and P never leave the chip and no N x N buffer exists.
// Why it is faster: HBM traffic drops from O(N^2) to O(N * d) per head (Q, K,
// V read, O written), and each thread computes a register micro-tile (rows x
// keys for S, rows x dims for O) from 16-byte shared-memory loads, so one
// load feeds several FMAs. Causal: tiles entirely above the diagonal are
// never loaded; only the tail and diagonal tiles are masked.
// Layout: 4 warps; a warp covers 4 row groups of kRowsPerThread rows; the 8
// lanes of a row group split the tile's keys (key = lane + 8 j) and the head
// dim (4-wide chunks, chunk = lane + 8 k), so row reductions are 3 shuffles.
// Shared rows are padded by 4 floats: a float4 read of 8 lanes from 8
// different rows then lands in 8 different 16-byte bank groups.
// Measured on the H200 (2026-11-21, bf16, hdim 128, 16k tokens): 32.3 TFLOPS
// at seq 4096 (5.4x naive), 30.3 causal: about half the fp32 FMA peak.
// Registers: 131-168 per thread, no spills.
// Resources per CTA (fp32 tiles): hdim 32: 45 KB, 64: 69 KB, 96: 94 KB,
// 128: 77 KB, 256: 104 KB of dynamic shared memory; 128 threads.
// Session 41 (2026-11-29, build time): the paged cache is a run-time branch
// per tile instead of a template flag (15 kernels in this TU, not 30), and
// the TU is compiled to PTX once for sm_80 and sm_90 (kernels/CMakeLists.txt,
// the portable rungs). H200, bf16, hdim 128, 4 x 4096, one call, two rounds,
// session 40's build -> this one: 24.7 -> 28.3 TFLOPS (+14.6%), causal 24.4
// -> 26.5 (+8.3%); paged page 16 (4 x 2048) 26.6 -> 25.7 (-3.4%). Earlier
// figures above are from the rung as first written, before the score rules.
// Run it: ./runner --kernel tiled ; ./bench --kernel tiled --seq 4096 --dhead 128
#include <cmath>
#include <string>

#include "common/head_dims.h"
#include "common/launch_limits.h"
#include "common/mask.h"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/paged_kv.cuh"
#include "common/params.h"
#include "common/reduce.cuh"
#include "common/scores.h"
#include "common/tile_copy.cuh"
#include "common/variant.h"
#include "flash/variants.h"

namespace flash::detail {
namespace {

constexpr int kWarps = 4;
constexpr int kThreads = kWarps * 32;
constexpr int kRowLanes = 8;                     // lanes sharing one row group
constexpr int kRowGroupsPerWarp = 32 / kRowLanes;
constexpr int kPad = 4;                          // floats of padding per shared row

template <int kHeadDim> struct TiledConfig {
  // Smaller tiles at large head dims keep Q, K, V and P tiles in shared memory.
  static constexpr int kRowsPerThread = kHeadDim <= 128 ? 4 : 2;
  static constexpr int kBlockM = kWarps * kRowGroupsPerWarp * kRowsPerThread;
  static constexpr int kBlockN = kHeadDim <= 96 ? 64 : 32;
  static constexpr int kKeysPerThread = kBlockN / kRowLanes;
  static constexpr int kDimChunks = kHeadDim / (4 * kRowLanes);  // 4-wide chunks of O per thread
  static constexpr int kStrideQKV = kHeadDim + kPad;
  static constexpr int kStrideP = kBlockN + kPad;
  static constexpr int kSmemFloats = (kBlockM + 2 * kBlockN) * kStrideQKV + kBlockM * kStrideP;
  static constexpr std::size_t kSmemBytes = kSmemFloats * sizeof(float);
  static_assert(kHeadDim % (4 * kRowLanes) == 0, "head dim must split into 4-wide chunks over 8 lanes");
};

// A paged KV cache (p.page_table): each K/V row is looked up in the page
// table. A run-time branch per tile, not a template flag: the copy is a
// small part of this rung's time, and one kernel per (dtype, head dim)
// halves the TU's compile time (session 41).
template <class T, int kHeadDim>
__global__ void __launch_bounds__(kThreads) fwd_02_tiled_kernel(const __grid_constant__ FwdParams p) {
  using Cfg = TiledConfig<kHeadDim>;
  constexpr int kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN, kRows = Cfg::kRowsPerThread;
  constexpr int kKeys = Cfg::kKeysPerThread, kChunks = Cfg::kDimChunks;

  extern __shared__ float4 smem_f4[];  // float4: 16-byte aligned
  float* sQ = reinterpret_cast<float*>(smem_f4);
  float* sK = sQ + kBlockM * Cfg::kStrideQKV;
  float* sV = sK + kBlockN * Cfg::kStrideQKV;
  float* sP = sV + kBlockN * Cfg::kStrideQKV;

  const int m_block = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int h_kv = h / p.group_size;
  const int m0 = m_block * kBlockM;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row_lane = lane % kRowLanes;                                  // which keys / dims
  const int row0 = (warp * kRowGroupsPerWarp + lane / kRowLanes) * kRows;  // first of this thread's rows

  // This sequence (a variable-length batch: its packed rows; seq_span).
  if (p.status != nullptr && p.status[0] != 0) return;  // bad metadata: nothing is written
  const auto seq = p.seq_span(b);
  if (m0 >= seq.seqlen_q && p.cu_seqlens_q != nullptr) return;
  const T* gQ = static_cast<const T*>(p.q) + seq.q + h * p.q_head_stride + m0 * p.q_row_stride;
  const T* gK = static_cast<const T*>(p.k) + seq.k + h_kv * p.k_head_stride;  // paged: head h_kv of page 0
  const T* gV = static_cast<const T*>(p.v) + seq.v + h_kv * p.v_head_stride;

  copy_g2s_as_float<T, kBlockM, kHeadDim, Cfg::kStrideQKV, kThreads>(gQ, p.q_row_stride, seq.seqlen_q - m0, sQ);

  // The key tiles this block can see (common/mask.h); the rest are never loaded.
  const Mask mask = p.mask_for(seq.seqlen_q, seq.seqlen_k);
  const RowBlockKeys keys = mask.row_block(m0, kBlockM);
  const TileRange tiles = keys.key_tiles<kBlockN>();
  const ScoreMod scores(p, b, h, mask.diag);

  float acc[kRows][kChunks][4];
  float row_max[kRows], row_sum[kRows];
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    row_max[r] = -INFINITY;
    row_sum[r] = 0.0f;
#pragma unroll
    for (int c = 0; c < kChunks; ++c)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[r][c][e] = 0.0f;
  }

  for (int n_block = tiles.begin; n_block < tiles.end; ++n_block) {
    const int n0 = n_block * kBlockN;
    if (p.page_table != nullptr) {
      copy_g2s_rows_as_float<T, kBlockN, kHeadDim, Cfg::kStrideQKV, kThreads>(
          [&](int r) { return gK + paged_row_offset(p, p.k_batch_stride, p.k_row_stride, b, n0 + r); },
          seq.seqlen_k - n0, sK);
      copy_g2s_rows_as_float<T, kBlockN, kHeadDim, Cfg::kStrideQKV, kThreads>(
          [&](int r) { return gV + paged_row_offset(p, p.v_batch_stride, p.v_row_stride, b, n0 + r); },
          seq.seqlen_k - n0, sV);
    } else {
      copy_g2s_as_float<T, kBlockN, kHeadDim, Cfg::kStrideQKV, kThreads>(gK + n0 * p.k_row_stride, p.k_row_stride,
                                                                         seq.seqlen_k - n0, sK);
      copy_g2s_as_float<T, kBlockN, kHeadDim, Cfg::kStrideQKV, kThreads>(gV + n0 * p.v_row_stride, p.v_row_stride,
                                                                         seq.seqlen_k - n0, sV);
    }
    __syncthreads();  // Q (first pass), K and V tiles are complete before S = Q K^T reads them

    // S = Q K^T for this thread's rows x keys, in raw (unscaled) units.
    float s[kRows][kKeys];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int j = 0; j < kKeys; ++j) s[r][j] = 0.0f;
#pragma unroll 4
    for (int d = 0; d < kHeadDim; d += 4) {
      float4 q[kRows], k[kKeys];
#pragma unroll
      for (int r = 0; r < kRows; ++r) q[r] = *reinterpret_cast<const float4*>(sQ + (row0 + r) * Cfg::kStrideQKV + d);
#pragma unroll
      for (int j = 0; j < kKeys; ++j)
        k[j] = *reinterpret_cast<const float4*>(sK + (row_lane + kRowLanes * j) * Cfg::kStrideQKV + d);
#pragma unroll
      for (int r = 0; r < kRows; ++r)
#pragma unroll
        for (int j = 0; j < kKeys; ++j)
          s[r][j] += q[r].x * k[j].x + q[r].y * k[j].y + q[r].z * k[j].z + q[r].w * k[j].w;
    }

    // The score rule, then the mask only where it can matter (the tiles
    // Mask says hold a hidden key for some row of the block).
    const bool needs_mask = keys.needs_mask(n0, kBlockN);
#pragma unroll
    for (int r = 0; r < kRows; ++r)
#pragma unroll
      for (int j = 0; j < kKeys; ++j) {
        const int row = m0 + row0 + r, key = n0 + row_lane + kRowLanes * j;
        s[r][j] = scores.score(s[r][j], row, key);
        if (needs_mask && !mask.visible(row, key)) s[r][j] = -INFINITY;
      }

    // Online softmax: raise the running max, rescale what was accumulated
    // under the old max by exp2((old - new) * scale * log2 e), add the new terms.
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float tile_max = s[r][0];
#pragma unroll
      for (int j = 1; j < kKeys; ++j) tile_max = fmaxf(tile_max, s[r][j]);
      const float new_max = fmaxf(row_max[r], group_max<kRowLanes>(tile_max));
      // A row that has seen only masked keys keeps max -inf; subtract 0 instead
      // so that exp2 gets -inf (-> 0) rather than NaN from -inf - -inf.
      const float max_scaled = new_max == -INFINITY ? 0.0f : new_max * scores.exp2_scale();
      const float rescale = exp2f(row_max[r] * scores.exp2_scale() - max_scaled);
      row_max[r] = new_max;
      float tile_sum = 0.0f;
#pragma unroll
      for (int j = 0; j < kKeys; ++j) {
        s[r][j] = exp2f(fmaf(s[r][j], scores.exp2_scale(), -max_scaled));
        tile_sum += s[r][j];
      }
      row_sum[r] = row_sum[r] * rescale + tile_sum;  // per-thread partial; reduced in the epilogue
#pragma unroll
      for (int c = 0; c < kChunks; ++c)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[r][c][e] *= rescale;
#pragma unroll
      for (int j = 0; j < kKeys; ++j) sP[(row0 + r) * Cfg::kStrideP + row_lane + kRowLanes * j] = s[r][j];
    }
    __syncthreads();  // P is complete before any thread reads other lanes' keys from it

    // O += P V: this thread's rows x 4-wide dim chunks.
#pragma unroll 2
    for (int n = 0; n < kBlockN; n += 4) {
      float4 pr[kRows];
#pragma unroll
      for (int r = 0; r < kRows; ++r) pr[r] = *reinterpret_cast<const float4*>(sP + (row0 + r) * Cfg::kStrideP + n);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
#pragma unroll
        for (int c = 0; c < kChunks; ++c) {
          const float4 v =
              *reinterpret_cast<const float4*>(sV + (n + e) * Cfg::kStrideQKV + 4 * (row_lane + kRowLanes * c));
#pragma unroll
          for (int r = 0; r < kRows; ++r) {
            const float pe = e == 0 ? pr[r].x : e == 1 ? pr[r].y : e == 2 ? pr[r].z : pr[r].w;
            acc[r][c][0] += pe * v.x;
            acc[r][c][1] += pe * v.y;
            acc[r][c][2] += pe * v.z;
            acc[r][c][3] += pe * v.w;
          }
        }
      }
    }
    __syncthreads();  // every thread is done with K, V and P before the next tile overwrites them
  }

  // Epilogue: O = acc / row_sum, LSE = max * scale + ln(row_sum), then the
  // sink (add_sink); rows that saw no key get O = 0 and LSE = -inf (or the sink).
  T* gO = static_cast<T*>(p.o) + seq.o + h * p.o_head_stride;
#pragma unroll
  for (int r = 0; r < kRows; ++r) {
    const int row = m0 + row0 + r;
    const float sum = group_sum<kRowLanes>(row_sum[r]);
    if (row >= seq.seqlen_q) continue;
    float lse = row_lse(row_max[r] * scores.lse_scale(), sum);
    const float inv_sum = (sum > 0.0f ? 1.0f / sum : 0.0f) * add_sink(lse, ScoreMod::sink(p, h));
#pragma unroll
    for (int c = 0; c < kChunks; ++c) {
      store4_from_float(gO + row * p.o_row_stride + 4 * (row_lane + kRowLanes * c), acc[r][c][0] * inv_sum,
                        acc[r][c][1] * inv_sum, acc[r][c][2] * inv_sum, acc[r][c][3] * inv_sum);
    }
    if (p.lse != nullptr && row_lane == 0) {
      p.lse[p.lse_offset(b, h, seq.lse_row0 + row)] = lse;
    }
  }
}

std::string tiled_check(const FwdParams& p, const DeviceInfo& dev) {
  std::string err;
  dispatch_head_dim(p.head_dim, [&](auto hd) {
    err = check_head_batch_grid(p, dev, TiledConfig<decltype(hd)::value>::kSmemBytes);
  });
  return err;
}

cudaError_t tiled_run(const FwdParams& p, void*, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;  // stays so only for a head dim that is not built
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_head_dim(p.head_dim, [&](auto hd) {
      constexpr int kHeadDim = decltype(hd)::value;
      using Cfg = TiledConfig<kHeadDim>;
      const auto kernel = fwd_02_tiled_kernel<T, kHeadDim>;
      err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Cfg::kSmemBytes);
      if (err != cudaSuccess) return;
      const dim3 grid((p.seqlen_q + Cfg::kBlockM - 1) / Cfg::kBlockM, p.heads_q, p.batch);
      kernel<<<grid, kThreads, Cfg::kSmemBytes, stream>>>(p);
      err = cudaGetLastError();
    });
  });
  return err;
}

}  // namespace

const FwdVariant* variant_tiled() {
  static const FwdVariant v = [] {
    FwdVariant v;
    v.min_compute_capability = 80;
    v.dtype_mask = dtype_bit(DType::f32) | dtype_bit(DType::f16) | dtype_bit(DType::bf16);
    v.head_dims = AllHeadDims::data();
    v.num_head_dims = AllHeadDims::size();
    v.max_head_dim = 256;
    v.alignment = 16;  // 16-byte vector loads of every row
    v.features = kAllFeatures | kFeatureVarlen | kFeaturePaged;
    v.check = tiled_check;
    v.workspace_bytes = nullptr;
    v.run = tiled_run;
    return v;
  }();
  return &v;
}

}  // namespace flash::detail
