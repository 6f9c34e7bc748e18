// GPU tests of variable-length forward batches (issue 17; ctest gpu_varlen):
// every built variant with kFeatureVarlen over packed batches whose lengths
// include 0 and 1 and one long sequence among short ones, seqlen_q !=
// seqlen_k per sequence, seqused_k, GQA/MQA, masks, windows and the score
// modifiers, packed layouts with strides (q, k and v as parts of one qkv
// buffer; heads-major memory; padded o rows), and dense [batch, seqlen]
// calls whose only per-sequence metadata is seqused_k. Each sequence is checked
// against the fp64 reference run on that sequence alone (batch 1, its own
// lengths), by the rule of the dense checks (src/testing):
//   max|out - ref| <= 2 * max|out_lowp - ref| + floor(dtype) * max|ref|,
// per sequence, and the LSE within 2^-16 relative (-inf exactly). o and lse
// are poisoned (NaN) over their whole buffers before each call: every
// element of the rows < cu_seqlens_q[batch] must be written and nothing
// else (rows past the last sequence, o's row padding, the buffers' tails).
// Keys a sequence does not attend (past seqused_k[b], past
// cu_seqlens_k[batch]) are NaN, so a kernel that lets one into its result
// fails. Bad metadata must throw (sync_check) or set status, and write
// nothing; a variant without kFeatureVarlen must refuse the call.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "common/varlen.h"  // check_varlen_metadata, AttnParams::seq_order
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
constexpr int kRandom = -1;     // a length drawn from the test's seed
constexpr int kMaxRandomQ = 48;  // random query lengths are 0 to this
constexpr std::int64_t kORowPad = 16;  // elements between o's rows in the padded layouts (16-byte aligned in any dtype)
constexpr std::int64_t kLseHeadPad = 3;  // elements between lse's heads in the heads-major layout
constexpr std::int64_t kBufferTail = 64;  // elements past each output view's end, which must stay poisoned

// How the packed tensors lie in memory.
enum class Packing {
  separate,     // q, k, v, o contiguous [total, heads, head_dim]; lse contiguous [heads_q, total_q]
  qkv,          // q, k, v parts of one [total, heads_q + 2 * heads_kv, head_dim] buffer (self-attention); o rows padded
  heads_major,  // q, k, v in [heads, total, head_dim] memory; o rows padded; lse heads padded
  dense,        // no cu_seqlens: dense [batch, seqlen, heads, head_dim] views of the same memory (every
                // sequence of equal lengths, no tails), seqused_k the only per-sequence metadata; lse
                // [batch, heads_q, seqlen_q] with the separate layout's memory (strides Sq, total_q, 1)
};

constexpr const char* packing_name(Packing p) {
  return p == Packing::separate ? "separate"
         : p == Packing::qkv    ? "qkv"
         : p == Packing::dense  ? "dense"
                                : "heads_major";
}

struct VarlenSpec {
  int heads_q = 4, heads_kv = 2, head_dim = 64;
  bool causal = false;
  int window_left = -1, window_right = -1;
  float softcap = 0.0f;
  Alibi alibi = Alibi::none;
  bool sinks = false;
  double qk_gain = 1.0;      // q and k's standard deviation (as testing::Shape)
  std::vector<int> q_lens;   // queries per sequence; kRandom entries drawn
  std::vector<int> k_lens;   // keys per sequence; kRandom entries drawn; empty with Packing::qkv (the q lengths)
  bool seqused = false;      // seqused_k: the odd sequences with keys attend fewer than they have
  int tail_q = 0, tail_k = 0;  // packed rows past cu_seqlens_q[batch] / cu_seqlens_k[batch] (qkv: tail_q both)
  Packing packing = Packing::separate;
  bool loose_max = false;    // max_seqlen_q / max_seqlen_k = the packed rows, not the longest sequence
};

// A random key length for sequence b of q_len queries, by b % 4: a few more
// keys than queries, at most as many (causal rows that see none), a long
// prefix, or unrelated to q_len.
int random_k_len(int b, int q_len, std::mt19937_64& rng) {
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  switch (b % 4) {
    case 0: return q_len + uniform(1, 64);
    case 1: return uniform(0, q_len);
    case 2: return q_len + uniform(65, 400);
    default: return uniform(0, 1100);
  }
}

// One variable-length call: random packed inputs on host and device, the
// metadata, the views, and the fp64 reference of each sequence.
struct VarlenProblem {
  VarlenSpec spec;
  DType dtype = DType::bf16;
  int batch = 0, total_q = 0, total_k = 0;
  std::vector<int> q_lens, k_lens, used_k;  // used_k: the keys sequence b attends (seqused_k[b], else k_lens[b])
  std::vector<int> cu_q, cu_k;
  std::vector<double> q, k, v;  // host, packed [total, heads, head_dim]
  flash::testing::ScoreInputs scores;
  std::vector<flash::reference::Result> ref;  // per sequence: o [1, sq, heads_q, head_dim], lse [1, heads_q, sq]
  DeviceBuffer d_q, d_k, d_v, d_o, d_lse, d_cu_q, d_cu_k, d_used;
  TensorView o_memory, lse_memory;  // flat views of o's and lse's whole buffers
  flash::ForwardArgs args;          // every view, flag and modifier; kernel left to the caller
};

std::vector<int> prefix_sums(const std::vector<int>& lens) {
  std::vector<int> cu(lens.size() + 1, 0);
  for (std::size_t b = 0; b < lens.size(); ++b) cu[b + 1] = cu[b] + lens[b];
  return cu;
}

std::vector<double> as_doubles(const std::vector<int>& x) { return {x.begin(), x.end()}; }

