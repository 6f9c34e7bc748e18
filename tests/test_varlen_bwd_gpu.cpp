// GPU tests of variable-length backward batches (issue 17; ctest
// gpu_varlen_bwd): every built backward variant with kFeatureVarlen, in both
// modes, over packed batches whose lengths include 0 and 1 and one long
// sequence among short ones, seqlen_q != seqlen_k per sequence, seqused_k,
// GQA/MQA, masks, windows and the score modifiers (dsinks too), packed
// layouts with strides (q, k, v and dq, dk, dv as parts of one qkv buffer,
// FlashAttention's packed-qkv backward; heads-major memory with padding).
// Each sequence is checked against the fp64 reference's backward run on that
// sequence alone (batch 1, its own lengths; O and the LSE from the fp64
// forward of that sequence), by FlashAttention's rule for gradients:
//   max|g - ref| <= 3 * max|g_lowp - ref| + floor(dtype) * max|ref| + 2^-16
// per sequence for dq, dk and dv, and over the whole call for dsinks (a sum
// over the sequences). The gradients' buffers are poisoned (NaN) before each
// call: every element of the rows < cu_seqlens_q[batch] (dq) and <
// cu_seqlens_k[batch] (dk, dv) must be written and nothing else; dk and dv
// must be exactly 0 on a sequence's keys past seqused_k[b]. Inputs no
// sequence reads (keys past seqused_k[b], rows past the last sequence) are
// NaN, so a kernel that lets one into its result fails. Bad metadata must
// throw (sync_check) or set status, and write nothing.
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
constexpr int kMaxRandomQ = 48;  // random query lengths are 0 to this
constexpr std::int64_t kRowPad = 16;      // elements between rows (or heads) in the padded layouts (16-byte aligned)
constexpr std::int64_t kLseHeadPad = 3;   // elements between lse's heads in the heads-major layout
constexpr std::int64_t kBufferTail = 64;  // elements past each gradient view's end, which must stay poisoned

// How the packed tensors lie in memory.
enum class Packing {
  separate,     // every tensor contiguous [total, heads, head_dim]; lse contiguous [heads_q, total_q]
  qkv,          // q, k, v parts of one [total, heads_q + 2 heads_kv, head_dim] buffer, and dq, dk, dv of
                // another (FlashAttention's packed-qkv backward); o and dout rows padded
  heads_major,  // q, k, v and the gradients in [heads, total, head_dim] memory with padding between heads; o and
                // dout rows padded; lse heads padded
};

constexpr const char* packing_name(Packing p) {
  return p == Packing::separate ? "separate" : p == Packing::qkv ? "qkv" : "heads_major";
}

struct VarlenBwdSpec {
  int heads_q = 4, heads_kv = 2, head_dim = 64;
  bool causal = false;
  int window_left = -1, window_right = -1;
  float softcap = 0.0f;
  Alibi alibi = Alibi::none;
  bool sinks = false;         // with dsinks
  double qk_gain = 1.0;       // q and k's standard deviation (as testing::Shape)
  std::vector<int> q_lens;    // queries per sequence; kRandom entries drawn
  std::vector<int> k_lens;    // keys per sequence; kRandom entries drawn; empty with Packing::qkv (the q lengths)
  bool seqused = false;       // seqused_k: the odd sequences with keys attend fewer than they have
  int tail_q = 0, tail_k = 0; // packed rows past cu_seqlens_q[batch] / cu_seqlens_k[batch] (qkv: tail_q both)
  Packing packing = Packing::separate;
  bool loose_max = false;     // max_seqlen_q / max_seqlen_k = the packed rows, not the longest sequence
  bool used_max = false;      // max_seqlen_k = the most keys a sequence attends (below its key rows)
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

std::size_t count_nan(const std::vector<double>& x) {
  return static_cast<std::size_t>(std::count_if(x.begin(), x.end(), [](double e) { return std::isnan(e); }));
}

// One variable-length backward call: random packed inputs on host and
// device, O and the LSE of each sequence from the fp64 forward, the
// metadata, the views, and the fp64 gradients of each sequence.
struct VarlenBwdProblem {
  VarlenBwdSpec spec;
  DType dtype = DType::bf16;
  int batch = 0, total_q = 0, total_k = 0;
  std::vector<int> q_lens, k_lens, used_k;  // used_k: the keys sequence b attends (seqused_k[b], else k_lens[b])
  std::vector<int> cu_q, cu_k;
  std::vector<double> q, k, v, dout;  // host, packed [total, heads, head_dim]
  flash::testing::ScoreInputs scores;
  // Per sequence: dq [1, sq, heads_q, head_dim], dk and dv [1, used_k, heads_kv, head_dim].
  std::vector<flash::reference::Gradients> ref;
  std::vector<double> dsinks, dsinks_lowp;  // summed over the sequences (with sinks)
  DeviceBuffer d_q, d_k, d_v, d_o, d_do, d_lse, d_dq, d_dk, d_dv, d_dsinks, d_cu_q, d_cu_k, d_used;
  std::vector<TensorView> grad_memory;  // flat views of the gradients' whole buffers
  flash::BackwardArgs args;             // every view, flag and modifier; kernel and deterministic left to the caller
};

VarlenBwdProblem make_varlen_bwd_problem(const VarlenBwdSpec& s, DType dtype, std::uint64_t seed) {
  VarlenBwdProblem p;
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
  p.dout = flash::testing::random_values(static_cast<std::size_t>(Tq * Hq * D), dtype, rng);
  p.scores = flash::testing::make_score_inputs(p.batch, s.heads_q, s.softcap, s.alibi, s.sinks,
                                               flash::testing::typical_row_max(s.qk_gain, s.softcap), rng);

  // The reference, one sequence at a time as a dense batch-1 call: its
  // forward gives the O and LSE the call takes, its backward the gradients.
  std::vector<double> o(static_cast<std::size_t>(Tq * Hq * D), kNaN), lse(static_cast<std::size_t>(Hq * Tq), kNaN);
  if (s.sinks) p.dsinks.assign(static_cast<std::size_t>(Hq), 0.0), p.dsinks_lowp.assign(static_cast<std::size_t>(Hq), 0.0);
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
    const auto q_rows = [&](const std::vector<double>& x) {
      return std::vector<double>(x.begin() + p.cu_q[b] * Hq * D, x.begin() + p.cu_q[b + 1] * Hq * D);
    };
    const auto k_rows = [&](const std::vector<double>& x) {
      return std::vector<double>(x.begin() + p.cu_k[b] * Hkv * D, x.begin() + (p.cu_k[b] + p.used_k[b]) * Hkv * D);
    };
    const std::vector<double> qb = q_rows(p.q), kb = k_rows(p.k), vb = k_rows(p.v), dob = q_rows(p.dout);
    const flash::reference::Result fwd = flash::reference::forward(rp, qb, kb, vb);
    std::copy(fwd.o.begin(), fwd.o.end(), o.begin() + p.cu_q[b] * Hq * D);
    for (std::int64_t h = 0; h < Hq; ++h)
      for (int i = 0; i < rp.seqlen_q; ++i) lse[h * Tq + p.cu_q[b] + i] = fwd.lse[h * rp.seqlen_q + i];
    p.ref.push_back(flash::reference::backward(rp, qb, kb, vb, dob, 0, dtype));
    for (std::int64_t h = 0; h < Hq && s.sinks; ++h) {
      p.dsinks[h] += p.ref.back().dsinks[h];
      p.dsinks_lowp[h] += p.ref.back().dsinks_lowp[h];
    }
  }
  // Rows no sequence reads: NaN (after the reference took its slices).
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
  fill_nan(p.dout, Hq * D, p.cu_q.back(), Tq);

