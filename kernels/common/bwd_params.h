// BwdParams and BwdVariant: what a backward kernel needs and what a backward
// translation unit tells the registry. Host-compilable: src/ fills them,
// kernels/ read them.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/params.h"
#include "common/variant.h"
#include "flash/tensor.h"

namespace flash::detail {

// Per-row workspace arrays are padded to a multiple of this many rows, so a
// kernel may read whole tiles of them without a bounds check.
inline constexpr int kBwdRowPad = 128;

struct BwdParams : AttnParams {
  // The forward's LSE (AttnParams::lse, fp32, read here), dO and the gradients.
  const void* dout = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  std::int64_t do_batch_stride = 0, do_row_stride = 0, do_head_stride = 0;
  std::int64_t dq_batch_stride = 0, dq_row_stride = 0, dq_head_stride = 0;
  std::int64_t dk_batch_stride = 0, dk_row_stride = 0, dk_head_stride = 0;
  std::int64_t dv_batch_stride = 0, dv_row_stride = 0, dv_head_stride = 0;

  bool deterministic = false;
  // Optional fp32 [heads_q] output: the gradient of the sinks (ScoreSpec::sinks).
  float* dsinks = nullptr;
  std::int64_t dsinks_stride = 0;

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

using BwdVariant = Variant<BwdParams>;

}  // namespace flash::detail