DeviceBuffer device_ints(const std::vector<int>& host, TensorView& view) {
  DeviceBuffer buf(std::max<std::size_t>(host.size(), 1) * sizeof(std::int32_t));
  view = flash::make_contiguous(buf.get(), DType::i32, {static_cast<std::int64_t>(host.size())});
  flash::testing::upload(as_doubles(host), view);
  return buf;
}

VarlenProblem make_varlen_problem(const VarlenSpec& s, DType dtype, std::uint64_t seed) {
  VarlenProblem p;
  p.spec = s;
  p.dtype = dtype;
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const bool qkv = s.packing == Packing::qkv;
  p.batch = static_cast<int>(s.q_lens.size());
  for (int b = 0; b < p.batch; ++b) p.q_lens.push_back(s.q_lens[b] == kRandom ? uniform(0, kMaxRandomQ) : s.q_lens[b]);
  for (int b = 0; b < p.batch; ++b) {
    const int given = qkv ? p.q_lens[b] : s.k_lens.at(b);
    p.k_lens.push_back(given == kRandom ? random_k_len(b, p.q_lens[b], rng) : given);
  }
  for (int b = 0; b < p.batch; ++b)
    p.used_k.push_back(s.seqused && b % 2 == 1 && p.k_lens[b] > 0 ? uniform(0, p.k_lens[b] - 1) : p.k_lens[b]);
  p.cu_q = prefix_sums(p.q_lens);
  p.cu_k = prefix_sums(p.k_lens);
  p.total_q = p.cu_q.back() + s.tail_q;
  p.total_k = p.cu_k.back() + (qkv ? s.tail_q : s.tail_k);
  if (qkv) p.total_k = p.total_q = std::max(p.total_q, p.total_k);

  const std::int64_t Hq = s.heads_q, Hkv = s.heads_kv, D = s.head_dim, Tq = p.total_q, Tk = p.total_k;
  p.q = flash::testing::random_values(static_cast<std::size_t>(Tq * Hq * D), dtype, rng, s.qk_gain);
  p.k = flash::testing::random_values(static_cast<std::size_t>(Tk * Hkv * D), dtype, rng, s.qk_gain);
  p.v = flash::testing::random_values(static_cast<std::size_t>(Tk * Hkv * D), dtype, rng);
  p.scores = flash::testing::make_score_inputs(p.batch, s.heads_q, s.softcap, s.alibi, s.sinks,
                                               flash::testing::typical_row_max(s.qk_gain, s.softcap), rng);
  // Rows no sequence reads: NaN.
  auto fill_nan = [](std::vector<double>& x, std::int64_t row_elems, std::int64_t from, std::int64_t to) {
    std::fill(x.begin() + from * row_elems, x.begin() + to * row_elems, kNaN);
  };
  for (int b = 0; b < p.batch; ++b) {
    fill_nan(p.k, Hkv * D, p.cu_k[b] + p.used_k[b], p.cu_k[b + 1]);
    fill_nan(p.v, Hkv * D, p.cu_k[b] + p.used_k[b], p.cu_k[b + 1]);
  }
  fill_nan(p.k, Hkv * D, p.cu_k.back(), Tk);
  fill_nan(p.v, Hkv * D, p.cu_k.back(), Tk);
  fill_nan(p.q, Hq * D, p.cu_q.back(), Tq);

  // Inputs.
  flash::ForwardArgs& a = p.args;
  const std::int64_t es = static_cast<std::int64_t>(flash::dtype_size(dtype));
  auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 1)); };
  if (s.packing == Packing::qkv) {
    const std::int64_t W = Hq + 2 * Hkv;  // heads of one packed row
    std::vector<double> packed(static_cast<std::size_t>(Tq * W * D));
    for (std::int64_t r = 0; r < Tq; ++r) {
      std::copy_n(p.q.begin() + r * Hq * D, Hq * D, packed.begin() + r * W * D);
      std::copy_n(p.k.begin() + r * Hkv * D, Hkv * D, packed.begin() + (r * W + Hq) * D);
      std::copy_n(p.v.begin() + r * Hkv * D, Hkv * D, packed.begin() + (r * W + Hq + Hkv) * D);
    }
    p.d_q = DeviceBuffer(bytes(Tq * W * D * es));
    flash::testing::upload(packed, flash::make_contiguous(p.d_q.get(), dtype, {Tq, W, D}));
    char* base = static_cast<char*>(p.d_q.get());
    a.q = flash::make_view(base, dtype, {Tq, Hq, D}, {W * D, D, 1});
    a.k = flash::make_view(base + Hq * D * es, dtype, {Tk, Hkv, D}, {W * D, D, 1});
    a.v = flash::make_view(base + (Hq + Hkv) * D * es, dtype, {Tk, Hkv, D}, {W * D, D, 1});
  } else {
    const bool heads_major = s.packing == Packing::heads_major;
    auto packed_view = [&](DeviceBuffer& buf, std::int64_t rows, std::int64_t heads, const std::vector<double>& host) {
      buf = DeviceBuffer(bytes(rows * heads * D * es));
      const TensorView t = heads_major ? flash::make_view(buf.get(), dtype, {rows, heads, D}, {D, rows * D, 1})
                                       : flash::make_contiguous(buf.get(), dtype, {rows, heads, D});
      flash::testing::upload(host, t);
      return t;
    };
    a.q = packed_view(p.d_q, Tq, Hq, p.q);
    a.k = packed_view(p.d_k, Tk, Hkv, p.k);
    a.v = packed_view(p.d_v, Tk, Hkv, p.v);
  }
  const bool dense = s.packing == Packing::dense;
  const std::int64_t B = p.batch, Sq = dense && B ? p.q_lens[0] : 0, Sk = dense && B ? p.k_lens[0] : 0;
  if (dense) {  // the packed memory read as [batch, seqlen, heads, head_dim]
    if (s.tail_q != 0 || s.tail_k != 0 || B == 0 ||
        std::any_of(p.q_lens.begin(), p.q_lens.end(), [&](int n) { return n != Sq; }) ||
        std::any_of(p.k_lens.begin(), p.k_lens.end(), [&](int n) { return n != Sk; }))
      throw std::invalid_argument("Packing::dense takes equal lengths per sequence and no tails");
    a.q = flash::make_contiguous(p.d_q.get(), dtype, {B, Sq, Hq, D});
    a.k = flash::make_contiguous(p.d_k.get(), dtype, {B, Sk, Hkv, D});
    a.v = flash::make_contiguous(p.d_v.get(), dtype, {B, Sk, Hkv, D});
  }
  // Outputs, inside buffers that are larger than the views.
  const std::int64_t o_row = Hq * D + (s.packing == Packing::separate ? 0 : kORowPad);
  const std::int64_t o_elems = Tq * o_row + kBufferTail;
  p.d_o = DeviceBuffer(bytes(o_elems * es));
  p.o_memory = flash::make_contiguous(p.d_o.get(), dtype, {o_elems});
  a.o = dense ? flash::make_view(p.d_o.get(), dtype, {B, Sq, Hq, D}, {Sq * o_row, o_row, D, 1})
              : flash::make_view(p.d_o.get(), dtype, {Tq, Hq, D}, {o_row, D, 1});
  const std::int64_t lse_head = Tq + (s.packing == Packing::heads_major ? kLseHeadPad : 0);
  const std::int64_t lse_elems = Hq * lse_head + kBufferTail;
  p.d_lse = DeviceBuffer(bytes(lse_elems * 4));
  p.lse_memory = flash::make_contiguous(p.d_lse.get(), DType::f32, {lse_elems});
  a.lse = dense ? flash::make_view(p.d_lse.get(), DType::f32, {B, Hq, Sq}, {Sq, lse_head, 1})
                : flash::make_view(p.d_lse.get(), DType::f32, {Hq, Tq}, {lse_head, 1});
  // Metadata.
  TensorView view;
  if (!dense) {
    p.d_cu_q = device_ints(p.cu_q, view);
    a.cu_seqlens_q = view;
    p.d_cu_k = device_ints(p.cu_k, view);
    a.cu_seqlens_k = view;
  }
  if (s.seqused) {
    p.d_used = device_ints(p.used_k, view);
    a.seqused_k = view;
  }
  const int longest_q = p.batch ? *std::max_element(p.q_lens.begin(), p.q_lens.end()) : 0;
  const int longest_k = p.batch ? *std::max_element(p.k_lens.begin(), p.k_lens.end()) : 0;
  a.max_seqlen_q = dense ? 0 : s.loose_max ? p.total_q : longest_q;  // (a dense call does not read them)
  a.max_seqlen_k = dense ? 0 : s.loose_max ? p.total_k : longest_k;
  a.causal = s.causal;
  a.window_left = s.window_left;
  a.window_right = s.window_right;
  p.scores.apply(a);

  // The reference, one sequence at a time, as a dense batch-1 call.
  for (int b = 0; b < p.batch; ++b) {
    flash::reference::Problem rp;
    rp.batch = 1;
    rp.seqlen_q = p.q_lens[b];
    rp.seqlen_k = p.used_k[b];
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
    const std::vector<double> kb(p.k.begin() + p.cu_k[b] * Hkv * D, p.k.begin() + (p.cu_k[b] + p.used_k[b]) * Hkv * D);
    const std::vector<double> vb(p.v.begin() + p.cu_k[b] * Hkv * D, p.v.begin() + (p.cu_k[b] + p.used_k[b]) * Hkv * D);
    p.ref.push_back(flash::reference::forward(rp, qb, kb, vb, dtype));
  }
  return p;
}

