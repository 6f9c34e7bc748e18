// Variant<Params>: what a kernel translation unit tells the registry about
// itself. Host-compilable; each kernels/<kind>_NN_*.cu defines variant_<name>().
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
  std::size_t smem_per_sm = 0;
  std::size_t l2_bytes = 0;
};

constexpr std::uint32_t dtype_bit(DType t) { return 1u << static_cast<unsigned>(t); }

// What a variant's translation unit tells the registry about itself: one
// shape for forward, backward and decode (Params is FwdParams, BwdParams or
// DecodeParams).
template <class Params> struct Variant {
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
  // TMA tensor maps: each stride that is stepped (of a dimension of extent
  // above 1) among the 4-D views' first three spans at least a row, head_dim
  // elements, so that the map's dimensions nest as cuTensorMapEncodeTiled
  // asks; a zero stride (k expanded over the batch, dout from a sum over
  // rows) or rows that overlap fall to a variant without maps.
  bool strides_nest = false;
  // Variant-specific limits (grid dimensions, shared memory) for this call
  // on this device: an empty string when it can run, else why not.
  std::string (*check)(const Params&, const DeviceInfo&) = nullptr;
  // Scratch the call needs (0 or null: none).
  std::size_t (*workspace_bytes)(const Params&) = nullptr;
  // Enqueues the kernels on the stream; `workspace` is workspace_bytes()
  // long and 256-byte aligned (null when none is needed). seqlen_q and
  // seqlen_k (decode: the batch) are >= 1 here: the dispatcher handles the
  // empty calls. Returns the launch error, if any.
  cudaError_t (*run)(const Params&, void* workspace, cudaStream_t) = nullptr;
  // Decode only: the number of splits for num_splits = 0 (a heuristic).
  int (*choose_splits)(const Params&, const DeviceInfo&) = nullptr;
};

using FwdVariant = Variant<FwdParams>;

}  // namespace flash::detail
