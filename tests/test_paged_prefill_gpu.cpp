// GPU tests of paged prefill (ForwardArgs::page_table; ctest
// gpu_paged_prefill): every built variant with kFeaturePaged over a chunk
// of queries per sequence against a paged KV cache. Dense queries ([batch,
// seqlen_q], keys from seqused_k or the whole table) and packed ones
// (cu_seqlens_q, keys from seqused_k); page sizes 16, 64 and 256; shuffled
// page tables whose entries past a sequence's keys are -1 or out of range
// (never read); pages laid out contiguously, K and V interleaved in one
// buffer, or heads-major; GQA/MQA, seqlen_q != seqlen_k (a chunk at the end
// of its cached prefix, and sequences shorter than the chunk, whose first
// causal rows see no key), causal, windows and the score modifiers. Each
// sequence is checked against the fp64 reference run on that sequence alone
// over its keys gathered into contiguous K/V (batch 1, its own lengths), by
// the rule of the dense checks (src/testing):
//   max|out - ref| <= 2 * max|out_lowp - ref| + floor(dtype) * max|ref|,
// and the LSE within 2^-16 relative (-inf exactly). Every row a sequence
// does not attend (past its length in its last page, spare pages) is NaN,
// so a kernel that lets one in fails; o and lse are poisoned (NaN) over
// their whole buffers, which are larger than the views, before each call:
// every element of the views' rows must be written and nothing else. Bad
// page tables and lengths (values only the device sees) must throw
// (sync_check) or set status, and write nothing; a variant without
// kFeaturePaged must refuse the call. Negative controls prove that the
// checks can fail.
//
// The suites are named PagedPrefill* because tests/CMakeLists.txt derives
// each GPU entry's filter from its file name (test_paged_prefill_gpu.cpp).
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "flash/flash.h"
#include "flash/reference.h"
#include "gpu_test.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::TensorView;
using flash::testing::Alibi;
using flash::testing::DeviceBuffer;

using flash::gpu_test::runnable;
using flash::gpu_test::test_seed;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kRandom = -1;              // a length drawn from the test's seed
constexpr int kSparePages = 3;           // pages no sequence uses (NaN)
constexpr std::int64_t kORowPad = 16;    // elements between o's rows (16-byte aligned in any dtype)
constexpr std::int64_t kLsePad = 3;      // elements between lse's heads
constexpr std::int64_t kTableRowPad = 5;  // entries between page_table's rows (heads-major layout)
constexpr std::int64_t kBufferTail = 64;  // elements past each output view's end, which must stay poisoned

// How the pages lie in memory.
enum class PageLayout {
  contiguous,      // k and v [num_pages, page_size, heads_kv, head_dim], each its own buffer
  kv_interleaved,  // k and v parts of one [num_pages, page_size, 2, heads_kv, head_dim] buffer
  heads_major,     // k and v in [num_pages, heads_kv, page_size, head_dim] memory; a page table with padded rows
  padded_pages,    // k and v [num_pages, page_size, heads_kv, head_dim] with kPagePad NaNs after each page
};
constexpr std::int64_t kPagePad = 8;  // elements between pages (padded_pages): no multiple of 8 rows

constexpr const char* layout_name(PageLayout l) {
  switch (l) {
    case PageLayout::contiguous: return "contiguous";
    case PageLayout::kv_interleaved: return "kv_interleaved";
    case PageLayout::heads_major: return "heads_major";
    default: return "padded_pages";
  }
}

struct PagedSpec {
  int heads_q = 4, heads_kv = 2, head_dim = 64;
  int page_size = 16;
  bool causal = false;
  int window_left = -1, window_right = -1;
  float softcap = 0.0f;
  Alibi alibi = Alibi::none;
  bool sinks = false;
  double qk_gain = 1.0;  // q and k's standard deviation (as testing::Shape)
  bool packed = false;   // cu_seqlens_q: queries packed [total_q, heads_q, head_dim]; else dense [batch, seqlen_q]
  // Queries per sequence (dense: all equal, seqlen_q) and keys per sequence
  // (seqused_k; kRandom entries drawn). Without seqused (dense only) every
  // sequence has the table's max_pages * page_size keys, max_pages =
  // table_pages; with it, max_pages is one more than the longest sequence
  // needs, or table_pages if that is more.
  std::vector<int> q_lens;
  std::vector<int> k_lens;
  bool seqused = true;
  int table_pages = 0;
  int tail_q = 0;  // packed: rows past cu_seqlens_q[batch]
  PageLayout layout = PageLayout::contiguous;
  bool loose_max = false;  // packed: max_seqlen_k = the table's capacity, not the longest sequence
};

// A random key count for sequence b with q_len queries, by b % 4: a chunk at
// the end of a short prefix, fewer keys than queries (causal rows that see
// none), a long prefix, or unrelated to q_len.
int random_k_len(int b, int q_len, std::mt19937_64& rng) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  switch (b % 4) {
    case 0: return q_len + uniform(1, 64);
    case 1: return uniform(0, q_len);
    case 2: return q_len + uniform(65, 700);
    default: return uniform(0, 1100);
  }
}

// One paged call: random inputs, the page table, the pages on the device,
// and the fp64 reference of each sequence over its gathered keys.
struct PagedProblem {
  PagedSpec spec;
  DType dtype = DType::bf16;
  int batch = 0, seqlen_q = 0, rows = 0, total_q = 0;  // rows: the queries of all sequences; total_q: q's rows
  int max_pages = 0, num_pages = 0, spare_page = 0;
  std::vector<int> q_lens, k_lens, q_row0, cu_q;  // q_row0: first row of sequence b in q (dense: b * seqlen_q)
  std::vector<int> table;                          // [batch][max_pages]
  std::vector<double> q;                           // [total_q, heads_q, head_dim]
  std::vector<std::vector<double>> k_seq, v_seq;   // each sequence's keys gathered: [k_lens[b], heads_kv, head_dim]
  std::vector<double> k_pages, v_pages;            // [num_pages, page_size, heads_kv, head_dim]; NaN where unused
  flash::testing::ScoreInputs scores;
  std::vector<flash::reference::Result> ref;  // per sequence: o [1, sq, heads_q, head_dim], lse [1, heads_q, sq]
  DeviceBuffer d_q, d_k, d_v, d_o, d_lse, d_cu_q, d_table, d_used;
  TensorView o_memory, lse_memory;  // flat views of o's and lse's whole buffers
  flash::ForwardArgs args;          // every view, flag and modifier; kernel left to the caller

  int capacity() const { return max_pages * spec.page_size; }
  // Index of (sequence b, query i, head h, dim d) in a download of args.o, and of (b, h, i) in one of args.lse.
  std::size_t o_index(int b, int i, int h, int d) const {
    return static_cast<std::size_t>(((q_row0[b] + i) * std::int64_t{spec.heads_q} + h) * spec.head_dim + d);
  }
  std::size_t lse_index(int b, int h, int i) const {
    if (spec.packed) return static_cast<std::size_t>(std::int64_t{h} * total_q + q_row0[b] + i);
    return static_cast<std::size_t>((std::int64_t{b} * spec.heads_q + h) * seqlen_q + i);
  }
};