// The SCOPED_TRACE line of a problem: seed, lengths, sizes, mask and modifiers.
std::string describe(const VarlenProblem& p, std::uint64_t seed) {
  const VarlenSpec& s = p.spec;
  return fmt::format(
      "seed {} {} d{} hq{} hkv{}{} window ({}, {}) softcap {} slopes [{}] sinks [{}] {} layout; q lens [{}] k lens "
      "[{}] keys attended [{}]{}; total_q {} total_k {} max_seqlen ({}, {})",
      seed, flash::dtype_name(p.dtype), s.head_dim, s.heads_q, s.heads_kv, s.causal ? " causal" : "", s.window_left,
      s.window_right, s.softcap, fmt::join(p.scores.alibi, ","), fmt::join(p.scores.sinks, ","),
      packing_name(s.packing), fmt::join(p.q_lens, ","), fmt::join(p.k_lens, ","), fmt::join(p.used_k, ","),
      s.seqused ? " (seqused_k)" : "", p.total_q, p.total_k, p.args.max_seqlen_q, p.args.max_seqlen_k);
}

struct SeqError {
  int seq;
  double err, bound, lse_err, lse_bound;
};

struct VarlenCheck {
  std::string error;           // a flash::Error or CUDA failure, if any
  std::size_t unwritten = 0;   // O and LSE elements of the rows < cu_seqlens_q[batch] still NaN
  std::size_t stray = 0;       // elements of o's and lse's buffers outside those rows no longer NaN
  std::vector<SeqError> over;  // sequences whose O or LSE error is over its bound
  bool ok() const { return error.empty() && unwritten == 0 && stray == 0 && over.empty(); }
};

std::size_t count_nan(const std::vector<double>& x) {
  return static_cast<std::size_t>(std::count_if(x.begin(), x.end(), [](double e) { return std::isnan(e); }));
}

