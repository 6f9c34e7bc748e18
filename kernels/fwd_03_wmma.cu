// fwd_03_wmma: the first tensor-core rung, through nvcuda::wmma.
//
// What changed from fwd_02_tiled: S = Q K^T and O += P V run on tensor cores
// (16 x 16 x 16 wmma fragments, fp32 accumulation) from f16/bf16 tiles in
// shared memory, instead of fp32 FMAs on CUDA cores. Each warp owns 16 query
// rows; the online softmax is the same as before.
// Why it is faster: one mma instruction does 4096 multiply-adds.
// What it cannot do: wmma fragments have an opaque register layout, so the
// softmax cannot touch S in registers. S goes to shared memory (fp32), P
// comes back as f16/bf16, and the O accumulator lives in shared memory and is
// loaded, rescaled and stored around every tile's P V. fwd_04_mma removes all
// three round trips by using mma.sync with its documented layout.
// Measured on the H200 (2026-11-21, bf16, 16k tokens, seq 4096): hdim 128
// 72.4 TFLOPS (2.2x tiled), 67.6 causal; hdim 64 66.9, hdim 256 34.4 (the
// shared-memory O round trip grows with the head dim).
// Registers: 95 / 152 / 113 (hdim 64 / 128 / 256), no spills.
// Resources: 4 warps; 64 query rows x 64 keys (32 at hdim 256); shared memory
// hdim 64: 72 KB, 128: 112 KB, 256: 148 KB.
// Run it: ./runner --kernel wmma ; ./bench --kernel wmma --seq 4096 --dhead 128
#include <mma.h>

#include "common/copy.cuh"
#include "common/launch_limits.h"
#include "common/fa2_forward.cuh"
#include "common/smem_layout.cuh"

