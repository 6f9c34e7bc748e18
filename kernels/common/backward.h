// The kernels every backward variant shares (kernels/common/backward.cu).
#pragma once

#include <cuda_runtime_api.h>

#include "common/bwd_params.h"

namespace flash::detail {

// Before the main kernels: per (batch, head_q, row) of the padded rows,
// dpsum = rowsum(dO * O) in fp32 and lse_log2 = LSE * log2(e) (+inf where
// the LSE is -inf, and in the padding); zeroes dq_accum when it is bound.
cudaError_t bwd_preprocess(const BwdParams& p, cudaStream_t stream);

// After them: dq = scale * dq_accum, rounded to the dtype.
cudaError_t bwd_convert_dq(const BwdParams& p, cudaStream_t stream);

// Zero gradients for empty calls: dq when seqlen_k == 0 (no key: no
// gradient), dk and dv when seqlen_q == 0.
cudaError_t bwd_fill_zero(const BwdParams& p, cudaStream_t stream);

}  // namespace flash::detail
