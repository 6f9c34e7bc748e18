// Launch limits shared by the kernels whose grid is (query blocks, heads_q,
// batch) with one dynamic shared-memory buffer per CTA.
#pragma once

#include <cstddef>
#include <string>

#include "common/params.h"
#include "common/variant.h"

namespace flash::detail {

// Empty when `value` (named `what`) fits gridDim.y or gridDim.z, else why not.
inline std::string grid_yz_reason(const char* what, long long value) {
  if (value <= kMaxGridYZ) return {};
  return std::string(what) + " = " + std::to_string(value) + " exceeds the grid limit of " + std::to_string(kMaxGridYZ);
}

// Empty when a (query blocks, heads_q, batch) grid of CTAs with smem_bytes of
// dynamic shared memory can launch on dev; else why not.
inline std::string check_head_batch_grid(const AttnProblem& p, const DeviceInfo& dev, std::size_t smem_bytes) {
  if (std::string why = grid_yz_reason("heads_q", p.heads_q); !why.empty()) return why;
  if (std::string why = grid_yz_reason("batch", p.batch); !why.empty()) return why;
  if (smem_bytes > dev.smem_per_block_optin)
    return "needs " + std::to_string(smem_bytes) + " bytes of shared memory per block at head_dim " +
           std::to_string(p.head_dim) + "; this GPU allows " + std::to_string(dev.smem_per_block_optin);
  return {};
}

}  // namespace flash::detail
