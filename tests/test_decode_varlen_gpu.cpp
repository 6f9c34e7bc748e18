// GPU tests of decode with a different number of new tokens per sequence
// (DecodeArgs::cu_seqlens_q: speculative decoding, issue 17; ctest
// gpu_decode_varlen, suites DecodeVarlen*): every decode variant with
// kFeatureVarlen over packed new tokens (0, 1 and up to 8 per sequence, many
// sequences, rows past the last one) attending contiguous or paged caches
// (shuffled page tables of 16 to 256, unused entries -1) whose lengths
// include fewer keys than new tokens, a cache holding only the new tokens,
// and long caches that the splits cut; causal (bottom-right per sequence),
// windows, every score modifier, GQA/MQA/MHA, head dims 64/128/256, strided
// layouts, forced and chosen split counts. Each sequence is checked against
// the fp64 reference run on that sequence alone (its new tokens as seqlen_q,
// its cache_seqlens[b] keys gathered from the cache as seqlen_k), by the rule
// of the dense checks (src/testing):
//   max|out - ref| <= 2 * max|out_lowp - ref| + floor(dtype) * max|ref|,
// per sequence, and the LSE within 2^-16 relative (-inf exactly). o and lse
// are poisoned (NaN) over their whole buffers before each call: every
// element of the rows < cu_seqlens_q[batch] must be written and nothing else
// (rows past the last sequence, o's row padding, lse's head padding, the
// buffers' tails). Every cache row no sequence reads (past cache_seqlens[b],
// pages outside the table) and every query row past cu_seqlens_q[batch] is
// NaN, so a kernel that reads one fails. A call whose sequences all have n
// new tokens matches the dense call over the same memory bit for bit. Bad
// metadata must throw (sync_check) or set status, and write nothing.
// Negative controls prove the checks can fail.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <stdexcept>
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
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int kRandom = -1;      // a length drawn from the test's seed
constexpr int kMaxNew = 8;       // random new-token counts are 0 to this
constexpr int kMaxRandomKeys = 1500;  // random cache lengths stay below this (the reference's cost)
constexpr std::int64_t kORowPad = 16;     // elements between o's rows in the strided layout (16-byte aligned)
constexpr std::int64_t kLseHeadPad = 3;   // elements between lse's heads in the strided layout
constexpr std::int64_t kBufferTail = 64;  // elements past each output view's end, which must stay poisoned

// How the tensors lie in memory.
enum class Packing {
  separate,  // q, o contiguous [total_q, heads_q, head_dim]; lse contiguous [heads_q, total_q]; K and V caches apart
  strided,   // q heads-major; o rows padded; lse heads padded; K and V interleaved in one cache buffer
};

struct Spec {
  int heads_q = 4, heads_kv = 2, head_dim = 128;
  int page_size = 0;   // 0: contiguous cache
  int capacity = 512;  // keys per sequence (max_pages * page_size when paged)
  bool causal = true;
  int window_left = -1, window_right = -1;
  float softcap = 0.0f;
  Alibi alibi = Alibi::none;
  bool sinks = false;
  double qk_gain = 1.0;    // q and K's standard deviation (as testing::Shape)
  std::vector<int> q_lens;  // new tokens per sequence; kRandom entries drawn from 0 to kMaxNew
  std::vector<int> keys;    // cache_seqlens (the new tokens' keys included); kRandom entries drawn
  int num_splits = 0;
  int tail_q = 0;           // packed rows past cu_seqlens_q[batch]
  Packing packing = Packing::separate;
  bool loose_max = false;   // max_seqlen_q = total_q, not the longest sequence
};

// A random cache length for sequence b of q_len new tokens, by b % 4: a
// short cache, any length up to the bound, the bound itself, or fewer keys
// than new tokens (causal rows that see no key).
int random_keys(int b, int q_len, int bound, std::mt19937_64& rng) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, std::max(lo, hi))(rng); };
  switch (b % 4) {
    case 0: return std::min(bound, q_len + uniform(0, 40));
    case 1: return uniform(std::min(q_len, bound), bound);
    case 2: return bound;
    default: return uniform(0, std::min(q_len, bound));
  }
}

// One call: random inputs on host and device, the metadata, the views, and
// the fp64 reference of each sequence.
struct Problem {
  Spec spec;
  DType dtype = DType::bf16;
  int batch = 0, total_q = 0, num_pages = 0, max_pages = 0;
  std::vector<int> q_lens, keys, cu_q, page_table;
  std::vector<double> q;                // packed [total_q, heads_q, head_dim]
  std::vector<double> k_cache, v_cache;  // [blocks, block_rows, heads_kv, head_dim]
  flash::testing::ScoreInputs scores;
  std::vector<flash::reference::Result> ref;  // per sequence: o [1, n, heads_q, d], lse [1, heads_q, n]
  DeviceBuffer d_q, d_kc, d_vc, d_o, d_lse, d_cu, d_keys, d_table;
  TensorView o_memory, lse_memory;  // flat views of o's and lse's whole buffers
  flash::DecodeArgs args;           // every view, flag and modifier; kernel left to the caller
};

std::vector<double> as_doubles(const std::vector<int>& x) { return {x.begin(), x.end()}; }

DeviceBuffer device_ints(const std::vector<int>& host, TensorView& view) {
  DeviceBuffer buf(std::max<std::size_t>(host.size(), 1) * sizeof(std::int32_t));
  view = flash::make_contiguous(buf.get(), DType::i32, {static_cast<std::int64_t>(host.size())});
  if (!host.empty()) flash::testing::upload(as_doubles(host), view);
  return buf;
}