std::vector<double> as_doubles(const std::vector<int>& x) { return {x.begin(), x.end()}; }

DeviceBuffer device_ints(const std::vector<int>& host, TensorView& view) {
  DeviceBuffer buf(std::max<std::size_t>(host.size(), 1) * sizeof(std::int32_t));
  view = flash::make_contiguous(buf.get(), DType::i32, {static_cast<std::int64_t>(host.size())});
  flash::testing::upload(as_doubles(host), view);
  return buf;
}

// Uploads the host pages to their device views (one buffer per tensor, or
// one for both when interleaved: upload() writes a view's whole byte span).
void upload_pages(PagedProblem& p) {
  const PagedSpec& s = p.spec;
  const DType dtype = p.dtype;
  const std::int64_t P = p.num_pages, S = s.page_size, Hkv = s.heads_kv, D = s.head_dim;
  const std::int64_t es = static_cast<std::int64_t>(flash::dtype_size(dtype));
  const std::size_t page_elems = static_cast<std::size_t>(P * S * Hkv * D);
  flash::ForwardArgs& a = p.args;
  if (s.layout == PageLayout::kv_interleaved) {
    std::vector<double> both(2 * page_elems);
    for (std::int64_t r = 0; r < P * S; ++r) {
      std::copy_n(p.k_pages.begin() + r * Hkv * D, Hkv * D, both.begin() + r * 2 * Hkv * D);
      std::copy_n(p.v_pages.begin() + r * Hkv * D, Hkv * D, both.begin() + (r * 2 + 1) * Hkv * D);
    }
    p.d_k = DeviceBuffer(std::max<std::size_t>(both.size() * es, 1));
    flash::testing::upload(both, flash::make_contiguous(p.d_k.get(), dtype, {P * S, 2 * Hkv, D}));
    char* base = static_cast<char*>(p.d_k.get());
    a.k = flash::make_view(base, dtype, {P, S, Hkv, D}, {S * 2 * Hkv * D, 2 * Hkv * D, D, 1});
    a.v = flash::make_view(base + Hkv * D * es, dtype, {P, S, Hkv, D}, {S * 2 * Hkv * D, 2 * Hkv * D, D, 1});
    return;
  }
  if (s.layout == PageLayout::padded_pages) {  // the page stride no 5-D tensor map steps (fwd_09: 8-row boxes)
    const std::int64_t page = S * Hkv * D, stride = page + kPagePad;
    auto padded_view = [&](DeviceBuffer& buf, const std::vector<double>& host) {
      std::vector<double> memory(static_cast<std::size_t>(P * stride), std::numeric_limits<double>::quiet_NaN());
      for (std::int64_t j = 0; j < P; ++j) std::copy_n(host.begin() + j * page, page, memory.begin() + j * stride);
      buf = DeviceBuffer(std::max<std::size_t>(memory.size() * es, 1));
      flash::testing::upload(memory, flash::make_contiguous(buf.get(), dtype, {P * stride}));
      return flash::make_view(buf.get(), dtype, {P, S, Hkv, D}, {stride, Hkv * D, D, 1});
    };
    a.k = padded_view(p.d_k, p.k_pages);
    a.v = padded_view(p.d_v, p.v_pages);
    return;
  }
  const bool heads_major = s.layout == PageLayout::heads_major;
  auto pages_view = [&](DeviceBuffer& buf, const std::vector<double>& host) {
    buf = DeviceBuffer(std::max<std::size_t>(page_elems * es, 1));
    const TensorView t = heads_major ? flash::make_view(buf.get(), dtype, {P, S, Hkv, D}, {Hkv * S * D, D, S * D, 1})
                                     : flash::make_contiguous(buf.get(), dtype, {P, S, Hkv, D});
    flash::testing::upload(host, t);
    return t;
  };
  a.k = pages_view(p.d_k, p.k_pages);
  a.v = pages_view(p.d_v, p.v_pages);
}

