// The kernels every backward variant shares: the preprocess before the main
// kernels (with, for variable-length calls, the zeros of dK and dV past
// seqused_k) and the zero fill of empty calls (each variant converts its own
// dQ accumulator, whose order is its own).
// All are memory-bound and tiny next to the main kernels (O and dO are read
// once; the main kernels read Q, dO, K and V once per tile).
// The preprocess by 16-byte loads where rows allow (session 24, H100, ncu,
// 16k tokens, hdim 128): 90 -> 62 us against one element per lane; whole
// backward +2.7% at hdim 64 causal 8k with the dQ convert of bwd_seq.cuh.
// Eight lanes per row since session 33: with sixteen, half of each row's
// lanes had nothing to load at hdim 64 (a row is 128 bytes), and the
// preprocess of hdim 64 8k x 2 x 32 heads took 94 us for 134 MB (1.4 TB/s;
// ncu, H200), a fifth of the (128, 0) window's backward. Now 51 us; that
// backward +9.4% (hdim 128: +2.7%), causal hdim 64 8k +1.3% (docs/NOTES.md).
// Session 34: dense calls' preprocess zeroes the fp32 dQ accumulator too
// (each row's head_dim floats by its eight lanes; FA4's preprocess does the
// same) instead of a memset before it, and lets the Hopper dkv kernels
// start early (programmatic dependent launch, bwd_tma.cuh). H200, the (128,
// 0) window hdim 64 8k: memset 34 us + preprocess 51 us -> preprocess 70 us
// (3.9 TB/s); backward +2.8% from the zeroing, +3.3% with the launch (hdim
// 128: +0.2%, +2.2%); full 8 x 2048 hdim 128 +0.9%, hdim 256 causal 8k
// +0.7%, causal hdim 64 8k +0.4%.
// Session 67: variable-length calls' preprocess too (they kept the memset:
// 134 MB, 33 us beside the preprocess's 51 at issue 17's batch, torch.profiler
// on the H200). Two rounds of one call: issue 17's varlen backward -0.0% full,
// +0.2% causal (./bench's timing has the GPU wait for the host at each call's
// start, which hides a shorter first kernel); 16 GQA sequences of 100-1500
// tokens at hdim 64, causal, +2.3%.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/backward.h"
#include "common/constants.h"
#include "common/numeric.cuh"
#include "common/pdl.cuh"  // let_next_kernel_start
#include "common/reduce.cuh"