Problem make_problem(const Spec& s, DType dtype, std::uint64_t seed) {
  Problem p;
  p.spec = s;
  p.dtype = dtype;
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  p.batch = static_cast<int>(s.q_lens.size());
  const int key_bound = std::min(s.capacity, kMaxRandomKeys);
  for (int b = 0; b < p.batch; ++b) {
    p.q_lens.push_back(s.q_lens[b] == kRandom ? uniform(0, kMaxNew) : s.q_lens[b]);
    p.keys.push_back(s.keys.at(b) == kRandom ? random_keys(b, p.q_lens[b], key_bound, rng) : s.keys[b]);
  }
  p.cu_q.assign(p.batch + 1, 0);
  for (int b = 0; b < p.batch; ++b) p.cu_q[b + 1] = p.cu_q[b] + p.q_lens[b];
  p.total_q = p.cu_q.back() + s.tail_q;
  const std::int64_t Hq = s.heads_q, Hkv = s.heads_kv, D = s.head_dim, Tq = p.total_q;
  const bool paged = s.page_size > 0;

  // The cache: pages enough for every sequence's keys (plus three no
  // sequence uses) in shuffled order, entries past a sequence's keys -1.
  for (int b = 0; b < p.batch; ++b)  // a spec whose keys overflow the cache would write past the host arrays
    if (p.keys[b] > s.capacity) throw std::invalid_argument(fmt::format("spec: keys[{}] = {} > capacity {}", b, p.keys[b], s.capacity));
  std::int64_t blocks = p.batch, block_rows = s.capacity;
  if (paged) {
    p.max_pages = s.capacity / s.page_size;
    int used = 0;
    for (int b = 0; b < p.batch; ++b) used += (p.keys[b] + s.page_size - 1) / s.page_size;
    p.num_pages = used + 3;
    std::vector<int> perm(p.num_pages);
    for (int i = 0; i < p.num_pages; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    p.page_table.assign(static_cast<std::size_t>(p.batch) * p.max_pages, -1);
    int next = 0;
    for (int b = 0; b < p.batch; ++b)
      for (int i = 0; i < (p.keys[b] + s.page_size - 1) / s.page_size; ++i) p.page_table[b * p.max_pages + i] = perm[next++];
    blocks = p.num_pages;
    block_rows = s.page_size;
  }
  auto at = [&](int b, int pos, int h) -> std::size_t {  // element index of key pos of sequence b, head h
    std::int64_t block = b, row = pos;
    if (paged) block = p.page_table[b * p.max_pages + pos / s.page_size], row = pos % s.page_size;
    return static_cast<std::size_t>(((block * block_rows + row) * Hkv + h) * D);
  };
  const std::size_t cache_elems = static_cast<std::size_t>(blocks * block_rows * Hkv * D);
  p.k_cache.assign(cache_elems, kNaN);  // NaN wherever no sequence reads
  p.v_cache.assign(cache_elems, kNaN);
  for (int b = 0; b < p.batch; ++b) {
    const std::size_t n = static_cast<std::size_t>(p.keys[b] * Hkv * D);
    const auto kb = flash::testing::random_values(n, dtype, rng, s.qk_gain);
    const auto vb = flash::testing::random_values(n, dtype, rng);
    for (int j = 0; j < p.keys[b]; ++j)
      for (int h = 0; h < s.heads_kv; ++h) {
        std::copy_n(kb.begin() + (j * Hkv + h) * D, D, p.k_cache.begin() + at(b, j, h));
        std::copy_n(vb.begin() + (j * Hkv + h) * D, D, p.v_cache.begin() + at(b, j, h));
      }
  }
  p.q = flash::testing::random_values(static_cast<std::size_t>(Tq * Hq * D), dtype, rng, s.qk_gain);
  std::fill(p.q.begin() + p.cu_q.back() * Hq * D, p.q.end(), kNaN);  // rows no sequence reads
  p.scores = flash::testing::make_score_inputs(p.batch, s.heads_q, s.softcap, s.alibi, s.sinks,
                                               flash::testing::typical_row_max(s.qk_gain, s.softcap), rng);

  // Device tensors and views.
  flash::DecodeArgs& a = p.args;
  const std::int64_t es = static_cast<std::int64_t>(flash::dtype_size(dtype));
  auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 1)); };
  const bool strided = s.packing == Packing::strided;
  p.d_q = DeviceBuffer(bytes(Tq * Hq * D * es));
  a.q = strided ? flash::make_view(p.d_q.get(), dtype, {Tq, Hq, D}, {D, Tq * D, 1})
                : flash::make_contiguous(p.d_q.get(), dtype, {Tq, Hq, D});
  flash::testing::upload(p.q, a.q);
  if (strided) {  // K and V interleaved: one buffer [blocks, block_rows, 2 * heads_kv, head_dim]
    // One upload of the whole buffer (upload() writes every byte a view
    // spans, so the K view's upload would clear V's rows in between).
    const std::int64_t row = 2 * Hkv * D, block_elems = block_rows * Hkv * D;
    std::vector<double> both(2 * cache_elems);
    for (std::int64_t r = 0; r < blocks * block_rows; ++r) {
      std::copy_n(p.k_cache.begin() + r * Hkv * D, Hkv * D, both.begin() + r * row);
      std::copy_n(p.v_cache.begin() + r * Hkv * D, Hkv * D, both.begin() + r * row + Hkv * D);
    }
    p.d_kc = DeviceBuffer(bytes(2 * static_cast<std::int64_t>(cache_elems) * es));
    flash::testing::upload(both, flash::make_contiguous(p.d_kc.get(), dtype, {2 * blocks * block_elems}));
    char* base = static_cast<char*>(p.d_kc.get());
    a.k_cache = flash::make_view(base, dtype, {blocks, block_rows, Hkv, D}, {block_rows * row, row, D, 1});
    a.v_cache = flash::make_view(base + Hkv * D * es, dtype, {blocks, block_rows, Hkv, D}, {block_rows * row, row, D, 1});
  } else {
    p.d_kc = DeviceBuffer(bytes(static_cast<std::int64_t>(cache_elems) * es));
    p.d_vc = DeviceBuffer(bytes(static_cast<std::int64_t>(cache_elems) * es));
    a.k_cache = flash::make_contiguous(p.d_kc.get(), dtype, {blocks, block_rows, Hkv, D});
    a.v_cache = flash::make_contiguous(p.d_vc.get(), dtype, {blocks, block_rows, Hkv, D});
    flash::testing::upload(p.k_cache, a.k_cache);
    flash::testing::upload(p.v_cache, a.v_cache);
  }
  // Outputs, inside buffers that are larger than the views.
  const std::int64_t o_row = Hq * D + (strided ? kORowPad : 0);
  const std::int64_t o_elems = Tq * o_row + kBufferTail;
  p.d_o = DeviceBuffer(bytes(o_elems * es));
  p.o_memory = flash::make_contiguous(p.d_o.get(), dtype, {o_elems});
  a.o = flash::make_view(p.d_o.get(), dtype, {Tq, Hq, D}, {o_row, D, 1});
  const std::int64_t lse_head = Tq + (strided ? kLseHeadPad : 0);
  const std::int64_t lse_elems = Hq * lse_head + kBufferTail;
  p.d_lse = DeviceBuffer(bytes(lse_elems * 4));
  p.lse_memory = flash::make_contiguous(p.d_lse.get(), DType::f32, {lse_elems});
  a.lse = flash::make_view(p.d_lse.get(), DType::f32, {Hq, Tq}, {lse_head, 1});
  // Metadata.
  TensorView view;
  p.d_cu = device_ints(p.cu_q, view);
  a.cu_seqlens_q = view;
  p.d_keys = device_ints(p.keys, view);
  a.cache_seqlens = view;
  if (paged) {
    p.d_table = DeviceBuffer(bytes(static_cast<std::int64_t>(p.page_table.size()) * 4));
    a.page_table = flash::make_contiguous(p.d_table.get(), DType::i32, {p.batch, p.max_pages});
    if (!p.page_table.empty()) flash::testing::upload(as_doubles(p.page_table), *a.page_table);
  }
  const int longest = p.batch ? *std::max_element(p.q_lens.begin(), p.q_lens.end()) : 0;
  a.max_seqlen_q = s.loose_max ? p.total_q : longest;
  a.causal = s.causal;
  a.window_left = s.window_left;
  a.window_right = s.window_right;
  a.num_splits = s.num_splits;
  p.scores.apply(a);

  // The reference, one sequence at a time, as a dense batch-1 call over its
  // keys gathered from the cache.
  for (int b = 0; b < p.batch; ++b) {
    flash::reference::Problem rp;
    rp.batch = 1;
    rp.seqlen_q = p.q_lens[b];
    rp.seqlen_k = p.keys[b];
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
    const std::vector<double> qb(p.q.begin() + p.cu_q[b] * Hq * D, p.q.begin() + p.cu_q[b + 1] * Hq * D);
    std::vector<double> kb(static_cast<std::size_t>(p.keys[b] * Hkv * D)), vb(kb.size());
    for (int j = 0; j < p.keys[b]; ++j)
      for (int h = 0; h < s.heads_kv; ++h) {
        std::copy_n(p.k_cache.begin() + at(b, j, h), D, kb.begin() + (j * Hkv + h) * D);
        std::copy_n(p.v_cache.begin() + at(b, j, h), D, vb.begin() + (j * Hkv + h) * D);
      }
    p.ref.push_back(flash::reference::forward(rp, qb, kb, vb, dtype));
  }
  return p;
}