PagedProblem make_paged_problem(const PagedSpec& s, DType dtype, std::uint64_t seed) {
  PagedProblem p;
  p.spec = s;
  p.dtype = dtype;
  std::mt19937_64 rng(seed);
  const std::int64_t Hq = s.heads_q, Hkv = s.heads_kv, D = s.head_dim, S = s.page_size;
  p.batch = static_cast<int>(s.q_lens.size());
  p.q_lens = s.q_lens;
  p.seqlen_q = s.packed || p.batch == 0 ? 0 : s.q_lens[0];
  for (int b = 0; b < p.batch; ++b) {
    if (!s.packed && p.q_lens[b] != p.seqlen_q) ADD_FAILURE() << "dense queries: every sequence has seqlen_q rows";
    if (!s.seqused) p.k_lens.push_back(s.table_pages * s.page_size);
    else p.k_lens.push_back(s.k_lens.at(b) == kRandom ? random_k_len(b, p.q_lens[b], rng) : s.k_lens.at(b));
  }
  p.cu_q.assign(1, 0);
  for (int b = 0; b < p.batch; ++b) {
    p.q_row0.push_back(p.cu_q.back());
    p.cu_q.push_back(p.cu_q.back() + p.q_lens[b]);
  }
  p.rows = p.cu_q.back();
  p.total_q = p.rows + (s.packed ? s.tail_q : 0);

  // The table: each sequence's pages drawn from a shuffled list; one entry
  // more than the longest sequence needs (all of them without seqused_k),
  // the unreached ones -1 or past the last page.
  std::vector<int> needed(p.batch);
  for (int b = 0; b < p.batch; ++b) needed[b] = (p.k_lens[b] + s.page_size - 1) / s.page_size;
  p.max_pages = s.seqused ? std::max(*std::max_element(needed.begin(), needed.end()) + 1, s.table_pages) : s.table_pages;
  int used_pages = 0;
  for (int n : needed) used_pages += n;
  p.num_pages = used_pages + kSparePages;
  std::vector<int> perm(p.num_pages);
  for (int i = 0; i < p.num_pages; ++i) perm[i] = i;
  std::shuffle(perm.begin(), perm.end(), rng);
  p.table.assign(static_cast<std::size_t>(p.batch) * p.max_pages, 0);
  int next = 0;
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.max_pages; ++i)
      p.table[b * p.max_pages + i] = i < needed[b] ? perm[next++] : (i % 2 ? -1 : p.num_pages + 1000 * i);
  p.spare_page = perm[p.num_pages - 1];

  // Queries, keys gathered per sequence and scattered into NaN pages.
  p.q = flash::testing::random_values(static_cast<std::size_t>(p.total_q * Hq * D), dtype, rng, s.qk_gain);
  std::fill(p.q.begin() + p.rows * Hq * D, p.q.end(), kNaN);  // packed rows past the last sequence
  p.k_pages.assign(static_cast<std::size_t>(p.num_pages * S * Hkv * D), kNaN);
  p.v_pages = p.k_pages;
  for (int b = 0; b < p.batch; ++b) {
    const std::size_t n = static_cast<std::size_t>(p.k_lens[b] * Hkv * D);
    p.k_seq.push_back(flash::testing::random_values(n, dtype, rng, s.qk_gain));
    p.v_seq.push_back(flash::testing::random_values(n, dtype, rng));
    for (int j = 0; j < p.k_lens[b]; ++j) {
      const std::int64_t page = p.table[b * p.max_pages + j / s.page_size], row = j % s.page_size;
      const std::int64_t at = (page * S + row) * Hkv * D;
      std::copy_n(p.k_seq[b].begin() + j * Hkv * D, Hkv * D, p.k_pages.begin() + at);
      std::copy_n(p.v_seq[b].begin() + j * Hkv * D, Hkv * D, p.v_pages.begin() + at);
    }
  }
  p.scores = flash::testing::make_score_inputs(p.batch, s.heads_q, s.softcap, s.alibi, s.sinks,
                                               flash::testing::typical_row_max(s.qk_gain, s.softcap), rng);

  // Device inputs.
  flash::ForwardArgs& a = p.args;
  const std::int64_t es = static_cast<std::int64_t>(flash::dtype_size(dtype));
  auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 1)); };
  p.d_q = DeviceBuffer(bytes(p.total_q * Hq * D * es));
  a.q = s.packed ? flash::make_contiguous(p.d_q.get(), dtype, {p.total_q, Hq, D})
                 : flash::make_contiguous(p.d_q.get(), dtype, {p.batch, p.seqlen_q, Hq, D});
  flash::testing::upload(p.q, a.q);
  upload_pages(p);
  const std::int64_t table_row = p.max_pages + (s.layout == PageLayout::heads_major ? kTableRowPad : 0);
  std::vector<int> table_memory(static_cast<std::size_t>(std::max<std::int64_t>(p.batch * table_row, 1)), -7);
  for (int b = 0; b < p.batch; ++b)
    std::copy_n(p.table.begin() + b * p.max_pages, p.max_pages, table_memory.begin() + b * table_row);
  TensorView flat;
  p.d_table = device_ints(table_memory, flat);
  a.page_table = flash::make_view(p.d_table.get(), DType::i32, {p.batch, p.max_pages}, {table_row, 1});
  if (s.seqused) {
    TensorView view;
    p.d_used = device_ints(p.k_lens, view);
    a.seqused_k = view;
  }
  if (s.packed) {
    TensorView view;
    p.d_cu_q = device_ints(p.cu_q, view);
    a.cu_seqlens_q = view;
    a.max_seqlen_q = p.batch ? *std::max_element(p.q_lens.begin(), p.q_lens.end()) : 0;
    a.max_seqlen_k = s.loose_max ? p.capacity() : (p.batch ? *std::max_element(p.k_lens.begin(), p.k_lens.end()) : 0);
  }
  // Outputs inside larger buffers: o's rows padded, lse's heads padded, a tail after each.
  const std::int64_t o_row = Hq * D + kORowPad;
  const std::int64_t o_elems = p.total_q * o_row + kBufferTail;
  p.d_o = DeviceBuffer(bytes(o_elems * es));
  p.o_memory = flash::make_contiguous(p.d_o.get(), dtype, {o_elems});
  a.o = s.packed ? flash::make_view(p.d_o.get(), dtype, {p.total_q, Hq, D}, {o_row, D, 1})
                 : flash::make_view(p.d_o.get(), dtype, {p.batch, p.seqlen_q, Hq, D}, {p.seqlen_q * o_row, o_row, D, 1});
  const std::int64_t lse_row = (s.packed ? p.total_q : p.seqlen_q) + kLsePad;
  const std::int64_t lse_elems = (s.packed ? Hq : p.batch * Hq) * lse_row + kBufferTail;
  p.d_lse = DeviceBuffer(bytes(lse_elems * 4));
  p.lse_memory = flash::make_contiguous(p.d_lse.get(), DType::f32, {lse_elems});
  a.lse = s.packed ? flash::make_view(p.d_lse.get(), DType::f32, {Hq, p.total_q}, {lse_row, 1})
                   : flash::make_view(p.d_lse.get(), DType::f32, {p.batch, Hq, p.seqlen_q}, {Hq * lse_row, lse_row, 1});
  a.causal = s.causal;
  a.window_left = s.window_left;
  a.window_right = s.window_right;
  p.scores.apply(a);

  // The reference, one sequence at a time over its gathered keys.
  for (int b = 0; b < p.batch; ++b) {
    flash::reference::Problem rp;
    rp.batch = 1;
    rp.seqlen_q = p.q_lens[b];
    rp.seqlen_k = p.k_lens[b];
    rp.heads_q = s.heads_q;
    rp.heads_kv = s.heads_kv;
    rp.head_dim = s.head_dim;
    rp.softmax_scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(s.head_dim)));
    rp.causal = s.causal;
    rp.window_left = s.window_left;
    rp.window_right = s.window_right;
    p.scores.apply(rp);
    if (s.alibi == Alibi::per_batch)  // this sequence's row of slopes, one per head
      rp.alibi_slopes.assign(p.scores.alibi.begin() + static_cast<std::ptrdiff_t>(b) * Hq,
                             p.scores.alibi.begin() + static_cast<std::ptrdiff_t>(b + 1) * Hq);
    if (rp.seqlen_q == 0) {
      p.ref.emplace_back();
      continue;
    }
    const std::vector<double> qb(p.q.begin() + p.q_row0[b] * Hq * D, p.q.begin() + (p.q_row0[b] + p.q_lens[b]) * Hq * D);
    p.ref.push_back(flash::reference::forward(rp, qb, p.k_seq[b], p.v_seq[b], dtype));
  }
  return p;
}

// The SCOPED_TRACE line of a problem: seed, lengths, sizes, mask, modifiers, table.
std::string describe(const PagedProblem& p, std::uint64_t seed) {
  const PagedSpec& s = p.spec;
  return fmt::format(
      "seed {} {} d{} hq{} hkv{} page {}{} window ({}, {}) softcap {} slopes [{}] sinks [{}] {} queries, {} pages; "
      "q lens [{}] keys [{}]{}; {} pages, max_pages {}, table [{}]",
      seed, flash::dtype_name(p.dtype), s.head_dim, s.heads_q, s.heads_kv, s.page_size, s.causal ? " causal" : "",
      s.window_left, s.window_right, s.softcap, fmt::join(p.scores.alibi, ","), fmt::join(p.scores.sinks, ","),
      s.packed ? "packed" : "dense", layout_name(s.layout), fmt::join(p.q_lens, ","), fmt::join(p.k_lens, ","),
      s.seqused ? " (seqused_k)" : " (the whole table)", p.num_pages, p.max_pages, fmt::join(p.table, ","));
}

struct SeqError {
  int seq;
  double err, bound, lse_err, lse_bound;
};

struct PagedCheck {
  std::string error;           // a flash::Error or CUDA failure, if any
  std::size_t unwritten = 0;   // O and LSE elements of the sequences' rows still NaN
  std::size_t stray = 0;       // elements of o's and lse's buffers outside those rows no longer NaN
  std::vector<SeqError> over;  // sequences whose O or LSE error is over its bound
};

std::size_t count_nan(const std::vector<double>& x) {
  return static_cast<std::size_t>(std::count_if(x.begin(), x.end(), [](double e) { return std::isnan(e); }));
}