  flash::BackwardArgs& a = p.args;
  const std::int64_t es = static_cast<std::int64_t>(flash::dtype_size(dtype));
  auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(std::max<std::int64_t>(n, 1)); };
  const bool heads_major = s.packing == Packing::heads_major;
  // A packed [rows, heads, D] view in its own buffer, `tail` elements longer:
  // contiguous, or heads-major with kRowPad rows of padding between heads.
  auto packed_view = [&](DeviceBuffer& buf, std::int64_t rows, std::int64_t heads, std::int64_t tail) {
    const std::int64_t head_rows = rows + (heads_major ? kRowPad : 0);
    buf = DeviceBuffer(bytes((heads_major ? heads * head_rows * D : rows * heads * D) + tail) * es);
    return heads_major ? flash::make_view(buf.get(), dtype, {rows, heads, D}, {D, head_rows * D, 1})
                       : flash::make_contiguous(buf.get(), dtype, {rows, heads, D});
  };
  auto flat = [&](const DeviceBuffer& buf) {
    return flash::make_contiguous(buf.get(), dtype, {static_cast<std::int64_t>(buf.bytes()) / es});
  };
  if (qkv) {
    // Inputs and gradients as parts of [total, heads_q + 2 heads_kv, head_dim] buffers.
    const std::int64_t W = Hq + 2 * Hkv;
    std::vector<double> packed(static_cast<std::size_t>(Tq * W * D));
    for (std::int64_t r = 0; r < Tq; ++r) {
      std::copy_n(p.q.begin() + r * Hq * D, Hq * D, packed.begin() + r * W * D);
      std::copy_n(p.k.begin() + r * Hkv * D, Hkv * D, packed.begin() + (r * W + Hq) * D);
      std::copy_n(p.v.begin() + r * Hkv * D, Hkv * D, packed.begin() + (r * W + Hq + Hkv) * D);
    }
    p.d_q = DeviceBuffer(bytes(Tq * W * D * es));
    flash::testing::upload(packed, flash::make_contiguous(p.d_q.get(), dtype, {Tq, W, D}));
    char* in = static_cast<char*>(p.d_q.get());
    a.q = flash::make_view(in, dtype, {Tq, Hq, D}, {W * D, D, 1});
    a.k = flash::make_view(in + Hq * D * es, dtype, {Tk, Hkv, D}, {W * D, D, 1});
    a.v = flash::make_view(in + (Hq + Hkv) * D * es, dtype, {Tk, Hkv, D}, {W * D, D, 1});
    p.d_dq = DeviceBuffer(bytes(Tq * W * D + kBufferTail) * es);
    char* out = static_cast<char*>(p.d_dq.get());
    a.dq = flash::make_view(out, dtype, {Tq, Hq, D}, {W * D, D, 1});
    a.dk = flash::make_view(out + Hq * D * es, dtype, {Tk, Hkv, D}, {W * D, D, 1});
    a.dv = flash::make_view(out + (Hq + Hkv) * D * es, dtype, {Tk, Hkv, D}, {W * D, D, 1});
    p.grad_memory = {flat(p.d_dq)};
  } else {
    a.q = packed_view(p.d_q, Tq, Hq, 0);
    a.k = packed_view(p.d_k, Tk, Hkv, 0);
    a.v = packed_view(p.d_v, Tk, Hkv, 0);
    flash::testing::upload(p.q, a.q);
    flash::testing::upload(p.k, a.k);
    flash::testing::upload(p.v, a.v);
    a.dq = packed_view(p.d_dq, Tq, Hq, kBufferTail);
    a.dk = packed_view(p.d_dk, Tk, Hkv, kBufferTail);
    a.dv = packed_view(p.d_dv, Tk, Hkv, kBufferTail);
    p.grad_memory = {flat(p.d_dq), flat(p.d_dk), flat(p.d_dv)};
  }
  // O and dO: rows padded except in the separate layout.
  const std::int64_t o_row = Hq * D + (s.packing == Packing::separate ? 0 : kRowPad);
  for (auto [buf, view] : {std::pair{&p.d_o, &a.o}, std::pair{&p.d_do, &a.dout}}) {
    *buf = DeviceBuffer(bytes(Tq * o_row * es));
    *view = flash::make_view(buf->get(), dtype, {Tq, Hq, D}, {o_row, D, 1});
  }
  flash::testing::upload(o, a.o);  // rounded to the dtype by the upload, as a kernel's O would be
  flash::testing::upload(p.dout, a.dout);
  const std::int64_t lse_head = Tq + (heads_major ? kLseHeadPad : 0);
  p.d_lse = DeviceBuffer(bytes(Hq * lse_head * 4));
  a.lse = flash::make_view(p.d_lse.get(), DType::f32, {Hq, Tq}, {lse_head, 1});
  flash::testing::upload(lse, a.lse);  // -inf stays -inf
  if (s.sinks) {
    p.d_dsinks = DeviceBuffer(static_cast<std::size_t>(Hq) * sizeof(float));
    a.dsinks = flash::make_contiguous(p.d_dsinks.get(), DType::f32, {Hq});
  }
  // Metadata.
  TensorView view;
  p.d_cu_q = device_ints(p.cu_q, view);
  a.cu_seqlens_q = view;
  p.d_cu_k = device_ints(p.cu_k, view);
  a.cu_seqlens_k = view;
  if (s.seqused) {
    p.d_used = device_ints(p.used_k, view);
    a.seqused_k = view;
  }
  auto longest = [&](const std::vector<int>& lens) { return p.batch ? *std::max_element(lens.begin(), lens.end()) : 0; };
  a.max_seqlen_q = s.loose_max ? p.total_q : longest(p.q_lens);
  a.max_seqlen_k = s.loose_max ? p.total_k : longest(s.used_max ? p.used_k : p.k_lens);
  a.causal = s.causal;
  a.window_left = s.window_left;
  a.window_right = s.window_right;
  p.scores.apply(a);
  return p;
}

