// FwdVariant: what a kernel translation unit tells the registry about itself.
// Host-compilable; each kernels/fwd_NN_*.cu defines variant_<name>().
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/params.h"

namespace flash::detail {

struct DeviceInfo {
  int device = 0;
  int compute_capability = 0;  // major * 10 + minor
  int sm_count = 0;
  std::size_t smem_per_block_optin = 0;
  std::size_t l2_bytes = 0;
};

constexpr std::uint32_t dtype_bit(DType t) { return 1u << static_cast<unsigned>(t); }

struct FwdVariant {
  int min_compute_capability = 80;
  int max_compute_capability = 0;  // 0: no upper bound (sm_90a code: 90)
  std::uint32_t dtype_mask = 0;
  // Built head dims (count 0: any head dim up to max_head_dim).
  const int* head_dims = nullptr;
  int num_head_dims = 0;
  int max_head_dim = 0;
  // Bytes: data pointers and non-unit strides must be multiples of it.
  int alignment = 0;
  // Bits of flash::Feature (flash/variants.h).
  unsigned features = 0;
  // Largest element offset the variant's index arithmetic handles.
  std::int64_t max_offset = INT64_MAX;
  // Variant-specific limits (grid dimensions, shared memory) for this call
  // on this device: an empty string when it can run, else why not.
  std::string (*check)(const FwdParams&, const DeviceInfo&) = nullptr;
  // Scratch the variant needs in FwdParams::workspace (0: none).
  std::size_t (*workspace_bytes)(const FwdParams&) = nullptr;
  // Enqueues the kernels; returns the launch error, if any.
  cudaError_t (*run)(const FwdParams&, cudaStream_t) = nullptr;
};

}  // namespace flash::detail