// Poisons o's and lse's buffers, runs `args` with `kernel`, and checks
// every sequence against its reference and every output element.
VarlenCheck run_and_check(VarlenProblem& p, flash::ForwardArgs args, const std::string& kernel) {
  VarlenCheck r;
  flash::testing::poison(p.o_memory);
  flash::testing::poison(p.lse_memory);
  args.kernel = kernel;
  try {
    flash::attention_forward(args);
    flash::testing::check(cudaDeviceSynchronize(), "kernel execution");
  } catch (const flash::Error& e) {
    r.error = e.what();
  }
  const std::int64_t Hq = p.spec.heads_q, D = p.spec.head_dim, Tq = p.total_q;
  const std::vector<double> o = flash::testing::download(p.args.o);  // (logical order: [row, head, dim] either way)
  const std::vector<double> lse = flash::testing::download(*p.args.lse);
  // lse's logical order: [heads_q, total_q] packed, [batch, heads_q, seqlen_q] dense.
  const std::int64_t Sq = p.spec.packing == Packing::dense ? p.q_lens.at(0) : 0;
  const auto lse_at = [&](std::int64_t h, std::int64_t row) {
    return Sq ? lse[static_cast<std::size_t>(((row / Sq) * Hq + h) * Sq + row % Sq)] : lse[h * Tq + row];
  };
  const std::int64_t rows = p.cu_q.back();
  std::size_t o_unwritten = 0, lse_unwritten = 0;
  for (std::int64_t i = 0; i < rows * Hq * D; ++i) o_unwritten += std::isnan(o[i]);
  for (std::int64_t h = 0; h < Hq; ++h)
    for (std::int64_t i = 0; i < rows; ++i) lse_unwritten += std::isnan(lse_at(h, i));
  r.unwritten = o_unwritten + lse_unwritten;
  // The views' elements are distinct elements of the buffers: any other
  // element that is not NaN was written outside the sequences' rows.
  const std::vector<double> o_all = flash::testing::download(p.o_memory);
  const std::vector<double> lse_all = flash::testing::download(p.lse_memory);
  const std::size_t o_written = o_all.size() - count_nan(o_all), lse_written = lse_all.size() - count_nan(lse_all);
  r.stray = (o_written - (rows * Hq * D - o_unwritten)) + (lse_written - (rows * Hq - lse_unwritten));

  constexpr double kInf = std::numeric_limits<double>::infinity();
  for (int b = 0; b < p.batch; ++b) {
    const int sq = p.q_lens[b];
    if (sq == 0) continue;
    const flash::reference::Result& ref = p.ref[b];
    double err = 0, lowp_err = 0, max_ref = 0, lse_err = 0, max_lse = 1, lse_lowp_err = 0;
    bool lse_inf_mismatch = false;
    for (int i = 0; i < sq; ++i) {
      const std::int64_t row = p.cu_q[b] + i;
      for (std::int64_t h = 0; h < Hq; ++h) {
        for (std::int64_t d = 0; d < D; ++d) {
          const std::size_t ri = static_cast<std::size_t>((i * Hq + h) * D + d);
          const double e = std::fabs(o[(row * Hq + h) * D + d] - ref.o[ri]);
          err = std::isnan(e) ? kInf : std::max(err, e);
          lowp_err = std::max(lowp_err, std::fabs(ref.o_lowp[ri] - ref.o[ri]));
          max_ref = std::max(max_ref, std::fabs(ref.o[ri]));
        }
        const double ref_lse = ref.lse[static_cast<std::size_t>(h * sq + i)], got = lse_at(h, row);
        if (std::isinf(ref_lse)) {
          lse_inf_mismatch = lse_inf_mismatch || got != ref_lse;
        } else {
          const double e = std::fabs(got - ref_lse);
          lse_err = std::isnan(e) ? kInf : std::max(lse_err, e);
          max_lse = std::max(max_lse, std::fabs(ref_lse));
          lse_lowp_err = std::max(lse_lowp_err, std::fabs(ref.lse_lowp[static_cast<std::size_t>(h * sq + i)] - ref_lse));
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

void expect_ok(const VarlenProblem& p, const VarlenCheck& r, const std::string& variant) {
  EXPECT_TRUE(r.error.empty()) << variant << ": " << r.error;
  EXPECT_EQ(r.unwritten, 0u) << variant << ": O/LSE elements of the sequences' rows left unwritten";
  EXPECT_EQ(r.stray, 0u) << variant
                         << ": O/LSE elements written outside the sequences' rows (rows past cu_seqlens_q[batch], "
                            "o's row padding, lse's head padding, the buffers' tails)";
  for (const SeqError& s : r.over)
    ADD_FAILURE() << variant << ": sequence " << s.seq << " (sq " << p.q_lens[s.seq] << ", sk " << p.used_k[s.seq]
                  << "): O error " << s.err << " (bound " << s.bound << "), LSE error " << s.lse_err << " (bound "
                  << s.lse_bound << ")";
}

// Every built variant with kFeatureVarlen that runs (dtype, head_dim) here.
std::vector<std::string> varlen_variants(DType dtype, int head_dim) {
  std::vector<std::string> names;
  for (const auto& v : flash::forward_variants())
    if ((v.features & flash::kFeatureVarlen) && runnable(v, dtype, head_dim)) names.push_back(v.name);
  return names;
}

// The cases, over bf16 and f16 (and f32 where marked: the variants that take it).
struct VarlenCase {
  const char* name;
  VarlenSpec spec;
  bool f32;
};

const std::vector<VarlenCase>& varlen_cases() {
  const std::vector<int> mixed = {0, 1, 17, 300, 5, 1023};  // one long sequence among short ones, 0 and 1 too
  const int R = kRandom;
  const auto spread = flash::gpu_test::spread_lengths;
  static const std::vector<VarlenCase> cases = {
      {"mixed_full_gqa4_d64",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .q_lens = mixed, .k_lens = {R, R, 0, R, R, R}, .tail_q = 37,
        .tail_k = 11},
       true},
      {"mixed_causal_mqa_d128_seqused",
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .causal = true, .q_lens = mixed, .k_lens = {R, R, R, R, R, R},
        .seqused = true, .tail_k = 5},
       false},
      {"causal_l127_gqa2_d64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .window_left = 127,
        .q_lens = {1023, 0, 257, 64, 1}, .k_lens = {R, R, R, R, R}, .tail_q = 3},
       false},
      {"l64_r32_mha_d128_seqused",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 128, .window_left = 64, .window_right = 32,
        .q_lens = {113, 1, 0, 700, 40}, .k_lens = {R, R, R, R, R}, .seqused = true},
       false},
      {"cap30_alibi_batch_sinks_causal_gqa4_d64_seqused",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .causal = true, .softcap = 30.0f, .alibi = Alibi::per_batch,
        .sinks = true, .qk_gain = 4.0, .q_lens = mixed, .k_lens = {R, R, 0, R, R, R}, .seqused = true, .tail_q = 8},
       true},
      {"alibi_head_sinks_full_mqa_d128",
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .alibi = Alibi::per_head, .sinks = true,
        .q_lens = {64, 1, 200, 0}, .k_lens = {R, R, R, R}},
       false},
      {"causal_mha_d256",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 256, .causal = true, .q_lens = {3, 0, 130, 77, 1},
        .k_lens = {R, R, R, R, R}},
       false},
      {"qkv_packed_causal_gqa2_d128_seqused",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .causal = true, .q_lens = {5, 1, 0, 400, 64, 129},
        .seqused = true, .tail_q = 9, .packing = Packing::qkv},
       false},
      {"heads_major_full_mqa_d64_loose_max",
       {.heads_q = 6, .heads_kv = 1, .head_dim = 64, .q_lens = {200, 0, 1, 31}, .k_lens = {R, R, R, R}, .tail_q = 5,
        .tail_k = 3, .packing = Packing::heads_major, .loose_max = true},
       true},
      {"many_short_causal_gqa4_d64_seqused",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = std::vector<int>(48, R),
        .k_lens = std::vector<int>(48, R), .seqused = true, .tail_q = 1},
       false},
      {"many_short_full_gqa2_d128",  // the persistent varlen schedule's search over many sequences
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .q_lens = std::vector<int>(40, R),
        .k_lens = std::vector<int>(40, R), .tail_q = 3, .tail_k = 7},
       false},
      {"many_spread_full_gqa2_d128_seqused",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .q_lens = spread(70, 37), .k_lens = spread(70, 23),
        .seqused = true, .tail_q = 2},
       false},
      {"over_order_cap_full_mqa_d64",  // more sequences than the metadata check ranks: the caller's order
       {.heads_q = 2, .heads_kv = 1, .head_dim = 64, .q_lens = std::vector<int>(4100, R),
        .k_lens = std::vector<int>(4100, R)},
       false},
      {"many_spread_causal_mha_d64",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = spread(40, 37),
        .k_lens = spread(40, 37)},
       false},
      {"long_full_mha_d128",  // several key tiles per block, blocks that straddle sequence ends
       {.heads_q = 2, .heads_kv = 2, .head_dim = 128, .q_lens = {1500, 0, 129, 2100, 64},
        .k_lens = {1700, 3, 129, 2100, 1}, .tail_k = 9},
       false},
      {"long_causal_gqa2_d64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = {1500, 700, 2100},
        .k_lens = {1700, 700, 2100}, .tail_q = 2, .tail_k = 9},
       false},
      // Dense queries with seqused_k (a per-sequence layout without cu_seqlens_q; session 31's
      // compact-grid bug read cu_seqlens_q there).
      {"dense_q_seqused_causal_gqa2_d128",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .causal = true, .q_lens = {300, 300, 300, 300},
        .k_lens = {700, 700, 700, 700}, .seqused = true, .packing = Packing::dense},
       false},
      {"dense_q_seqused_l100_r3_cap30_alibi_batch_sinks_gqa4_d64",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .window_left = 100, .window_right = 3, .softcap = 30.0f,
        .alibi = Alibi::per_batch, .sinks = true, .qk_gain = 4.0, .q_lens = {129, 129, 129},
        .k_lens = {1000, 1000, 1000}, .seqused = true, .packing = Packing::dense},
       true},
      {"dense_q_seqused_causal_mha_d256",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 256, .causal = true, .q_lens = {77, 77}, .k_lens = {300, 300},
        .seqused = true, .packing = Packing::dense},
       false},
      {"no_queries_d64",  // every sequence empty, rows past the last: nothing is written
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {0, 0, 0}, .k_lens = {5, 0, 9}, .tail_q = 16},
       false},
  };
  return cases;
}

