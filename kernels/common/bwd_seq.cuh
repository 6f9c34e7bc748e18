// What the backward kernels share about a call's sequences: where sequence b
// lives (SeqRows, dense or variable-length) and the variable-length dQ
// convert (bwd_convert_dq_varlen_kernel), which each variant instantiates
// with the order of its own dQ accumulator. Device code (kernel translation
// units only).
#pragma once

#include <cstdint>

#include "common/bwd_params.h"
#include "common/mask.h"
#include "common/mma.cuh"  // pack2

namespace flash::detail {

// Where sequence b of the call lives, for a backward kernel: its lengths
// and Mask, the element offsets of its row 0 in q, k, v, dO and the
// gradients, and where its rows start in the row arrays (ws_row0). Dense
// calls compute each of these where it is used, from the batch strides, the
// call's lengths and its Mask in the constant bank, exactly as before
// variable-length batches; those (kVarlen) take them from seq_span(b) and
// grad_span(b) once, after the metadata check's verdict (p.status).
// q_row0() / k_row0(): the sequence's first packed row of q and of k (0
// when dense), for kernels that address rows rather than elements (TMA).
template <bool kVarlen> struct SeqRows;

template <> struct SeqRows<false> {
  const BwdParams& p;
  int b;
  __device__ __forceinline__ SeqRows(const BwdParams& params, int b_) : p(params), b(b_) {}
  __device__ __forceinline__ int seqlen_q() const { return p.seqlen_q; }
  __device__ __forceinline__ int seqlen_k() const { return p.seqlen_k; }
  __device__ __forceinline__ const Mask& mask() const { return p.mask_for(); }
  __device__ __forceinline__ int q_row0() const { return 0; }
  __device__ __forceinline__ int k_row0() const { return 0; }
  __device__ __forceinline__ std::int64_t q() const { return b * p.q_batch_stride; }
  __device__ __forceinline__ std::int64_t k() const { return b * p.k_batch_stride; }
  __device__ __forceinline__ std::int64_t v() const { return b * p.v_batch_stride; }
  __device__ __forceinline__ std::int64_t dout() const { return b * p.do_batch_stride; }
  __device__ __forceinline__ std::int64_t dq() const { return b * p.dq_batch_stride; }
  __device__ __forceinline__ std::int64_t dk() const { return b * p.dk_batch_stride; }
  __device__ __forceinline__ std::int64_t dv() const { return b * p.dv_batch_stride; }
  __device__ __forceinline__ std::int64_t ws_row0(int h) const {
    return (static_cast<std::int64_t>(b) * p.heads_q + h) * p.seqlen_q_pad;
  }
};

template <> struct SeqRows<true> {
  const BwdParams& p;
  int b, q0, k0, seqlen_q_, seqlen_k_;
  Mask mask_;
  std::int64_t q_, k_, v_, dout_, dq_, dk_, dv_;
  __device__ __forceinline__ SeqRows(const BwdParams& params, int b_) : p(params), b(b_) {
    const auto seq = p.seq_span(b);
    const auto grad = p.grad_span(b);
    q0 = seq.lse_row0, k0 = p.cu_seqlens_k[b], seqlen_q_ = seq.seqlen_q, seqlen_k_ = seq.seqlen_k;
    mask_ = p.mask_for(seqlen_q_, seqlen_k_);
    q_ = seq.q, k_ = seq.k, v_ = seq.v;
    dout_ = grad.dout, dq_ = grad.dq, dk_ = grad.dk, dv_ = grad.dv;
  }
  __device__ __forceinline__ int seqlen_q() const { return seqlen_q_; }
  __device__ __forceinline__ int seqlen_k() const { return seqlen_k_; }
  __device__ __forceinline__ const Mask& mask() const { return mask_; }
  __device__ __forceinline__ int q_row0() const { return q0; }
  __device__ __forceinline__ int k_row0() const { return k0; }
  __device__ __forceinline__ std::int64_t q() const { return q_; }
  __device__ __forceinline__ std::int64_t k() const { return k_; }
  __device__ __forceinline__ std::int64_t v() const { return v_; }
  __device__ __forceinline__ std::int64_t dout() const { return dout_; }
  __device__ __forceinline__ std::int64_t dq() const { return dq_; }
  __device__ __forceinline__ std::int64_t dk() const { return dk_; }
  __device__ __forceinline__ std::int64_t dv() const { return dv_; }
  __device__ __forceinline__ std::int64_t ws_row0(int h) const { return p.ws_row0(b, h, q0); }
};

// dQ = scale * accumulator, rounded to the dtype, for a variable-length
// call: a (query tiles, heads_q, batch) grid over the max_seqlen_q bound,
// one CTA per tile of Order::kTileRows rows of its sequence (whose block
// starts at ws_row0 + m0 rows of the accumulator: the row arrays hold each
// sequence from a whole tile on), which stores the sequence's rows. Order
// is the variant's accumulator order within a tile: kTileRows, kHeadDim,
// and position(f, row, col), which says that the float4 at float f of the
// tile's block holds dQ[row][col, col + 1] and dQ[row + 8][col, col + 1].
template <class T, class Order>
__global__ void __launch_bounds__(256) bwd_convert_dq_varlen_kernel(const __grid_constant__ BwdParams p) {
  constexpr int kTileFloats = Order::kTileRows * Order::kHeadDim;
  if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
  const int m0 = blockIdx.x * Order::kTileRows, h = blockIdx.y, b = blockIdx.z;
  const SeqRows<true> seq(p, b);
  if (m0 >= seq.seqlen_q()) return;
  const float4* acc = reinterpret_cast<const float4*>(p.dq_accum + (seq.ws_row0(h) + m0) * Order::kHeadDim);
  T* gdQ = static_cast<T*>(p.dq) + seq.dq() + h * p.dq_head_stride;
  for (int i4 = threadIdx.x; i4 < kTileFloats / 4; i4 += 256) {
    int row, col;
    Order::position(4 * i4, row, col);  // within the tile's block
    row += m0;
    if (row >= seq.seqlen_q()) continue;
    const float4 v = acc[i4];
    T* dq = gdQ + row * p.dq_row_stride + col;
    *reinterpret_cast<std::uint32_t*>(dq) = pack2<T>(v.x * p.scale, v.y * p.scale);
    if (row + 8 < seq.seqlen_q()) *reinterpret_cast<std::uint32_t*>(dq + 8 * p.dq_row_stride) = pack2<T>(v.z * p.scale, v.w * p.scale);
  }
}

}  // namespace flash::detail
