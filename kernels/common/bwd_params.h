// BwdParams and BwdVariant: what a backward kernel needs and what a backward
// translation unit tells the registry. Host-compilable: src/ fills them,
// kernels/ read them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/variant.h"
#include "flash/tensor.h"

namespace flash::detail {

// Per-row workspace arrays are padded to a multiple of this many rows, so a
// kernel may read whole tiles of them without a bounds check.
inline constexpr int kBwdRowPad = 128;

struct BwdParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* dout = nullptr;
  const float* lse = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;

  // Strides in elements; the head_dim stride is 1 for every tensor.
  std::int64_t q_batch_stride = 0, q_row_stride = 0, q_head_stride = 0;
  std::int64_t k_batch_stride = 0, k_row_stride = 0, k_head_stride = 0;
  std::int64_t v_batch_stride = 0, v_row_stride = 0, v_head_stride = 0;
  std::int64_t o_batch_stride = 0, o_row_stride = 0, o_head_stride = 0;
  std::int64_t do_batch_stride = 0, do_row_stride = 0, do_head_stride = 0;
  std::int64_t dq_batch_stride = 0, dq_row_stride = 0, dq_head_stride = 0;
  std::int64_t dk_batch_stride = 0, dk_row_stride = 0, dk_head_stride = 0;
  std::int64_t dv_batch_stride = 0, dv_row_stride = 0, dv_head_stride = 0;
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 0;

  int batch = 0;
  int seqlen_q = 0;
  int seqlen_k = 0;
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  int group_size = 1;  // heads_q / heads_kv

  float scale = 1.0f;
  float scale_log2 = 1.0f;  // scale * log2(e)
  bool causal = false;
  bool deterministic = false;
  DType dtype = DType::bf16;
  int compute_capability = 0;  // of the device the call runs on (major * 10 + minor)

  // The workspace, carved by bind_bwd_workspace(). Per (batch, head_q) row
  // arrays of seqlen_q_pad entries:
  int seqlen_q_pad = 0;
  float* lse_log2 = nullptr;  // LSE * log2(e); +inf for rows that see no key and for the padding (P = 0 there)
  float* dpsum = nullptr;     // rowsum(dO * O); 0 in the padding
  // fp32, when the variant accumulates dQ: batch * heads_q * seqlen_q_pad *
  // head_dim floats, each (batch, head) a contiguous block whose order within
  // is the variant's (the mma variant keeps its fragment order).
  float* dq_accum = nullptr;
};

// Workspace bytes for the per-row arrays, plus the fp32 dQ accumulator when
// with_dq_accum; 256-byte aligned pieces.
inline std::size_t bwd_workspace_bytes(const BwdParams& p, bool with_dq_accum) {
  auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
  const std::size_t rows = static_cast<std::size_t>(p.batch) * p.heads_q *
                           ((static_cast<std::size_t>(p.seqlen_q) + kBwdRowPad - 1) / kBwdRowPad * kBwdRowPad);
  std::size_t bytes = 2 * align(rows * sizeof(float));
  if (with_dq_accum) bytes += align(rows * p.head_dim * sizeof(float));
  return bytes;
}

// Points p's workspace arrays into `ws` (bwd_workspace_bytes long).
inline void bind_bwd_workspace(BwdParams& p, void* ws, bool with_dq_accum) {
  auto align = [](std::size_t n) { return (n + 255) / 256 * 256; };
  p.seqlen_q_pad = (p.seqlen_q + kBwdRowPad - 1) / kBwdRowPad * kBwdRowPad;
  const std::size_t rows = static_cast<std::size_t>(p.batch) * p.heads_q * p.seqlen_q_pad;
  char* base = static_cast<char*>(ws);
  p.lse_log2 = reinterpret_cast<float*>(base);
  p.dpsum = reinterpret_cast<float*>(base + align(rows * sizeof(float)));
  p.dq_accum = with_dq_accum ? reinterpret_cast<float*>(base + 2 * align(rows * sizeof(float))) : nullptr;
}

struct BwdVariant {
  int min_compute_capability = 80;
  int max_compute_capability = 0;
  std::uint32_t dtype_mask = 0;
  const int* head_dims = nullptr;  // built head dims
  int num_head_dims = 0;
  int alignment = 0;  // bytes, for data pointers and non-unit strides
  std::int64_t max_offset = INT64_MAX;
  // Empty when the call can run on this device, else why not.
  std::string (*check)(const BwdParams&, const DeviceInfo&) = nullptr;
  // Scratch the call needs (bwd_workspace_bytes, typically).
  std::size_t (*workspace_bytes)(const BwdParams&) = nullptr;
  // Enqueues the kernels; `workspace` is workspace_bytes() long and 256-byte
  // aligned. seqlen_q and seqlen_k are >= 1 here (the dispatcher handles the
  // empty cases).
  cudaError_t (*run)(BwdParams, void* workspace, cudaStream_t) = nullptr;
};

}  // namespace flash::detail