// The SCOPED_TRACE line of a problem: seed, lengths, sizes, mask and modifiers.
std::string describe(const Problem& p, std::uint64_t seed) {
  const Spec& s = p.spec;
  return fmt::format(
      "seed {} {} d{} hq{} hkv{} {}{} window ({}, {}) softcap {} slopes [{}] sinks [{}] {} layout; new tokens [{}] "
      "cache_seqlens [{}]; total_q {} max_seqlen_q {} num_splits {}",
      seed, flash::dtype_name(p.dtype), s.head_dim, s.heads_q, s.heads_kv,
      s.page_size ? fmt::format("page{} of {}", s.page_size, p.num_pages) : fmt::format("contiguous {}", s.capacity),
      s.causal ? " causal" : "", s.window_left, s.window_right, s.softcap, fmt::join(p.scores.alibi, ","),
      fmt::join(p.scores.sinks, ","), s.packing == Packing::strided ? "strided" : "separate", fmt::join(p.q_lens, ","),
      fmt::join(p.keys, ","), p.total_q, p.args.max_seqlen_q, s.num_splits);
}

struct SeqError {
  int seq;
  double err, bound, lse_err, lse_bound;
};

struct Check {
  std::string error;           // a flash::Error or CUDA failure, if any
  std::size_t unwritten = 0;   // O and LSE elements of the rows < cu_seqlens_q[batch] still NaN
  std::size_t stray = 0;       // elements of o's and lse's buffers outside those rows no longer NaN
  std::vector<SeqError> over;  // sequences whose O or LSE error is over its bound
  std::vector<double> o, lse;  // the outputs' views as downloaded
  bool ok() const { return error.empty() && unwritten == 0 && stray == 0 && over.empty(); }
};

std::size_t count_nan(const std::vector<double>& x) {
  return static_cast<std::size_t>(std::count_if(x.begin(), x.end(), [](double e) { return std::isnan(e); }));
}

