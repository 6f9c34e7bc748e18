// Launch limits shared by the kernels whose grid is (query blocks, heads_q,
// batch) with one dynamic shared-memory buffer per CTA.
#pragma once

#include <cstddef>
#include <string>

#include "common/params.h"
#include "common/variant.h"

namespace flash::detail {

inline constexpr int kMaxGridYZ = 65535;  // CUDA's limit on gridDim.y and gridDim.z

// Empty when a (query blocks, heads_q, batch) grid of CTAs with smem_bytes of
// dynamic shared memory can launch on dev; else why not.
inline std::string check_head_batch_grid(const FwdParams& p, const DeviceInfo& dev, std::size_t smem_bytes) {
  if (p.heads_q > kMaxGridYZ) return "heads_q = " + std::to_string(p.heads_q) + " exceeds the grid limit of 65535";
  if (p.batch > kMaxGridYZ) return "batch = " + std::to_string(p.batch) + " exceeds the grid limit of 65535";
  if (smem_bytes > dev.smem_per_block_optin)
    return "needs " + std::to_string(smem_bytes) + " bytes of shared memory per block at head_dim " +
           std::to_string(p.head_dim) + "; this GPU allows " + std::to_string(dev.smem_per_block_optin);
  return {};
}

}  // namespace flash::detail