// The SCOPED_TRACE line of a problem: seed, lengths, sizes, mask and modifiers.
std::string describe(const VarlenBwdProblem& p, std::uint64_t seed) {
  const VarlenBwdSpec& s = p.spec;
  return fmt::format(
      "seed {} {} d{} hq{} hkv{}{} window ({}, {}) softcap {} slopes [{}] sinks [{}] {} layout; q lens [{}] k lens "
      "[{}] keys attended [{}]{}; total_q {} total_k {} max_seqlen ({}, {})",
      seed, flash::dtype_name(p.dtype), s.head_dim, s.heads_q, s.heads_kv, s.causal ? " causal" : "", s.window_left,
      s.window_right, s.softcap, fmt::join(p.scores.alibi, ","), fmt::join(p.scores.sinks, ","),
      packing_name(s.packing), fmt::join(p.q_lens, ","), fmt::join(p.k_lens, ","), fmt::join(p.used_k, ","),
      s.seqused ? " (seqused_k)" : "", p.total_q, p.total_k, p.args.max_seqlen_q, p.args.max_seqlen_k);
}

struct SeqError {
  int seq;  // -1: dsinks (the whole call)
  const char* what;
  double err, bound;
};

struct VarlenBwdCheck {
  std::string error;               // a flash::Error or CUDA failure, if any
  std::size_t unwritten = 0;       // gradient elements of the sequences' rows (and dsinks) still NaN
  std::size_t stray = 0;           // gradient buffer elements outside those rows no longer NaN
  std::size_t unused_nonzero = 0;  // dk, dv elements past seqused_k[b] in sequence b's rows that are not 0
  std::vector<SeqError> over;      // gradients whose error is over their bound
  bool ok() const { return error.empty() && unwritten == 0 && stray == 0 && unused_nonzero == 0 && over.empty(); }
};

// max|got - ref| over the elements [got0, got0 + n) and [0, n) of ref, and
// its bound (FlashAttention's rule, as run_and_check_backward): NaN counts
// as an infinite error.
SeqError grad_error(int seq, const char* what, const std::vector<double>& got, std::size_t got0,
                    const std::vector<double>& ref, const std::vector<double>& lowp, DType dtype) {
  double err = 0, lowp_err = 0, max_ref = 0;
  for (std::size_t i = 0; i < ref.size(); ++i) {
    const double e = std::fabs(got[got0 + i] - ref[i]);
    err = std::isnan(e) ? kInf : std::max(err, e);
    lowp_err = std::max(lowp_err, std::fabs(lowp[i] - ref[i]));
    max_ref = std::max(max_ref, std::fabs(ref[i]));
  }
  const double bound = flash::testing::gradient_bound(lowp_err, max_ref, dtype);
  return {seq, what, err, bound};
}