// Poisons o's and lse's buffers, runs `args` with `kernel`, and checks every
// sequence against its reference and every output element.
Check run_and_check(Problem& p, flash::DecodeArgs args, const std::string& kernel) {
  Check r;
  flash::testing::poison(p.o_memory);
  flash::testing::poison(p.lse_memory);
  args.kernel = kernel;
  try {
    flash::attention_decode(args);
    flash::testing::check(cudaDeviceSynchronize(), "kernel execution");
  } catch (const flash::Error& e) {
    r.error = e.what();
  }
  const std::int64_t Hq = p.spec.heads_q, D = p.spec.head_dim, Tq = p.total_q;
  r.o = flash::testing::download(p.args.o);
  r.lse = flash::testing::download(*p.args.lse);
  const std::int64_t rows = p.cu_q.back();
  std::size_t o_unwritten = 0, lse_unwritten = 0;
  for (std::int64_t i = 0; i < rows * Hq * D; ++i) o_unwritten += std::isnan(r.o[i]);
  for (std::int64_t h = 0; h < Hq; ++h)
    for (std::int64_t i = 0; i < rows; ++i) lse_unwritten += std::isnan(r.lse[h * Tq + i]);
  r.unwritten = o_unwritten + lse_unwritten;
  // The views' elements are distinct elements of the buffers: any other
  // element that is not NaN was written outside the sequences' rows.
  const std::vector<double> o_all = flash::testing::download(p.o_memory);
  const std::vector<double> lse_all = flash::testing::download(p.lse_memory);
  const std::size_t o_written = o_all.size() - count_nan(o_all), lse_written = lse_all.size() - count_nan(lse_all);
  r.stray = (o_written - (rows * Hq * D - o_unwritten)) + (lse_written - (rows * Hq - lse_unwritten));

  for (int b = 0; b < p.batch; ++b) {
    const int n = p.q_lens[b];
    if (n == 0) continue;
    const flash::reference::Result& ref = p.ref[b];
    double err = 0, lowp_err = 0, max_ref = 0, lse_err = 0, max_lse = 1, lse_lowp_err = 0;
    bool lse_inf_mismatch = false;
    for (int i = 0; i < n; ++i) {
      const std::int64_t row = p.cu_q[b] + i;
      for (std::int64_t h = 0; h < Hq; ++h) {
        for (std::int64_t d = 0; d < D; ++d) {
          const std::size_t ri = static_cast<std::size_t>((i * Hq + h) * D + d);
          const double e = std::fabs(r.o[(row * Hq + h) * D + d] - ref.o[ri]);
          err = std::isnan(e) ? kInf : std::max(err, e);
          lowp_err = std::max(lowp_err, std::fabs(ref.o_lowp[ri] - ref.o[ri]));
          max_ref = std::max(max_ref, std::fabs(ref.o[ri]));
        }
        const double ref_lse = ref.lse[static_cast<std::size_t>(h * n + i)], got = r.lse[h * Tq + row];
        if (std::isinf(ref_lse)) {
          lse_inf_mismatch = lse_inf_mismatch || got != ref_lse;
        } else {
          const double e = std::fabs(got - ref_lse);
          lse_err = std::isnan(e) ? kInf : std::max(lse_err, e);
          max_lse = std::max(max_lse, std::fabs(ref_lse));
          lse_lowp_err = std::max(lse_lowp_err, std::fabs(ref.lse_lowp[static_cast<std::size_t>(h * n + i)] - ref_lse));
        }
      }
    }
    if (lse_inf_mismatch) lse_err = kInf;
    const double bound = flash::testing::output_bound(lowp_err, max_ref, p.dtype);
    const double lse_bound = flash::testing::lse_bound(lse_lowp_err, max_lse);
    if (!(err <= bound) || !(lse_err <= lse_bound)) r.over.push_back({b, err, bound, lse_err, lse_bound});
  }
  return r;
}

void expect_ok(const Problem& p, const Check& r, const std::string& variant) {
  EXPECT_TRUE(r.error.empty()) << variant << ": " << r.error;
  EXPECT_EQ(r.unwritten, 0u) << variant << ": O/LSE elements of the sequences' rows left unwritten";
  EXPECT_EQ(r.stray, 0u) << variant
                         << ": O/LSE elements written outside the sequences' rows (rows past cu_seqlens_q[batch], "
                            "o's row padding, lse's head padding, the buffers' tails)";
  for (const SeqError& s : r.over)
    ADD_FAILURE() << variant << ": sequence " << s.seq << " (" << p.q_lens[s.seq] << " new tokens, "
                  << p.keys[s.seq] << " keys): O error " << s.err << " (bound " << s.bound << "), LSE error "
                  << s.lse_err << " (bound " << s.lse_bound << ")";
}

// Every built decode variant with kFeatureVarlen that runs (dtype, head_dim) here.
std::vector<std::string> varlen_variants(DType dtype, int head_dim) {
  std::vector<std::string> names;
  for (const auto& v : flash::decode_variants())
    if ((v.features & flash::kFeatureVarlen) && runnable(v, dtype, head_dim)) names.push_back(v.name);
  return names;
}

// Every element of o's and lse's buffers still NaN.
void expect_nothing_written(const Problem& p, const std::string& variant) {
  const auto o = flash::testing::download(p.o_memory), lse = flash::testing::download(p.lse_memory);
  EXPECT_EQ(count_nan(o), o.size()) << variant << ": o was written";
  EXPECT_EQ(count_nan(lse), lse.size()) << variant << ": lse was written";
}

struct Case {
  const char* name;
  Spec spec;
};

