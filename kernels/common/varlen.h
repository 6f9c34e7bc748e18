// The device-side check of a variable-length batch's metadata
// (ForwardArgs::cu_seqlens_q): the lengths live on the device, so they are
// checked there, before any kernel that reads them; kernels skip all work
// when p.status[0] != 0, so bad metadata writes nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/params.h"

namespace flash::detail {

// Codes of the check (status[0]); status[1] names the array (0
// cu_seqlens_q, 1 cu_seqlens_k, 2 seqused_k), status[2] the index, status[3]
// the value found there.
enum VarlenStatus : int {
  kVarlenOk = 0,
  kVarlenNotFromZero = 1,   // cu_seqlens[0] != 0
  kVarlenDecreasing = 2,    // cu_seqlens[b + 1] < cu_seqlens[b]
  kVarlenPastTotal = 3,     // cu_seqlens[batch] > total rows of the packed tensor
  kVarlenPastMax = 4,       // a sequence longer than max_seqlen_q / max_seqlen_k
  kVarlenBadSeqused = 5,    // seqused_k[b] outside [0, the sequence's keys]
};

// Zeroes p.status and checks cu_seqlens_q, cu_seqlens_k and seqused_k
// against total_q / total_k rows and the bounds p.seqlen_q / p.seqlen_k
// (max_seqlen_q / max_seqlen_k). One CTA.
cudaError_t check_varlen_metadata(const AttnParams& p, int total_q, int total_k, cudaStream_t stream);

// "cu_seqlens_k[3] = 70 is less than cu_seqlens_k[2] = 80"-style text for
// the four status words.
std::string describe_varlen_status(const int (&s)[4]);

}  // namespace flash::detail