// Poisons the gradients' buffers (and dsinks), runs `args` with `kernel`,
// and checks every sequence against its reference and every element.
VarlenBwdCheck run_and_check(VarlenBwdProblem& p, flash::BackwardArgs args, const std::string& kernel,
                             bool deterministic) {
  VarlenBwdCheck r;
  for (const TensorView& m : p.grad_memory) flash::testing::poison(m);
  if (args.dsinks) flash::testing::poison(*args.dsinks);
  args.kernel = kernel;
  args.deterministic = deterministic;
  try {
    flash::attention_backward(args);
    flash::testing::check(cudaDeviceSynchronize(), "kernel execution");
  } catch (const flash::Error& e) {
    r.error = e.what();
  }
  const std::int64_t Hq = p.spec.heads_q, Hkv = p.spec.heads_kv, D = p.spec.head_dim;
  const std::vector<double> dq = flash::testing::download(p.args.dq), dk = flash::testing::download(p.args.dk),
                            dv = flash::testing::download(p.args.dv);
  // Every element of the sequences' rows written; dk, dv zero past seqused_k.
  const std::int64_t q_elems = p.cu_q.back() * Hq * D, k_elems = p.cu_k.back() * Hkv * D;
  std::size_t in_rows_unwritten = 0;
  for (std::int64_t i = 0; i < q_elems; ++i) in_rows_unwritten += std::isnan(dq[i]);
  for (std::int64_t i = 0; i < k_elems; ++i) in_rows_unwritten += std::isnan(dk[i]) + std::isnan(dv[i]);
  r.unwritten = in_rows_unwritten;
  for (int b = 0; b < p.batch; ++b)
    for (std::int64_t i = (p.cu_k[b] + p.used_k[b]) * Hkv * D; i < p.cu_k[b + 1] * Hkv * D; ++i)
      r.unused_nonzero += (!std::isnan(dk[i]) && dk[i] != 0) + (!std::isnan(dv[i]) && dv[i] != 0);
  // The views' elements are distinct elements of the buffers: any other
  // element that is not NaN was written outside the sequences' rows.
  std::size_t written = 0;
  for (const TensorView& m : p.grad_memory) {
    const std::vector<double> all = flash::testing::download(m);
    written += all.size() - count_nan(all);
  }
  r.stray = written - (static_cast<std::size_t>(q_elems + 2 * k_elems) - in_rows_unwritten);

  for (int b = 0; b < p.batch; ++b) {
    const flash::reference::Gradients& g = p.ref[b];
    const SeqError errs[] = {
        grad_error(b, "dq", dq, static_cast<std::size_t>(p.cu_q[b] * Hq * D), g.dq, g.dq_lowp, p.dtype),
        grad_error(b, "dk", dk, static_cast<std::size_t>(p.cu_k[b] * Hkv * D), g.dk, g.dk_lowp, p.dtype),
        grad_error(b, "dv", dv, static_cast<std::size_t>(p.cu_k[b] * Hkv * D), g.dv, g.dv_lowp, p.dtype)};
    for (const SeqError& e : errs)
      if (!(e.err <= e.bound)) r.over.push_back(e);
  }
  if (args.dsinks) {
    const std::vector<double> got = flash::testing::download(*args.dsinks);
    r.unwritten += count_nan(got);
    const SeqError e = grad_error(-1, "dsinks", got, 0, p.dsinks, p.dsinks_lowp, p.dtype);
    if (!(e.err <= e.bound)) r.over.push_back(e);
  }
  return r;
}

void expect_ok(const VarlenBwdProblem& p, const VarlenBwdCheck& r, const std::string& variant) {
  EXPECT_TRUE(r.error.empty()) << variant << ": " << r.error;
  EXPECT_EQ(r.unwritten, 0u) << variant << ": gradient elements of the sequences' rows (or dsinks) left unwritten";
  EXPECT_EQ(r.stray, 0u) << variant
                         << ": gradient elements written outside the sequences' rows (rows past cu_seqlens[batch], "
                            "the layouts' padding, the buffers' tails)";
  EXPECT_EQ(r.unused_nonzero, 0u) << variant << ": dk/dv not zero on keys past seqused_k";
  for (const SeqError& s : r.over) {
    if (s.seq < 0) {
      ADD_FAILURE() << variant << ": dsinks error " << s.err << " (bound " << s.bound << ")";
    } else {
      ADD_FAILURE() << variant << ": sequence " << s.seq << " (sq " << p.q_lens[s.seq] << ", sk " << p.used_k[s.seq]
                    << "): " << s.what << " error " << s.err << " (bound " << s.bound << ")";
    }
  }
}

// Every built backward variant with kFeatureVarlen that runs (dtype, head_dim) here.
std::vector<std::string> varlen_bwd_variants(DType dtype, int head_dim) {
  std::vector<std::string> names;
  for (const auto& v : flash::backward_variants())
    if ((v.features & flash::kFeatureVarlen) && runnable(v, dtype, head_dim)) names.push_back(v.name);
  return names;
}

// The modes variant `name` takes: deterministic = true only with
// kFeatureDeterministic (wgmma_wide has none).
std::vector<bool> bwd_modes(const std::string& name) {
  for (const auto& v : flash::backward_variants())
    if (v.name == name && (v.features & flash::kFeatureDeterministic)) return {false, true};
  return {false};
}

// Runs every variant in each of its modes and expects each to pass.
void check_all_variants(VarlenBwdProblem& p) {
  const auto variants = varlen_bwd_variants(p.dtype, p.spec.head_dim);
  for (const std::string& v : variants)
    for (bool deterministic : bwd_modes(v))
      expect_ok(p, run_and_check(p, p.args, v, deterministic), v + (deterministic ? " deterministic" : ""));
  EXPECT_FALSE(variants.empty()) << "no built backward variant with kFeatureVarlen runs this case";
}

struct VarlenBwdCase {
  const char* name;
  VarlenBwdSpec spec;
};