namespace flash::detail {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kWarps = 4, kThreads = kWarps * 32, kBlockM = kWarps * 16;
constexpr int kPadT = 8;   // 16-bit tiles: +16 bytes per row
constexpr int kPadF = 4;   // fp32 tiles: +16 bytes per row

template <int kHeadDim> struct WmmaConfig {
  static constexpr int kBlockN = kHeadDim <= 128 ? 64 : 32;
  using QKVLayout = PaddedLayout<kHeadDim, kPadT>;
  static constexpr int kStrideT = kHeadDim + kPadT;   // Q, K, V rows (elements)
  static constexpr int kStrideS = kBlockN + kPadF;    // S rows (floats)
  static constexpr int kStrideP = kBlockN + kPadT;    // P rows (elements)
  static constexpr int kStrideO = kHeadDim + kPadF;   // O rows (floats)
  static constexpr std::size_t kBytes = (kBlockM + 2 * kBlockN) * kStrideT * 2 + kBlockM * kStrideS * 4 +
                                        kBlockM * kStrideP * 2 + kBlockM * kStrideO * 4;
};

template <class T, int kHeadDim>
__global__ void __launch_bounds__(kThreads) fwd_03_wmma_kernel(const __grid_constant__ FwdParams p) {
  using Cfg = WmmaConfig<kHeadDim>;
  constexpr int kBlockN = Cfg::kBlockN;
  extern __shared__ uint4 smem_u4[];
  T* sQ = reinterpret_cast<T*>(smem_u4);
  T* sK = sQ + kBlockM * Cfg::kStrideT;
  T* sV = sK + kBlockN * Cfg::kStrideT;
  float* sS = reinterpret_cast<float*>(sV + kBlockN * Cfg::kStrideT);
  T* sP = reinterpret_cast<T*>(sS + kBlockM * Cfg::kStrideS);
  float* sO = reinterpret_cast<float*>(sP + kBlockM * Cfg::kStrideP);

  const int m0 = blockIdx.x * kBlockM, h = blockIdx.y, b = blockIdx.z, h_kv = h / p.group_size;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int w0 = warp * 16;               // this warp's first row in the block
  const int my_row = w0 + lane % 16;      // lanes l and l + 16 share a row ...
  const int my_half = lane / 16;          // ... and split its keys and dims in halves

  const T* gQ = static_cast<const T*>(p.q) + b * p.q_batch_stride + h * p.q_head_stride + m0 * p.q_row_stride;
  const T* gK = static_cast<const T*>(p.k) + b * p.k_batch_stride + h_kv * p.k_head_stride;
  const T* gV = static_cast<const T*>(p.v) + b * p.v_batch_stride + h_kv * p.v_head_stride;
  copy_g2s_tile<typename Cfg::QKVLayout, kBlockM, kHeadDim, kThreads, false>(sQ, gQ, p.q_row_stride, p.seqlen_q - m0);
  for (int i = lane; i < 16 * kHeadDim; i += 32) sO[(w0 + i / kHeadDim) * Cfg::kStrideO + i % kHeadDim] = 0.0f;

  // The key tiles this block sees (common/mask.h).
  const Mask mask = p.mask_for();
  const TileRange tiles = mask.key_tiles<kBlockN>(m0, kBlockM);
  const ScoreMod scores(p);
  float row_max = -INFINITY, row_sum = 0.0f;  // of my_row; this lane's half of the keys in row_sum

  for (int n0 = tiles.begin * kBlockN; n0 < tiles.end * kBlockN; n0 += kBlockN) {
    copy_g2s_tile<typename Cfg::QKVLayout, kBlockN, kHeadDim, kThreads, false>(sK, gK + n0 * p.k_row_stride,
                                                                               p.k_row_stride, p.seqlen_k - n0);
    copy_g2s_tile<typename Cfg::QKVLayout, kBlockN, kHeadDim, kThreads, false>(sV, gV + n0 * p.v_row_stride,
                                                                               p.v_row_stride, p.seqlen_k - n0);
    __syncthreads();  // Q (first pass), K and V are complete before any warp reads them

    // S (this warp's 16 rows x kBlockN keys) = Q K^T, one 16 x 16 block at a time, into shared memory.
    for (int j = 0; j < kBlockN / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> s;
      wmma::fill_fragment(s, 0.0f);
      for (int k = 0; k < kHeadDim / 16; ++k) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::col_major> bk;  // K^T: column n is key n
        wmma::load_matrix_sync(a, sQ + w0 * Cfg::kStrideT + k * 16, Cfg::kStrideT);
        wmma::load_matrix_sync(bk, sK + j * 16 * Cfg::kStrideT + k * 16, Cfg::kStrideT);
        wmma::mma_sync(s, a, bk, s);
      }
      wmma::store_matrix_sync(sS + w0 * Cfg::kStrideS + j * 16, s, Cfg::kStrideS, wmma::mem_row_major);
    }
    __syncwarp();  // the warp's S rows are in shared memory before lanes read other lanes' entries

    // Online softmax on my_row, this lane's half of the keys.
    const int row = m0 + my_row;
    const float* s_row = sS + my_row * Cfg::kStrideS + my_half * (kBlockN / 2);
    float s_val[kBlockN / 2];
    float tile_max = -INFINITY;
#pragma unroll
    for (int j = 0; j < kBlockN / 2; ++j) {
      const int key = n0 + my_half * (kBlockN / 2) + j;
      s_val[j] = mask.visible(row, key) ? scores.score(s_row[j], row, key) : -INFINITY;
      tile_max = fmaxf(tile_max, s_val[j]);
    }
    const float new_max = fmaxf(row_max, fmaxf(tile_max, __shfl_xor_sync(0xffffffffu, tile_max, 16)));
    const float max_scaled = new_max == -INFINITY ? 0.0f : new_max * scores.exp2_scale();  // see fwd_02_tiled
    const float rescale = exp2f(row_max * scores.exp2_scale() - max_scaled);
    row_max = new_max;
    float tile_sum = 0.0f;
    T* p_row = sP + my_row * Cfg::kStrideP + my_half * (kBlockN / 2);
#pragma unroll
    for (int j = 0; j < kBlockN / 2; ++j) {
      const float pj = exp2f(fmaf(s_val[j], scores.exp2_scale(), -max_scaled));
      tile_sum += pj;
      p_row[j] = from_float<T>(pj);
    }
    row_sum = row_sum * rescale + tile_sum;
    // The O accumulator is in shared memory: rescale my half of my row there.
    float* o_row = sO + my_row * Cfg::kStrideO + my_half * (kHeadDim / 2);
    for (int d = 0; d < kHeadDim / 2; ++d) o_row[d] *= rescale;
    __syncwarp();  // P and the rescaled O rows are complete before the wmma loads read them

    // O (16 x kHeadDim) += P V, loading and storing the accumulator around each 16-column block.
    for (int j = 0; j < kHeadDim / 16; ++j) {
      wmma::fragment<wmma::accumulator, 16, 16, 16, float> o;
      wmma::load_matrix_sync(o, sO + w0 * Cfg::kStrideO + j * 16, Cfg::kStrideO, wmma::mem_row_major);
      for (int k = 0; k < kBlockN / 16; ++k) {
        wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a;
        wmma::fragment<wmma::matrix_b, 16, 16, 16, T, wmma::row_major> bv;
        wmma::load_matrix_sync(a, sP + w0 * Cfg::kStrideP + k * 16, Cfg::kStrideP);
        wmma::load_matrix_sync(bv, sV + k * 16 * Cfg::kStrideT + j * 16, Cfg::kStrideT);
        wmma::mma_sync(o, a, bv, o);
      }
      wmma::store_matrix_sync(sO + w0 * Cfg::kStrideO + j * 16, o, Cfg::kStrideO, wmma::mem_row_major);
    }
    __syncthreads();  // every warp is done with K and V before the next tile overwrites them
  }