// Poisons o's and lse's buffers, runs `args` with `kernel`, and checks every
// sequence against its reference and every output element.
PagedCheck run_and_check(PagedProblem& p, flash::ForwardArgs args, const std::string& kernel) {
  PagedCheck r;
  flash::testing::poison(p.o_memory);
  flash::testing::poison(p.lse_memory);
  args.kernel = kernel;
  try {
    flash::attention_forward(args);
    flash::testing::check(cudaDeviceSynchronize(), "kernel execution");
  } catch (const flash::Error& e) {
    r.error = e.what();
  }
  const int Hq = p.spec.heads_q, D = p.spec.head_dim;
  const std::vector<double> o = flash::testing::download(p.args.o);
  const std::vector<double> lse = flash::testing::download(*p.args.lse);
  std::size_t view_written = 0;  // elements of the sequences' rows that are not NaN
  for (int b = 0; b < p.batch; ++b)
    for (int i = 0; i < p.q_lens[b]; ++i)
      for (int h = 0; h < Hq; ++h) {
        for (int d = 0; d < D; ++d) view_written += !std::isnan(o[p.o_index(b, i, h, d)]);
        view_written += !std::isnan(lse[p.lse_index(b, h, i)]);
      }
  r.unwritten = static_cast<std::size_t>(p.rows) * Hq * (D + 1) - view_written;
  // The views' elements are distinct elements of the buffers: any other
  // element that is not NaN was written outside the sequences' rows.
  const std::vector<double> o_all = flash::testing::download(p.o_memory);
  const std::vector<double> lse_all = flash::testing::download(p.lse_memory);
  r.stray = (o_all.size() - count_nan(o_all)) + (lse_all.size() - count_nan(lse_all)) - view_written;

  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (int b = 0; b < p.batch; ++b) {
    const int sq = p.q_lens[b];
    if (sq == 0) continue;
    const flash::reference::Result& ref = p.ref[b];
    double err = 0, lowp_err = 0, max_ref = 0, lse_err = 0, max_lse = 1, lse_lowp_err = 0;
    bool lse_inf_mismatch = false;
    for (int i = 0; i < sq; ++i)
      for (int h = 0; h < Hq; ++h) {
        for (int d = 0; d < D; ++d) {
          const std::size_t ri = static_cast<std::size_t>((std::int64_t{i} * Hq + h) * D + d);
          const double e = std::fabs(o[p.o_index(b, i, h, d)] - ref.o[ri]);
          err = std::isnan(e) ? kInf : std::max(err, e);
          lowp_err = std::max(lowp_err, std::fabs(ref.o_lowp[ri] - ref.o[ri]));
          max_ref = std::max(max_ref, std::fabs(ref.o[ri]));
        }
        const double ref_lse = ref.lse[static_cast<std::size_t>(h * sq + i)], got = lse[p.lse_index(b, h, i)];
        if (std::isinf(ref_lse)) {
          lse_inf_mismatch = lse_inf_mismatch || got != ref_lse;
        } else {
          const double e = std::fabs(got - ref_lse);
          lse_err = std::isnan(e) ? kInf : std::max(lse_err, e);
          max_lse = std::max(max_lse, std::fabs(ref_lse));
          lse_lowp_err = std::max(lse_lowp_err, std::fabs(ref.lse_lowp[static_cast<std::size_t>(h * sq + i)] - ref_lse));
        }
      }
    if (lse_inf_mismatch) lse_err = kInf;
    const double bound = flash::testing::output_bound(lowp_err, max_ref, p.dtype);
    const double lse_bound = flash::testing::lse_bound(lse_lowp_err, max_lse);
    if (!(err <= bound) || !(lse_err <= lse_bound)) r.over.push_back({b, err, bound, lse_err, lse_bound});
  }
  return r;
}

void expect_ok(const PagedProblem& p, const PagedCheck& r, const std::string& variant) {
  EXPECT_TRUE(r.error.empty()) << variant << ": " << r.error;
  EXPECT_EQ(r.unwritten, 0u) << variant << ": O/LSE elements of the sequences' rows left unwritten";
  EXPECT_EQ(r.stray, 0u) << variant
                         << ": O/LSE elements written outside the sequences' rows (packed rows past the last "
                            "sequence, o's row padding, lse's head padding, the buffers' tails)";
  for (const SeqError& s : r.over)
    ADD_FAILURE() << variant << ": sequence " << s.seq << " (sq " << p.q_lens[s.seq] << ", sk " << p.k_lens[s.seq]
                  << "): O error " << s.err << " (bound " << s.bound << "), LSE error " << s.lse_err << " (bound "
                  << s.lse_bound << ")";
}

// Every built variant with kFeaturePaged that runs (dtype, head_dim) here.
std::vector<std::string> paged_variants(DType dtype, int head_dim) {
  std::vector<std::string> names;
  for (const auto& v : flash::forward_variants())
    if ((v.features & flash::kFeaturePaged) && runnable(v, dtype, head_dim)) names.push_back(v.name);
  return names;
}

// The cases, over bf16 and f16 (and f32 where marked: the variants that take it).
struct PagedCase {
  const char* name;
  PagedSpec spec;
  bool f32;
};