const std::vector<VarlenBwdCase>& varlen_bwd_cases() {
  const std::vector<int> mixed = {0, 1, 17, 300, 5, 1023};  // one long sequence among short ones, 0 and 1 too
  const int R = kRandom;
  const auto spread = flash::gpu_test::spread_lengths;
  static const std::vector<VarlenBwdCase> cases = {
      {"mixed_full_gqa4_d64",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .q_lens = mixed, .k_lens = {R, R, 0, R, R, R}, .tail_q = 37,
        .tail_k = 11}},
      {"mixed_causal_mqa_d128_seqused",
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .causal = true, .q_lens = mixed, .k_lens = {R, R, R, R, R, R},
        .seqused = true, .tail_k = 5}},
      {"causal_l127_gqa2_d64",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .window_left = 127,
        .q_lens = {1023, 0, 257, 64, 1}, .k_lens = {R, R, R, R, R}, .tail_q = 3}},
      {"l64_r32_mha_d128_seqused",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 128, .window_left = 64, .window_right = 32,
        .q_lens = {113, 1, 0, 700, 40}, .k_lens = {R, R, R, R, R}, .seqused = true}},
      {"cap30_alibi_batch_sinks_causal_gqa4_d64_seqused",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .causal = true, .softcap = 30.0f, .alibi = Alibi::per_batch,
        .sinks = true, .qk_gain = 4.0, .q_lens = mixed, .k_lens = {R, R, 0, R, R, R}, .seqused = true, .tail_q = 8}},
      {"cap15_full_gqa2_d128",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .softcap = 15.0f, .qk_gain = 8.0, .q_lens = {200, 1, 0, 65},
        .k_lens = {R, R, R, R}}},
      {"alibi_head_sinks_full_mqa_d128",
       {.heads_q = 4, .heads_kv = 1, .head_dim = 128, .alibi = Alibi::per_head, .sinks = true,
        .q_lens = {64, 1, 200, 0}, .k_lens = {R, R, R, R}}},
      {"causal_mha_d256",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 256, .causal = true, .q_lens = {3, 0, 130, 77, 1},
        .k_lens = {R, R, R, R, R}}},
      {"sinks_l64_r32_gqa2_d256_seqused",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 256, .window_left = 64, .window_right = 32, .sinks = true,
        .q_lens = {90, 0, 1, 200}, .k_lens = {R, R, R, R}, .seqused = true, .tail_k = 7}},
      {"qkv_packed_causal_gqa2_d128_seqused",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .causal = true, .q_lens = {5, 1, 0, 400, 64, 129},
        .seqused = true, .tail_q = 9, .packing = Packing::qkv}},
      {"heads_major_full_mqa_d64_loose_max",
       {.heads_q = 6, .heads_kv = 1, .head_dim = 64, .q_lens = {200, 0, 1, 31}, .k_lens = {R, R, R, R}, .tail_q = 5,
        .tail_k = 3, .packing = Packing::heads_major, .loose_max = true}},
      {"seqused_below_max_causal_gqa4_d64",  // max_seqlen_k bounds the attended keys, not the sequences' key rows
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = {40, 300, 7, 129},
        .k_lens = {50, 900, 9, 700}, .seqused = true, .used_max = true}},
      {"many_short_causal_gqa4_d64_seqused",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = std::vector<int>(48, R),
        .k_lens = std::vector<int>(48, R), .seqused = true, .tail_q = 1}},
      {"many_spread_full_gqa2_d128_seqused",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .q_lens = spread(70, 37), .k_lens = spread(70, 23),
        .seqused = true}},
      {"over_order_cap_causal_mqa_d64",  // more sequences than the metadata check ranks: the caller's order
       {.heads_q = 2, .heads_kv = 1, .head_dim = 64, .causal = true, .q_lens = std::vector<int>(4100, R),
        .k_lens = std::vector<int>(4100, R)}},
      {"many_spread_causal_mha_d256",
       {.heads_q = 2, .heads_kv = 2, .head_dim = 256, .causal = true, .q_lens = spread(36, 37),
        .k_lens = spread(36, 37)}},
      // Tile edges of the Hopper rung (bwd_03: 128-row steps at d64, 64 or 80 at d128, 128-key blocks, 64-row dQ
      // tiles and deterministic counters): lengths at, one below and one above the multiples, next to 0 and 1.
      {"tile_edges_causal_l100_gqa2_d64_seqused",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .window_left = 100,
        .q_lens = {1, 0, 127, 128, 129, 255, 64, 65}, .k_lens = {R, 1, 128, 127, 129, 300, 0, 257}, .seqused = true,
        .tail_q = 3, .tail_k = 2}},
      // bwd_03's 80-row steps at d128 (full and causal calls without score modifiers, session 30): a
      // sequence's last step and 80-row dQ tile end up to 79 rows past it (250: 320 rows against 256
      // padded), so each sequence's rows are padded by 256 in the row arrays (bwd_ws_seq_pad).
      {"tile_edges_80_full_gqa2_d128_seqused",
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .q_lens = {79, 80, 81, 1, 0, 159, 160, 161, 250, 700},
        .k_lens = {R, R, R, R, R, R, R, R, R, R}, .seqused = true, .tail_q = 5, .tail_k = 3}},
      {"tile_edges_l70_r9_gqa4_d128_seqused",
       {.heads_q = 8, .heads_kv = 2, .head_dim = 128, .window_left = 70, .window_right = 9,
        .q_lens = {63, 1, 0, 129, 64, 200, 257}, .k_lens = {130, 1, 5, 127, 64, 0, 300}, .seqused = true,
        .tail_k = 9}},
      {"no_queries_d64",  // every sequence without queries: dk = dv = 0 on every key row, dq not written
       {.heads_q = 4, .heads_kv = 2, .head_dim = 64, .sinks = true, .q_lens = {0, 0, 0}, .k_lens = {5, 0, 130},
        .tail_q = 16}},
      {"no_keys_sinks_d128",  // every sequence without keys (max_seqlen_k 0): dq = 0, dsinks = 0
       {.heads_q = 4, .heads_kv = 2, .head_dim = 128, .sinks = true, .q_lens = {5, 0, 140}, .k_lens = {0, 0, 0},
        .tail_k = 4}},
  };
  return cases;
}

