// What the backward kernels share about a call's sequences: where sequence b
// lives (SeqRows, dense or variable-length) and the variable-length dQ
// convert (bwd_convert_dq_kernel), which each variant instantiates
// with the order of its own dQ accumulator. Device code (kernel translation
// units only).
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/bwd_params.h"
#include "common/gpu_counter.cuh"  // ld_acquire_gpu
#include "common/mask.h"
#include "common/mma.cuh"  // pack2
#include "common/numeric.cuh"  // from_float

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
  __device__ __forceinline__ std::int64_t ws_row0(int h) const { return p.ws_row0(b, h, q0, p.ws_seq_pad); }
};

// Variable-length calls: the sequence that the grid's batch index z stands
// for. The metadata check put the sequences in p.seq_order longest first
// (most queries, which each key block's CTA walks) within each group of 32
// (check_varlen_metadata), so that the grid ends on the cheapest CTAs
// instead of on whichever sequence came last (list scheduling's
// longest-processing-time rule). It only renames the (KV head, sequence)
// pairs, so the deterministic order, which is per pair, keeps its
// launch-order argument (BwdDqOrder). Session 49 (H200, call 1, issue 17's
// 7 sequences given longest first instead of as listed): full +1.1%, causal
// +1.3%, deterministic causal +1.2%; ranking the sequences in every CTA
// instead cost 1.6-4.3% on short ones (call 2).
__device__ __forceinline__ int bwd_sequence_of(const BwdParams& p, int z) {
  return p.seq_order != nullptr ? p.seq_order[2 * z] : z;
}

// dQ = scale * accumulator, rounded to the dtype: a (query tiles, heads_q,
// batch) grid (variable-length: over the max_seqlen_q bound), one CTA per
// tile of Order::kTileRows rows of its sequence (whose block starts at
// ws_row0 + m0 rows of the accumulator: the row arrays hold each sequence
// from a whole tile on), which stores the sequence's rows. Order is the
// variant's accumulator order within a tile: kTileRows, kHeadDim, and
// position(f, row, col), which says that the float4 at float f of the
// tile's block holds dQ[row][col, col + 1] and dQ[row + 8][col, col + 1]
// (an Order with kTransposed = true: dQ[row][col], dQ[row + 1][col],
// dQ[row][col + 8] and dQ[row + 1][col + 8], BwdDqTLayout).
// The tile goes through shared memory, rounded, as rows: loaded by float4s
// in the accumulator's order (each thread's loads all in flight before it
// stores any), stored to dQ by 16-byte row pieces (every backward variant
// takes only views whose rows start on 16-byte boundaries: bwd_variant's
// alignment, checked before any launch). Session 24 (H100, ncu, 16k
// tokens, hdim 128): 86.9 -> 64.9 us against the float4-at-a-time
// grid-stride convert that stored 4-byte pairs straight from the fragment
// order (the same stores from per-tile CTAs: 132 us); the 80-row
// transposed order 65.3 us. The floor (134 MB read, 67 MB written at 4.3
// TB/s) is ~47 us.
//   p.kv_done_target > 0 (the Hopper rungs' dense non-deterministic calls,
// where the dkv CTAs run enough steps, launched to start early:
// common/hopper/bwd_tma.cuh, bwd_tma_run): the CTA first waits until
// every dkv CTA of its query head's (batch, KV head) has counted itself
// done in p.kv_done, which it does after all its writes.
template <class Order, class = void> constexpr bool kOrderTransposed = false;
template <class Order> constexpr bool kOrderTransposed<Order, std::void_t<decltype(Order::kTransposed)>> = Order::kTransposed;

template <class T, class Order, bool kVarlen>
__global__ void __launch_bounds__(256) bwd_convert_dq_kernel(const __grid_constant__ BwdParams p) {
  constexpr int kThreads = 256, kRows = Order::kTileRows, kDim = Order::kHeadDim, kTileFloats = kRows * kDim;
  constexpr int kPerThread = kTileFloats / 4 / kThreads;
  // Rows padded by 16 bytes: the fragment-order stores below and the 16-byte
  // row reads fall on distinct banks.
  constexpr int kVec = kVec16<T>, kPitch = kDim + kVec, kPieces = kDim / kVec;
  static_assert(kTileFloats % (4 * kThreads) == 0 && kDim % kVec == 0, "whole float4s per thread, 16-byte row pieces");
  __shared__ alignas(16) T tile[kRows * kPitch];
  if constexpr (kVarlen)
    if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
  const int m0 = blockIdx.x * kRows, h = blockIdx.y, b = blockIdx.z;
  const SeqRows<kVarlen> seq(p, b);
  if (m0 >= seq.seqlen_q()) return;  // the whole CTA, before the barrier
  if (p.kv_done_target > 0) {
    if (threadIdx.x == 0) {
      const int* done = p.kv_done + static_cast<std::int64_t>(b) * p.heads_kv + h / p.group_size;
      while (ld_acquire_gpu(done) < p.kv_done_target) __nanosleep(200);
    }
    __syncthreads();  // the acquire above, for every thread's loads below
  }
  const float4* acc = reinterpret_cast<const float4*>(p.dq_accum + (seq.ws_row0(h) + m0) * kDim);
  float4 v[kPerThread];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) v[k] = acc[threadIdx.x + k * kThreads];
#pragma unroll
  for (int k = 0; k < kPerThread; ++k) {
    int row, col;
    Order::position(4 * (threadIdx.x + k * kThreads), row, col);  // within the tile
    T* t = tile + row * kPitch + col;
    if constexpr (kOrderTransposed<Order>) {
      t[0] = from_float<T>(v[k].x * p.scale);
      t[kPitch] = from_float<T>(v[k].y * p.scale);
      t[8] = from_float<T>(v[k].z * p.scale);
      t[kPitch + 8] = from_float<T>(v[k].w * p.scale);
    } else {
      *reinterpret_cast<std::uint32_t*>(t) = pack2<T>(v[k].x * p.scale, v[k].y * p.scale);
      *reinterpret_cast<std::uint32_t*>(t + 8 * kPitch) = pack2<T>(v[k].z * p.scale, v[k].w * p.scale);
    }
  }
  __syncthreads();
  const int rows = min(kRows, seq.seqlen_q() - m0);
  T* gdq = static_cast<T*>(p.dq) + seq.dq() + h * p.dq_head_stride + m0 * p.dq_row_stride;
  for (int i = threadIdx.x; i < rows * kPieces; i += kThreads) {
    const int row = i / kPieces, piece = i % kPieces;
    *reinterpret_cast<uint4*>(gdq + row * p.dq_row_stride + kVec * piece) =
        *reinterpret_cast<const uint4*>(tile + row * kPitch + kVec * piece);
  }
}

}  // namespace flash::detail