const std::vector<PagedCase>& paged_cases() {
  const int R = kRandom;
  static const std::vector<PagedCase> cases = {
      // Dense queries: one chunk of seqlen_q per sequence.
      {"dense_full_gqa2_p16_d64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 16, .q_lens = {37, 37, 37},
        .k_lens = {100, 37, 250}},
       true},
      {"dense_causal_mqa_p64_d128",  // chunks after prefixes of 0, 300, 1 and a sequence shorter than the chunk
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .page_size = 64, .causal = true, .q_lens = {64, 64, 64, 64},
        .k_lens = {64, 364, 65, 30}, .layout = PageLayout::kv_interleaved},
       false},
      {"dense_causal_l127_gqa2_p256_d64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 256, .causal = true, .window_left = 127,
        .q_lens = {300, 300}, .k_lens = {1000, 310}, .layout = PageLayout::heads_major},
       false},
      {"dense_whole_table_causal_gqa4_p16_d128",  // no seqused_k: every sequence has max_pages * page_size keys
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .causal = true, .q_lens = {50, 50, 50},
        .seqused = false, .table_pages = 5},
       false},
      {"dense_l64_r32_mha_p64_d256",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 256, .page_size = 64, .window_left = 64, .window_right = 32,
        .q_lens = {129, 129}, .k_lens = {129, 700}},
       false},
      {"dense_cap30_alibi_batch_sinks_causal_gqa4_p16_d64",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .page_size = 16, .causal = true, .softcap = 30.0f,
        .alibi = Alibi::per_batch, .sinks = true, .qk_gain = 4.0, .q_lens = {48, 48, 48, 48}, .k_lens = {R, R, R, R},
        .layout = PageLayout::heads_major},
       true},
      {"dense_alibi_head_sinks_full_mqa_p256_d128",
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .page_size = 256, .alibi = Alibi::per_head, .sinks = true,
        .q_lens = {70, 70}, .k_lens = {600, 5}},
       false},
      {"dense_cap15_causal_gqa2_p64_d128",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .page_size = 64, .causal = true, .softcap = 15.0f,
        .qk_gain = 8.0, .q_lens = {17, 17, 17}, .k_lens = {R, R, R}, .layout = PageLayout::kv_interleaved},
       false},
      {"dense_full_gqa2_p32_d256",  // 80-key tiles that start inside 32-key pages
       {.heads_q = 4, .heads_kv = 2, .head_dim = 256, .page_size = 32, .q_lens = {100, 100},
        .k_lens = {333, 81}, .layout = PageLayout::kv_interleaved},
       false},
      // More query tiles than the H200 has SMs: where a dense-query paged call takes the
      // dynamic schedule (causal at hdim 128), CTAs take several tiles; the others check the
      // grid on many tiles.
      {"dense_many_tiles_full_gqa2_p16_d128",
       {.heads_q = 8, .heads_kv = 4, .head_dim = 128, .page_size = 16, .q_lens = {600, 600, 600, 600},
        .k_lens = {700, 601, 1000, 650}},
       false},
      {"dense_many_tiles_causal_gqa2_p16_d128",
       {.heads_q = 16, .heads_kv = 8, .head_dim = 128, .page_size = 16, .causal = true,
        .q_lens = {600, 600, 600, 600}, .k_lens = {600, 1333, 700, 2000}, .layout = PageLayout::heads_major},
       false},
      {"dense_many_tiles_l2500_causal_gqa4_p64_d128",  // a window too wide for the walk: dynamic too
       {.heads_q = 16, .heads_kv = 4, .head_dim = 128, .page_size = 64, .causal = true, .window_left = 2500,
        .q_lens = {700, 700, 700}, .k_lens = {3000, 700, 3900}, .layout = PageLayout::kv_interleaved},
       false},
      // Full calls at hdim 128 on pages of >= 32 keys walk (persistent CTAs), and narrow windows on any.
      {"dense_many_tiles_full_gqa2_p32_d128",
       {.heads_q = 8, .heads_kv = 4, .head_dim = 128, .page_size = 32, .q_lens = {600, 600, 600, 600},
        .k_lens = {700, 601, 1000, 650}, .layout = PageLayout::kv_interleaved},
       false},
      {"dense_many_tiles_l100_r20_gqa2_p16_d128",  // pages of 16 keys walk for narrow windows
       {.heads_q = 16, .heads_kv = 8, .head_dim = 128, .page_size = 16, .window_left = 100, .window_right = 20,
        .q_lens = {500, 500, 500}, .k_lens = {900, 500, 1300}, .layout = PageLayout::kv_interleaved},
       false},
      {"dense_many_tiles_l128_causal_gqa4_p16_d64",  // hdim 64's small tiles (wgmma_window) on pages
       {.heads_q = 16, .heads_kv = 4, .head_dim = 64, .page_size = 16, .causal = true, .window_left = 128,
        .q_lens = {500, 500, 500}, .k_lens = {900, 500, 1300}, .layout = PageLayout::heads_major},
       false},
      {"dense_many_tiles_l200_causal_gqa4_p64_d128",
       {.heads_q = 16, .heads_kv = 4, .head_dim = 128, .page_size = 64, .causal = true, .window_left = 200,
        .q_lens = {500, 500, 500}, .k_lens = {900, 500, 1300}, .layout = PageLayout::heads_major},
       false},
      {"dense_many_tiles_full_gqa4_p256_d128",
       {.heads_q = 16, .heads_kv = 4, .head_dim = 128, .page_size = 256, .q_lens = {600, 600, 600, 600},
        .k_lens = {700, 601, 1000, 650}, .layout = PageLayout::heads_major},
       false},
      {"dense_many_tiles_l300_causal_gqa2_p128_d128",
       {.heads_q = 16, .heads_kv = 8, .head_dim = 128, .page_size = 128, .causal = true, .window_left = 300,
        .q_lens = {500, 500, 500}, .k_lens = {900, 500, 1300}},
       false},
      {"dense_many_tiles_causal_gqa4_p256_d64",
       {.heads_q = 16, .heads_kv = 4, .head_dim = 64, .page_size = 256, .causal = true,
        .q_lens = {600, 600, 600, 600}, .k_lens = {900, 600, 777, 1200}, .layout = PageLayout::kv_interleaved},
       false},
      // Packed queries (cu_seqlens_q), keys from seqused_k.
      {"packed_full_gqa4_p32_d128",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 32, .packed = true, .q_lens = {129, 0, 1, 250},
        .k_lens = {R, R, R, R}, .layout = PageLayout::heads_major},
       false},
      {"packed_mixed_causal_gqa4_p16_d64",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .page_size = 16, .causal = true, .packed = true,
        .q_lens = {0, 1, 17, 300, 5, 64}, .k_lens = {R, R, R, R, R, R}, .tail_q = 7},
       true},
      {"packed_full_mqa_p64_d128",
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .page_size = 64, .packed = true, .q_lens = {40, 0, 200, 1},
        .k_lens = {100, 5, 1000, 0}, .layout = PageLayout::heads_major, .loose_max = true},
       false},
      {"packed_causal_l127_gqa2_p256_d64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 256, .causal = true, .window_left = 127,
        .packed = true, .q_lens = {1023, 0, 257, 64, 1}, .k_lens = {R, R, R, R, R}, .tail_q = 3,
        .layout = PageLayout::kv_interleaved},
       false},
      {"packed_cap30_alibi_batch_sinks_causal_mha_p64_d128",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 128, .page_size = 64, .causal = true, .softcap = 30.0f,
        .alibi = Alibi::per_batch, .sinks = true, .qk_gain = 4.0, .packed = true, .q_lens = {33, 128, 0, 1, 90},
        .k_lens = {R, R, R, R, R}},
       false},
      {"packed_causal_mha_p16_d256",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 256, .page_size = 16, .causal = true, .packed = true,
        .q_lens = {3, 0, 130, 77, 1}, .k_lens = {R, R, R, R, R}},
       false},
      // Page strides that are no multiple of 8 rows: 8-row boxes at hdims 128 and 256.
      {"packed_causal_gqa2_p16_d128_padded",
       {.heads_q = 8, .heads_kv = 4, .head_dim = 128, .page_size = 16, .causal = true, .packed = true,
        .q_lens = {200, 0, 1, 333}, .k_lens = {R, R, R, R}, .layout = PageLayout::padded_pages},
       false},
      {"dense_full_mqa_p128_d256_padded",
       {.heads_q = 2, .heads_kv = 1, .head_dim = 256, .page_size = 128, .q_lens = {90, 90},
        .k_lens = {500, 81}, .layout = PageLayout::padded_pages},
       false},
      // 16-key pages at hdim 128 run a kernel of their own (three stages, one CTA per tile; the
      // compact grid for causal packed calls), sequences in the metadata check's order; hdim 64's
      // full packed calls on 256-key pages the dynamic schedule.
      {"packed_full_gqa2_p16_d128",
       {.heads_q = 8, .heads_kv = 4, .head_dim = 128, .page_size = 16, .packed = true,
        .q_lens = {129, 0, 1, 250, 700}, .k_lens = {R, R, R, R, R}, .tail_q = 5},
       false},
      {"packed_spread_causal_l100_gqa4_p16_d128",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .causal = true, .window_left = 100,
        .packed = true, .q_lens = flash::gpu_test::spread_lengths(40, 7), .k_lens = std::vector<int>(40, R),
        .layout = PageLayout::kv_interleaved},
       false},
      // Dense-query windows: on 16-key pages at hdim 128 the small-page grid, wide ones on 32-key
      // pages at hdim 64 the dynamic schedule (session 50's routing).
      {"dense_many_tiles_l200_r16_gqa2_p16_d128",
       {.heads_q = 8, .heads_kv = 4, .head_dim = 128, .page_size = 16, .window_left = 200, .window_right = 16,
        .q_lens = {500, 500, 500}, .k_lens = {900, 500, 1333}},
       false},
      {"dense_many_tiles_l700_causal_gqa4_p32_d64",
       {.heads_q = 16, .heads_kv = 4, .head_dim = 64, .page_size = 32, .causal = true, .window_left = 700,
        .q_lens = {600, 600, 600}, .k_lens = {1500, 600, 2100}, .layout = PageLayout::heads_major},
       false},
      {"packed_spread_full_gqa2_p256_d64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 256, .packed = true,
        .q_lens = flash::gpu_test::spread_lengths(36, 11), .k_lens = std::vector<int>(36, R)},
       false},
      {"packed_many_short_causal_gqa4_p16_d64",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .page_size = 16, .causal = true, .packed = true,
        .q_lens = std::vector<int>(40, 24), .k_lens = std::vector<int>(40, R), .tail_q = 1,
        .layout = PageLayout::heads_major},
       false},
  };
  return cases;
}