const std::vector<Case>& cases() {
  const int R = kRandom;
  static const std::vector<Case> list = {
      {"mixed_causal_gqa4_d128_contiguous",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .q_lens = {0, 1, 3, 8, 5, 2}, .keys = {R, R, R, R, R, R}}},
      {"mixed_causal_mqa_d64_page16",  // 4 heads x 8 tokens: two 16-row blocks per KV head
       {.heads_q = 4, .heads_kv = 1, .head_dim = 64, .page_size = 16, .q_lens = {8, 1, 0, 4, 7, 2, 8},
        .keys = {R, R, R, R, R, R, R}}},
      {"causal_mha_d256_page256",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 256, .page_size = 256, .capacity = 1024, .q_lens = {2, 8, 1, 5},
        .keys = {R, R, R, R}}},
      {"full_gqa8_d128_page16",  // 8 heads x 8 tokens: four 16-row blocks
       {.heads_q = 16, .heads_kv = 2, .head_dim = 128, .page_size = 16, .causal = false, .q_lens = {8, 3, 1, 6, 0},
        .keys = {R, R, R, R, R}}},
      {"causal_fewer_keys_than_tokens_gqa2_d64",  // rows that see no key: O = 0, LSE = -inf
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .capacity = 64, .q_lens = {4, 8, 3, 6, 2},
        .keys = {2, 0, 3, 5, 64}}},
      {"cache_holds_only_the_new_tokens_gqa4_d128_page16",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .q_lens = {1, 8, 5, 3}, .keys = {1, 8, 5, 3}}},
      {"causal_l5_gqa4_d128_page16",  // a window shorter than the new tokens
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .window_left = 5, .q_lens = {8, 2, 7, 1, 4},
        .keys = {R, R, R, R, R}}},
      {"l100_r2_gqa2_d64_page64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 64, .causal = false, .window_left = 100,
        .window_right = 2, .q_lens = {8, 4, 1, 6}, .keys = {R, R, R, R}}},
      {"cap30_alibi_batch_sinks_causal_gqa4_d64_page16",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .page_size = 16, .softcap = 30.0f, .alibi = Alibi::per_batch,
        .sinks = true, .qk_gain = 4.0, .q_lens = {3, 0, 8, 1, 6, 4}, .keys = {R, R, R, R, R, R}}},
      {"alibi_head_sinks_full_mqa_d128",
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .causal = false, .alibi = Alibi::per_head, .sinks = true,
        .q_lens = {5, 8, 1, 2}, .keys = {R, R, R, R}}},
      {"cap15_causal_gqa2_d256_page32",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 256, .page_size = 32, .softcap = 15.0f, .qk_gain = 8.0,
        .q_lens = {6, 1, 8}, .keys = {R, R, R}}},
      {"long_cache_chosen_splits_gqa4_d128_page64",  // batch 3: the heuristic splits the keys
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 64, .capacity = 8192, .q_lens = {1, 8, 4},
        .keys = {8000, 8192, 5000}}},
      {"long_cache_splits7_causal_l300_sinks_d64",  // the sinks enter the combine once
       {.heads_q = 4, .heads_kv = 1, .head_dim = 64, .capacity = 4096, .window_left = 300, .sinks = true,
        .q_lens = {8, 2, 0, 5}, .keys = {4096, 3000, 100, 7}, .num_splits = 7}},
      {"splits64_past_the_tiles_gqa4_d128_page16",  // most splits get no keys
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .q_lens = {4, 8, 1}, .keys = {R, R, R},
        .num_splits = 64}},
      {"strided_layouts_causal_gqa4_d128_page16",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .q_lens = {3, 8, 0, 5}, .keys = {R, R, R, R},
        .tail_q = 5, .packing = Packing::strided}},
      {"strided_layouts_splits3_full_mqa_d64",
       {.heads_q = 6, .heads_kv = 1, .head_dim = 64, .causal = false, .q_lens = {2, 7, 1}, .keys = {R, R, R},
        .num_splits = 3, .tail_q = 2, .packing = Packing::strided}},
      {"loose_max_tail_splits3_gqa4_d64",  // CTAs past the sequences exit; combine rows past the last too
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .page_size = 16, .q_lens = {3, 1, 6}, .keys = {R, R, R},
        .num_splits = 3, .tail_q = 9, .loose_max = true}},
      {"many_sequences_causal_gqa4_d64_page16",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .page_size = 16, .q_lens = std::vector<int>(40, R),
        .keys = std::vector<int>(40, R)}},
      {"no_new_tokens_d64",  // every sequence empty, rows past the last: nothing is written
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {0, 0, 0}, .keys = {5, 0, 9}, .tail_q = 6}},
  };
  return list;
}

int num_cases() { return static_cast<int>(cases().size()); }

using Param = std::tuple<int, DType>;  // case, dtype

class DecodeVarlen : public ::testing::TestWithParam<Param> {};

TEST_P(DecodeVarlen, MatchesReferencePerSequence) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, dtype] = GetParam();
  const Spec& s = cases()[case_idx].spec;
  const std::uint64_t seed = test_seed();
  auto p = make_problem(s, dtype, seed);
  SCOPED_TRACE(describe(p, seed));
  const auto variants = varlen_variants(dtype, s.head_dim);
  for (const std::string& v : variants) expect_ok(p, run_and_check(p, p.args, v), v);
  EXPECT_FALSE(variants.empty()) << "no built decode variant with kFeatureVarlen runs this case";
}

std::string case_name(const ::testing::TestParamInfo<Param>& info) {
  const auto [case_idx, dtype] = info.param;
  return fmt::format("{}_{}", flash::dtype_name(dtype), cases()[case_idx].name);
}

INSTANTIATE_TEST_SUITE_P(Cases, DecodeVarlen,
                         ::testing::Combine(::testing::Range(0, num_cases()),
                                            ::testing::Values(DType::bf16, DType::f16)),
                         case_name);