  // Epilogue: my half of my row of O, divided by the row sum; LSE from lane < 16.
  __syncwarp();  // the last wmma stores of this warp's O rows are visible to all its lanes
  const float sum = row_sum + __shfl_xor_sync(0xffffffffu, row_sum, 16);
  const int row = m0 + my_row;
  if (row < p.seqlen_q) {
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    T* gO = static_cast<T*>(p.o) + b * p.o_batch_stride + h * p.o_head_stride + row * p.o_row_stride;
    const float* o_row = sO + my_row * Cfg::kStrideO;
    for (int d = my_half * (kHeadDim / 2); d < (my_half + 1) * (kHeadDim / 2); d += 4)
      store4_from_float(gO + d, o_row[d] * inv, o_row[d + 1] * inv, o_row[d + 2] * inv, o_row[d + 3] * inv);
    if (p.lse != nullptr && my_half == 0)
      p.lse[p.lse_offset(b, h, row)] = row_lse(row_max * scores.lse_scale(), sum);
  }
}

std::string wmma_check(const FwdParams& p, const DeviceInfo& dev) {
  std::string err;
  dispatch_tc_head_dim(p.head_dim, [&](auto hd) {
    err = check_head_batch_grid(p, dev, WmmaConfig<decltype(hd)::value>::kBytes);
  });
  return err;
}

cudaError_t wmma_run(const FwdParams& p, void*, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  const auto launch = [&](auto tag, auto hd) {
    using T = typename decltype(tag)::type;
    constexpr int kHeadDim = decltype(hd)::value;
    auto kernel = fwd_03_wmma_kernel<T, kHeadDim>;
    constexpr std::size_t smem = WmmaConfig<kHeadDim>::kBytes;
    err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
    if (err != cudaSuccess) return;
    kernel<<<dim3((p.seqlen_q + kBlockM - 1) / kBlockM, p.heads_q, p.batch), kThreads, smem, stream>>>(p);
    err = cudaGetLastError();
  };
  if (p.dtype == DType::f16) dispatch_tc_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__half>{}, hd); });
  else dispatch_tc_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__nv_bfloat16>{}, hd); });
  return err;
}

}  // namespace

const FwdVariant* variant_wmma() {
  // A teaching rung: the score modifiers (softcap, ALiBi, sinks) are left to
  // the rungs from mma on, and a call with one is refused.
  static const FwdVariant v = [] {
    FwdVariant w = tensor_core_variant(wmma_check, wmma_run);
    w.features &= ~kScoreFeatures;
    return w;
  }();
  return &v;
}

}  // namespace flash::detail
