// The registry of kernel variants, as the runner, the tests and the bench see it.
#pragma once

#include <string>
#include <vector>

#include "flash/tensor.h"

namespace flash {

// Optional features a variant may implement (bits of VariantInfo::features).
enum Feature : unsigned {
  kFeatureCausal = 1u << 0,        // bottom-right causal mask
  kFeatureGqa = 1u << 1,           // heads_q a multiple of heads_kv (GQA/MQA)
  kFeatureLse = 1u << 2,           // writes the log-sum-exp
  kFeatureUnequalSeqlens = 1u << 3,  // seqlen_q != seqlen_k
  kFeatureWindow = 1u << 4,        // sliding window (window_left / window_right)
  kFeatureSoftcap = 1u << 5,       // softcap > 0
  kFeatureAlibi = 1u << 6,         // alibi_slopes
  kFeatureSinks = 1u << 7,         // sinks (and, for the backward, dsinks)
  kFeatureVarlen = 1u << 8,        // variable-length batches (cu_seqlens_q / cu_seqlens_k) and seqused_k; not in kAllFeatures
  kFeaturePaged = 1u << 9,         // a paged KV cache (ForwardArgs::page_table); not in kAllFeatures
  kFeatureDeterministic = 1u << 10,  // backward: deterministic = true (dQ summed in a fixed order); not in kAllFeatures
};
// The score modifiers (ForwardArgs::softcap, alibi_slopes, sinks).
inline constexpr unsigned kScoreFeatures = kFeatureSoftcap | kFeatureAlibi | kFeatureSinks;
inline constexpr unsigned kAllFeatures =
    kFeatureCausal | kFeatureGqa | kFeatureLse | kFeatureUnequalSeqlens | kFeatureWindow | kScoreFeatures;

struct VariantInfo {
  std::string name;
  std::string description;
  // False when the build left this variant out (CMake option FLASH_VARIANTS).
  bool built = false;
  // Compute capabilities it runs on, as major * 10 + minor: from min to max
  // (max 0: no upper bound; arch-specific code such as sm_90a runs on its
  // own architecture only).
  int min_compute_capability = 0;
  int max_compute_capability = 0;
  std::vector<DType> dtypes;
  // Head dims it was built for; empty means any head dim up to max_head_dim.
  std::vector<int> head_dims;
  int max_head_dim = 0;
  // Required alignment, in bytes, of data pointers and of the strides (in
  // bytes) of every dimension but the last whose extent is above 1 (a
  // dimension of extent 1 is never stepped, so its stride is free).
  int alignment = 0;
  // Bits of Feature.
  unsigned features = 0;

  bool supports(DType dtype, int head_dim) const;
  // Built and able to run on a GPU of compute capability cc.
  bool runs_on(int cc) const;
};

// kernel = "auto" (forward, backward, decode) takes the last variant of its
// list that is built, supports the call (dtype, head dim, features,
// alignment, index range) and runs on this device (compute capability,
// grid and shared-memory limits). Each list is in ladder order, the order
// of kernels/variants.def, which runs from slowest to fastest as measured
// on the H200 (README's tables) with one exception: the forward's mma is
// slower than wmma (its unswizzled ldmatrix reads conflict; mma_swizzle
// removes that). So auto takes the fastest variant that is built (CMake
// option FLASH_VARIANTS) and can run the call, except that it takes mma
// over wmma when nothing after mma can.

// Forward variants in ladder order.
std::vector<VariantInfo> forward_variants();

// Backward variants in ladder order. features: kFeatureCausal | kFeatureGqa | kFeatureWindow |
// kFeatureUnequalSeqlens | the score modifiers | kFeatureVarlen | kFeatureDeterministic, or a
// subset (every backward variant takes the LSE as input).
std::vector<VariantInfo> backward_variants();

// Decode (KV-cache) variants.
std::vector<VariantInfo> decode_variants();

}  // namespace flash
