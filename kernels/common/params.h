// FwdParams: what a forward kernel needs, passed by value (__grid_constant__).
// Host-compilable: src/ fills it, kernels/ read it.
#pragma once

#include <cstdint>

#include "flash/tensor.h"

namespace flash::detail {

struct FwdParams {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;  // null when the caller asked for no LSE

  // Strides in elements; the head_dim stride is 1 for every tensor.
  std::int64_t q_batch_stride = 0, q_row_stride = 0, q_head_stride = 0;
  std::int64_t k_batch_stride = 0, k_row_stride = 0, k_head_stride = 0;
  std::int64_t v_batch_stride = 0, v_row_stride = 0, v_head_stride = 0;
  std::int64_t o_batch_stride = 0, o_row_stride = 0, o_head_stride = 0;
  std::int64_t lse_batch_stride = 0, lse_head_stride = 0, lse_row_stride = 0;

  int batch = 0;
  int seqlen_q = 0;
  int seqlen_k = 0;
  int heads_q = 0;
  int heads_kv = 0;
  int head_dim = 0;
  int group_size = 1;  // heads_q / heads_kv: query heads per KV head

  float scale = 1.0f;       // softmax scale
  float scale_log2 = 1.0f;  // scale * log2(e): softmax in exp2
  bool causal = false;
  DType dtype = DType::bf16;

  void* workspace = nullptr;  // variant-owned scratch, workspace_bytes() long
};

}  // namespace flash::detail