int num_cases() { return static_cast<int>(varlen_cases().size()); }

std::vector<int> f32_cases() {
  std::vector<int> idx;
  for (int i = 0; i < num_cases(); ++i)
    if (varlen_cases()[i].f32) idx.push_back(i);
  return idx;
}

using VarlenParam = std::tuple<int, DType>;  // case, dtype

class VarlenForward : public ::testing::TestWithParam<VarlenParam> {};

TEST_P(VarlenForward, MatchesReferencePerSequence) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, dtype] = GetParam();
  const VarlenSpec& s = varlen_cases()[case_idx].spec;
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_problem(s, dtype, seed);
  SCOPED_TRACE(describe(p, seed));
  const auto variants = varlen_variants(dtype, s.head_dim);
  for (const std::string& v : variants) expect_ok(p, run_and_check(p, p.args, v), v);
  EXPECT_FALSE(variants.empty()) << "no built variant with kFeatureVarlen runs this case";
}

std::string varlen_name(const ::testing::TestParamInfo<VarlenParam>& info) {
  const auto [case_idx, dtype] = info.param;
  return fmt::format("{}_{}", flash::dtype_name(dtype), varlen_cases()[case_idx].name);
}

INSTANTIATE_TEST_SUITE_P(Cases, VarlenForward,
                         ::testing::Combine(::testing::Range(0, num_cases()),
                                            ::testing::Values(DType::bf16, DType::f16)),
                         varlen_name);
