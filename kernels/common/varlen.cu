// The metadata check of variable-length batches (varlen.h).
#include "common/varlen.h"

namespace flash::detail {
namespace {

constexpr int kThreads = 1024;

__device__ void report(int* status, int code, int array, int index, int value) {
  if (atomicCAS(status, kVarlenOk, code) == kVarlenOk) {
    status[1] = array;
    status[2] = index;
    status[3] = value;
  }
}

__global__ void __launch_bounds__(kThreads) check_varlen_kernel(const __grid_constant__ AttnParams p, int total_q,
                                                                 int total_k) {
  if (threadIdx.x == 0) p.status[0] = p.status[1] = p.status[2] = p.status[3] = 0;
  __syncthreads();  // the zeros before any report
  const int* cu[2] = {p.cu_seqlens_q, p.cu_seqlens_k};
  const int total[2] = {total_q, total_k}, bound[2] = {p.seqlen_q, p.seqlen_k};
  for (int a = 0; a < 2; ++a) {
    if (threadIdx.x == 0 && cu[a][0] != 0) report(p.status, kVarlenNotFromZero, a, 0, cu[a][0]);
    if (threadIdx.x == 0 && cu[a][p.batch] > total[a]) report(p.status, kVarlenPastTotal, a, p.batch, cu[a][p.batch]);
    for (int b = threadIdx.x; b < p.batch; b += kThreads) {
      const int len = cu[a][b + 1] - cu[a][b];
      if (len < 0) report(p.status, kVarlenDecreasing, a, b + 1, cu[a][b + 1]);
      else if (len > bound[a] && !(a == 1 && p.seqused_k != nullptr)) report(p.status, kVarlenPastMax, a, b, len);
    }
  }
  if (p.seqused_k != nullptr) {
    for (int b = threadIdx.x; b < p.batch; b += kThreads) {
      const int used = p.seqused_k[b], len = p.cu_seqlens_k[b + 1] - p.cu_seqlens_k[b];
      if (used < 0 || used > len) report(p.status, kVarlenBadSeqused, 2, b, used);
      else if (used > p.seqlen_k) report(p.status, kVarlenPastMax, 2, b, used);
    }
  }
}

}  // namespace

cudaError_t check_varlen_metadata(const AttnParams& p, int total_q, int total_k, cudaStream_t stream) {
  check_varlen_kernel<<<1, kThreads, 0, stream>>>(p, total_q, total_k);
  return cudaGetLastError();
}

std::string describe_varlen_status(const int (&s)[4]) {
  static const char* kArrays[] = {"cu_seqlens_q", "cu_seqlens_k", "seqused_k"};
  const std::string name = s[1] >= 0 && s[1] < 3 ? kArrays[s[1]] : "?";
  const std::string entry = name + "[" + std::to_string(s[2]) + "] = " + std::to_string(s[3]);
  switch (s[0]) {
    case kVarlenOk: return {};
    case kVarlenNotFromZero: return entry + "; expected 0 (the first sequence starts at row 0)";
    case kVarlenDecreasing: return entry + " is less than the entry before it (lengths are differences, >= 0)";
    case kVarlenPastTotal: return entry + " is past the packed tensor's rows";
    case kVarlenPastMax:
      return "sequence " + std::to_string(s[2]) + " of " + name + " has " + std::to_string(s[3]) + " rows, more than " +
             (s[1] == 0 ? "max_seqlen_q" : "max_seqlen_k");
    case kVarlenBadSeqused: return entry + " is outside [0, the sequence's keys]";
    default: return "unknown varlen status " + std::to_string(s[0]);
  }
}

}  // namespace flash::detail
