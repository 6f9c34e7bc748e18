// seqlen_k == 0: every query row sees no key, so O = 0 and LSE = -inf (the
// sink, with sinks: ScoreMod::sink).
// The dispatcher calls this instead of a variant, so each variant may assume
// seqlen_k >= 1 (and, with dense queries and device metadata, after the
// metadata check, whose status it reads).
#include <algorithm>
#include <cmath>

#include "common/numeric.cuh"
#include "common/no_keys.h"
#include "common/scores.h"

namespace flash::detail {
namespace {

constexpr int kThreads = 256;

template <class T>
__global__ void fill_no_keys_kernel(const __grid_constant__ FwdParams p) {
  // A call with device metadata: the check (before this kernel on the
  // stream) found it bad, so nothing is written.
  if (p.status != nullptr && p.status[0] != 0) return;
  // One thread per (row, head, batch) x head_dim element, grid-strided.
  const std::int64_t rows = static_cast<std::int64_t>(p.batch) * p.seqlen_q * p.heads_q;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; idx < rows * p.head_dim;
       idx += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const int d = static_cast<int>(idx % p.head_dim);
    const std::int64_t row = idx / p.head_dim;  // ((b * seqlen_q) + i) * heads_q + h
    const int h = static_cast<int>(row % p.heads_q);
    const int i = static_cast<int>((row / p.heads_q) % p.seqlen_q);
    const int b = static_cast<int>(row / (static_cast<std::int64_t>(p.heads_q) * p.seqlen_q));
    static_cast<T*>(p.o)[b * p.o_batch_stride + i * p.o_row_stride + h * p.o_head_stride + d] = from_float<T>(0.0f);
    if (d == 0 && p.lse != nullptr) {
      p.lse[b * p.lse_batch_stride + h * p.lse_head_stride + i * p.lse_row_stride] = ScoreMod::sink(p, h);
    }
  }
}

}  // namespace

cudaError_t fill_no_keys(const FwdParams& p, cudaStream_t stream) {
  constexpr std::int64_t kMaxBlocks = 1 << 16;
  const std::int64_t n = static_cast<std::int64_t>(p.batch) * p.seqlen_q * p.heads_q * p.head_dim;
  const unsigned blocks = static_cast<unsigned>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, kMaxBlocks));
  return dispatch_dtype(p.dtype, [&](auto tag) {
    fill_no_keys_kernel<typename decltype(tag)::type><<<blocks, kThreads, 0, stream>>>(p);
    return cudaGetLastError();
  });
}

}  // namespace flash::detail