// Split counts on one long-cache call: the heuristic splits batch 3 (and
// plan_decode sizes the partial results by total_q, not batch *
// max_seqlen_q), and forced counts (1, odd, more than the tiles) agree with
// the reference, paged and contiguous.
TEST(DecodeVarlenSplits, ForcedAndChosen) {
  SKIP_WITHOUT_GPU();
  for (int page_size : {0, 64}) {
    Spec s{.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = page_size, .capacity = 8192,
           .q_lens = {1, 8, 4}, .keys = {8191, 5000, 8}, .tail_q = 3};
    const std::uint64_t seed = test_seed() + page_size;
    auto p = make_problem(s, DType::bf16, seed);
    SCOPED_TRACE(describe(p, seed));
    for (const std::string& v : varlen_variants(DType::bf16, 128)) {
      for (int splits : {0, 1, 3, 7, 64, 256}) {
        SCOPED_TRACE(fmt::format("{} num_splits {}", v, splits));
        flash::DecodeArgs a = p.args;
        a.kernel = v;
        a.num_splits = splits;
        const flash::DecodePlan plan = flash::plan_decode(a);
        if (splits == 0) EXPECT_GT(plan.num_splits, 1) << "batch 3 with an 8k cache should be split";
        else EXPECT_EQ(plan.num_splits, splits);
        const std::size_t rows = static_cast<std::size_t>(plan.num_splits) * s.heads_q * p.total_q;
        const std::size_t expected = plan.num_splits == 1 ? 256 : 256 + (rows * 4 + 255) / 256 * 256 + rows * 128 * 4;
        EXPECT_EQ(plan.workspace_bytes, expected) << "status words, then [splits][heads_q][total_q] partial rows";
        expect_ok(p, run_and_check(p, a, v), v);
      }
    }
  }
}

// A call whose sequences all have n new tokens computes what the dense call
// over the same memory computes (q [batch, n, ...] is q packed [batch * n,
// ...]), bit for bit: the same tiles, masks, splits and combine, only the
// rows addressed differently. With every score modifier, paged and
// contiguous, with and without splits.
TEST(DecodeVarlenMatchesDense, BitIdenticalToTheDenseCall) {
  SKIP_WITHOUT_GPU();
  constexpr int kN = 4;
  for (int page_size : {0, 16}) {
    for (int splits : {1, 5}) {
      Spec s{.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = page_size, .capacity = 1024,
             .softcap = 30.0f, .alibi = Alibi::per_batch, .sinks = true, .qk_gain = 4.0,
             .q_lens = {kN, kN, kN, kN, kN}, .keys = {1024, 3, 0, 700, kN}, .num_splits = splits};
      const std::uint64_t seed = test_seed() + page_size + splits;
      auto p = make_problem(s, DType::bf16, seed);
      SCOPED_TRACE(describe(p, seed));
      const std::int64_t B = p.batch, Hq = s.heads_q, D = s.head_dim;
      for (const std::string& v : varlen_variants(DType::bf16, 128)) {
        const Check r = run_and_check(p, p.args, v);
        expect_ok(p, r, v);
        DeviceBuffer d_o(static_cast<std::size_t>(B * kN * Hq * D * 2)), d_lse(static_cast<std::size_t>(B * Hq * kN * 4));
        flash::DecodeArgs a = p.args;
        a.cu_seqlens_q.reset();
        a.q = flash::make_contiguous(p.d_q.get(), DType::bf16, {B, kN, Hq, D});
        a.o = flash::make_contiguous(d_o.get(), DType::bf16, {B, kN, Hq, D});
        a.lse = flash::make_contiguous(d_lse.get(), DType::f32, {B, Hq, kN});
        a.kernel = v;
        flash::attention_decode(a);
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        const auto o = flash::testing::download(a.o), lse = flash::testing::download(*a.lse);
        std::size_t o_diff = 0, lse_diff = 0;
        for (std::size_t i = 0; i < o.size(); ++i) o_diff += std::memcmp(&o[i], &r.o[i], sizeof(double)) != 0;
        for (std::int64_t b = 0; b < B; ++b)
          for (std::int64_t h = 0; h < Hq; ++h)
            for (std::int64_t i = 0; i < kN; ++i) {
              const double dense = lse[(b * Hq + h) * kN + i], packed = r.lse[h * p.total_q + b * kN + i];
              lse_diff += std::memcmp(&dense, &packed, sizeof(double)) != 0;
            }
        EXPECT_EQ(o_diff, 0u) << v << ": O elements that differ from the dense call";
        EXPECT_EQ(lse_diff, 0u) << v << ": LSE elements that differ from the dense call";
      }
    }
  }
}

// A small paged problem for the error tests: new tokens {3, 0, 5, 2} (so
// cu_seqlens_q {0, 3, 3, 8, 10}), 4 rows past them, keys {10, 4, 40, 2} in
// pages of 16, a table of 4 entries per sequence (capacity 64).
Problem small_problem(std::uint64_t seed) {
  const Spec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 16, .capacity = 64,
               .q_lens = {3, 0, 5, 2}, .keys = {10, 4, 40, 2}, .tail_q = 4};
  return make_problem(s, DType::bf16, seed);
}