int num_cases() { return static_cast<int>(varlen_bwd_cases().size()); }

using VarlenBwdParam = std::tuple<int, DType>;  // case, dtype

class VarlenBwd : public ::testing::TestWithParam<VarlenBwdParam> {};

TEST_P(VarlenBwd, MatchesReferencePerSequence) {
  SKIP_WITHOUT_GPU();
  const auto [case_idx, dtype] = GetParam();
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_bwd_problem(varlen_bwd_cases()[case_idx].spec, dtype, seed);
  SCOPED_TRACE(describe(p, seed));
  check_all_variants(p);
}

std::string varlen_bwd_name(const ::testing::TestParamInfo<VarlenBwdParam>& info) {
  const auto [case_idx, dtype] = info.param;
  return fmt::format("{}_{}", flash::dtype_name(dtype), varlen_bwd_cases()[case_idx].name);
}

INSTANTIATE_TEST_SUITE_P(Cases, VarlenBwd,
                         ::testing::Combine(::testing::Range(0, num_cases()), ::testing::Values(DType::bf16, DType::f16)),
                         varlen_bwd_name);

// A small problem for the error tests: q lengths {3, 0, 20, 7}, k lengths
// {5, 2, 30, 0}, rows past both ends, sinks (so dsinks must stay unwritten too).
VarlenBwdProblem small_problem(std::uint64_t seed) {
  const VarlenBwdSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .sinks = true,
                        .q_lens = {3, 0, 20, 7}, .k_lens = {5, 2, 30, 0}, .tail_q = 6, .tail_k = 4};
  return make_varlen_bwd_problem(s, DType::bf16, seed);
}

// Every element of the gradients' buffers and of dsinks still NaN.
void expect_nothing_written(const VarlenBwdProblem& p, const std::string& variant) {
  for (const TensorView& m : p.grad_memory) {
    const auto all = flash::testing::download(m);
    EXPECT_EQ(count_nan(all), all.size()) << variant << ": a gradient was written";
  }
  if (p.args.dsinks) {
    const auto ds = flash::testing::download(*p.args.dsinks);
    EXPECT_EQ(count_nan(ds), ds.size()) << variant << ": dsinks was written";
  }
}

// Bad metadata (values only the device sees): with sync_check the call
// throws flash::Error naming the array, with or without a status tensor;
// with sync_check off it returns and reports through status[0] != 0. Either
// way nothing is written, in either mode.
TEST(VarlenBwdErrors, BadMetadataWritesNothing) {
  SKIP_WITHOUT_GPU();
  struct Bad {
    const char* what;
    const char* names;                     // the array the message names
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
      // Lengths that wrap in 32 bits (as VarlenForwardErrors's case).
      {"cu_seqlens_k decreasing by more than INT_MAX", "cu_seqlens_k", {}, {0, 5, 2147483647, -2, -2}, {5, 2, 3, 0}, 0, 0},
  };
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  const auto variants = varlen_bwd_variants(DType::bf16, 64);
  ASSERT_FALSE(variants.empty()) << "no built backward variant with kFeatureVarlen runs bf16 d64";
  for (const Bad& c : cases) {
    SCOPED_TRACE(c.what);
    flash::BackwardArgs a = p.args;
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
      for (bool deterministic : {false, true}) {
        for (int mode = 0; mode < 3; ++mode) {  // sync_check alone, sync_check and status, status alone
          SCOPED_TRACE(fmt::format("{}{}: {}", v, deterministic ? " deterministic" : "",
                                   mode == 0 ? "sync_check" : mode == 1 ? "sync_check + status" : "status"));
          for (const TensorView& m : p.grad_memory) flash::testing::poison(m);
          flash::testing::poison(*a.dsinks);
          flash::testing::upload({0, 0, 0, 0}, status);
          a.kernel = v;
          a.deterministic = deterministic;
          a.sync_check = mode < 2;
          a.status.reset();
          if (mode > 0) a.status = status;
          if (a.sync_check) {
            try {
              flash::attention_backward(a);
              ADD_FAILURE() << "no flash::Error";
            } catch (const flash::Error& e) {
              EXPECT_NE(std::string(e.what()).find(c.names), std::string::npos) << e.what();
            }
          } else {
            EXPECT_NO_THROW(flash::attention_backward(a));
          }
          ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
          if (mode > 0) EXPECT_NE(flash::testing::download(status)[0], 0) << "status[0] reports the bad metadata";
          expect_nothing_written(p, v);
        }
      }
    }
  }
  // The problem's own metadata again: the call is valid and status[0] is 0.
  flash::testing::upload(as_doubles(p.cu_q), *p.args.cu_seqlens_q);
  flash::testing::upload(as_doubles(p.cu_k), *p.args.cu_seqlens_k);
  for (const std::string& v : variants) {
    flash::BackwardArgs a = p.args;
    a.sync_check = false;
    a.status = status;
    flash::testing::upload({7, 7, 7, 7}, status);
    expect_ok(p, run_and_check(p, a, v, false), v);
    EXPECT_EQ(flash::testing::download(status)[0], 0) << v;
  }
}

