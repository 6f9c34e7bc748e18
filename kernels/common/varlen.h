// The device-side check of a forward call's per-sequence metadata
// (ForwardArgs::cu_seqlens_q, cu_seqlens_k, seqused_k, page_table): it lives
// on the device, so it is checked there, before any kernel that reads it;
// kernels skip all work when p.status[0] != 0, so bad metadata writes
// nothing.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>

#include "common/params.h"

namespace flash::detail {

// Codes of the check (status[0]). status[1] names the array (0
// cu_seqlens_q, 1 cu_seqlens_k, 2 seqused_k), status[2] the index, status[3]
// the value found there; for kVarlenPageOutOfRange status[1] is the
// sequence and status[2] the entry of its row of page_table.
enum VarlenStatus : int {
  kVarlenOk = 0,
  kVarlenNotFromZero = 1,   // cu_seqlens[0] != 0
  kVarlenDecreasing = 2,    // cu_seqlens[b + 1] < cu_seqlens[b]
  kVarlenPastTotal = 3,     // cu_seqlens[batch] > total rows of the packed tensor
  kVarlenPastMax = 4,       // a sequence longer than max_seqlen_q / max_seqlen_k
  kVarlenBadSeqused = 5,    // seqused_k[b] outside [0, the keys sequence b has]
  kVarlenPageOutOfRange = 6,  // page_table[b][i] outside [0, num_pages), for an entry seqused_k[b] reaches
};

// Zeroes p.status and checks what the call has of cu_seqlens_q,
// cu_seqlens_k (against total_q / total_k rows and the bounds p.seqlen_q /
// p.seqlen_k, which are max_seqlen_q / max_seqlen_k), seqused_k (each
// within its sequence's keys: its cu_seqlens_k length, k.shape[1] for a
// dense call, the page table's capacity when paged; and within max_seqlen_k
// for a variable-length call) and the page table (every entry that a
// sequence's keys reach is a page of k). One CTA, or several after a
// memset of the status words when the page table is large. With
// p.seq_order it also writes the sequences' longest-first order there
// (AttnParams::seq_order), whatever the verdict (a permutation either way).
cudaError_t check_varlen_metadata(const AttnParams& p, int total_q, int total_k, cudaStream_t stream);

// Where a call with device metadata keeps, after its variant's workspace
// (256-byte aligned), the sequences' order that the check writes
// (AttnParams::seq_order, two ints per sequence; packed-query calls) and
// the check's four status words (unless the caller passes `status`). The
// order's region has room for kVarlenOrderMaxSequences whatever the batch,
// so that a packed forward's workspace does not grow with its batch (a CUDA
// graph captured after a warm call with fewer sequences needs no larger
// buffer); calls with more sequences keep the caller's order (seq_order
// null).
inline constexpr int kVarlenOrderMaxSequences = 4096;
struct MetadataWorkspace {
  std::size_t order = 0, status = 0;  // byte offsets
  std::size_t bytes = 0;              // the whole workspace
};
constexpr MetadataWorkspace metadata_workspace(std::size_t variant_bytes, bool packed_q, bool own_status) {
  constexpr std::size_t kAlign = 256, kStatusBytes = 256;
  constexpr std::size_t kOrderBytes = 2 * sizeof(int) * kVarlenOrderMaxSequences;  // a multiple of kAlign
  MetadataWorkspace w;
  w.order = (variant_bytes + kAlign - 1) / kAlign * kAlign;
  w.status = w.order + (packed_q ? kOrderBytes : 0);
  w.bytes = own_status ? w.status + kStatusBytes : (packed_q ? w.status : variant_bytes);
  return w;
}
// Whether a call ranks its sequences (AttnParams::seq_order): packed
// queries, at most kVarlenOrderMaxSequences of them.
constexpr bool varlen_ordered(bool packed_q, int batch) { return packed_q && batch <= kVarlenOrderMaxSequences; }

// "cu_seqlens_k[3] = 70 is less than the entry before it"-style text for
// the four status words of call p.
std::string describe_varlen_status(const int (&s)[4], const AttnParams& p);

}  // namespace flash::detail