// Bad metadata (values only the device sees): with sync_check the call
// throws flash::Error naming the entry, with or without a status tensor;
// with sync_check off it returns and reports through the status words. In
// every mode, direct or split, nothing is written.
TEST(DecodeVarlenErrors, BadMetadataWritesNothing) {
  SKIP_WITHOUT_GPU();
  // Each case breaks one rule only (the first error found wins, so two
  // would race for the status words).
  struct Bad {
    const char* what;
    std::vector<int> cu_q, keys;  // empty: the problem's own
    int max_q;                    // 0: the problem's own
    int bad_page;                 // >= 0: page_table[1][0] (sequence 1 has 4 keys) set to this
    const char* message;          // in the flash::Error and describe_decode_status(status)
    const char* detail;           // only in the flash::Error (the call's sizes)
  };
  const std::uint64_t seed = test_seed();
  auto p = small_problem(seed);
  SCOPED_TRACE(describe(p, seed));
  ASSERT_EQ(p.cu_q, (std::vector<int>{0, 3, 3, 8, 10}));
  ASSERT_EQ(p.total_q, 14);
  ASSERT_EQ(p.args.max_seqlen_q, 5);
  const Bad bad[] = {
      {"cu_seqlens_q not starting at 0", {1, 3, 3, 8, 10}, {}, 0, -1, "cu_seqlens_q[0] = 1; expected 0", ""},
      {"cu_seqlens_q decreasing", {0, 3, 2, 7, 10}, {}, 0, -1, "cu_seqlens_q[2] = 2 is less than the entry before it", ""},
      {"cu_seqlens_q past total_q", {0, 3, 6, 11, 15}, {}, 0, -1, "cu_seqlens_q[4] = 15 is past the packed tensor's rows",
       "(total_q = 14)"},
      {"a sequence above max_seqlen_q", {}, {}, 4, -1, "sequence 2 of cu_seqlens_q has 5 rows, more than max_seqlen_q",
       "max_seqlen_q = 4"},
      {"a negative cache length", {}, {10, -1, 40, 2}, 0, -1, "cache_seqlens[1] = -1 is negative", ""},
      {"a cache length past the capacity", {}, {10, 4, 65, 2}, 0, -1, "cache_seqlens[2] = 65 exceeds the cache capacity",
       "(capacity 64 keys per sequence)"},
      {"a page index out of range", {}, {}, 0, 1000, "page_table[1][0] = 1000 is not a page of k_cache", "pages)"},
  };
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  const auto variants = varlen_variants(DType::bf16, 64);
  ASSERT_FALSE(variants.empty()) << "no built decode variant with kFeatureVarlen runs bf16 d64";
  for (const Bad& c : bad) {
    SCOPED_TRACE(c.what);
    flash::DecodeArgs a = p.args;
    flash::testing::upload(as_doubles(c.cu_q.empty() ? p.cu_q : c.cu_q), *a.cu_seqlens_q);
    flash::testing::upload(as_doubles(c.keys.empty() ? p.keys : c.keys), a.cache_seqlens);
    std::vector<int> table = p.page_table;
    if (c.bad_page >= 0) table[p.max_pages] = c.bad_page;
    flash::testing::upload(as_doubles(table), *a.page_table);
    if (c.max_q) a.max_seqlen_q = c.max_q;
    for (const std::string& v : variants) {
      for (int splits : {1, 3}) {
        for (int mode = 0; mode < 3; ++mode) {  // sync_check alone, sync_check and status, status alone
          SCOPED_TRACE(fmt::format("{} splits {}: {}", v, splits,
                                   mode == 0 ? "sync_check" : mode == 1 ? "sync_check + status" : "status"));
          flash::testing::poison(p.o_memory);
          flash::testing::poison(p.lse_memory);
          flash::testing::upload({0, 0, 0, 0}, status);
          a.kernel = v;
          a.num_splits = splits;
          a.sync_check = mode < 2;
          a.status.reset();
          if (mode > 0) a.status = status;
          if (a.sync_check) {
            try {
              flash::attention_decode(a);
              ADD_FAILURE() << "no flash::Error";
            } catch (const flash::Error& e) {
              const std::string msg = e.what();
              EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
              EXPECT_NE(msg.find(c.detail), std::string::npos) << msg;
              EXPECT_NE(msg.find("nothing was written"), std::string::npos) << msg;
            }
          } else {
            EXPECT_NO_THROW(flash::attention_decode(a));
          }
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          if (mode > 0) {
            const auto st = flash::testing::download(status);
            const int words[4] = {int(st[0]), int(st[1]), int(st[2]), int(st[3])};
            EXPECT_NE(words[0], 0) << "status[0] reports the bad metadata";
            EXPECT_NE(flash::describe_decode_status(words).find(c.message), std::string::npos)
                << flash::describe_decode_status(words);
          }
          expect_nothing_written(p, v);
        }
      }
    }
  }
  // The problem's own metadata again: the call is valid and status[0] is 0.
  flash::testing::upload(as_doubles(p.cu_q), *p.args.cu_seqlens_q);
  flash::testing::upload(as_doubles(p.keys), p.args.cache_seqlens);
  flash::testing::upload(as_doubles(p.page_table), *p.args.page_table);
  for (const std::string& v : variants) {
    flash::DecodeArgs a = p.args;
    a.sync_check = false;
    a.status = status;
    flash::testing::upload({7, 7, 7, 7}, status);
    expect_ok(p, run_and_check(p, a, v), v);
    EXPECT_EQ(flash::testing::download(status)[0], 0) << v;
  }
}

// A page table past 2^16 entries (4 x 20000) takes the check's grid path
// (one CTA per sequence after a memset of the status words): a valid call
// through it, then bad cu_seqlens_q and a bad page entry found by it.
TEST(DecodeVarlenErrors, GridCheckPath) {
  SKIP_WITHOUT_GPU();
  const Spec s{.heads_q = 8, .heads_kv = 2, .head_dim = 64, .page_size = 16, .capacity = 16 * 20000,
               .q_lens = {2, 8, 0, 5}, .keys = {100, 3, 250, 17}, .tail_q = 2};
  const std::uint64_t seed = test_seed();
  auto p = make_problem(s, DType::f16, seed);
  SCOPED_TRACE(describe(p, seed));
  const auto variants = varlen_variants(DType::f16, 64);
  ASSERT_FALSE(variants.empty()) << "no built decode variant with kFeatureVarlen runs f16 d64";
  for (const std::string& v : variants) {
    expect_ok(p, run_and_check(p, p.args, v), v);
    flash::DecodeArgs a = p.args;
    a.kernel = v;
    flash::testing::upload({0, 2, 10, 9, 15}, *a.cu_seqlens_q);  // decreasing at entry 3
    flash::testing::poison(p.o_memory);
    flash::testing::poison(p.lse_memory);
    try {
      flash::attention_decode(a);
      ADD_FAILURE() << v << ": no flash::Error";
    } catch (const flash::Error& e) {
      EXPECT_NE(std::string(e.what()).find("cu_seqlens_q[3] = 9 is less than the entry before it"), std::string::npos)
          << e.what();
    }
    expect_nothing_written(p, v);
    flash::testing::upload(as_doubles(p.cu_q), *a.cu_seqlens_q);
    std::vector<int> table = p.page_table;
    table[3 * p.max_pages + 1] = -5;  // sequence 3's second page (its keys 16 and 17)
    flash::testing::upload(as_doubles(table), *a.page_table);
    try {
      flash::attention_decode(a);
      ADD_FAILURE() << v << ": no flash::Error";
    } catch (const flash::Error& e) {
      EXPECT_NE(std::string(e.what()).find("page_table[3][1] = -5"), std::string::npos) << e.what();
    }
    expect_nothing_written(p, v);
    flash::testing::upload(as_doubles(p.page_table), *a.page_table);
  }
}