// The asynchronous path on a valid call: results as with sync_check, and
// status[0] == 0 (the status words start at 7: the call writes them).
TEST(VarlenBwdErrors, AsyncStatusIsZeroWhenValid) {
  SKIP_WITHOUT_GPU();
  const VarlenBwdSpec s{.heads_q = 8, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = {0, 1, 17, 300, 5},
                        .k_lens = {kRandom, kRandom, kRandom, kRandom, kRandom}, .seqused = true, .tail_q = 4};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_bwd_problem(s, DType::f16, seed);
  SCOPED_TRACE(describe(p, seed));
  DeviceBuffer d_status(4 * sizeof(std::int32_t));
  const TensorView status = flash::make_contiguous(d_status.get(), DType::i32, {4});
  const auto variants = varlen_bwd_variants(DType::f16, 64);
  for (const std::string& v : variants)
    for (bool deterministic : {false, true}) {
      flash::BackwardArgs a = p.args;
      a.sync_check = false;
      a.status = status;
      flash::testing::upload({7, 7, 7, 7}, status);
      expect_ok(p, run_and_check(p, a, v, deterministic), v);
      EXPECT_EQ(flash::testing::download(status)[0], 0) << v;
    }
  EXPECT_FALSE(variants.empty()) << "no built backward variant with kFeatureVarlen runs f16 d64";
}

// One packed query row and one key row: the stride of a dimension of
// extent 1 is the view's to choose, so odd ones (3 elements, 6 bytes, which
// no TMA map takes as a stride) on every packed row dimension run and match.
TEST(VarlenBwdEdges, OneRowAnyRowStride) {
  SKIP_WITHOUT_GPU();
  const VarlenBwdSpec s{.heads_q = 2, .heads_kv = 1, .head_dim = 64, .q_lens = {1}, .k_lens = {1}};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_bwd_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  ASSERT_EQ(p.args.q.shape[0], 1);
  ASSERT_EQ(p.args.k.shape[0], 1);
  flash::BackwardArgs a = p.args;
  for (TensorView* t : {&a.q, &a.k, &a.v, &a.o, &a.dout, &a.dq, &a.dk, &a.dv}) t->stride[0] = 3;
  const auto variants = varlen_bwd_variants(DType::bf16, 64);
  for (const std::string& v : variants)
    for (bool deterministic : {false, true}) expect_ok(p, run_and_check(p, a, v, deterministic), v);
  EXPECT_FALSE(variants.empty());
}

// auto takes the last built variant with kFeatureVarlen; a caller's
// workspace sized by plan_backward (which holds the status words), full of
// NaNs, serves the call, and one byte less is refused before anything is
// written.
TEST(VarlenBwdEdges, AutoAndCallerWorkspace) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  auto p = small_problem(seed);
  SCOPED_TRACE(describe(p, seed));
  const auto variants = varlen_bwd_variants(DType::bf16, 64);
  ASSERT_FALSE(variants.empty());
  flash::BackwardArgs a = p.args;
  a.kernel = "auto";
  EXPECT_EQ(flash::plan_backward(a).kernel, variants.back());
  for (const std::string& v : variants)
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(fmt::format("{}{}", v, deterministic ? " deterministic" : ""));
      a = p.args;
      a.kernel = v;
      a.deterministic = deterministic;
      const auto plan = flash::plan_backward(a);
      ASSERT_GT(plan.workspace_bytes, 0u);
      DeviceBuffer ws(plan.workspace_bytes);
      // NaNs: deterministic calls zero only the dQ accumulator tiles whose rows see no key
      // (the last sequence's, 7 rows and the padding of its tile, whose floats are in fragment
      // order: zeroing its 7 rows alone failed here), and a row the kernels left unwritten
      // would read NaN
      ASSERT_EQ(cudaMemset(ws.get(), 0xFF, plan.workspace_bytes), cudaSuccess);
      a.workspace = ws.get();
      a.workspace_bytes = plan.workspace_bytes;
      expect_ok(p, run_and_check(p, a, v, deterministic), v);
      a.workspace_bytes = plan.workspace_bytes - 1;
      const VarlenBwdCheck small = run_and_check(p, a, v, deterministic);
      EXPECT_NE(small.error.find("workspace_bytes"), std::string::npos) << small.error;
      expect_nothing_written(p, v);
    }
}

// The same NaN-filled caller workspace at every built head dim (each variant's
// own row padding: bwd_03's 80-row steps at hdim 128 reach 79 rows past a
// sequence), causal and not, with lengths that end inside a tile and past
// one: the preprocess zeroes every accumulator row a step adds to (since
// session 67 for variable-length calls too; a memset did before), so a row
// it missed reads NaN into dQ.
TEST(VarlenBwdEdges, NanWorkspaceAtEveryHeadDim) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = test_seed();
  int ran = 0;
  for (int head_dim : {64, 128, 256})
    for (bool causal : {false, true}) {
      const VarlenBwdSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = head_dim, .causal = causal,
                            .q_lens = {81, 0, 200, 129, 7}, .k_lens = {90, 3, 200, 160, 7}};
      auto p = make_varlen_bwd_problem(s, DType::bf16, seed);
      SCOPED_TRACE(describe(p, seed));
      for (const std::string& v : varlen_bwd_variants(DType::bf16, head_dim))
        for (bool deterministic : bwd_modes(v)) {
          SCOPED_TRACE(fmt::format("{}{}", v, deterministic ? " deterministic" : ""));
          flash::BackwardArgs a = p.args;
          a.kernel = v;
          a.deterministic = deterministic;
          const auto plan = flash::plan_backward(a);
          DeviceBuffer ws(plan.workspace_bytes);
          ASSERT_EQ(cudaMemset(ws.get(), 0xFF, plan.workspace_bytes), cudaSuccess);
          a.workspace = ws.get();
          a.workspace_bytes = plan.workspace_bytes;
          expect_ok(p, run_and_check(p, a, v, deterministic), v);
          ++ran;
        }
    }
  EXPECT_GT(ran, 0) << "no built backward variant with kFeatureVarlen";
}

