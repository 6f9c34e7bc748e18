// Host-side helpers shared by the tests, the runner and the bench (not part
// of the installed library): device buffers, random inputs, strided upload,
// and the FlashAttention-style correctness check against the fp64 reference.
#pragma once

#include <cmath>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flash/flash.h"
#include "flash/reference.h"

namespace flash::testing {

// True when a CUDA device is usable; otherwise *why says what is missing.
bool gpu_available(std::string* why);

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Throws flash::Error when err is not cudaSuccess (err is a cudaError_t).
void check(int err, const char* what);

// kv_expanded: k and v expanded over the batch (batch stride 0, as torch's
// expand of one sequence's keys gives; every batch sees batch 0's values),
// q, o and every gradient BSHD.
enum class Layout { bshd, bhsd, kv_expanded };

// Shape [batch, seqlen, heads, head_dim] in the given memory layout.
struct ViewSpec {
  std::int64_t batch, seqlen, heads, head_dim;
  Layout layout = Layout::bshd;
  TensorView view(void* data, DType dtype) const;
  std::size_t elements() const { return static_cast<std::size_t>(batch * seqlen * heads * head_dim); }
};

// Normal values (mean `mean`, standard deviation `stddev`) rounded to dtype
// (so they are exact in it).
std::vector<double> random_values(std::size_t n, DType dtype, std::mt19937_64& rng, double stddev = 1.0,
                                  double mean = 0.0);

// n normal values (mean, stddev) rounded to dtype, as dtype's bytes: value i
// depends only on seed and i (a counter-based generator: splitmix64 and the
// Box-Muller transform), not on how many threads make them (`threads`, 0:
// every core). For the bench's inputs: upload(random_values()) took 1.2 s
// per 3.4e7 values on one core (seconds of device time per bench process,
// 2026-11-27); this, 0.48 s on two cores.
std::vector<unsigned char> random_bytes(std::size_t n, DType dtype, std::uint64_t seed, double stddev = 1.0,
                                        double mean = 0.0, unsigned threads = 0);
// Fills a contiguous device view with random_bytes' values (throws
// flash::Error for a strided one: upload(random_values()) takes any strides).
void upload_random(const TensorView& view, std::uint64_t seed, double stddev = 1.0, double mean = 0.0);

// Host values in BSHD order to/from a device view of any strides. upload
// writes the view's whole byte span, [data, data + view_bytes): the bytes
// between its elements become zeros, so it clobbers any view interleaved
// with this one (tests/test_fuzz_gpu.cpp uploads one image of a whole
// buffer instead).
void upload(const std::vector<double>& host, const TensorView& view);
std::vector<double> download(const TensorView& view);
// Fills every element a view addresses with NaN (poison before a call); the
// gaps between them with zeros, as upload.
void poison(const TensorView& view);
std::size_t view_bytes(const TensorView& view);

// ALiBi slopes of a call: none, one per query head (fp32 [heads_q]) or one
// per sequence and query head (fp32 [batch, heads_q]).
enum class Alibi { none, per_head, per_batch };

struct Shape {
  int batch = 1, seqlen_q = 1, seqlen_k = 1, heads_q = 1, heads_kv = 1, head_dim = 64;
  // Sliding window sides (ForwardArgs::window_left / window_right); -1: unbounded.
  int window_left = -1, window_right = -1;
  // Score modifiers (ForwardArgs::softcap, alibi_slopes, sinks); the slopes
  // and sinks are random (make_score_inputs).
  float softcap = 0.0f;
  Alibi alibi = Alibi::none;
  bool sinks = false;
  // q and k are drawn with this standard deviation: scores of about
  // qk_gain^2 (large ones, for a softcap that bites).
  double qk_gain = 1.0;
  // q drawn around +qk_mean and k around -qk_mean (forward and backward
  // problems): every score near -head_dim qk_mean^2, a softcap's floor.
  double qk_mean = 0.0;
};

// The score modifiers of one call as its inputs: the softcap, random ALiBi
// slopes (0.5 * 2^(-8u), u uniform in [0, 1]: BLOOM's range of slopes, per
// head or per sequence and head) and random sinks (both signs, near the
// rows' largest scores, and every fourth head from the second a large one,
// 8 to 20 beyond them: above for heads 1, 9, ..., a sink that takes nearly
// all of the weight, below for heads 5, 13, ..., one that takes none),
// rounded to fp32 so that the reference and the kernels see the same values,
// and their fp32 device copies.
struct ScoreInputs {
  float softcap = 0.0f;
  std::vector<double> alibi;  // host values; empty without ALiBi
  std::vector<double> sinks;  // host values; empty without sinks
  DeviceBuffer d_alibi, d_sinks;
  std::optional<TensorView> alibi_view, sinks_view;