int num_cases() { return static_cast<int>(paged_cases().size()); }

std::vector<int> f32_cases() {
  std::vector<int> idx;
  for (int i = 0; i < num_cases(); ++i)
    if (paged_cases()[i].f32) idx.push_back(i);
  return idx;
}

using PagedParam = std::tuple<int, DType>;  // case, dtype

class PagedPrefill : public ::testing::TestWithParam<PagedParam> {};

TEST_P(PagedPrefill, MatchesReferencePerSequence) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, dtype] = GetParam();
  const PagedSpec& s = paged_cases()[case_idx].spec;
  const std::uint64_t seed = test_seed();
  auto p = make_paged_problem(s, dtype, seed);
  SCOPED_TRACE(describe(p, seed));
  const auto variants = paged_variants(dtype, s.head_dim);
  for (const std::string& v : variants) expect_ok(p, run_and_check(p, p.args, v), v);
  EXPECT_FALSE(variants.empty()) << "no built variant with kFeaturePaged runs this case";
}

// The same keys in a dense contiguous cache [batch, longest, heads_kv,
// head_dim] with seqused_k give bit-identical results: a paged call differs
// from a dense one only in where the tile rows are read from. (It also
// checks seqused_k on dense calls against the reference, through the paged
// results.)
TEST_P(PagedPrefill, MatchesTheContiguousCacheBitwise) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, dtype] = GetParam();
  const PagedSpec& s = paged_cases()[case_idx].spec;
  const std::uint64_t seed = test_seed();
  auto p = make_paged_problem(s, dtype, seed);
  SCOPED_TRACE(describe(p, seed));
  const std::int64_t Hkv = s.heads_kv, D = s.head_dim;
  const std::int64_t longest = std::max<std::int64_t>(1, *std::max_element(p.k_lens.begin(), p.k_lens.end()));
  std::vector<double> k(static_cast<std::size_t>(p.batch * longest * Hkv * D), kNaN), v = k;
  for (int b = 0; b < p.batch; ++b) {
    std::copy(p.k_seq[b].begin(), p.k_seq[b].end(), k.begin() + b * longest * Hkv * D);
    std::copy(p.v_seq[b].begin(), p.v_seq[b].end(), v.begin() + b * longest * Hkv * D);
  }
  const std::size_t es = flash::dtype_size(dtype);
  DeviceBuffer d_k(k.size() * es), d_v(v.size() * es), d_cu_k, d_used;
  flash::ForwardArgs a = p.args;
  a.page_table.reset();
  TensorView view;
  d_used = device_ints(p.k_lens, view);
  a.seqused_k = view;
  if (s.packed) {  // packed contiguous keys: sequence b's at rows b * longest on
    std::vector<int> cu_k(p.batch + 1);
    for (int b = 0; b <= p.batch; ++b) cu_k[b] = static_cast<int>(b * longest);
    d_cu_k = device_ints(cu_k, view);
    a.cu_seqlens_k = view;
    a.k = flash::make_contiguous(d_k.get(), dtype, {p.batch * longest, Hkv, D});
    a.v = flash::make_contiguous(d_v.get(), dtype, {p.batch * longest, Hkv, D});
    a.max_seqlen_k = static_cast<int>(longest);
  } else {
    a.k = flash::make_contiguous(d_k.get(), dtype, {p.batch, longest, Hkv, D});
    a.v = flash::make_contiguous(d_v.get(), dtype, {p.batch, longest, Hkv, D});
  }
  flash::testing::upload(k, a.k);
  flash::testing::upload(v, a.v);
  const auto variants = paged_variants(dtype, s.head_dim);
  for (const std::string& name : variants) {
    SCOPED_TRACE(name);
    const PagedCheck paged = run_and_check(p, p.args, name);
    ASSERT_TRUE(paged.error.empty()) << paged.error;
    const std::vector<double> o_paged = flash::testing::download(p.o_memory);
    const std::vector<double> lse_paged = flash::testing::download(p.lse_memory);
    const PagedCheck dense = run_and_check(p, a, name);
    ASSERT_TRUE(dense.error.empty()) << dense.error;
    const std::vector<double> o_dense = flash::testing::download(p.o_memory);
    const std::vector<double> lse_dense = flash::testing::download(p.lse_memory);
    std::size_t differ = 0;  // NaN == NaN here: both leave the same elements unwritten
    for (std::size_t i = 0; i < o_paged.size(); ++i)
      differ += !(o_paged[i] == o_dense[i] || (std::isnan(o_paged[i]) && std::isnan(o_dense[i])));
    for (std::size_t i = 0; i < lse_paged.size(); ++i)
      differ += !(lse_paged[i] == lse_dense[i] || (std::isnan(lse_paged[i]) && std::isnan(lse_dense[i])));
    EXPECT_EQ(differ, 0u) << "O/LSE elements that differ between the paged and the contiguous cache";
  }
  EXPECT_FALSE(variants.empty()) << "no built variant with kFeaturePaged runs this case";
}

std::string paged_name(const ::testing::TestParamInfo<PagedParam>& info) {
  const auto [case_idx, dtype] = info.param;
  return fmt::format("{}_{}", flash::dtype_name(dtype), paged_cases()[case_idx].name);
}

INSTANTIATE_TEST_SUITE_P(Cases, PagedPrefill,
                         ::testing::Combine(::testing::Range(0, num_cases()),
                                            ::testing::Values(DType::bf16, DType::f16)),
                         paged_name);