namespace flash::detail {
namespace {

constexpr int kThreads = 256;
constexpr int kRowsPerBlock = kThreads / 32;  // warps per block: rows of the kernels that take a warp per row

unsigned blocks_for(std::int64_t n, std::int64_t per_block) {
  constexpr std::int64_t kMaxBlocks = 1 << 16;  // grid-strided beyond this
  return static_cast<unsigned>(std::max<std::int64_t>(1, std::min((n + per_block - 1) / per_block, kMaxBlocks)));
}

// Row entry r of the row arrays: dpsum = rowsum(dO * O) from the row at
// o_off / do_off and lse_log2 from the LSE at lse_off; a padding row
// (!valid) gets dpsum 0 and lse_log2 +inf. Eight lanes per row, by 16-byte
// loads (one each at hdim 64 and bf16 / f16, two at 128): every backward
// variant takes only views whose rows start on 16-byte boundaries
// (bwd_variant's alignment, checked by the library before any launch), and
// head dims are multiples of 8. Every lane of the group calls it (the sum is
// a shuffle); `write` says whether the group's row exists (the last rows of
// the last warp may not). The LSE is read first: its load does not wait for
// the sum.
constexpr int kRowLanes = 8, kRowsPerWarp = 32 / kRowLanes;

template <class T>
__device__ __forceinline__ void preprocess_row(const BwdParams& p, bool valid, bool write, std::int64_t o_off,
                                               std::int64_t do_off, std::int64_t lse_off, std::int64_t r, int lane,
                                               float* dq_row = nullptr) {
  constexpr int kStep = kVec16<T>;
  float sum = 0.0f, lse2 = INFINITY;
  const float lse = valid ? p.lse[lse_off] : -INFINITY;
  if (dq_row != nullptr && write)  // the row's dQ accumulator, zeroed here instead of by a memset (its
    // users take head dims 64, 128 and 256: float4 stores stay inside the row)
    for (int c = lane * 4; c < p.head_dim; c += kRowLanes * 4)
      *reinterpret_cast<float4*>(dq_row + c) = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (valid) {
    const T* o = static_cast<const T*>(p.o) + o_off;
    const T* d = static_cast<const T*>(p.dout) + do_off;
    for (int c = lane * kStep; c < p.head_dim; c += kRowLanes * kStep) {
      float a[kStep], b[kStep];
      load16_as_float(o + c, a);
      load16_as_float(d + c, b);
#pragma unroll
      for (int e = 0; e < kStep; ++e) sum += a[e] * b[e];
    }
  }
  sum = group_sum<kRowLanes>(sum);
  // A row that saw no key has LSE -inf; +inf makes its P exactly 0.
  if (valid && lse != -INFINITY) lse2 = lse * static_cast<float>(kLog2e);
  if (write && lane == 0) {
    p.dpsum[r] = sum;
    p.lse_log2[r] = lse2;
  }
}

// Dense calls: a group of kRowLanes lanes per padded row of every (batch, head),
// grid-strided (each warp's rows together, so that its shuffles see every
// lane).
template <class T> __global__ void __launch_bounds__(kThreads) bwd_preprocess_kernel(const __grid_constant__ BwdParams p) {
  let_next_kernel_start();  // the Hopper dkv kernels start early and wait for this grid (bwd_tma_run)
  constexpr int kRows = kRowsPerBlock * kRowsPerWarp;
  const int lane = threadIdx.x % kRowLanes, group = (threadIdx.x / kRowLanes) % kRowsPerWarp;
  const std::int64_t rows = static_cast<std::int64_t>(p.batch) * p.heads_q * p.seqlen_q_pad;
  for (std::int64_t r0 = blockIdx.x * static_cast<std::int64_t>(kRows) + threadIdx.x / 32 * kRowsPerWarp; r0 < rows;
       r0 += static_cast<std::int64_t>(gridDim.x) * kRows) {
    const std::int64_t r = r0 + group;
    const bool in = r < rows;
    const int i = in ? static_cast<int>(r % p.seqlen_q_pad) : 0;
    const std::int64_t bh = in ? r / p.seqlen_q_pad : 0;
    const int h = static_cast<int>(bh % p.heads_q), b = static_cast<int>(bh / p.heads_q);
    const bool zero_dq = p.dq_accum != nullptr && in && bwd_dq_row_needs_zero(p.mask_for(), i, p.dq_zero_tile_rows);
    preprocess_row<T>(p, in && i < p.seqlen_q, in, b * p.o_batch_stride + h * p.o_head_stride + i * p.o_row_stride,
                               b * p.do_batch_stride + h * p.do_head_stride + i * p.do_row_stride,
                               p.lse_offset(b, h, i), r, lane, zero_dq ? p.dq_accum + r * p.head_dim : nullptr);
  }
}

// Variable-length calls: a (row blocks, heads_q, batch) grid over each
// sequence's rows padded to whole kBwdRowPad tiles, plus the rows its
// padding adds beyond one tile (ws_seq_pad; bwd_03's 80-row steps read up
// to 79 rows past the sequence), kRowLanes lanes per row (BwdParams::ws_row0).
template <class T>
__global__ void __launch_bounds__(kThreads) bwd_preprocess_varlen_kernel(const __grid_constant__ BwdParams p) {
  let_next_kernel_start();  // (as the dense kernel)
  constexpr int kRows = kRowsPerBlock * kRowsPerWarp;
  if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): the lengths may point anywhere
  const int lane = threadIdx.x % kRowLanes, group = (threadIdx.x / kRowLanes) % kRowsPerWarp, h = blockIdx.y,
            b = blockIdx.z;
  const auto seq = p.seq_span(b);
  const std::int64_t do_off = p.grad_span(b).dout, row0 = p.ws_row0(b, h, seq.lse_row0, p.ws_seq_pad);
  const int rows = (seq.seqlen_q + kBwdRowPad - 1) / kBwdRowPad * kBwdRowPad + (p.ws_seq_pad - kBwdRowPad);
  const Mask mask = p.mask_for(seq.seqlen_q, seq.seqlen_k);
  for (int i0 = blockIdx.x * kRows + threadIdx.x / 32 * kRowsPerWarp; i0 < rows; i0 += gridDim.x * kRows) {
    const int i = i0 + group;  // rows is a multiple of kRowsPerWarp (of 128): every group has a row
    // The accumulator's rows, zeroed here as the dense kernel's are (every row, or in deterministic
    // calls the whole tiles no key block sees): [0, rows) holds every row a variant's steps add to.
    const bool zero_dq = p.dq_accum != nullptr && bwd_dq_row_needs_zero(mask, i, p.dq_zero_tile_rows);
    preprocess_row<T>(p, i < seq.seqlen_q, true, seq.o + h * p.o_head_stride + i * p.o_row_stride,
                               do_off + h * p.do_head_stride + i * p.do_row_stride,
                               p.lse_offset(b, h, seq.lse_row0 + i), row0 + i, lane,
                               zero_dq ? p.dq_accum + (row0 + i) * p.head_dim : nullptr);
  }
}

// Variable-length calls with seqused_k: dK = dV = 0 on the keys a sequence
// holds but does not attend (its rows from seqused_k[b] on), as
// FlashAttention writes them. One warp per packed key row below
// cu_seqlens_k[batch], which finds its sequence by binary search.
template <class T>
__global__ void __launch_bounds__(kThreads) bwd_zero_unused_keys_kernel(const __grid_constant__ BwdParams p) {
  if (p.status[0] != 0) return;  // bad metadata: nothing is written
  const int lane = threadIdx.x % 32, rows = p.cu_seqlens_k[p.batch], row_elems = p.heads_kv * p.head_dim;
  for (int r = blockIdx.x * kRowsPerBlock + threadIdx.x / 32; r < rows; r += gridDim.x * kRowsPerBlock) {
    int lo = 0, hi = p.batch - 1;  // the last sequence that starts at or before row r
    while (lo < hi) {
      const int mid = (lo + hi + 1) / 2;
      if (p.cu_seqlens_k[mid] <= r) lo = mid;
      else hi = mid - 1;
    }
    if (r - p.cu_seqlens_k[lo] < p.seqused_k[lo]) continue;  // an attended key: the variant's dK/dV kernel writes it
    T* dk = static_cast<T*>(p.dk) + r * p.dk_row_stride;
    T* dv = static_cast<T*>(p.dv) + r * p.dv_row_stride;
    for (int e = lane; e < row_elems; e += 32) {
      const int h = e / p.head_dim, c = e % p.head_dim;
      dk[h * p.dk_head_stride + c] = from_float<T>(0.0f);
      dv[h * p.dv_head_stride + c] = from_float<T>(0.0f);
    }
  }
}

// Zeroes a [batch, rows, heads, head_dim] strided view.
template <class T>
__global__ void __launch_bounds__(kThreads) zero_view_kernel(T* x, int batch, int rows, int heads, int head_dim,
                                                             std::int64_t batch_stride, std::int64_t row_stride,
                                                             std::int64_t head_stride) {
  const std::int64_t n = static_cast<std::int64_t>(batch) * rows * heads * head_dim;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; idx < n;
       idx += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const int c = static_cast<int>(idx % head_dim);
    const std::int64_t rest = idx / head_dim;
    const int h = static_cast<int>(rest % heads);
    const int i = static_cast<int>((rest / heads) % rows);
    const int b = static_cast<int>(rest / (static_cast<std::int64_t>(heads) * rows));
    x[b * batch_stride + i * row_stride + h * head_stride + c] = from_float<T>(0.0f);
  }
}

