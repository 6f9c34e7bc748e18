// The metadata check and the append of the decode path (kv_cache.cuh).
// Neither depends on the element type: the append moves 16-byte chunks.
#include "common/kv_cache.cuh"

namespace flash::detail {
namespace {

constexpr int kThreads = 128;

__device__ void report(const DecodeParams& p, int code, int b, int page, int value) {
  if (atomicCAS(p.status, kDecodeOk, code) == kDecodeOk) {
    p.status[1] = b;
    p.status[2] = page;
    p.status[3] = value;
  }
}

// Entry b of cu_seqlens_q (variable-length calls, b < batch), by the
// forward's rules (common/varlen.h): it starts at 0 (checked with b = 0, as
// is the last entry against total_q), never decreases, and no sequence has
// more than max_seqlen_q (p.seqlen_q) rows, the grid's bound. Differences in
// 64 bits: entries are arbitrary ints until proven otherwise.
__device__ void check_cu_seqlens_q(const DecodeParams& p, int b) {
  const int* cu = p.cu_seqlens_q;
  if (b == 0 && cu[0] != 0) report(p, kDecodeCuSeqlensNotFromZero, 0, -1, cu[0]);
  if (b == 0 && cu[p.batch] > p.total_q) report(p, kDecodeCuSeqlensPastTotal, p.batch, -1, cu[p.batch]);
  const std::int64_t len = static_cast<std::int64_t>(cu[b + 1]) - cu[b];
  if (len < 0) report(p, kDecodeCuSeqlensDecreasing, b + 1, -1, cu[b + 1]);
  else if (len > p.seqlen_q) report(p, kDecodeQPastMax, b, -1, static_cast<int>(min(len, std::int64_t{INT32_MAX})));
}

// One CTA per sequence: its entry of cu_seqlens_q (kVarlen: the call has
// one; a template flag, so that dense calls keep their code), its length
// against the capacity, then every page index its keys (after the append)
// reach. The first error found wins.
template <bool kVarlen>
__global__ void __launch_bounds__(kThreads) check_metadata_kernel(const __grid_constant__ DecodeParams p) {
  let_next_kernel_start();  // it waits for this grid to finish before reading the status
  const int b = blockIdx.x;
  if (kVarlen && threadIdx.x == 0) check_cu_seqlens_q(p, b);
  const int len = __ldg(p.cache_seqlens + b * p.seqlens_stride);
  const std::int64_t total = static_cast<std::int64_t>(len) + p.seqlen_new;
  if (len < 0 || total > p.seqlen_k) {
    if (threadIdx.x == 0) {
      if (len < 0) report(p, kDecodeNegativeLength, b, -1, len);
      else if (p.seqlen_new == 0) report(p, kDecodeLengthPastEnd, b, -1, len);
      else report(p, kDecodeAppendPastEnd, b, -1, len);
    }
    return;
  }
  if (p.page_table == nullptr) return;
  const int pages = static_cast<int>((total + p.page_size - 1) >> p.page_shift);
  for (int i = threadIdx.x; i < pages; i += kThreads) {
    const int page = __ldg(p.page_table + b * p.page_table_stride + i);
    if (page < 0 || page >= p.num_pages) report(p, kDecodePageOutOfRange, b, i, page);
  }
}

// The same check in one CTA of kCheckThreads, which first zeroes the status
// words itself (no separate memset): for the usual decode batch, where the
// entries to check are few, it saves a launch.
constexpr int kCheckThreads = 1024;
constexpr std::int64_t kMaxEntriesOneCta = 1 << 16;

template <bool kVarlen>
__global__ void __launch_bounds__(kCheckThreads) check_metadata_one_cta_kernel(const __grid_constant__ DecodeParams p) {
  let_next_kernel_start();
  if (threadIdx.x == 0) p.status[0] = p.status[1] = p.status[2] = p.status[3] = 0;
  __syncthreads();  // the zeros are visible to the block before any report
  auto valid_total = [&](int b, bool report_errors) -> std::int64_t {
    const int len = __ldg(p.cache_seqlens + b * p.seqlens_stride);
    const std::int64_t total = static_cast<std::int64_t>(len) + p.seqlen_new;
    if (len >= 0 && total <= p.seqlen_k) return total;
    if (report_errors) {
      if (len < 0) report(p, kDecodeNegativeLength, b, -1, len);
      else if (p.seqlen_new == 0) report(p, kDecodeLengthPastEnd, b, -1, len);
      else report(p, kDecodeAppendPastEnd, b, -1, len);
    }
    return -1;
  };
  for (int b = threadIdx.x; b < p.batch; b += kCheckThreads) {
    if (kVarlen) check_cu_seqlens_q(p, b);
    valid_total(b, true);
  }
  if (p.page_table == nullptr || p.max_pages <= 0) return;  // (no entries)
  // Every table entry with its sequence's length: both loads are independent
  // (an entry past the sequence's pages is read and ignored; the table is
  // [batch, max_pages]) and kUnroll entries per thread are in flight at once,
  // so the check in front of a paged call costs one memory round trip per
  // 8192 entries instead of two per 1024 (H200, session 37: page 16 decode
  // +0.1 to +1.2%). Thread t's entries are t, t + kCheckThreads, ...: its
  // (sequence, page) pair starts at (t / max_pages, t % max_pages) and moves
  // on by (kCheckThreads / max_pages, kCheckThreads % max_pages) with a carry,
  // without a division per entry. (Two 64-bit divisions per entry made the
  // one SM's check of 64 x 256 entries take 11.0 us against 3.0 for 64 x 16,
  // ncu, H200, session 48: all of page 16's lag behind contiguous at 64 x 4k,
  // since a paged call reads its cache only after the check. Now 7.2 us;
  // page 16 decode at 64 x 4k 268.1 -> 263.5 us, within 0.2% of contiguous
  // in that call, 1 x 128k +2.0%.)
  constexpr int kUnroll = 8;
  const int step_b = kCheckThreads / p.max_pages, step_i = kCheckThreads % p.max_pages;
  int b = static_cast<int>(threadIdx.x) / p.max_pages, i = static_cast<int>(threadIdx.x) % p.max_pages;
  while (b < p.batch) {
    int len[kUnroll], page[kUnroll], seq[kUnroll], entry[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      seq[u] = b, entry[u] = i;
      if (b < p.batch) {
        len[u] = __ldg(p.cache_seqlens + b * p.seqlens_stride);
        page[u] = __ldg(p.page_table + b * p.page_table_stride + i);
      }
      b += step_b, i += step_i;  // i < 2 max_pages: step_i < max_pages
      if (i >= p.max_pages) i -= p.max_pages, ++b;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      if (seq[u] >= p.batch) break;
      const std::int64_t total = static_cast<std::int64_t>(len[u]) + p.seqlen_new;
      if (len[u] < 0 || total > p.seqlen_k || entry[u] >= ((total + p.page_size - 1) >> p.page_shift)) continue;
      if (page[u] < 0 || page[u] >= p.num_pages) report(p, kDecodePageOutOfRange, seq[u], entry[u], page[u]);
    }
  }
}

// k_new and v_new rows into the cache at cache_seqlens[b] + i: one 16-byte
// chunk per thread and tensor, grid-stride.
__global__ void __launch_bounds__(kThreads) append_kv_kernel(const __grid_constant__ DecodeParams p, int esize) {
  wait_for_previous_kernel();
  let_next_kernel_start();
  if (metadata_failed(p)) return;
  const int chunks = p.head_dim * esize / 16;
  const std::int64_t n = static_cast<std::int64_t>(p.batch) * p.seqlen_new * p.heads_kv * chunks;
  for (std::int64_t idx = blockIdx.x * static_cast<std::int64_t>(kThreads) + threadIdx.x; idx < n;
       idx += static_cast<std::int64_t>(gridDim.x) * kThreads) {
    const int c = static_cast<int>(idx % chunks);
    const int h = static_cast<int>((idx / chunks) % p.heads_kv);
    const int i = static_cast<int>((idx / (static_cast<std::int64_t>(chunks) * p.heads_kv)) % p.seqlen_new);
    const int b = static_cast<int>(idx / (static_cast<std::int64_t>(chunks) * p.heads_kv * p.seqlen_new));
    const int pos = __ldg(p.cache_seqlens + b * p.seqlens_stride) + i;
    const auto* kn = static_cast<const char*>(p.k_new) +
                     (b * p.kn_batch_stride + i * p.kn_row_stride + h * p.kn_head_stride) * esize + c * 16;
    const auto* vn = static_cast<const char*>(p.v_new) +
                     (b * p.vn_batch_stride + i * p.vn_row_stride + h * p.vn_head_stride) * esize + c * 16;
    char* kc = static_cast<char*>(p.k_cache()) +
               cache_row_offset(p, p.k_batch_stride, p.k_row_stride, p.k_head_stride, b, h, pos) * esize + c * 16;
    char* vc = static_cast<char*>(p.v_cache()) +
               cache_row_offset(p, p.v_batch_stride, p.v_row_stride, p.v_head_stride, b, h, pos) * esize + c * 16;
    *reinterpret_cast<uint4*>(kc) = *reinterpret_cast<const uint4*>(kn);
    *reinterpret_cast<uint4*>(vc) = *reinterpret_cast<const uint4*>(vn);
  }
}

}  // namespace

cudaError_t launch_check_metadata(const DecodeParams& p, cudaStream_t stream) {
  const std::int64_t entries = static_cast<std::int64_t>(p.batch) * (p.page_table != nullptr ? p.max_pages + 1 : 1);
  const bool varlen = p.cu_seqlens_q != nullptr;
  if (entries <= kMaxEntriesOneCta) {
    (varlen ? check_metadata_one_cta_kernel<true> : check_metadata_one_cta_kernel<false>)<<<1, kCheckThreads, 0, stream>>>(p);
    return cudaGetLastError();
  }
  const cudaError_t err = cudaMemsetAsync(p.status, 0, 4 * sizeof(int), stream);
  if (err != cudaSuccess) return err;
  (varlen ? check_metadata_kernel<true> : check_metadata_kernel<false>)<<<p.batch, kThreads, 0, stream>>>(p);
  return cudaGetLastError();
}

cudaError_t launch_append_kv(const DecodeParams& p, cudaStream_t stream) {
  if (p.k_new == nullptr || p.seqlen_new == 0) return cudaSuccess;
  const int esize = static_cast<int>(dtype_size(p.dtype));
  const std::int64_t n = static_cast<std::int64_t>(p.batch) * p.seqlen_new * p.heads_kv * (p.head_dim * esize / 16);
  const int blocks = static_cast<int>(std::min<std::int64_t>((n + kThreads - 1) / kThreads, 65535));
  return launch_after(p.pdl, append_kv_kernel, dim3(blocks), dim3(kThreads), 0, stream, p, esize);
}

}  // namespace flash::detail
