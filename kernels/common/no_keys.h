// Host entry of the seqlen_k == 0 fill (O = 0, LSE = -inf).
#pragma once

#include <cuda_runtime_api.h>

#include "common/params.h"

namespace flash::detail {

cudaError_t fill_no_keys(const FwdParams& p, cudaStream_t stream);

}  // namespace flash::detail