// dsinks[h] = -sum over the batch and the rows of head h of exp(sink - LSE)
// * rowsum(dO * O): one CTA per head, in a fixed order (deterministic).
// Reads the preprocess's per-row arrays.
__global__ void __launch_bounds__(kThreads) bwd_dsinks_kernel(const __grid_constant__ BwdParams p) {
  if (p.status != nullptr && p.status[0] != 0) return;  // bad varlen metadata: nothing is written
  const int h = blockIdx.x;
  const float sink2 = p.scores.sinks[h * p.scores.sinks_stride] * static_cast<float>(kLog2e);
  float sum = 0.0f;
  for (int b = 0; b < p.batch; ++b) {
    const auto seq = p.seq_span(b);
    const std::int64_t base = p.ws_row0(b, h, seq.lse_row0, p.ws_seq_pad);
    for (int i = threadIdx.x; i < seq.seqlen_q; i += kThreads) sum += exp2f(sink2 - p.lse_log2[base + i]) * p.dpsum[base + i];
  }
  __shared__ float warp_sums[kThreads / 32];
  sum = group_sum<32>(sum);
  if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x == 0) {
    float total = 0.0f;
    for (int w = 0; w < kThreads / 32; ++w) total += warp_sums[w];
    p.dsinks[h * p.dsinks_stride] = -total;
  }
}