INSTANTIATE_TEST_SUITE_P(CasesF32, VarlenForward,
                         ::testing::Combine(::testing::ValuesIn(f32_cases()), ::testing::Values(DType::f32)),
                         varlen_name);

// A small problem for the error tests: q lengths {3, 0, 20, 7}, k lengths
// {5, 2, 30, 0}, rows past both ends.
VarlenProblem small_problem(std::uint64_t seed) {
  const VarlenSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = {3, 0, 20, 7},
                     .k_lens = {5, 2, 30, 0}, .tail_q = 6, .tail_k = 4};
  return make_varlen_problem(s, DType::bf16, seed);
}

// Every element of o's and lse's buffers still NaN.
void expect_nothing_written(const VarlenProblem& p, const std::string& variant) {
  const auto o = flash::testing::download(p.o_memory), lse = flash::testing::download(p.lse_memory);
  EXPECT_EQ(count_nan(o), o.size()) << variant << ": o was written";
  EXPECT_EQ(count_nan(lse), lse.size()) << variant << ": lse was written";
}

// Bad metadata (values only the device sees): with sync_check the call
// throws flash::Error naming the array, with or without a status tensor;
// with sync_check off it returns and reports through status[0] != 0. Either
// way nothing is written.
TEST(VarlenForwardErrors, BadMetadataWritesNothing) {
  SKIP_WITHOUT_GPU();
  struct Bad {
    const char* what;
    const char* names;  // the array the message names
    std::vector<int> cu_q, cu_k, seqused;  // empty: the problem's own (seqused: none)
    int max_q, max_k;                      // 0: the problem's own
  };
  const std::uint64_t seed = test_seed();
  auto p = small_problem(seed);
  SCOPED_TRACE(describe(p, seed));
  ASSERT_EQ(p.cu_q, (std::vector<int>{0, 3, 3, 23, 30}));
  ASSERT_EQ(p.cu_k, (std::vector<int>{0, 5, 7, 37, 37}));
  ASSERT_EQ(p.total_q, 36);
  ASSERT_EQ(p.total_k, 41);
  const Bad cases[] = {
      {"cu_seqlens_q not starting at 0", "cu_seqlens_q", {1, 3, 3, 23, 30}, {}, {}, 0, 0},
      {"cu_seqlens_q decreasing", "cu_seqlens_q", {0, 3, 2, 22, 29}, {}, {}, 0, 0},
      {"cu_seqlens_q past total_q", "cu_seqlens_q", {0, 3, 3, 23, 37}, {}, {}, 0, 0},
      {"a query length above max_seqlen_q", "cu_seqlens_q", {}, {}, {}, 19, 0},
      {"cu_seqlens_k not starting at 0", "cu_seqlens_k", {}, {2, 5, 7, 37, 37}, {}, 0, 0},
      {"cu_seqlens_k decreasing", "cu_seqlens_k", {}, {0, 5, 4, 34, 34}, {}, 0, 0},
      {"cu_seqlens_k past total_k", "cu_seqlens_k", {}, {0, 5, 7, 37, 42}, {}, 0, 0},
      {"a key length above max_seqlen_k", "cu_seqlens_k", {}, {}, {}, 0, 29},
      {"seqused_k above its sequence's keys", "seqused_k", {}, {}, {5, 3, 30, 0}, 0, 0},
      {"seqused_k negative", "seqused_k", {}, {}, {-1, 2, 30, 0}, 0, 0},
      {"seqused_k above max_seqlen_k", "seqused_k", {}, {}, {5, 2, 30, 0}, 0, 29},
      // Lengths that wrap in 32 bits (-2 - INT_MAX reads as INT_MAX): seqused_k
      // lifts the per-length bound, so only the 64-bit difference sees it.
      {"cu_seqlens_k decreasing by more than INT_MAX", "cu_seqlens_k", {}, {0, 5, 2147483647, -2, -2}, {5, 2, 3, 0}, 0, 0},
  };
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  const auto variants = varlen_variants(DType::bf16, 64);
  ASSERT_FALSE(variants.empty()) << "no built variant with kFeatureVarlen runs bf16 d64";
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.what);
    flash::ForwardArgs a = p.args;
    flash::testing::upload(as_doubles(c.cu_q.empty() ? p.cu_q : c.cu_q), *a.cu_seqlens_q);
    flash::testing::upload(as_doubles(c.cu_k.empty() ? p.cu_k : c.cu_k), *a.cu_seqlens_k);
    TensorView used_view;
    DeviceBuffer d_used;
    if (!c.seqused.empty()) {
      d_used = device_ints(c.seqused, used_view);
      a.seqused_k = used_view;
    }
    if (c.max_q) a.max_seqlen_q = c.max_q;
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
        if (mode > 0) EXPECT_NE(flash::testing::download(status)[0], 0) << "status[0] reports the bad metadata";
        expect_nothing_written(p, v);
      }
    }
  }
  // The problem's own metadata again: the call is valid and status[0] is 0.
  flash::testing::upload(as_doubles(p.cu_q), *p.args.cu_seqlens_q);
  flash::testing::upload(as_doubles(p.cu_k), *p.args.cu_seqlens_k);
  for (const std::string& v : variants) {
    flash::ForwardArgs a = p.args;
    a.sync_check = false;
    a.status = status;
    flash::testing::upload({7, 7, 7, 7}, status);
    expect_ok(p, run_and_check(p, a, v), v);
    EXPECT_EQ(flash::testing::download(status)[0], 0) << v;
  }
}