INSTANTIATE_TEST_SUITE_P(CasesF32, PagedPrefill,
                         ::testing::Combine(::testing::ValuesIn(f32_cases()), ::testing::Values(DType::f32)),
                         paged_name);

// Small problems for the error tests: dense queries (3 sequences of 9 rows,
// keys {40, 17, 33}, page 16) and packed ones (q lengths {3, 0, 20}, keys
// {5, 40, 0}).
PagedProblem small_dense(std::uint64_t seed) {
  const PagedSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 16, .causal = true,
                    .q_lens = {9, 9, 9}, .k_lens = {40, 17, 33}};
  return make_paged_problem(s, DType::bf16, seed);
}
PagedProblem small_packed(std::uint64_t seed) {
  const PagedSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 16, .causal = true, .packed = true,
                    .q_lens = {3, 0, 20}, .k_lens = {5, 40, 0}, .tail_q = 4};
  return make_paged_problem(s, DType::bf16, seed);
}

// Every element of o's and lse's buffers still NaN.
void expect_nothing_written(const PagedProblem& p, const std::string& variant) {
  const auto o = flash::testing::download(p.o_memory), lse = flash::testing::download(p.lse_memory);
  EXPECT_EQ(count_nan(o), o.size()) << variant << ": o was written";
  EXPECT_EQ(count_nan(lse), lse.size()) << variant << ": lse was written";
}

// Bad metadata (values only the device sees), with dense and packed
// queries: with sync_check the call throws flash::Error naming the array,
// with or without a status tensor; with sync_check off it returns and
// reports through status. Either way nothing is written. The status words
// are {code, array or sequence, index, value}.
TEST(PagedPrefillErrors, BadMetadataWritesNothing) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  struct Bad {
    const char* what;
    bool packed;
    int seq, entry, value;  // page_table[seq][entry] = value (entry -1: leave the table)
    std::vector<int> seqused;  // empty: the problem's own
    int max_k;                 // packed: max_seqlen_k (0: the problem's own)
    const char* names;         // what the message names
    std::vector<int> status;   // the expected status words
  };
  auto dense = small_dense(seed);
  auto packed = small_packed(seed + 1);
  ASSERT_EQ(dense.max_pages, 4);   // 40 keys: 3 pages, + 1 entry
  ASSERT_EQ(packed.max_pages, 4);  // 40 keys: 3 pages, + 1 entry
  const int dn = dense.num_pages, pn = packed.num_pages;
  const Bad cases[] = {
      {"dense: a reached entry -1", false, 1, 0, -1, {}, 0, "page_table", {6, 1, 0, -1}},
      {"dense: a reached entry == num_pages", false, 2, 2, dn, {}, 0, "page_table", {6, 2, 2, dn}},
      {"dense: the last reached entry of the longest sequence past the pages", false, 0, 2, dn + 5, {}, 0,
       "page_table", {6, 0, 2, dn + 5}},
      {"dense: seqused_k past the table's capacity", false, 0, -1, 0, {40, 65, 33}, 0, "seqused_k", {5, 2, 1, 65}},
      {"dense: seqused_k negative", false, 0, -1, 0, {40, 17, -3}, 0, "seqused_k", {5, 2, 2, -3}},
      {"dense: seqused_k reaching an unused entry", false, 0, -1, 0, {40, 17, 49}, 0, "page_table",
       {6, 2, 3, dense.table[2 * 4 + 3]}},
      {"packed: a reached entry -1", true, 1, 1, -1, {}, 0, "page_table", {6, 1, 1, -1}},
      {"packed: a reached entry past the pages", true, 0, 0, pn + 1, {}, 0, "page_table", {6, 0, 0, pn + 1}},
      {"packed: seqused_k past the table's capacity", true, 0, -1, 0, {5, 65, 0}, 0, "seqused_k", {5, 2, 1, 65}},
      {"packed: seqused_k above max_seqlen_k", true, 0, -1, 0, {5, 40, 0}, 39, "seqused_k", {4, 2, 1, 40}},
  };
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  const auto variants = paged_variants(DType::bf16, 64);
  ASSERT_FALSE(variants.empty()) << "no built variant with kFeaturePaged runs bf16 d64";
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.what);
    PagedProblem& p = c.packed ? packed : dense;
    SCOPED_TRACE(describe(p, c.packed ? seed + 1 : seed));
    flash::ForwardArgs a = p.args;
    std::vector<int> table = p.table;
    if (c.entry >= 0) table[c.seq * p.max_pages + c.entry] = c.value;
    DeviceBuffer d_table, d_used;
    TensorView view;
    d_table = device_ints(table, view);
    a.page_table = flash::make_view(d_table.get(), DType::i32, {p.batch, p.max_pages}, {p.max_pages, 1});
    if (!c.seqused.empty()) {
      d_used = device_ints(c.seqused, view);
      a.seqused_k = view;
    }
    if (c.max_k) a.max_seqlen_k = c.max_k;
    for (const std::string& v : variants) {
      for (int mode = 0; mode < 3; ++mode) {  // sync_check alone, sync_check and status, status alone
        SCOPED_TRACE(fmt::format("{}: {}", v, mode == 0 ? "sync_check" : mode == 1 ? "sync_check + status" : "status"));
        flash::testing::poison(p.o_memory);
        flash::testing::poison(p.lse_memory);
        flash::testing::upload({0, 0, 0, 0}, status);
        a.kernel = v;
        a.sync_check = mode < 2;
        a.status.reset();
        if (mode > 0) a.status = status;
        if (a.sync_check) {
          try {
            flash::attention_forward(a);
            ADD_FAILURE() << "no flash::Error";
          } catch (const flash::Error& e) {
            EXPECT_NE(std::string(e.what()).find(c.names), std::string::npos) << e.what();
          }
        } else {
          EXPECT_NO_THROW(flash::attention_forward(a));
        }
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        if (mode > 0) {
          const std::vector<double> got = flash::testing::download(status);
          EXPECT_EQ(std::vector<int>(got.begin(), got.end()), c.status) << "the status words";
        }
        expect_nothing_written(p, v);
      }
    }
  }
  // The problems' own metadata: valid, status[0] 0 (the words start at 7: the call writes them).
  for (PagedProblem* p : {&dense, &packed}) {
    for (const std::string& v : variants) {
      flash::ForwardArgs a = p->args;
      a.sync_check = false;
      a.status = status;
      flash::testing::upload({7, 7, 7, 7}, status);
      expect_ok(*p, run_and_check(*p, a, v), v);
      EXPECT_EQ(flash::testing::download(status)[0], 0) << v;
    }
  }
}