__global__ void bwd_zero_dsinks_kernel(float* dsinks, std::int64_t stride, int n) {
  for (int h = blockIdx.x * blockDim.x + threadIdx.x; h < n; h += gridDim.x * blockDim.x) dsinks[h * stride] = 0.0f;
}

}  // namespace

cudaError_t bwd_zero_dsinks(const BwdParams& p, cudaStream_t stream) {
  bwd_zero_dsinks_kernel<<<blocks_for(p.heads_q, kThreads), kThreads, 0, stream>>>(p.dsinks, p.dsinks_stride, p.heads_q);
  return cudaGetLastError();
}

cudaError_t bwd_preprocess(const BwdParams& p, cudaStream_t stream) {
  const bool varlen = p.cu_seqlens_q != nullptr;
  if (p.dq_accum != nullptr) {  // the kv_done counters after the accumulator (bind_bwd_workspace); the
    // accumulator's rows are zeroed by the preprocess itself (one row of the row arrays each, dense or
    // variable-length), and deterministic calls' (dq_zero_tile_rows) need zeros only where no key is
    // seen (bwd_dq_row_needs_zero)
    const cudaError_t err = cudaMemsetAsync(p.kv_done, 0, bwd_kv_done_count(p) * sizeof(int), stream);
    if (err != cudaSuccess) return err;
  }
  if (p.dq_semaphore != nullptr) {
    const std::size_t bytes = bwd_bound_rows(p) / kBwdDqTileRows * sizeof(int);
    const cudaError_t err = cudaMemsetAsync(p.dq_semaphore, 0, bytes, stream);
    if (err != cudaSuccess) return err;
  }
  const cudaError_t err = dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (!varlen) {
      const std::int64_t rows = static_cast<std::int64_t>(p.batch) * p.heads_q * p.seqlen_q_pad;
      bwd_preprocess_kernel<T><<<blocks_for(rows, kRowsPerWarp * kRowsPerBlock), kThreads, 0, stream>>>(p);
      return cudaGetLastError();
    }
    if (p.seqlen_q > 0) {  // max_seqlen_q: no sequence has more rows
      const std::int64_t rows = (static_cast<std::int64_t>(p.seqlen_q) + kBwdRowPad - 1) / kBwdRowPad * kBwdRowPad +
                                (p.ws_seq_pad - kBwdRowPad);
      bwd_preprocess_varlen_kernel<T>
          <<<dim3(blocks_for(rows, kRowsPerWarp * kRowsPerBlock), p.heads_q, p.batch), kThreads, 0, stream>>>(p);
      if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
    }
    if (p.seqused_k != nullptr && p.total_k > 0)
      bwd_zero_unused_keys_kernel<T><<<blocks_for(p.total_k, kRowsPerBlock), kThreads, 0, stream>>>(p);
    return cudaGetLastError();
  });
  if (err != cudaSuccess || p.dsinks == nullptr) return err;
  bwd_dsinks_kernel<<<p.heads_q, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t bwd_fill_zero(const BwdParams& p, cudaStream_t stream) {
  return dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (p.seqlen_k == 0) {
      const std::int64_t n = static_cast<std::int64_t>(p.batch) * p.seqlen_q * p.heads_q * p.head_dim;
      zero_view_kernel<T><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
          static_cast<T*>(p.dq), p.batch, p.seqlen_q, p.heads_q, p.head_dim, p.dq_batch_stride, p.dq_row_stride,
          p.dq_head_stride);
    } else if (p.seqlen_q == 0) {
      const std::int64_t n = static_cast<std::int64_t>(p.batch) * p.seqlen_k * p.heads_kv * p.head_dim;
      zero_view_kernel<T><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
          static_cast<T*>(p.dk), p.batch, p.seqlen_k, p.heads_kv, p.head_dim, p.dk_batch_stride, p.dk_row_stride,
          p.dk_head_stride);
      zero_view_kernel<T><<<blocks_for(n, kThreads), kThreads, 0, stream>>>(
          static_cast<T*>(p.dv), p.batch, p.seqlen_k, p.heads_kv, p.head_dim, p.dv_batch_stride, p.dv_row_stride,
          p.dv_head_stride);
    }
    return cudaGetLastError();
  });
}

}  // namespace flash::detail
