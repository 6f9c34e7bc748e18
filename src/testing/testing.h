// Host-side helpers shared by the tests, the runner and the bench (not part
// of the installed library): device buffers, random inputs, strided upload,
// and the FlashAttention-style correctness check against the fp64 reference.
#pragma once

#include <cstddef>
#include <cstdint>
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

enum class Layout { bshd, bhsd };

// Shape [batch, seqlen, heads, head_dim] in the given memory layout.
struct ViewSpec {
  std::int64_t batch, seqlen, heads, head_dim;
  Layout layout = Layout::bshd;
  TensorView view(void* data, DType dtype) const;
  std::size_t elements() const { return static_cast<std::size_t>(batch * seqlen * heads * head_dim); }
};

// Standard normal values rounded to dtype (so they are exact in it).
std::vector<double> random_values(std::size_t n, DType dtype, std::mt19937_64& rng);

// Host values in BSHD order to/from a device view of any strides.
void upload(const std::vector<double>& host, const TensorView& view);
std::vector<double> download(const TensorView& view);
// Fills every element a view addresses with NaN (poison before a call).
void poison(const TensorView& view);
std::size_t view_bytes(const TensorView& view);

struct Shape {
  int batch = 1, seqlen_q = 1, seqlen_k = 1, heads_q = 1, heads_kv = 1, head_dim = 64;
  // Sliding window sides (ForwardArgs::window_left / window_right); -1: unbounded.
  int window_left = -1, window_right = -1;
};

// One problem: random inputs on host and device, and the reference for
// `rows` (every row when empty).
struct Problem {
  Shape shape;
  DType dtype = DType::bf16;
  bool causal = false;
  Layout layout = Layout::bshd;
  std::vector<int> rows;
  std::vector<double> q, k, v;
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

// Poisons O and LSE, runs `kernel`, and checks O and LSE by FlashAttention's
// rule: max|out - ref| <= 2 * max|out_lowp - ref| + floor(dtype) * max|ref|.
CheckResult run_and_check(Problem& prob, const std::string& kernel);

// Rounding floor of the bound, relative to max|ref|.
double rounding_floor(DType dtype);

// A backward call: random q, k, v and dO; O (rounded to the dtype) and the
// LSE from the fp64 forward reference; the fp64 gradients and their
// low-precision counterparts.
struct BwdProblem {
  Shape shape;
  DType dtype = DType::bf16;
  bool causal = false;
  Layout layout = Layout::bshd;
  std::vector<double> q, k, v, dout;
  reference::Gradients ref;
  DeviceBuffer bq, bk, bv, bo, blse, bdo, bdq, bdk, bdv;
  BackwardArgs args;  // every view and flag set; kernel and deterministic left to the caller
};

BwdProblem make_bwd_problem(const Shape& s, DType dtype, bool causal, Layout layout, std::uint64_t seed);

struct BwdCheck {
  bool ok = false;
  std::string error;
  // dq, dk, dv: max|g - ref| and its bound
  // 3 * max|g_lowp - ref| + floor(dtype) * max|ref| + 2^-16.
  double err[3] = {}, bound[3] = {};
  std::size_t unwritten = 0;  // gradient elements still NaN after the call
};

// Poisons dq, dk and dv, runs the backward with `kernel`, and checks every
// gradient by FlashAttention's rule (3x the low-precision error).
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
  std::vector<int> lens;  // cache_seqlens, batch entries
};

struct DecodeProblem {
  DecodeSpec spec;
  int num_pages = 0, max_pages = 0;
  std::vector<double> q, k_cache, v_cache, k_new, v_new;  // host, in the views' shapes
  std::vector<double> k_expected, v_expected;             // the caches after the append
  std::vector<int> page_table;
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