// The asynchronous path on a valid call: results as with sync_check, and
// status[0] == 0 (the status words start at 7: the call writes them).
TEST(DecodeVarlenErrors, AsyncStatusIsZeroWhenValid) {
  SKIP_WITHOUT_GPU();
  const Spec s{.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .q_lens = {0, 1, 8, 3, 5},
               .keys = {kRandom, kRandom, kRandom, kRandom, kRandom}, .num_splits = 2, .tail_q = 4};
  const std::uint64_t seed = test_seed();
  auto p = make_problem(s, DType::f16, seed);
  SCOPED_TRACE(describe(p, seed));
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  const auto variants = varlen_variants(DType::f16, 128);
  for (const std::string& v : variants) {
    flash::DecodeArgs a = p.args;
    a.sync_check = false;
    a.status = status;
    flash::testing::upload({7, 7, 7, 7}, status);
    expect_ok(p, run_and_check(p, a, v), v);
    EXPECT_EQ(flash::testing::download(status)[0], 0) << v;
  }
  EXPECT_FALSE(variants.empty()) << "no built decode variant with kFeatureVarlen runs f16 d128";
}

// Negative controls: the per-sequence check must fail when the kernel
// computes something other than the reference, or the cases above would
// prove nothing.
TEST(DecodeVarlenChecker, FailsWhenTheMaskDiffers) {
  SKIP_WITHOUT_GPU();
  const Spec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {4, 0, 8, 6}, .keys = {40, 9, 50, 60}};
  const std::uint64_t seed = test_seed();
  auto p = make_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  flash::DecodeArgs a = p.args;
  a.causal = false;  // the kernel runs without the mask the reference applies
  for (const std::string& v : varlen_variants(DType::bf16, 64)) {
    const Check r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.over.size(), 3u) << v << ": every sequence with new tokens differs from the causal reference";
  }
}

// Cache rows past cache_seqlens[b] are NaN and the reference leaves them
// out: a call that claims one key more for sequence 0 reads a NaN row and
// fails (so does one that claims one key less, without NaN).
TEST(DecodeVarlenChecker, FailsWithOtherCacheLengths) {
  SKIP_WITHOUT_GPU();
  const Spec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .page_size = 16, .q_lens = {3, 5, 2},
               .keys = {40, 60, 20}};
  const std::uint64_t seed = test_seed();
  auto p = make_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  for (int delta : {1, -1}) {
    std::vector<int> keys = p.keys;
    keys[0] += delta;
    TensorView view;
    DeviceBuffer d_keys = device_ints(keys, view);
    flash::DecodeArgs a = p.args;
    a.cache_seqlens = view;
    for (const std::string& v : varlen_variants(DType::bf16, 64)) {
      const Check r = run_and_check(p, a, v);
      EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
      ASSERT_EQ(r.over.size(), 1u) << v << ": cache_seqlens[0] " << (delta > 0 ? "+" : "-") << " 1";
      EXPECT_EQ(r.over[0].seq, 0) << v;
    }
  }
}

// A call one row short (cu_seqlens_q[batch] - 1) leaves exactly the last
// row of the last sequence unwritten (and, its new tokens being one fewer,
// that sequence differs), and the check says so.
TEST(DecodeVarlenChecker, FailsWhenARowIsLeftUnwritten) {
  SKIP_WITHOUT_GPU();
  const Spec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {5, 0, 7}, .keys = {12, 5, 40}, .tail_q = 2};
  const std::uint64_t seed = test_seed();
  auto p = make_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  std::vector<int> short_cu = p.cu_q;
  short_cu.back() -= 1;
  TensorView view;
  DeviceBuffer d_short = device_ints(short_cu, view);
  flash::DecodeArgs a = p.args;
  a.cu_seqlens_q = view;
  for (const std::string& v : varlen_variants(DType::bf16, 64)) {
    const Check r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.unwritten, static_cast<std::size_t>(s.heads_q * s.head_dim + s.heads_q))
        << v << ": one row of O (every head) and its LSE entries";
    EXPECT_EQ(r.stray, 0u) << v;
    ASSERT_EQ(r.over.size(), 1u) << v;
    EXPECT_EQ(r.over[0].seq, 2) << v;
  }
}

// A call that leaves out one score modifier fails the check.
TEST(DecodeVarlenChecker, FailsWithoutEachModifier) {
  SKIP_WITHOUT_GPU();
  const Spec s{.heads_q = 8, .heads_kv = 2, .head_dim = 128, .page_size = 16, .capacity = 1024, .softcap = 15.0f,
               .alibi = Alibi::per_batch, .sinks = true, .qk_gain = 8.0, .q_lens = {4, 8, 2},
               .keys = {300, 40, 700}};
  const std::uint64_t seed = test_seed();
  auto p = make_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  for (const std::string& v : varlen_variants(DType::bf16, 128)) {
    EXPECT_TRUE(run_and_check(p, p.args, v).ok()) << v << ": with every modifier";
    flash::DecodeArgs a = p.args;
    a.softcap = 0.0f;
    EXPECT_FALSE(run_and_check(p, a, v).ok()) << v << ": passed without the softcap";
    a = p.args;
    a.alibi_slopes.reset();
    EXPECT_FALSE(run_and_check(p, a, v).ok()) << v << ": passed without the slopes";
    a = p.args;
    a.sinks.reset();
    EXPECT_FALSE(run_and_check(p, a, v).ok()) << v << ": passed without the sinks";
  }
}

}  // namespace