  // Sets softcap, alibi_slopes and sinks of ForwardArgs, BackwardArgs or DecodeArgs.
  template <class Args> void apply(Args& a) const {
    a.softcap = softcap;
    a.alibi_slopes = alibi_view;
    a.sinks = sinks_view;
  }
  // The same into the reference's problem.
  void apply(reference::Problem& rp) const;
};

// `level`: about the largest score of a row (the sinks are drawn around it).
// Draws from rng only what the call uses.
ScoreInputs make_score_inputs(int batch, int heads_q, float softcap, Alibi alibi, bool sinks, double level,
                              std::mt19937_64& rng);

// About the largest score of a row of random inputs drawn with qk_gain
// (three standard deviations, qk_gain^2 each), within the softcap if any.
double typical_row_max(double qk_gain, float softcap);

// One problem: random inputs on host and device, and the reference for
// `rows` (every row when empty).
struct Problem {
  Shape shape;
  DType dtype = DType::bf16;
  bool causal = false;
  Layout layout = Layout::bshd;
  std::vector<int> rows;
  std::vector<double> q, k, v;
  ScoreInputs scores;  // from the shape's softcap, alibi and sinks
  reference::Result ref;
  DeviceBuffer dq, dk, dv, d_o, d_lse;
  TensorView vq, vk, vv, vo, vlse;
};

Problem make_problem(const Shape& s, DType dtype, bool causal, Layout layout, std::uint64_t seed,
                     std::vector<int> rows = {});

// Up to `count` query rows: the first and last rows, rows at common tile
// edges, and random ones; all rows when seqlen_q <= count.
std::vector<int> sample_rows(int seqlen_q, int count, std::uint64_t seed);

struct CheckResult {
  bool ok = false;
  std::string error;  // a flash::Error or CUDA failure, if any
  double max_err = 0, bound = 0;
  double lse_err = 0, lse_bound = 0;
  std::size_t unwritten = 0;  // output elements still NaN after the call
};

// Poisons O and LSE, runs `kernel` (with prob.scores), and checks O and LSE
// by FlashAttention's rule:
//   max|out - ref| <= 2 * max|out_lowp - ref| + floor(dtype) * max|ref|.
CheckResult run_and_check(Problem& prob, const std::string& kernel);

// Rounding floor of the bound, relative to max|ref|.
double rounding_floor(DType dtype);

// FlashAttention's rule, given max|out_lowp - ref| (the error of the same
// math in the input dtype) and max|ref|. An output (O): twice that error
// plus one rounding of max|ref|.
inline double output_bound(double lowp_err, double max_ref, DType dtype) {
  return 2 * lowp_err + rounding_floor(dtype) * max_ref;
}
// A gradient: three times that error plus two roundings of max|ref| (dS is
// rounded to the dtype before its GEMMs, the gradient after them: where a
// sum has few terms, the model's own error can fall below both by chance;
// f16, one query row, a GQA group of 3: every kernel's dk at 1.003x of the
// bound with one rounding, session 57's fuzz test), plus 2^-16: fp32
// accumulation noise on unit-scale inputs, for gradients whose exact value
// vanishes (one key: dS = 0, so dq = dk = 0 exactly in the reference and
// in its low-precision model).
inline double gradient_bound(double lowp_err, double max_ref, DType dtype) {
  return 3 * lowp_err + 2 * rounding_floor(dtype) * max_ref + std::ldexp(1.0, -16);
}

// The LSE's bound by the same rule: 2 * max|lse_lowp - lse| (0 unless the
// reference rounds the scores, i.e. with a softcap) plus 2^-16 of
// max(1, max|lse|).
inline double lse_bound(double lse_lowp_err, double max_lse) { return 2 * lse_lowp_err + std::ldexp(1.0, -16) * max_lse; }

// A backward call: random q, k, v and dO; O (rounded to the dtype) and the
// LSE from the fp64 forward reference; the fp64 gradients and their
// low-precision counterparts. With sinks, args.dsinks is set too (fp32
// [heads_q]); a caller may reset it (dsinks is optional).
struct BwdProblem {
  Shape shape;
  DType dtype = DType::bf16;
  bool causal = false;
  Layout layout = Layout::bshd;
  std::vector<double> q, k, v, dout;
  ScoreInputs scores;
  reference::Gradients ref;
  DeviceBuffer bq, bk, bv, bo, blse, bdo, bdq, bdk, bdv, bdsinks;
  BackwardArgs args;  // every view, flag and modifier set; kernel and deterministic left to the caller
};

BwdProblem make_bwd_problem(const Shape& s, DType dtype, bool causal, Layout layout, std::uint64_t seed);

struct BwdCheck {
  bool ok = false;
  std::string error;
  // dq, dk, dv and dsinks (0 when not given): max|g - ref| and its bound
  // 3 * max|g_lowp - ref| + floor(dtype) * max|ref| + 2^-16.
  double err[4] = {}, bound[4] = {};
  std::size_t unwritten = 0;  // gradient elements still NaN after the call
};

// Poisons dq, dk, dv (and dsinks when given), runs the backward with
// `kernel`, and checks every gradient by FlashAttention's rule (3x the
// low-precision error).
BwdCheck run_and_check_backward(BwdProblem& prob, const std::string& kernel, bool deterministic = false);

// A decode call (flash::attention_decode) with random inputs: the cache
// contiguous (page_size 0) or paged through a shuffled page table whose
// unused entries are -1, ragged lengths, an optional append, and the fp64
// reference of every row of every sequence.
struct DecodeSpec {
  DType dtype = DType::bf16;
  int batch = 1, seqlen_q = 1, heads_q = 1, heads_kv = 1, head_dim = 128;
  int capacity = 256;  // keys per sequence (a multiple of page_size when paged)
  int page_size = 0;   // 0: contiguous cache
  int seqlen_new = 0;  // appended keys per sequence
  bool causal = false;
  int window_left = -1, window_right = -1;  // DecodeArgs::window_left / window_right
  int num_splits = 0;
  // Score modifiers and the inputs' scale, as in Shape (query i of the new
  // tokens sits at position i + L - seqlen_q for ALiBi's distance).
  float softcap = 0.0f;
  Alibi alibi = Alibi::none;
  bool sinks = false;
  double qk_gain = 1.0;  // q and the keys (cache and new)
  std::vector<int> lens;  // cache_seqlens, batch entries
};

struct DecodeProblem {
  DecodeSpec spec;
  int num_pages = 0, max_pages = 0;
  std::vector<double> q, k_cache, v_cache, k_new, v_new;  // host, in the views' shapes
  std::vector<double> k_expected, v_expected;             // the caches after the append
  std::vector<int> page_table;
  ScoreInputs scores;
  reference::Result ref;  // o [batch, seqlen_q, heads_q, head_dim], lse [batch, heads_q, seqlen_q]
  DeviceBuffer dq, dkc, dvc, dkn, dvn, d_o, d_lse, d_table, d_lens;
  DecodeArgs args;
};

DecodeProblem make_decode_problem(const DecodeSpec& spec, std::uint64_t seed);

// Ragged cache lengths for `batch` sequences: 0, 1 and full (capacity -
// seqlen_new, the room an append leaves) first, then random ones in between.
std::vector<int> ragged_lens(int batch, int capacity, int seqlen_new, std::uint64_t seed);

struct DecodeCheck {
  bool ok = false;
  std::string error;
  double max_err = 0, bound = 0, lse_err = 0, lse_bound = 0;
  std::size_t unwritten = 0;       // O or LSE elements still NaN
  std::size_t cache_mismatch = 0;  // cache elements that differ from the expected append
};

// Poisons O and LSE, restores the caches, runs prob.args with `kernel`, and
// checks O and LSE by FlashAttention's rule and the caches element by element.
DecodeCheck run_and_check_decode(DecodeProblem& prob, const std::string& kernel);

}  // namespace flash::testing