// A caller's workspace that shares bytes with one of the call's views (here
// status, an output) is refused with flash::Error naming both, before
// anything is written.
TEST(VarlenForwardErrors, WorkspaceOverlappingAView) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_problem(seed);
  SCOPED_TRACE(describe(p, seed));
  flash::ForwardArgs a = p.args;
  const std::size_t bytes = flash::plan_forward(a).workspace_bytes;
  ASSERT_GT(bytes, 0u);
  DeviceBuffer ws(bytes);
  a.workspace = ws.get();
  a.workspace_bytes = bytes;
  a.status = flash::make_contiguous(static_cast<char*>(ws.get()) + 256, DType::i32, {4});
  flash::testing::poison(p.o_memory);
  flash::testing::poison(p.lse_memory);
  try {
    flash::attention_forward(a);
    ADD_FAILURE() << "no flash::Error";
  } catch (const flash::Error& e) {
    EXPECT_NE(std::string(e.what()).find("workspace overlaps status"), std::string::npos) << e.what();
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_nothing_written(p, "auto");
}

// sync_check waits for the stream, which it cannot while the stream is being
// captured into a CUDA graph: such a call throws flash::Error naming
// sync_check before it enqueues anything, and the capture stays valid; with
// sync_check off the same call captures, and the graph's replay writes O and
// a zero status.
TEST(VarlenForwardErrors, SyncCheckRefusedWhileCapturing) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_problem(seed);
  SCOPED_TRACE(describe(p, seed));
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  flash::ForwardArgs a = p.args;
  a.stream = stream;
  a.status = status;
  a.sync_check = false;
  flash::attention_forward(a);  // warms the workspace of `stream`
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  flash::testing::poison(p.o_memory);

  cudaGraph_t graph = nullptr;
  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  a.sync_check = true;
  try {
    flash::attention_forward(a);
    ADD_FAILURE() << "no flash::Error";
  } catch (const flash::Error& e) {
    EXPECT_NE(std::string(e.what()).find("sync_check"), std::string::npos) << e.what();
  }
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess) << "the refused call invalidated the capture";
  ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);

  ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), cudaSuccess);
  a.sync_check = false;
  flash::attention_forward(a);
  ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  cudaGraphExec_t exec = nullptr;
  ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
  flash::testing::upload({7, 7, 7, 7}, status);
  ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(flash::testing::download(status)[0], 0);
  const auto o = flash::testing::download(p.o_memory);
  EXPECT_LT(count_nan(o), o.size()) << "the replay wrote no O";
  ASSERT_EQ(cudaGraphExecDestroy(exec), cudaSuccess);
  ASSERT_EQ(cudaGraphDestroy(graph), cudaSuccess);
  ASSERT_EQ(cudaStreamDestroy(stream), cudaSuccess);
}

// The asynchronous path on a valid call: results as with sync_check, and
// status[0] == 0 (the status words start at 7: the call writes them).
TEST(VarlenForwardErrors, AsyncStatusIsZeroWhenValid) {
  SKIP_WITHOUT_GPU();
  const VarlenSpec s{.heads_q = 8, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = {0, 1, 17, 300, 5},
                     .k_lens = {kRandom, kRandom, kRandom, kRandom, kRandom}, .seqused = true, .tail_q = 4};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_problem(s, DType::f16, seed);
  SCOPED_TRACE(describe(p, seed));
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  const auto variants = varlen_variants(DType::f16, 64);
  for (const std::string& v : variants) {
    flash::ForwardArgs a = p.args;
    a.sync_check = false;
    a.status = status;
    flash::testing::upload({7, 7, 7, 7}, status);
    expect_ok(p, run_and_check(p, a, v), v);
    EXPECT_EQ(flash::testing::download(status)[0], 0) << v;
  }
  EXPECT_FALSE(variants.empty()) << "no built variant with kFeatureVarlen runs f16 d64";
}

// A variant without kFeatureVarlen refuses a variable-length call with a
// flash::Error naming the feature, and writes nothing; auto passes over it.
TEST(VarlenForwardErrors, VariantsWithoutTheFeatureRefuse) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_problem(seed);
  SCOPED_TRACE(describe(p, seed));
  std::string last_varlen;
  for (const auto& v : flash::forward_variants()) {
    if (!runnable(v, DType::bf16, 64)) continue;
    if (v.features & flash::kFeatureVarlen) {
      last_varlen = v.name;
      continue;
    }
    const VarlenCheck r = run_and_check(p, p.args, v.name);
    EXPECT_NE(r.error.find("variable-length"), std::string::npos) << v.name << ": '" << r.error << "'";
    expect_nothing_written(p, v.name);
  }
  ASSERT_FALSE(last_varlen.empty()) << "no built variant with kFeatureVarlen runs bf16 d64";
  flash::ForwardArgs a = p.args;
  a.kernel = "auto";
  EXPECT_EQ(flash::plan_forward(a).kernel, last_varlen);
  expect_ok(p, run_and_check(p, p.args, "auto"), "auto");
}

// Negative controls: the per-sequence check must fail when the kernel
// computes something other than the reference, or the cases above would
// prove nothing.
TEST(VarlenForwardChecker, FailsWhenTheMaskDiffers) {
  SKIP_WITHOUT_GPU();
  const VarlenSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = {40, 0, 100},
                     .k_lens = {60, 3, 90}};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  flash::ForwardArgs a = p.args;
  a.causal = false;  // the kernel runs without the mask the reference applies
  for (const std::string& v : varlen_variants(DType::bf16, 64)) {
    const VarlenCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.over.size(), 2u) << v << ": both non-empty sequences differ from the causal reference";
  }
}