// A page table of more entries than one CTA checks (the check's grid path,
// common/varlen.cu): a bad entry far into it is found, and the valid table
// passes. 64 sequences of 100 keys (7 pages of 16) in a table of 1100
// entries each: 70400 entries.
TEST(PagedPrefillErrors, LargeTablesAreCheckedToo) {
  SKIP_WITHOUT_GPU();
  constexpr int kSeqs = 64, kTablePages = 1100, kKeys = 100;
  const std::uint64_t seed = test_seed();
  const PagedSpec s{.heads_q = 2, .heads_kv = 1, .head_dim = 64, .page_size = 16, .causal = true,
                    .q_lens = std::vector<int>(kSeqs, 2), .k_lens = std::vector<int>(kSeqs, kKeys),
                    .table_pages = kTablePages};
  auto p = make_paged_problem(s, DType::bf16, seed);
  ASSERT_EQ(p.max_pages, kTablePages);
  const auto variants = paged_variants(DType::bf16, 64);
  ASSERT_FALSE(variants.empty()) << "no built variant with kFeaturePaged runs bf16 d64";
  const std::string& v = variants.back();
  expect_ok(p, run_and_check(p, p.args, v), v);
  constexpr int kBadSeq = kSeqs - 3, kBadEntry = (kKeys - 1) / 16;  // the last entry that sequence reaches
  std::vector<int> table = p.table;
  table[kBadSeq * p.max_pages + kBadEntry] = p.num_pages;
  TensorView view;
  DeviceBuffer d_table = device_ints(table, view);
  flash::ForwardArgs a = p.args;
  a.page_table = flash::make_view(d_table.get(), DType::i32, {p.batch, p.max_pages}, {p.max_pages, 1});
  const PagedCheck r = run_and_check(p, a, v);
  EXPECT_NE(r.error.find(fmt::format("page_table[{}][{}]", kBadSeq, kBadEntry)), std::string::npos) << r.error;
  expect_nothing_written(p, v);
}

// A variant without kFeaturePaged (the Hopper rungs, naive, wmma) refuses a
// paged call with a flash::Error naming page_table, and writes nothing;
// auto passes over it to the last variant with the feature.
TEST(PagedPrefillErrors, VariantsWithoutTheFeatureRefuse) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  for (bool packed_queries : {false, true}) {
    auto p = packed_queries ? small_packed(seed) : small_dense(seed);
    SCOPED_TRACE(describe(p, seed));
    std::string last_paged;
    for (const auto& v : flash::forward_variants()) {
      if (!runnable(v, DType::bf16, 64)) continue;
      if (v.features & flash::kFeaturePaged) {
        last_paged = v.name;
        continue;
      }
      const PagedCheck r = run_and_check(p, p.args, v.name);
      EXPECT_NE(r.error.find("page_table"), std::string::npos) << v.name << ": '" << r.error << "'";
      expect_nothing_written(p, v.name);
    }
    ASSERT_FALSE(last_paged.empty()) << "no built variant with kFeaturePaged runs bf16 d64";
    flash::ForwardArgs a = p.args;
    a.kernel = "auto";
    EXPECT_EQ(flash::plan_forward(a).kernel, last_paged);
    expect_ok(p, run_and_check(p, p.args, "auto"), "auto");
  }
}

// Negative controls: the checks above must fail when the kernel computes
// something other than the reference, or they would prove nothing.

// A reached entry pointed at a spare page (NaN): that sequence fails, the
// others pass.
TEST(PagedPrefillChecker, FailsWhenAPageIsWrong) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_dense(seed);
  SCOPED_TRACE(describe(p, seed));
  std::vector<int> table = p.table;
  table[1 * p.max_pages + 0] = p.spare_page;
  TensorView view;
  DeviceBuffer d_table = device_ints(table, view);
  flash::ForwardArgs a = p.args;
  a.page_table = flash::make_view(d_table.get(), DType::i32, {p.batch, p.max_pages}, {p.max_pages, 1});
  for (const std::string& v : paged_variants(DType::bf16, 64)) {
    const PagedCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    ASSERT_EQ(r.over.size(), 1u) << v << ": only sequence 1 reads the NaN page";
    EXPECT_EQ(r.over[0].seq, 1) << v;
  }
}

// Two reached pages swapped: every key is valid (no NaN), but under a
// window of the diagonal alone (row i sees key i + 32) each row now reads
// another key's value.
TEST(PagedPrefillChecker, FailsWhenPagesAreSwapped) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  const PagedSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 16, .window_left = 0,
                    .window_right = 0, .q_lens = {16}, .k_lens = {48}};
  auto p = make_paged_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  std::vector<int> table = p.table;
  std::swap(table[0], table[2]);  // keys 0-15 and 32-47, both whole pages
  TensorView view;
  DeviceBuffer d_table = device_ints(table, view);
  flash::ForwardArgs a = p.args;
  a.page_table = flash::make_view(d_table.get(), DType::i32, {p.batch, p.max_pages}, {p.max_pages, 1});
  for (const std::string& v : paged_variants(DType::bf16, 64)) {
    expect_ok(p, run_and_check(p, p.args, v), v);  // the right table passes
    const PagedCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.over.size(), 1u) << v << ": keys from the wrong pages passed";
  }
}

// Without seqused_k the dense call attends every key of the table,
// including the NaN rows past each sequence's length: it fails.
TEST(PagedPrefillChecker, FailsWithoutSequsedK) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_dense(seed);
  SCOPED_TRACE(describe(p, seed));
  flash::ForwardArgs a = p.args;
  a.seqused_k.reset();
  // Without seqused_k every entry is reached: make them pages (spare ones).
  std::vector<int> table = p.table;
  for (int& e : table)
    if (e < 0 || e >= p.num_pages) e = p.spare_page;
  TensorView view;
  DeviceBuffer d_table = device_ints(table, view);
  a.page_table = flash::make_view(d_table.get(), DType::i32, {p.batch, p.max_pages}, {p.max_pages, 1});
  for (const std::string& v : paged_variants(DType::bf16, 64)) {
    const PagedCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.over.size(), 3u) << v << ": every sequence read NaN keys";
  }
}

// The kernel without the mask that the reference applies fails.
TEST(PagedPrefillChecker, FailsWhenTheMaskDiffers) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_packed(seed);
  SCOPED_TRACE(describe(p, seed));
  flash::ForwardArgs a = p.args;
  a.causal = false;
  for (const std::string& v : paged_variants(DType::bf16, 64)) {
    const PagedCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    ASSERT_EQ(r.over.size(), 1u) << v << ": sequence 0 (3 queries, 5 keys) differs from its causal reference";
    EXPECT_EQ(r.over[0].seq, 0) << v;
  }
}

// A call one row short (cu_seqlens_q[batch] - 1) leaves exactly the last
// row of the last sequence unwritten, and the check says so.
TEST(PagedPrefillChecker, FailsWhenARowIsLeftUnwritten) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_packed(seed);
  SCOPED_TRACE(describe(p, seed));
  std::vector<int> short_cu = p.cu_q;
  short_cu.back() -= 1;
  TensorView view;
  DeviceBuffer d_short = device_ints(short_cu, view);
  flash::ForwardArgs a = p.args;
  a.cu_seqlens_q = view;
  for (const std::string& v : paged_variants(DType::bf16, 64)) {
    const PagedCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.unwritten, static_cast<std::size_t>(p.spec.heads_q * (p.spec.head_dim + 1)))
        << v << ": one row of O (every head) and its LSE entries";
    EXPECT_EQ(r.stray, 0u) << v;
    ASSERT_EQ(r.over.size(), 1u) << v;
    EXPECT_EQ(r.over[0].seq, 2) << v;
  }
}

}  // namespace
