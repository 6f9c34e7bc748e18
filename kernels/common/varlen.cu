// The metadata check of the forward's per-sequence calls (varlen.h).
#include <algorithm>
#include <cstdint>

#include "common/pdl.cuh"
#include "common/varlen.h"

namespace flash::detail {
namespace {

constexpr int kThreads = 1024;
// Up to this many entries (sequences and page-table entries) one CTA checks
// them all and zeroes the status words itself, saving a launch; a larger
// page table takes a memset and a grid (as decode's check, kv_cache.cu).
constexpr std::int64_t kMaxEntriesOneCta = 1 << 16;
constexpr int kMaxCtas = 1024;

__device__ void report(int* status, int code, int array, int index, int value) {
  if (atomicCAS(status, kVarlenOk, code) == kVarlenOk) {
    status[1] = array;
    status[2] = index;
    status[3] = value;
  }
}

// Every loop is grid-stride over the threads of all CTAs; the first error
// found wins (atomicCAS on status[0]).
__global__ void __launch_bounds__(kThreads) check_varlen_kernel(const __grid_constant__ AttnParams p, int total_q,
                                                                 int total_k, bool zero_status) {
  let_next_kernel_start();  // the Hopper forward starts early and waits for this grid (fa3_launch)
  if (zero_status) {  // one CTA
    if (threadIdx.x == 0) p.status[0] = p.status[1] = p.status[2] = p.status[3] = 0;
    __syncthreads();  // the zeros before any report
  }
  const int tid = blockIdx.x * kThreads + threadIdx.x, threads = gridDim.x * kThreads;
  const int* cu[2] = {p.cu_seqlens_q, p.cu_seqlens_k};
  const int total[2] = {total_q, total_k}, bound[2] = {p.seqlen_q, p.seqlen_k};
  for (int a = 0; a < 2; ++a) {
    if (cu[a] == nullptr) continue;
    if (tid == 0 && cu[a][0] != 0) report(p.status, kVarlenNotFromZero, a, 0, cu[a][0]);
    if (tid == 0 && cu[a][p.batch] > total[a]) report(p.status, kVarlenPastTotal, a, p.batch, cu[a][p.batch]);
    for (int b = tid; b < p.batch; b += threads) {
      // In 64 bits: int differences wrap (0, INT_MAX, -2 would read as
      // non-decreasing).
      const std::int64_t len = std::int64_t{cu[a][b + 1]} - cu[a][b];
      if (len < 0) report(p.status, kVarlenDecreasing, a, b + 1, cu[a][b + 1]);
      else if (len > bound[a] && !(a == 1 && p.seqused_k != nullptr))
        report(p.status, kVarlenPastMax, a, b, len > INT32_MAX ? INT32_MAX : static_cast<int>(len));
    }
  }
  // The keys sequence b has: its packed rows, else the table's capacity
  // when paged, else k's (seqlen_k of a dense call). A negative count is
  // cu_seqlens_k's error, reported above.
  const int capacity = p.page_table != nullptr ? p.max_pages * p.page_size : p.seqlen_k;
  auto keys_held = [&](int b) -> std::int64_t {
    return p.cu_seqlens_k != nullptr ? std::int64_t{p.cu_seqlens_k[b + 1]} - p.cu_seqlens_k[b] : capacity;
  };
  if (p.seqused_k != nullptr) {
    for (int b = tid; b < p.batch; b += threads) {
      const int used = p.seqused_k[b];
      const std::int64_t held = keys_held(b);
      if (held < 0) continue;
      if (used < 0 || used > held) report(p.status, kVarlenBadSeqused, 2, b, used);
      else if (used > p.seqlen_k) report(p.status, kVarlenPastMax, 2, b, used);
    }
  }
  if (p.seq_order != nullptr) {
    // Each warp ranks a group of 32 sequences: longest first (lengths
    // clamped at 0: a permutation even under bad metadata), ties in the
    // caller's order; lanes past the batch rank last and write nothing.
    constexpr unsigned kAll = 0xffffffffu;
    const int lane = tid % 32, warps = threads / 32;
    for (int b0 = tid / 32 * 32; b0 < p.batch; b0 += warps * 32) {
      const int b = b0 + lane;
      int rows = 0, len = -1;
      if (b < p.batch) {
        const AttnParams::SeqSpan span = p.seq_span(b);
        rows = span.seqlen_q;
        len = max(p.seq_order_by_queries ? span.seqlen_q : span.seqlen_k, 0);
      }
      int rank = 0;
      for (int j = 0; j < 32; ++j) {
        const int len_j = __shfl_sync(kAll, len, j);
        rank += len_j > len || (len_j == len && j < lane);
      }
      if (b < p.batch) {
        p.seq_order[2 * (b0 + rank)] = b;
        p.seq_order[2 * (b0 + rank) + 1] = rows;
      }
    }
  }
  if (p.page_table == nullptr) return;
  // Every entry that a sequence's keys reach (seqused_k[b], else all of
  // them) must be a page of k; the rest are never read and may be anything.
  const std::int64_t entries = static_cast<std::int64_t>(p.batch) * p.max_pages;
  for (std::int64_t idx = tid; idx < entries; idx += threads) {
    const int b = static_cast<int>(idx / p.max_pages), i = static_cast<int>(idx % p.max_pages);
    const int keys = p.seqused_k != nullptr ? p.seqused_k[b] : capacity;
    if (keys < 0 || keys > capacity || i >= p.pages_for(keys)) continue;  // a bad length is reported above
    const int page = __ldg(p.page_table + b * p.page_table_stride + i);
    if (page < 0 || page >= p.num_pages) report(p.status, kVarlenPageOutOfRange, b, i, page);
  }
}

}  // namespace

cudaError_t check_varlen_metadata(const AttnParams& p, int total_q, int total_k, cudaStream_t stream) {
  const std::int64_t entries = static_cast<std::int64_t>(p.batch) * (p.page_table != nullptr ? p.max_pages + 1 : 1);
  if (entries <= kMaxEntriesOneCta) {
    check_varlen_kernel<<<1, kThreads, 0, stream>>>(p, total_q, total_k, true);
    return cudaGetLastError();
  }
  const cudaError_t err = cudaMemsetAsync(p.status, 0, 4 * sizeof(int), stream);
  if (err != cudaSuccess) return err;
  const int ctas = static_cast<int>(std::min<std::int64_t>((entries + kThreads - 1) / kThreads, kMaxCtas));
  check_varlen_kernel<<<ctas, kThreads, 0, stream>>>(p, total_q, total_k, false);
  return cudaGetLastError();
}

std::string describe_varlen_status(const int (&s)[4], const AttnParams& p) {
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
    case kVarlenBadSeqused: {
      const std::string held =
          p.cu_seqlens_k != nullptr ? std::string("the sequence's keys in cu_seqlens_k")
          : p.page_table != nullptr ? "max_pages * page_size = " + std::to_string(std::int64_t{p.max_pages} * p.page_size)
                                    : "k.shape[1] = " + std::to_string(p.seqlen_k);
      return entry + " is outside [0, " + held + "]";
    }
    case kVarlenPageOutOfRange:
      return "page_table[" + std::to_string(s[1]) + "][" + std::to_string(s[2]) + "] = " + std::to_string(s[3]) +
             " is not a page of k (k has " + std::to_string(p.num_pages) + " pages)";
    default: return "unknown varlen status " + std::to_string(s[0]);
  }
}

}  // namespace flash::detail