// The keys past seqused_k are NaN and the reference leaves them out: the
// same call without seqused_k fails.
TEST(VarlenForwardChecker, FailsWithoutSequsedK) {
  SKIP_WITHOUT_GPU();
  const VarlenSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {10, 20, 30, 40},
                     .k_lens = {50, 60, 70, 80}, .seqused = true};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  ASSERT_LT(p.used_k[1], p.k_lens[1]);
  flash::ForwardArgs a = p.args;
  a.seqused_k.reset();
  for (const std::string& v : varlen_variants(DType::bf16, 64)) {
    const VarlenCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_FALSE(r.over.empty()) << v << ": a result that read NaN keys passed";
  }
}

// A call one row short (cu_seqlens_q[batch] - 1) leaves exactly the last
// row of the last sequence unwritten, and the check says so.
TEST(VarlenForwardChecker, FailsWhenARowIsLeftUnwritten) {
  SKIP_WITHOUT_GPU();
  const VarlenSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {10, 0, 33},
                     .k_lens = {12, 5, 40}, .tail_q = 2};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  std::vector<int> short_cu = p.cu_q;
  short_cu.back() -= 1;
  TensorView view;
  DeviceBuffer d_short = device_ints(short_cu, view);
  flash::ForwardArgs a = p.args;
  a.cu_seqlens_q = view;
  for (const std::string& v : varlen_variants(DType::bf16, 64)) {
    const VarlenCheck r = run_and_check(p, a, v);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.unwritten, static_cast<std::size_t>(s.heads_q * s.head_dim + s.heads_q))
        << v << ": one row of O (every head) and its LSE entries";
    EXPECT_EQ(r.stray, 0u) << v;
    ASSERT_EQ(r.over.size(), 1u) << v;
    EXPECT_EQ(r.over[0].seq, 2) << v;
  }
}

// The metadata check's order of the sequences (AttnParams::seq_order, by
// which the Hopper rungs schedule a packed call): within each group of 32,
// longest first (keys, or queries for the backward), ties in the caller's
// order, entry r = {sequence, its query rows}; over a grid of CTAs too (a
// page table of more than 65536 entries), and a permutation of each group
// under bad metadata.
TEST(VarlenOrder, MetadataCheckRanksSequencesLongestFirst) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937_64 rng(seed);
  auto uniform = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (const int batch : {1, 5, 32, 33, 70, 300})
    for (const bool by_queries : {false, true})
      for (const bool paged : {false, true})
        for (const bool bad : {false, true}) {
          SCOPED_TRACE(fmt::format("batch {}, by {}, {}, {}", batch, by_queries ? "queries" : "keys",
                                   paged ? "paged (a grid of checks)" : "packed keys", bad ? "bad metadata" : "valid"));
          std::vector<int> q_lens(batch), k_lens(batch), cu_q{0}, cu_k{0};
          for (int b = 0; b < batch; ++b) {
            q_lens[b] = uniform(0, 40), k_lens[b] = uniform(0, 40);  // ties are frequent
            cu_q.push_back(cu_q.back() + q_lens[b]), cu_k.push_back(cu_k.back() + k_lens[b]);
          }
          if (bad && batch > 1) cu_q[batch / 2] = cu_q[batch / 2 + 1] + 7;  // decreasing: a negative length
          TensorView view;
          DeviceBuffer d_cu_q = device_ints(cu_q, view), d_cu_k = device_ints(cu_k, view), d_used = device_ints(k_lens, view);
          const int max_pages = paged ? 70000 / batch + 1 : 0;  // batch * (max_pages + 1) entries > 65536
          DeviceBuffer d_table = device_ints(std::vector<int>(paged ? static_cast<std::size_t>(batch) * max_pages : 1, 0), view);
          DeviceBuffer d_status(4 * sizeof(int)), d_order(2 * sizeof(int) * batch);
          flash::detail::AttnParams p;
          p.batch = batch;
          p.seqlen_q = *std::max_element(q_lens.begin(), q_lens.end()) + 7;
          p.seqlen_k = paged ? max_pages * 16 : *std::max_element(k_lens.begin(), k_lens.end());
          p.cu_seqlens_q = static_cast<const int*>(d_cu_q.get());
          if (paged) {
            p.seqused_k = static_cast<const int*>(d_used.get());
            p.page_table = static_cast<const int*>(d_table.get());
            p.page_table_stride = max_pages, p.max_pages = max_pages, p.page_size = 16, p.page_shift = 4, p.num_pages = 1;
          } else {
            p.cu_seqlens_k = static_cast<const int*>(d_cu_k.get());
          }
          p.status = static_cast<int*>(d_status.get());
          p.seq_order = static_cast<int*>(d_order.get());
          p.seq_order_by_queries = by_queries;
          ASSERT_EQ(flash::detail::check_varlen_metadata(p, cu_q.back() + 7, cu_k.back(), nullptr), cudaSuccess);
          std::vector<int> order(2 * batch), status(4);
          ASSERT_EQ(cudaMemcpy(order.data(), p.seq_order, order.size() * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(status.data(), p.status, 4 * sizeof(int), cudaMemcpyDeviceToHost), cudaSuccess);
          EXPECT_EQ(status[0] != 0, bad && batch > 1);
          for (int b0 = 0; b0 < batch; b0 += 32) {
            const int n = std::min(32, batch - b0);
            std::vector<int> expected(n);
            for (int j = 0; j < n; ++j) expected[j] = b0 + j;
            const auto len = [&](int b) { return std::max(by_queries ? cu_q[b + 1] - cu_q[b] : k_lens[b], 0); };
            std::stable_sort(expected.begin(), expected.end(), [&](int x, int y) { return len(x) > len(y); });
            for (int j = 0; j < n; ++j) {
              EXPECT_EQ(order[2 * (b0 + j)], expected[j]) << "entry " << b0 + j;
              EXPECT_EQ(order[2 * (b0 + j) + 1], cu_q[expected[j] + 1] - cu_q[expected[j]]) << "entry " << b0 + j;
            }
          }
        }
}

}  // namespace

