// flash::attention_forward: O = softmax(scale * Q K^T [+ causal mask]) V.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "flash/tensor.h"

struct CUstream_st;

namespace flash {

// The same type as cudaStream_t, without including the CUDA headers:
// these headers compile in a plain C++ translation unit.
using Stream = CUstream_st*;

struct ForwardArgs {
  // [batch, seqlen_q, heads_q, head_dim]
  TensorView q;
  // [batch, seqlen_k, heads_kv, head_dim]; heads_q must be a multiple of heads_kv (GQA/MQA).
  TensorView k;
  TensorView v;
  // [batch, seqlen_q, heads_q, head_dim], same dtype as q.
  TensorView o;
  // Optional log-sum-exp of each row of scale * Q K^T (natural log), fp32,
  // [batch, heads_q, seqlen_q]. Rows that see no key (seqlen_k 0, or fully
  // masked by the causal mask) get O = 0 and LSE = -inf.
  std::optional<TensorView> lse;
  // Defaults to 1 / sqrt(head_dim).
  std::optional<float> softmax_scale;
  // Causal mask aligned to the bottom-right corner: query i sees key j iff
  // j <= i + seqlen_k - seqlen_q (FlashAttention >= 2.1).
  bool causal = false;
  Stream stream = nullptr;
  // "auto" (the fastest variant that supports the call) or a variant name
  // from flash::forward_variants().
  std::string kernel = "auto";
  // Optional caller-owned device workspace; when null the library uses a
  // cached buffer of its own per (device, stream). Size it with plan_forward().
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// What attention_forward would run: the variant and the workspace it needs.
struct ForwardPlan {
  std::string kernel;
  std::size_t workspace_bytes = 0;
};

// Validates the call against the chosen variant and the current device and
// launches nothing. Throws flash::Error on any invalid argument.
ForwardPlan plan_forward(const ForwardArgs& args);

// Validates, then launches on args.stream (asynchronously). Throws
// flash::Error on invalid arguments (before anything is written) and on
// CUDA launch errors.
void attention_forward(const ForwardArgs& args);

}  // namespace flash