// deterministic = true: bit-identical gradients (and dsinks) from run to run.
TEST(VarlenBwdEdges, DeterministicRunsAreBitIdentical) {
  SKIP_WITHOUT_GPU();
  const VarlenBwdSpec s{.heads_q = 8, .heads_kv = 2, .head_dim = 128, .sinks = true,
                        .q_lens = {700, 3, 1023, 0, 260}, .k_lens = {900, 40, 1023, 17, 300}};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_bwd_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  for (const std::string& v : varlen_bwd_variants(DType::bf16, 128)) {
    flash::BackwardArgs a = p.args;
    a.kernel = v;
    a.deterministic = true;
    std::vector<std::vector<double>> first;
    int differing_runs = 0;
    for (int run = 0; run < 10; ++run) {
      for (const TensorView& m : p.grad_memory) flash::testing::poison(m);
      flash::testing::poison(*a.dsinks);
      flash::attention_backward(a);
      std::vector<std::vector<double>> got;
      for (const TensorView& m : p.grad_memory) got.push_back(flash::testing::download(m));
      got.push_back(flash::testing::download(*a.dsinks));
      if (run == 0) {
        first = got;
        continue;
      }
      bool same = true;
      for (std::size_t t = 0; t < got.size(); ++t)  // NaN == NaN bit for bit: memcmp
        same = same && std::memcmp(got[t].data(), first[t].data(), got[t].size() * sizeof(double)) == 0;
      differing_runs += !same;
    }
    EXPECT_EQ(differing_runs, 0) << v << ": deterministic runs differ from the first";
    expect_ok(p, run_and_check(p, p.args, v, true), v);
  }
}

// Negative controls: the per-sequence check must fail when the kernel
// computes something other than the reference, or the cases above would
// prove nothing.
TEST(VarlenBwdChecker, FailsWhenTheMaskDiffers) {
  SKIP_WITHOUT_GPU();
  const VarlenBwdSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .causal = true, .q_lens = {40, 0, 100},
                        .k_lens = {60, 3, 90}};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_bwd_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  flash::BackwardArgs a = p.args;
  a.causal = false;  // the kernel runs without the mask the reference applies
  for (const std::string& v : varlen_bwd_variants(DType::bf16, 64)) {
    const VarlenBwdCheck r = run_and_check(p, a, v, false);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    std::vector<int> seqs;
    for (const SeqError& e : r.over) seqs.push_back(e.seq);
    EXPECT_TRUE(std::count(seqs.begin(), seqs.end(), 0) && std::count(seqs.begin(), seqs.end(), 2))
        << v << ": both non-empty sequences differ from the causal reference (over: " << fmt::format("[{}]", fmt::join(seqs, ","))
        << ")";
  }
}

// The keys past seqused_k are NaN and the reference leaves them out: the
// same call without seqused_k fails.
TEST(VarlenBwdChecker, FailsWithoutSequsedK) {
  SKIP_WITHOUT_GPU();
  const VarlenBwdSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {10, 20, 30, 40},
                        .k_lens = {50, 60, 70, 80}, .seqused = true};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_bwd_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  ASSERT_LT(p.used_k[1], p.k_lens[1]);
  flash::BackwardArgs a = p.args;
  a.seqused_k.reset();
  for (const std::string& v : varlen_bwd_variants(DType::bf16, 64)) {
    const VarlenBwdCheck r = run_and_check(p, a, v, false);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_FALSE(r.over.empty()) << v << ": a result that read NaN keys passed";
  }
}

// A call one row short (cu_seqlens_q[batch] - 1) leaves exactly the last dq
// row of the last sequence unwritten, and that sequence's gradients differ.
TEST(VarlenBwdChecker, FailsWhenARowIsLeftUnwritten) {
  SKIP_WITHOUT_GPU();
  const VarlenBwdSpec s{.heads_q = 4, .heads_kv = 2, .head_dim = 64, .q_lens = {10, 0, 33}, .k_lens = {12, 5, 40},
                        .tail_q = 2};
  const std::uint64_t seed = test_seed();
  auto p = make_varlen_bwd_problem(s, DType::bf16, seed);
  SCOPED_TRACE(describe(p, seed));
  std::vector<int> short_cu = p.cu_q;
  short_cu.back() -= 1;
  TensorView view;
  DeviceBuffer d_short = device_ints(short_cu, view);
  flash::BackwardArgs a = p.args;
  a.cu_seqlens_q = view;
  for (const std::string& v : varlen_bwd_variants(DType::bf16, 64)) {
    const VarlenBwdCheck r = run_and_check(p, a, v, false);
    EXPECT_TRUE(r.error.empty()) << v << ": " << r.error;
    EXPECT_EQ(r.unwritten, static_cast<std::size_t>(s.heads_q * s.head_dim)) << v << ": one dq row (every head)";
    EXPECT_EQ(r.stray, 0u) << v;
    ASSERT_FALSE(r.over.empty()) << v;
    for (const SeqError& e : r.over) EXPECT_EQ(e.seq, 2) << v << ": " << e.what;
  }
}

}  // namespace
