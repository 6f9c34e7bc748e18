// Randomized acceptance tests of the public API (ctest gpu_fuzz, suites
// Fuzz*): calls drawn at random the way an outside program makes them, so
// that shapes, strides, threads and CUDA graphs that the other GPU tests do
// not list show their bugs here first.
//
// Each case draws, from a std::mt19937_64 seeded by the test's seed plus the
// case's index: bf16 or f16; a head dim that a built variant runs here;
// batch 1-3 (1-5 packed sequences); seqlen_q and seqlen_k 1-300
// independently, sometimes equal, one query, one key or no key at all;
// heads_kv 1-4 and a GQA group of 1-4; no mask, causal, a sliding window
// (sides -1 to 300) or a causal window; a softcap in [5, 50], ALiBi slopes
// per head or per sequence, sinks of both signs, a softmax scale of its own;
// the LSE or not; kernel "auto" or a random built variant (one that refuses
// the call leaves it to auto); the library's workspace or the caller's
// (filled with 0xff bytes); the default stream or another. And the memory
// every tensor lives in: BSHD, BHSD, any nesting of the leading dimensions
// with padding after each level, several tensors interleaved in one block
// (q, k, v and o; k and v; dq, dk and dv; K and V pages), k and v one view,
// gaps between blocks. Variable-length calls (cu_seqlens, seqused_k, rows
// past the last sequence), paged prefill (page sizes 16-256, shuffled pages,
// unreached table entries -1 or out of range), the backward (dsinks,
// deterministic mode run twice and compared bit for bit) and decode
// (contiguous or paged caches of page size 1-256, an append, ragged cache
// lengths, splits, packed new tokens) are drawn the same way.
//
// All tensors of one dtype live in one device buffer with a host image of
// every element: inputs, and NaN (int32: -7) everywhere else. The image is
// uploaded whole before each call, so interleaved views are poisoned without
// clobbering each other, and read back whole after it: the outputs are
// checked against the fp64 reference by FlashAttention's rule (src/testing:
// 2x the error of the same math in the input dtype plus a rounding floor;
// gradients 3x plus two roundings and 2^-16), every output element must be written, and every
// other element (inputs, padding, gaps, rows past the last sequence, the
// caches after the append) must hold what it held or was appended. Inputs
// that no sequence reads (keys past seqused_k, unused pages, cache rows past
// a sequence's length) are NaN, so a kernel that reads one fails.
//
// FuzzThreads runs cases from 4 host threads at once, each on a stream of
// its own, and captures warm calls into CUDA graphs whose replays must
// equal the direct call bit for bit. FuzzChecks proves the checks can fail.
//
// A failure prints its case on one line, starting with FLASH_TEST_SEED=...
// FLASH_FUZZ_CASE=...: those two variables rerun exactly that case (the
// gtest filter naming its test). FLASH_FUZZ_SCALE=n draws n times as many
// cases (soak runs); FLASH_FUZZ_VERBOSE=1 prints every check's error and
// bound. The fp64 reference on the host is the cost, so each case's batch *
// heads_q * seqlen_q * seqlen_k * head_dim stays under 2e8 (6e7 for the
// backward): the whole Fuzz* set took 8 s on the H200 against the full
// build (2026-11-30), and FLASH_FUZZ_SCALE=10 about a minute.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <latch>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "flash/flash.h"
#include "flash/reference.h"
#include "gpu_test.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::TensorView;
using flash::testing::Alibi;
using flash::testing::check;
using flash::testing::DeviceBuffer;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kIntPoison = -7;  // int32 elements no call may write (gaps, padding)

// Cases per test (times FLASH_FUZZ_SCALE).
constexpr int kDenseForwardCases = 24;
constexpr int kVarlenForwardCases = 8;
constexpr int kPagedForwardCases = 8;
constexpr int kDenseBackwardCases = 16;
constexpr int kVarlenBackwardCases = 4;
constexpr int kDecodeCases = 20;
constexpr int kThreads = 4;
constexpr int kCasesPerThread = 3;
constexpr int kGraphCases = 3;

// The fp64 reference is a case's cost: batch * heads_q * seqlen_q *
// seqlen_k * head_dim stays under these (a larger draw is shrunk).
constexpr double kMaxForwardWork = 2e8;
constexpr double kMaxBackwardWork = 6e7;
constexpr int kMaxSeqlen = 300;
constexpr int kMaxCachedKeys = 400;  // paged prefill's and decode's keys per sequence
constexpr int kHeadDims[] = {32, 64, 96, 128, 256};

// ---------------------------------------------------------------------------
// Random draws and environment

class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(double p) { return std::bernoulli_distribution(p)(rng_); }
  template <class T> T pick(const std::vector<T>& options) {
    return options[static_cast<std::size_t>(uniform(0, static_cast<int>(options.size()) - 1))];
  }
  std::mt19937_64& rng() { return rng_; }

 private:
  std::mt19937_64 rng_;
};

int fuzz_scale() {
  const char* s = std::getenv("FLASH_FUZZ_SCALE");
  return std::max(1, s ? std::atoi(s) : 1);
}

// The cases a test runs: 0 .. count * FLASH_FUZZ_SCALE - 1, or only the one
// FLASH_FUZZ_CASE names (a failure's line gives both variables).
std::vector<int> case_indices(int count) {
  if (const char* one = std::getenv("FLASH_FUZZ_CASE")) return {std::atoi(one)};
  std::vector<int> all(static_cast<std::size_t>(count * fuzz_scale()));
  std::iota(all.begin(), all.end(), 0);
  return all;
}

// FLASH_FUZZ_VERBOSE set: every check prints its error and bound (how close
// the passing cases come to it).
bool verbose() {
  static const bool on = std::getenv("FLASH_FUZZ_VERBOSE") != nullptr;
  return on;
}

std::string case_line(int index, std::uint64_t seed, const std::string& desc) {
  return fmt::format("FLASH_TEST_SEED={} FLASH_FUZZ_CASE={} (case seed {}): {}", flash::gpu_test::base_seed(), index,
                     seed, desc);
}

std::vector<double> as_doubles(const std::vector<int>& x) { return {x.begin(), x.end()}; }

std::vector<int> prefix_sums(const std::vector<int>& lens) {
  std::vector<int> cu(lens.size() + 1, 0);
  for (std::size_t b = 0; b < lens.size(); ++b) cu[b + 1] = cu[b] + lens[b];
  return cu;
}

// Rows [row0, row0 + rows) of a row-major host tensor of `width` elements per row.
std::vector<double> rows_of(const std::vector<double>& x, std::int64_t row0, std::int64_t rows, std::int64_t width) {
  return {x.begin() + row0 * width, x.begin() + (row0 + rows) * width};
}

// Values equal bit for bit as far as a double shows them (NaN equals NaN:
// elements nobody wrote).
bool same(double a, double b) {
  return (a == b && std::signbit(a) == std::signbit(b)) || (std::isnan(a) && std::isnan(b));
}

// Calls f(i, offset) for every element of a view: i in row-major order of
// its shape, offset in elements from its data pointer.
template <class F> void for_each_element(const TensorView& t, F&& f) {
  const std::int64_t n = t.numel();
  std::array<std::int64_t, TensorView::kMaxRank> idx{};
  std::int64_t off = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    f(static_cast<std::size_t>(i), off);
    for (int d = t.rank - 1; d >= 0; --d) {
      off += t.stride[d];
      if (++idx[d] < t.shape[d]) break;
      off -= t.stride[d] * t.shape[d];
      idx[d] = 0;
    }
  }
}

TensorView make_tensor(DType dtype, const std::vector<std::int64_t>& shape, const std::vector<std::int64_t>& stride) {
  TensorView t;
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  for (int i = 0; i < t.rank; ++i) t.shape[i] = shape[i], t.stride[i] = stride[i];
  return t;
}

// ---------------------------------------------------------------------------
// Memory: one buffer per dtype, with a host image

// A view planned inside an Arena: its shape and strides, and where it starts
// (elements); Arena::bind gives it its pointer once the buffer exists.
struct Placed {
  std::int64_t offset = 0;
  TensorView view;
};

// One device buffer that holds every tensor of one dtype a case passes, with
// a host image of all of its elements (`fill` where nothing was put). The
// image is uploaded whole, so interleaved views never overwrite each other's
// bytes; after a call the whole buffer is read back, the outputs' elements
// are compared with the reference, and every other element must equal
// `expected`: the image, or what an append wrote there.
class Arena {
 public:
  Arena(DType dtype, double fill) : dtype_(dtype), fill_(fill) {}

  DType dtype() const { return dtype_; }
  // Elements per 16 bytes: offsets and pads in multiples of it keep every
  // variant's alignment (flash/variants.h: 16 bytes at most).
  std::int64_t align() const { return 16 / static_cast<std::int64_t>(flash::dtype_size(dtype_)); }

  // Room for `elements` after a gap of at least `gap`; returns its offset.
  std::int64_t reserve(std::int64_t elements, std::int64_t gap = 0) {
    const std::int64_t offset = (size_ + gap + align() - 1) / align() * align();
    size_ = offset + elements;
    return offset;
  }

  // Allocates the buffer once everything is reserved.
  void allocate() {
    buffer_ = DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(size_, 1)) * flash::dtype_size(dtype_));
    image_.assign(static_cast<std::size_t>(size_), fill_);
    expected_ = image_;
    output_.assign(static_cast<std::size_t>(size_), 0);
  }

  TensorView bind(const Placed& p, const char* name) {
    TensorView t = p.view;
    t.dtype = dtype_;
    t.data = static_cast<char*>(buffer_.get()) + p.offset * static_cast<std::int64_t>(flash::dtype_size(dtype_));
    named_.emplace_back(name, t);
    return t;
  }

  // Logical values (row-major in t's shape) into the image and the
  // expectation, rounded to the dtype as the device holds them.
  void put(const TensorView& t, const std::vector<double>& values) { fill(t, values, true); }
  // What t's elements must hold after the call (an append's result).
  void expect(const TensorView& t, const std::vector<double>& values) { fill(t, values, false); }
  // t's elements are checked against the reference instead.
  void output(const TensorView& t) {
    const std::int64_t base = offset_of(t);
    for_each_element(t, [&](std::size_t, std::int64_t off) { output_[static_cast<std::size_t>(base + off)] = 1; });
  }

  void upload() const { flash::testing::upload(image_, flat()); }
  std::vector<double> download() const { return flash::testing::download(flat()); }

  // t's elements from a download of the whole buffer, in row-major order.
  std::vector<double> gather(const std::vector<double>& all, const TensorView& t) const {
    std::vector<double> out(static_cast<std::size_t>(t.numel()));
    const std::int64_t base = offset_of(t);
    for_each_element(t, [&](std::size_t i, std::int64_t off) { out[i] = all[static_cast<std::size_t>(base + off)]; });
    return out;
  }

  // Adds a failure when an element outside the outputs no longer holds what it must.
  void check_untouched(const std::vector<double>& all, const char* buffer, std::vector<std::string>& failures) const {
    std::size_t changed = 0, first = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (!output_[i] && !same(all[i], expected_[i]) && changed++ == 0) first = i;
    if (changed == 0) return;
    failures.push_back(fmt::format("{} element(s) of the {} buffer outside the outputs changed; the first, {}, is {} "
                                   "where {} was expected",
                                   changed, buffer, where(first), all[first], expected_[first]));
  }

 private:
  std::int64_t offset_of(const TensorView& t) const {
    return (static_cast<const char*>(t.data) - static_cast<const char*>(buffer_.get())) /
           static_cast<std::int64_t>(flash::dtype_size(dtype_));
  }
  TensorView flat() const { return flash::make_contiguous(buffer_.get(), dtype_, {size_}); }

  void fill(const TensorView& t, const std::vector<double>& values, bool image) {
    if (values.size() != static_cast<std::size_t>(t.numel()))
      throw std::logic_error("Arena: values do not fit the view");
    const std::int64_t base = offset_of(t);
    for_each_element(t, [&](std::size_t i, std::int64_t off) {
      const double x = flash::reference::round_to(dtype_, values[i]);
      expected_[static_cast<std::size_t>(base + off)] = x;
      if (image) image_[static_cast<std::size_t>(base + off)] = x;
    });
  }

  // Which bound view holds buffer element i, and its index there.
  std::string where(std::size_t i) const {
    for (const auto& [name, t] : named_) {
      const std::int64_t base = offset_of(t);
      std::optional<std::size_t> at;
      for_each_element(t, [&](std::size_t j, std::int64_t off) {
        if (static_cast<std::size_t>(base + off) == i && !at) at = j;
      });
      if (at) return fmt::format("{} element {}", name, *at);
    }
    return fmt::format("buffer element {} (padding or a gap)", i);
  }

  DType dtype_;
  double fill_;
  std::int64_t size_ = 0;
  DeviceBuffer buffer_;
  std::vector<double> image_, expected_;
  std::vector<char> output_;
  std::vector<std::pair<std::string, TensorView>> named_;
};

// ---------------------------------------------------------------------------
// Layouts

enum class LayoutKind { contiguous, heads_major, strided, packed, kv_one_view };
constexpr const char* kLayoutNames[] = {"contiguous", "heads_major", "strided", "packed", "kv_one_view"};

LayoutKind draw_layout_kind(Draw& r) {
  const int m = r.uniform(0, 99);
  return m < 30   ? LayoutKind::contiguous
         : m < 45 ? LayoutKind::heads_major
         : m < 70 ? LayoutKind::strided
         : m < 90 ? LayoutKind::packed
                  : LayoutKind::kv_one_view;
}

// How the leading dimensions of a block nest in memory: order[0] outermost,
// the last dimension always innermost with stride 1, and pad[l] elements
// after each step of level l (a row stride larger than heads * head_dim, a
// head stride larger than head_dim, ...).
struct Nesting {
  std::vector<int> order;
  std::vector<std::int64_t> pad;
};

// Natural order; heads outside rows (BHSD) for heads_major and sometimes
// for strided and packed blocks, which also draw other orders and pads.
// misaligned: half a pad unit more at one level (a stride no 16-byte
// variant takes).
Nesting draw_nesting(Draw& r, int leading, LayoutKind kind, std::int64_t pad_unit, bool misaligned) {
  Nesting n;
  n.order.resize(static_cast<std::size_t>(leading));
  std::iota(n.order.begin(), n.order.end(), 0);
  n.pad.assign(static_cast<std::size_t>(leading), 0);
  const bool free = kind == LayoutKind::strided || kind == LayoutKind::packed;
  if (leading >= 2) {
    if (kind == LayoutKind::heads_major || (free && r.chance(0.25)))
      std::swap(n.order[leading - 2], n.order[leading - 1]);
    else if (free && r.chance(0.2))
      std::shuffle(n.order.begin(), n.order.end(), r.rng());
  }
  if (kind == LayoutKind::strided || (kind == LayoutKind::packed && r.chance(0.4)))
    for (auto& p : n.pad)
      if (r.chance(0.6)) p = pad_unit * r.uniform(1, 6);
  if (misaligned) n.pad[static_cast<std::size_t>(r.uniform(0, leading - 1))] += std::max<std::int64_t>(1, pad_unit / 2);
  return n;
}

// A tensor to place: its name, logical shape (the contiguous dimension
// last), and its side: tensors of one side have equal sizes but the heads'.
struct Slot {
  const char* name;
  Placed* placed;
  std::vector<std::int64_t> shape;
  int side = 0;
};

// Places `slots` in `arena` and appends the layout to `desc`: each tensor in
// a block of its own, or (kind packed) the tensors of one side interleaved
// in one block with their heads (dimension heads_dim) side by side, all
// sides in one block when `one_block`. The blocks' order, the gaps between
// them and each block's nesting are drawn; pads are multiples of pad_unit.
void place(Arena& arena, Draw& r, const std::vector<Slot>& slots, int heads_dim, const char* dims, LayoutKind kind,
           bool one_block, std::int64_t pad_unit, bool misaligned, std::string& desc) {
  std::vector<std::vector<Slot>> blocks;
  for (const Slot& s : slots) {
    const auto joins = [&](const std::vector<Slot>& b) {
      return kind == LayoutKind::packed && (one_block || b[0].side == s.side);
    };
    const auto it = std::find_if(blocks.begin(), blocks.end(), joins);
    if (it == blocks.end()) blocks.push_back({s});
    else it->push_back(s);
  }
  std::shuffle(blocks.begin(), blocks.end(), r.rng());
  for (auto& block : blocks) {
    std::shuffle(block.begin(), block.end(), r.rng());
    const int rank = static_cast<int>(block[0].shape.size());
    const Nesting n = draw_nesting(r, rank - 1, kind, pad_unit, misaligned);
    std::vector<std::int64_t> shape = block[0].shape, stride(static_cast<std::size_t>(rank));
    shape[heads_dim] = 0;
    for (const Slot& s : block) shape[heads_dim] += s.shape[heads_dim];
    stride[rank - 1] = 1;
    std::int64_t extent = shape[rank - 1];
    for (int level = rank - 2; level >= 0; --level) {
      const int d = n.order[level];
      stride[d] = extent + n.pad[level];
      extent = stride[d] * std::max<std::int64_t>(shape[d], 1);
    }
    const std::int64_t gap = r.chance(0.3) ? arena.align() * r.uniform(1, 16) : 0;
    const std::int64_t base = arena.reserve(extent, gap);
    std::int64_t head0 = 0;
    std::vector<std::string> names;
    for (const Slot& s : block) {
      s.placed->offset = base + head0 * stride[heads_dim];
      s.placed->view = make_tensor(arena.dtype(), s.shape, stride);
      head0 += s.shape[heads_dim];
      names.emplace_back(s.name);
    }
    std::string order;
    for (int d : n.order) order += dims[d];
    order += dims[rank - 1];
    desc += fmt::format(" [{}] {} pad {}", fmt::join(names, ","), order, fmt::join(n.pad, "/"));
  }
}

// An int32 [n] or [rows, cols] view (rows cols + row_pad apart).
Placed place_ints(Arena& arena, const std::vector<std::int64_t>& shape, std::int64_t row_pad = 0) {
  Placed p;
  const bool matrix = shape.size() == 2;
  const std::int64_t rows = matrix ? shape[0] : 1, cols = shape.back();
  p.offset = arena.reserve(rows * (cols + row_pad) + 1);
  p.view = make_tensor(DType::i32, shape,
                       matrix ? std::vector<std::int64_t>{cols + row_pad, 1} : std::vector<std::int64_t>{1});
  return p;
}

// ---------------------------------------------------------------------------
// What every call draws: dtype, head dim, heads, mask, score modifiers

struct Common {
  DType dtype = DType::bf16;
  int head_dim = 64, heads_q = 1, heads_kv = 1;
  bool causal = false;
  int window_left = -1, window_right = -1;
  float softcap = 0.0f;
  Alibi alibi = Alibi::none;
  bool sinks = false;
  double qk_gain = 1.0;        // q's and k's standard deviation (scores of about qk_gain^2)
  std::optional<float> scale;  // the call's softmax_scale; none: 1 / sqrt(head_dim)

  double scale_value() const {
    return static_cast<double>(scale ? *scale : 1.0f / std::sqrt(static_cast<float>(head_dim)));
  }

  // The Feature bits of the mask, heads and modifiers; unequal: seqlen_q !=
  // seqlen_k as the library counts them; lse: the call writes the LSE.
  unsigned features(bool unequal, bool lse) const {
    unsigned f = 0;
    if (causal) f |= flash::kFeatureCausal;
    if (heads_q != heads_kv) f |= flash::kFeatureGqa;
    if (lse) f |= flash::kFeatureLse;
    if (unequal) f |= flash::kFeatureUnequalSeqlens;
    if (window_left >= 0 || (!causal && window_right >= 0)) f |= flash::kFeatureWindow;
    if (softcap > 0.0f) f |= flash::kFeatureSoftcap;
    if (alibi != Alibi::none) f |= flash::kFeatureAlibi;
    if (sinks) f |= flash::kFeatureSinks;
    return f;
  }

  std::string describe() const {
    const char* slopes = alibi == Alibi::none ? "none" : alibi == Alibi::per_head ? "per_head" : "per_batch";
    return fmt::format("{} d{} hq{} hkv{}{} window ({}, {}) softcap {:.4g} alibi {} sinks {} scale {} qk_gain {}",
                       flash::dtype_name(dtype), head_dim, heads_q, heads_kv, causal ? " causal" : "", window_left,
                       window_right, softcap, slopes, sinks ? "yes" : "no",
                       scale ? fmt::format("{:.6g}", *scale) : std::string("default"), qk_gain);
  }
};

// Whether a variant of `variants` with every bit of `features` runs (dtype, head_dim) here.
bool any_variant_has(const std::vector<flash::VariantInfo>& variants, DType dtype, int head_dim, unsigned features) {
  return std::any_of(variants.begin(), variants.end(), [&](const flash::VariantInfo& v) {
    return flash::gpu_test::runnable(v, dtype, head_dim) && (v.features & features) == features;
  });
}

// Draws the common part; nullopt when no variant with `required` runs here.
std::optional<Common> draw_common(Draw& r, const std::vector<flash::VariantInfo>& variants, unsigned required) {
  Common c;
  std::vector<int> dims;
  const bool bf16_first = r.chance(0.5);
  for (const DType dtype : {bf16_first ? DType::bf16 : DType::f16, bf16_first ? DType::f16 : DType::bf16}) {
    for (const int d : kHeadDims)
      if (any_variant_has(variants, dtype, d, required)) dims.push_back(d);
    if (!dims.empty()) {
      c.dtype = dtype;
      break;
    }
  }
  if (dims.empty()) return std::nullopt;
  c.head_dim = r.pick(dims);
  c.heads_kv = r.uniform(1, 4);
  c.heads_q = c.heads_kv * r.uniform(1, 4);
  // A window side: often within a tile, else anywhere up to the longest sequence.
  const auto side = [&] { return r.chance(0.5) ? r.uniform(0, 16) : r.uniform(0, kMaxSeqlen); };
  const int mask = r.uniform(0, 99);
  if (mask >= 35 && mask < 60) {
    c.causal = true;
  } else if (mask >= 60 && mask < 85) {
    c.window_left = r.chance(0.25) ? -1 : side();
    c.window_right = r.chance(0.25) ? -1 : side();
  } else if (mask >= 85) {
    c.causal = true;
    c.window_left = side();
    c.window_right = r.chance(0.5) ? 0 : -1;
  }
  if (r.chance(0.25)) {
    c.softcap = static_cast<float>(r.real(5.0, 50.0));
    c.qk_gain = r.pick<double>({1.0, 2.0, 4.0});  // scores the cap bends or saturates
  }
  const int alibi = r.uniform(0, 9);
  c.alibi = alibi == 0 ? Alibi::per_head : alibi == 1 ? Alibi::per_batch : Alibi::none;
  c.sinks = r.chance(0.2);
  if (r.chance(0.15)) c.scale = static_cast<float>(c.scale_value() * r.real(0.5, 2.0));
  return c;
}

flash::testing::ScoreInputs score_inputs(const Common& c, int batch, Draw& r) {
  return flash::testing::make_score_inputs(batch, c.heads_q, c.softcap, c.alibi, c.sinks,
                                           flash::testing::typical_row_max(c.qk_gain, c.softcap), r.rng());
}

// The reference's problem: `batch` sequences of sq queries and sk keys, or
// (seq >= 0) sequence `seq` alone, with its row of per-sequence slopes.
flash::reference::Problem ref_problem(const Common& c, const flash::testing::ScoreInputs& s, int batch, int sq, int sk,
                                      int seq = -1) {
  flash::reference::Problem rp;
  rp.batch = batch;
  rp.seqlen_q = sq;
  rp.seqlen_k = sk;
  rp.heads_q = c.heads_q;
  rp.heads_kv = c.heads_kv;
  rp.head_dim = c.head_dim;
  rp.softmax_scale = c.scale_value();
  rp.causal = c.causal;
  rp.window_left = c.window_left;
  rp.window_right = c.window_right;
  s.apply(rp);
  if (seq >= 0 && c.alibi == Alibi::per_batch)
    rp.alibi_slopes.assign(s.alibi.begin() + static_cast<std::ptrdiff_t>(seq) * c.heads_q,
                           s.alibi.begin() + static_cast<std::ptrdiff_t>(seq + 1) * c.heads_q);
  return rp;
}

// The scale, mask and score modifiers of `c` into ForwardArgs, BackwardArgs or DecodeArgs.
template <class Args> void apply_common(Args& a, const Common& c, const flash::testing::ScoreInputs& scores) {
  a.softmax_scale = c.scale;
  a.causal = c.causal;
  a.window_left = c.window_left;
  a.window_right = c.window_right;
  scores.apply(a);
}

std::vector<double> normal(std::int64_t n, DType dtype, Draw& r, double stddev) {
  return flash::testing::random_values(static_cast<std::size_t>(n), dtype, r.rng(), stddev);
}

// Lengths of a dense call: independent, equal, one query, one key, or no key.
std::pair<int, int> draw_seqlens(Draw& r) {
  const int m = r.uniform(0, 99);
  if (m < 15) {
    const int s = r.uniform(1, kMaxSeqlen);
    return {s, s};
  }
  if (m < 25) return {1, r.uniform(1, kMaxSeqlen)};
  if (m < 30) return {r.uniform(1, kMaxSeqlen), 1};
  if (m < 35) return {r.uniform(1, kMaxSeqlen), 0};
  return {r.uniform(1, kMaxSeqlen), r.uniform(1, kMaxSeqlen)};
}

// A packed sequence's length: none, one, short, or up to kMaxSeqlen.
int draw_packed_length(Draw& r) {
  const int m = r.uniform(0, 99);
  return m < 15 ? 0 : m < 30 ? 1 : m < 80 ? r.uniform(2, 64) : r.uniform(65, kMaxSeqlen);
}

// Shrinks a dense draw to `limit`: fewer sequences, then fewer KV heads,
// then shorter sequences (equal ones stay equal).
void fit_work(int& batch, Common& c, int& sq, int& sk, double limit) {
  const auto work = [&] { return static_cast<double>(batch) * c.heads_q * sq * std::max(sk, 1) * c.head_dim; };
  while (work() > limit) {
    if (batch > 1) {
      --batch;
    } else if (c.heads_kv > 1) {
      const int group = c.heads_q / c.heads_kv;
      c.heads_kv -= 1;
      c.heads_q = c.heads_kv * group;
    } else {
      const bool equal = sq == sk;
      if (sq >= sk || equal) sq = (sq + 1) / 2;
      if (sk > sq || equal) sk = (sk + 1) / 2;
    }
  }
}

// Shrinks packed lengths (halving them all) until sum(q * keys) * heads_q * head_dim fits `limit`.
void fit_packed_work(std::vector<int>& q_lens, std::vector<int>& k_lens, std::vector<int>& used, const Common& c,
                     double limit) {
  const auto work = [&] {
    double w = 0;
    for (std::size_t b = 0; b < q_lens.size(); ++b) w += static_cast<double>(q_lens[b]) * used[b];
    return w * c.heads_q * c.head_dim;
  };
  while (work() > limit)
    for (std::size_t b = 0; b < q_lens.size(); ++b) {
      q_lens[b] = (q_lens[b] + 1) / 2;
      k_lens[b] = (k_lens[b] + 1) / 2;
      used[b] = std::min((used[b] + 1) / 2, k_lens[b]);
    }
}

// A packed (variable-length) case's sequences: 1 to max_batch of them,
// lengths of 0, 1 or up to kMaxSeqlen, the keys' the queries' own with
// self-attention (q, k and v may then share a block), seqused_k sometimes,
// rows past the last sequence sometimes, and max_seqlen hints that are
// sometimes loose (the packed rows, not the longest sequence).
struct PackedSeqs {
  int batch = 0;
  bool self = false, seqused = false;
  std::vector<int> q_lens, k_lens, used, cu_q, cu_k;
  int rows_q = 0, rows_k = 0, Tq = 0, Tk = 0, max_q = 0, max_k = 0;
};
PackedSeqs draw_packed_seqs(Draw& r, const Common& c, int max_batch, double work_limit) {
  PackedSeqs s;
  s.batch = r.uniform(1, max_batch);
  s.self = r.chance(0.3);
  const auto n = static_cast<std::size_t>(s.batch);
  s.q_lens.resize(n), s.k_lens.resize(n), s.used.resize(n);
  for (int& len : s.q_lens) len = draw_packed_length(r);
  for (int b = 0; b < s.batch; ++b) s.k_lens[b] = s.self ? s.q_lens[b] : draw_packed_length(r);
  s.seqused = r.chance(0.3);
  for (int b = 0; b < s.batch; ++b) s.used[b] = s.seqused ? r.uniform(0, s.k_lens[b]) : s.k_lens[b];
  fit_packed_work(s.q_lens, s.k_lens, s.used, c, work_limit);
  const int tail_q = r.chance(0.5) ? r.uniform(1, 8) : 0;
  const int tail_k = s.self ? tail_q : r.chance(0.5) ? r.uniform(1, 8) : 0;
  s.cu_q = prefix_sums(s.q_lens), s.cu_k = prefix_sums(s.k_lens);
  s.rows_q = s.cu_q.back(), s.rows_k = s.cu_k.back(), s.Tq = s.rows_q + tail_q, s.Tk = s.rows_k + tail_k;
  const bool loose = r.chance(0.2);
  s.max_q = loose ? s.Tq : *std::max_element(s.q_lens.begin(), s.q_lens.end());
  s.max_k = loose ? s.Tk : *std::max_element(s.k_lens.begin(), s.k_lens.end());
  return s;
}
// NaN over the rows no sequence reads: in each of `qs` ([Tq, q_width]) the
// rows past the last sequence, in each of `ks` ([Tk, k_width]) the keys past
// a sequence's seqused_k and the rows past the last sequence.
void nan_unread_rows(const PackedSeqs& s, std::initializer_list<std::vector<double>*> qs,
                     std::initializer_list<std::vector<double>*> ks, std::int64_t q_width, std::int64_t k_width) {
  for (auto* x : qs) std::fill(x->begin() + std::int64_t{s.rows_q} * q_width, x->end(), kNaN);
  for (auto* x : ks) {
    for (int b = 0; b < s.batch; ++b)
      std::fill(x->begin() + std::int64_t{s.cu_k[b] + s.used[b]} * k_width,
                x->begin() + std::int64_t{s.cu_k[b + 1]} * k_width, kNaN);
    std::fill(x->begin() + std::int64_t{s.rows_k} * k_width, x->end(), kNaN);
  }
}

// "auto" most of the time, else a random variant built and runnable here.
std::string draw_kernel(Draw& r, const std::vector<flash::VariantInfo>& variants, DType dtype, int head_dim) {
  if (r.chance(0.75)) return "auto";
  std::vector<std::string> names;
  for (const auto& v : variants)
    if (flash::gpu_test::runnable(v, dtype, head_dim)) names.push_back(v.name);
  return names.empty() ? std::string("auto") : r.pick(names);
}

// ---------------------------------------------------------------------------
// Checks

// The reference's values for the elements of one output view, in the view's
// row-major order: exact, and the same math in the input dtype.
struct Want {
  std::vector<double> ref, lowp;
  void resize(std::size_t n) {
    ref.assign(n, 0.0);
    lowp.assign(n, 0.0);
  }
};

// FlashAttention's rule as src/testing applies it (run_and_check,
// run_and_check_backward): max|out - ref| <= bound_of(max|out_lowp - ref|,
// max|ref|, dtype), flash::testing::output_bound or gradient_bound. An
// element left NaN is unwritten, and fails.
void check_rule(const char* name, const std::vector<double>& got, const Want& want, DType dtype,
                double (*bound_of)(double, double, DType), std::vector<std::string>& failures) {
  double err = 0, lowp_err = 0, max_ref = 0;
  std::size_t unwritten = 0, worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    lowp_err = std::max(lowp_err, std::fabs(want.lowp[i] - want.ref[i]));
    max_ref = std::max(max_ref, std::fabs(want.ref[i]));
    if (std::isnan(got[i])) {
      ++unwritten;
      continue;
    }
    const double e = std::fabs(got[i] - want.ref[i]);
    if (e > err) err = e, worst = i;
  }
  const double bound = bound_of(lowp_err, max_ref, dtype);
  if (verbose())
    fmt::print("[ fuzz     ]   {}: error {:.4g}, bound {:.4g} (low-precision error {:.4g}, max|ref| {:.4g})\n", name,
               err, bound, lowp_err, max_ref);
  if (unwritten > 0)
    failures.push_back(fmt::format("{}: {} of {} elements left unwritten (NaN)", name, unwritten, got.size()));
  if (!(err <= bound))
    failures.push_back(fmt::format("{}: error {:.4g} over the bound {:.4g} (element {}: {} where the reference has {})",
                                   name, err, bound, worst, got[worst], want.ref[worst]));
}

// The LSE by the same rule (lse_bound: twice the low-precision error plus
// 2^-16 of max(1, max|lse|)); -inf (a row that sees no key, no sink) exactly.
void check_lse(const std::vector<double>& got, const Want& want, std::vector<std::string>& failures) {
  double err = 0, lowp_err = 0, max_lse = 1;
  std::size_t unwritten = 0, inf_mismatch = 0, worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double ref = want.ref[i];
    if (std::isnan(got[i])) {
      ++unwritten;
    } else if (std::isinf(ref)) {
      inf_mismatch += got[i] != ref;
    } else {
      const double e = std::fabs(got[i] - ref);
      if (e > err) err = e, worst = i;
      lowp_err = std::max(lowp_err, std::fabs(want.lowp[i] - ref));
      max_lse = std::max(max_lse, std::fabs(ref));
    }
  }
  const double bound = flash::testing::lse_bound(lowp_err, max_lse);
  if (verbose()) fmt::print("[ fuzz     ]   lse: error {:.4g}, bound {:.4g}\n", err, bound);
  if (unwritten > 0)
    failures.push_back(fmt::format("lse: {} of {} elements left unwritten (NaN)", unwritten, got.size()));
  if (inf_mismatch > 0) failures.push_back(fmt::format("lse: {} rows that see no key are not -inf", inf_mismatch));
  if (!(err <= bound))
    failures.push_back(fmt::format("lse: error {:.4g} over the bound {:.4g} (element {}: {} where the reference "
                                   "has {})",
                                   err, bound, worst, got[worst], want.ref[worst]));
}

// The three buffers of a case as read back after a call.
struct Snapshot {
  std::vector<double> data, f32, i32;
};

// "" when equal bit for bit, else the first difference.
std::string first_difference(const Snapshot& got, const Snapshot& want) {
  const struct {
    const char* name;
    const std::vector<double>& got;
    const std::vector<double>& want;
  } buffers[] = {{"data", got.data, want.data}, {"f32", got.f32, want.f32}, {"int32", got.i32, want.i32}};
  for (const auto& b : buffers)
    for (std::size_t i = 0; i < b.want.size(); ++i)
      if (!same(b.got[i], b.want[i]))
        return fmt::format("{} buffer element {}: {} where the earlier run gave {}", b.name, i, b.got[i], b.want[i]);
  return {};
}

// ---------------------------------------------------------------------------
// Cases

// What every case holds: its line, its draws, its three buffers and score inputs.
struct CaseBase {
  std::string desc;
  std::string skip;  // why the draw cannot run here (nothing built takes it); empty: it runs
  Common c;
  unsigned needed = 0;  // every Feature bit the call uses: "auto" must take it when a variant has them all
  bool caller_workspace = false, own_stream = false;
  bool twice = false;  // deterministic: a second run must give the same bits
  Arena data{DType::bf16, kNaN}, f32{DType::f32, kNaN}, i32{DType::i32, kIntPoison};
  flash::testing::ScoreInputs scores;

  void allocate() {
    data.allocate();
    f32.allocate();
    i32.allocate();
  }
  void upload() const {
    data.upload();
    f32.upload();
    i32.upload();
  }
  Snapshot download() const { return {data.download(), f32.download(), i32.download()}; }
  void check_untouched(const Snapshot& s, std::vector<std::string>& failures) const {
    data.check_untouched(s.data, "data", failures);
    f32.check_untouched(s.f32, "f32", failures);
    i32.check_untouched(s.i32, "int32", failures);
  }
};

// The outputs of a forward or decode call and the reference's values for them.
struct AttentionOutputs {
  TensorView o;                       // the elements of o the call must write
  std::optional<TensorView> lse;      // and of lse
  std::optional<TensorView> status;   // status words, code 0 on valid metadata
  Want o_want, lse_want;
  int dense_seqlen_q = 0;  // > 0: lse is [batch, heads_q, seqlen_q]; else packed [heads_q, rows]
  int rows = 0;            // query rows the call writes

  void resize(int heads_q, int head_dim) {
    o_want.resize(static_cast<std::size_t>(rows) * heads_q * head_dim);
    lse_want.resize(static_cast<std::size_t>(rows) * heads_q);
  }
  // Sequence b's reference, its queries at rows row0 .. row0 + sq - 1 of o.
  void add(const flash::reference::Result& r, int b, int row0, int sq, int heads_q, int head_dim) {
    const auto at = static_cast<std::ptrdiff_t>(row0) * heads_q * head_dim;
    std::copy(r.o.begin(), r.o.end(), o_want.ref.begin() + at);
    std::copy(r.o_lowp.begin(), r.o_lowp.end(), o_want.lowp.begin() + at);
    for (int h = 0; h < heads_q; ++h)
      for (int i = 0; i < sq; ++i) {
        const std::size_t from = static_cast<std::size_t>(h) * sq + i;
        const std::size_t to = dense_seqlen_q > 0
                                   ? (static_cast<std::size_t>(b) * heads_q + h) * dense_seqlen_q + i
                                   : static_cast<std::size_t>(h) * rows + row0 + i;
        lse_want.ref[to] = r.lse[from];
        lse_want.lowp[to] = r.lse_lowp[from];
      }
  }
};

void check_attention(const CaseBase& k, const AttentionOutputs& out, const Snapshot& s,
                     std::vector<std::string>& failures) {
  check_rule("o", k.data.gather(s.data, out.o), out.o_want, k.c.dtype, flash::testing::output_bound, failures);
  if (out.lse) check_lse(k.f32.gather(s.f32, *out.lse), out.lse_want, failures);
  if (out.status) {
    const double code = k.i32.gather(s.i32, *out.status)[0];
    if (code != 0) failures.push_back(fmt::format("status[0] = {} on valid metadata", code));
  }
  k.check_untouched(s, failures);
}

struct ForwardCase : CaseBase {
  flash::ForwardArgs args;
  AttentionOutputs out;
  void check(const Snapshot& s, std::vector<std::string>& failures) const { check_attention(*this, out, s, failures); }
};

struct DecodeCase : CaseBase {
  flash::DecodeArgs args;
  AttentionOutputs out;
  void check(const Snapshot& s, std::vector<std::string>& failures) const { check_attention(*this, out, s, failures); }
};

struct BackwardCase : CaseBase {
  flash::BackwardArgs args;
  TensorView dq, dk, dv;  // the elements of the gradients the call must write
  std::optional<TensorView> dsinks, status;
  Want dq_want, dk_want, dv_want, dsinks_want;
  void check(const Snapshot& s, std::vector<std::string>& failures) const {
    const auto rule = flash::testing::gradient_bound;
    check_rule("dq", data.gather(s.data, dq), dq_want, c.dtype, rule, failures);
    check_rule("dk", data.gather(s.data, dk), dk_want, c.dtype, rule, failures);
    check_rule("dv", data.gather(s.data, dv), dv_want, c.dtype, rule, failures);
    if (dsinks) check_rule("dsinks", f32.gather(s.f32, *dsinks), dsinks_want, c.dtype, rule, failures);
    if (status && i32.gather(s.i32, *status)[0] != 0) failures.push_back("status[0] != 0 on valid metadata");
    check_untouched(s, failures);
  }
};

template <class Case> Case skipped(Case&& k, std::string why) {
  k.skip = std::move(why);
  return std::move(k);
}

std::string call_options(const CaseBase& k, const std::string& kernel) {
  return fmt::format("kernel {}{}{}", kernel, k.caller_workspace ? ", caller's workspace" : "",
                     k.own_stream ? ", own stream" : ", default stream");
}

// Dense forward: q [batch, seqlen_q, heads_q, head_dim], k and v [batch,
// seqlen_k, heads_kv, head_dim], sometimes seqused_k.
// q, k, v and o from their placements into `a` (forward or backward
// arguments; v is k's view again in kv_one_view: one tensor for both) and the
// inputs uploaded; k_name / v_name name the K and V views in messages.
template <class Args>
void bind_qkvo(Arena& data, Args& a, LayoutKind kind, const Placed& pq, const Placed& pk, const Placed& pv,
               const Placed& po, const std::vector<double>& q, const std::vector<double>& k,
               const std::vector<double>& v, const char* k_name = "k", const char* v_name = "v") {
  a.q = data.bind(pq, "q");
  a.k = data.bind(pk, k_name);
  a.v = kind == LayoutKind::kv_one_view ? a.k : data.bind(pv, v_name);
  a.o = data.bind(po, "o");
  data.put(a.q, q);
  data.put(a.k, k);
  if (kind != LayoutKind::kv_one_view) data.put(a.v, v);
}

ForwardCase make_dense_forward(std::uint64_t seed) {
  ForwardCase fc;
  Draw r(seed);
  const auto variants = flash::forward_variants();
  const auto common = draw_common(r, variants, 0);
  if (!common) return skipped(std::move(fc), "no built forward variant runs here");
  Common& c = fc.c = *common;
  int batch = r.uniform(1, 3);
  auto [sq, sk] = draw_seqlens(r);
  fit_work(batch, c, sq, sk, kMaxForwardWork);
  const bool seqused = sk > 0 && r.chance(0.1);
  std::vector<int> used(static_cast<std::size_t>(batch), sk);
  if (seqused)
    for (int& u : used) u = r.uniform(0, sk);
  const bool want_lse = r.chance(0.8);
  const LayoutKind kind = draw_layout_kind(r);
  const bool misaligned = r.chance(0.05);
  fc.caller_workspace = r.chance(0.15);
  fc.own_stream = r.chance(0.3);
  const std::string kernel = draw_kernel(r, variants, c.dtype, c.head_dim);
  const std::int64_t B = batch, Sq = sq, Sk = sk, Hq = c.heads_q, Hkv = c.heads_kv, D = c.head_dim;

  // Inputs (BSHD on the host); the keys past seqused_k[b] NaN.
  const std::vector<double> q = normal(B * Sq * Hq * D, c.dtype, r, c.qk_gain);
  std::vector<double> k = normal(B * Sk * Hkv * D, c.dtype, r, c.qk_gain);
  std::vector<double> v = kind == LayoutKind::kv_one_view ? k : normal(B * Sk * Hkv * D, c.dtype, r, 1.0);
  for (std::int64_t b = 0; b < B; ++b)
    for (auto* x : {&k, &v})
      std::fill(x->begin() + (b * Sk + used[b]) * Hkv * D, x->begin() + (b + 1) * Sk * Hkv * D, kNaN);
  fc.scores = score_inputs(c, batch, r);

  AttentionOutputs& out = fc.out;
  out.dense_seqlen_q = sq;
  out.rows = batch * sq;
  if (!seqused) {
    const auto ref = flash::reference::forward(ref_problem(c, fc.scores, batch, sq, sk), q, k, v, c.dtype);
    out.o_want = {ref.o, ref.o_lowp};
    out.lse_want = {ref.lse, ref.lse_lowp};
  } else {
    out.resize(c.heads_q, c.head_dim);
    for (int b = 0; b < batch; ++b)
      out.add(flash::reference::forward(ref_problem(c, fc.scores, 1, sq, used[b], b), rows_of(q, b * Sq, Sq, Hq * D),
                                        rows_of(k, b * Sk, used[b], Hkv * D), rows_of(v, b * Sk, used[b], Hkv * D),
                                        c.dtype),
              b, b * sq, sq, c.heads_q, c.head_dim);
  }

  // Memory.
  fc.data = Arena(c.dtype, kNaN);
  std::string layout = kLayoutNames[static_cast<int>(kind)];
  if (misaligned) layout += " misaligned";
  Placed pq, pk, pv, po, plse, pused;
  std::vector<Slot> slots = {
      {"q", &pq, {B, Sq, Hq, D}, 0}, {"o", &po, {B, Sq, Hq, D}, 0}, {"k", &pk, {B, Sk, Hkv, D}, 1}};
  if (kind != LayoutKind::kv_one_view) slots.push_back({"v", &pv, {B, Sk, Hkv, D}, 1});
  place(fc.data, r, slots, 2, "bshd", kind, sq == sk && r.chance(0.5), fc.data.align(), misaligned, layout);
  if (want_lse) place(fc.f32, r, {{"lse", &plse, {B, Hq, Sq}, 0}}, 1, "bhs", kind, false, 1, false, layout);
  if (seqused) pused = place_ints(fc.i32, {B});
  fc.allocate();

  flash::ForwardArgs& a = fc.args;
  bind_qkvo(fc.data, a, kind, pq, pk, pv, po, q, k, v);
  out.o = a.o;
  fc.data.output(a.o);
  if (want_lse) {
    a.lse = out.lse = fc.f32.bind(plse, "lse");
    fc.f32.output(*a.lse);
  }
  if (seqused) {
    a.seqused_k = fc.i32.bind(pused, "seqused_k");
    fc.i32.put(*a.seqused_k, as_doubles(used));
  }
  apply_common(a, c, fc.scores);
  a.kernel = kernel;
  fc.needed = c.features(sq != sk, want_lse) | (seqused ? flash::kFeatureVarlen : 0u);
  fc.desc = fmt::format("dense forward {} b{} sq{} sk{}{} lse {} | layout {} | {}", c.describe(), batch, sq, sk,
                        seqused ? fmt::format(" seqused_k [{}]", fmt::join(used, ",")) : std::string(),
                        want_lse ? "yes" : "no", layout, call_options(fc, kernel));
  return fc;
}

// Variable-length forward: packed q, k, v, o [total, heads, head_dim] by
// cu_seqlens_q / cu_seqlens_k, sometimes seqused_k, rows past the last
// sequence, the metadata checked synchronously or through status.
// A packed case's metadata in the int32 arena: cu_seqlens_q / _k, seqused_k
// when drawn, the status words when asked; placed before the arena's
// allocate(), bound and written after it.
struct PackedSlots {
  Placed cu_q, cu_k, used, status;
};
PackedSlots place_packed(Arena& i32, const PackedSeqs& s, bool with_status) {
  PackedSlots ps;
  ps.cu_q = place_ints(i32, {s.batch + 1});
  ps.cu_k = place_ints(i32, {s.batch + 1});
  if (s.seqused) ps.used = place_ints(i32, {s.batch});
  if (with_status) ps.status = place_ints(i32, {4});
  return ps;
}
// Binds them into `a` (forward or backward arguments) with the max_seqlen
// hints and sync_check; the status view, an output, also into `status`.
template <class Args>
void bind_packed(Arena& i32, const PackedSlots& ps, const PackedSeqs& s, bool with_status, bool async, Args& a,
                 std::optional<TensorView>& status) {
  a.cu_seqlens_q = i32.bind(ps.cu_q, "cu_seqlens_q");
  a.cu_seqlens_k = i32.bind(ps.cu_k, "cu_seqlens_k");
  i32.put(*a.cu_seqlens_q, as_doubles(s.cu_q));
  i32.put(*a.cu_seqlens_k, as_doubles(s.cu_k));
  if (s.seqused) {
    a.seqused_k = i32.bind(ps.used, "seqused_k");
    i32.put(*a.seqused_k, as_doubles(s.used));
  }
  if (with_status) {
    a.status = status = i32.bind(ps.status, "status");
    i32.output(*a.status);
  }
  a.max_seqlen_q = s.max_q;
  a.max_seqlen_k = s.max_k;
  a.sync_check = !async;
}

ForwardCase make_varlen_forward(std::uint64_t seed) {
  ForwardCase fc;
  Draw r(seed);
  const auto variants = flash::forward_variants();
  const auto common = draw_common(r, variants, flash::kFeatureVarlen);
  if (!common) return skipped(std::move(fc), "no built forward variant with kFeatureVarlen runs here");
  Common& c = fc.c = *common;
  const PackedSeqs ps = draw_packed_seqs(r, c, 5, kMaxForwardWork);
  const int batch = ps.batch, rows = ps.rows_q, Tq = ps.Tq, Tk = ps.Tk, max_q = ps.max_q, max_k = ps.max_k;
  const std::vector<int>& q_lens = ps.q_lens;
  const std::vector<int>& used = ps.used;
  const std::vector<int>& cu_q = ps.cu_q;
  const std::vector<int>& cu_k = ps.cu_k;
  const bool want_lse = r.chance(0.8), async = r.chance(0.3), with_status = r.chance(0.4);
  const LayoutKind kind = draw_layout_kind(r);
  fc.caller_workspace = r.chance(0.15);
  fc.own_stream = r.chance(0.3);
  const std::string kernel = draw_kernel(r, variants, c.dtype, c.head_dim);
  const std::int64_t Hq = c.heads_q, Hkv = c.heads_kv, D = c.head_dim;

  // Inputs: rows no sequence reads (keys past seqused_k, tails) NaN.
  std::vector<double> q = normal(std::int64_t{Tq} * Hq * D, c.dtype, r, c.qk_gain);
  std::vector<double> k = normal(std::int64_t{Tk} * Hkv * D, c.dtype, r, c.qk_gain);
  std::vector<double> v = kind == LayoutKind::kv_one_view ? k : normal(std::int64_t{Tk} * Hkv * D, c.dtype, r, 1.0);
  nan_unread_rows(ps, {&q}, {&k, &v}, Hq * D, Hkv * D);
  fc.scores = score_inputs(c, batch, r);

  AttentionOutputs& out = fc.out;
  out.rows = rows;
  out.resize(c.heads_q, c.head_dim);
  for (int b = 0; b < batch; ++b)
    if (q_lens[b] > 0)
      out.add(flash::reference::forward(ref_problem(c, fc.scores, 1, q_lens[b], used[b], b),
                                        rows_of(q, cu_q[b], q_lens[b], Hq * D), rows_of(k, cu_k[b], used[b], Hkv * D),
                                        rows_of(v, cu_k[b], used[b], Hkv * D), c.dtype),
              b, cu_q[b], q_lens[b], c.heads_q, c.head_dim);

  fc.data = Arena(c.dtype, kNaN);
  std::string layout = kLayoutNames[static_cast<int>(kind)];
  Placed pq, pk, pv, po, plse;
  std::vector<Slot> slots = {{"q", &pq, {Tq, Hq, D}, 0}, {"o", &po, {Tq, Hq, D}, 0}, {"k", &pk, {Tk, Hkv, D}, 1}};
  if (kind != LayoutKind::kv_one_view) slots.push_back({"v", &pv, {Tk, Hkv, D}, 1});
  place(fc.data, r, slots, 1, "thd", kind, Tq == Tk && r.chance(0.5), fc.data.align(), false, layout);
  if (want_lse) place(fc.f32, r, {{"lse", &plse, {Hq, Tq}, 0}}, 0, "ht", LayoutKind::strided, false, 1, false, layout);
  const PackedSlots meta = place_packed(fc.i32, ps, with_status);
  fc.allocate();

  flash::ForwardArgs& a = fc.args;
  bind_qkvo(fc.data, a, kind, pq, pk, pv, po, q, k, v);
  out.o = a.o;
  out.o.shape[0] = rows;
  fc.data.output(out.o);
  if (want_lse) {
    a.lse = fc.f32.bind(plse, "lse");
    out.lse = *a.lse;
    out.lse->shape[1] = rows;
    fc.f32.output(*out.lse);
  }
  bind_packed(fc.i32, meta, ps, with_status, async, a, out.status);
  apply_common(a, c, fc.scores);
  a.kernel = kernel;
  fc.needed = c.features(max_q != max_k, want_lse) | flash::kFeatureVarlen;
  fc.desc = fmt::format(
      "varlen forward {} q lens [{}] k lens [{}]{} tails ({}, {}) max_seqlen ({}, {}) lse {} {}{} | layout {} | {}",
      c.describe(), fmt::join(q_lens, ","), fmt::join(ps.k_lens, ","),
      ps.seqused ? fmt::format(" seqused_k [{}]", fmt::join(used, ",")) : std::string(), Tq - rows, Tk - ps.rows_k,
      max_q, max_k, want_lse ? "yes" : "no", async ? "async" : "sync_check", with_status ? " + status" : "", layout,
      call_options(fc, kernel));
  return fc;
}

// Paged prefill: dense [batch, seqlen_q] or packed queries against K/V pages
// through a shuffled page table; unused pages and rows NaN.
ForwardCase make_paged_forward(std::uint64_t seed) {
  ForwardCase fc;
  Draw r(seed);
  const auto variants = flash::forward_variants();
  const auto common = draw_common(r, variants, flash::kFeaturePaged);
  if (!common) return skipped(std::move(fc), "no built forward variant with kFeaturePaged runs here");
  Common& c = fc.c = *common;
  const int page = r.pick<int>({16, 32, 64, 128, 256});
  const bool packed = r.chance(0.4);
  const int batch = packed ? r.uniform(1, 5) : r.uniform(1, 3);
  const bool seqused = packed || r.chance(0.7);
  std::vector<int> q_lens(static_cast<std::size_t>(batch)), keys(q_lens.size());
  if (packed) {
    for (int& n : q_lens) n = std::min(draw_packed_length(r), 150);
  } else {
    std::fill(q_lens.begin(), q_lens.end(), r.chance(0.2) ? 1 : r.uniform(1, 150));
  }
  int table_pages = 1;
  if (seqused) {
    for (int b = 0; b < batch; ++b) {  // a chunk at the end of its prefix, fewer keys than queries, or unrelated
      const int m = r.uniform(0, 9);
      keys[b] = m < 4 ? std::min(q_lens[b] + r.uniform(0, 250), kMaxCachedKeys)
                      : m < 6 ? r.uniform(0, q_lens[b]) : r.uniform(0, kMaxCachedKeys);
    }
  } else {
    table_pages = r.uniform(1, (kMaxCachedKeys + page - 1) / page);
    std::fill(keys.begin(), keys.end(), table_pages * page);
  }
  const auto work = [&] {
    double w = 0;
    for (int b = 0; b < batch; ++b) w += static_cast<double>(q_lens[b]) * keys[b];
    return w * c.heads_q * c.head_dim;
  };
  while (work() > kMaxForwardWork) {
    for (int& n : q_lens) n = (n + 1) / 2;
    if (seqused) {
      for (int& n : keys) n /= 2;
    } else if (table_pages > 1) {
      --table_pages;
      std::fill(keys.begin(), keys.end(), table_pages * page);
    }
  }
  std::vector<int> needed(q_lens.size());
  int used_pages = 0;
  for (int b = 0; b < batch; ++b) used_pages += needed[b] = (keys[b] + page - 1) / page;
  const int max_pages =
      seqused ? std::max(1, *std::max_element(needed.begin(), needed.end())) + r.uniform(0, 2) : table_pages;
  const int capacity = max_pages * page;
  const int num_pages = std::max(1, used_pages + r.uniform(0, 3));
  std::vector<int> perm(static_cast<std::size_t>(num_pages));
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), r.rng());
  std::vector<int> table(static_cast<std::size_t>(batch) * max_pages);
  for (int b = 0, next = 0; b < batch; ++b)  // entries no key reaches: anything
    for (int i = 0; i < max_pages; ++i)
      table[b * max_pages + i] = i < needed[b] ? perm[next++] : r.pick<int>({-1, num_pages + 3, -1000});
  const std::vector<int> cu_q = prefix_sums(q_lens);
  const int rows = cu_q.back(), tail_q = packed && r.chance(0.5) ? r.uniform(1, 8) : 0, Tq = rows + tail_q;
  const int Sq = packed ? 0 : q_lens[0];
  const bool loose = r.chance(0.2);
  const int max_q = loose ? Tq : *std::max_element(q_lens.begin(), q_lens.end());
  const int max_k = loose ? capacity : *std::max_element(keys.begin(), keys.end());
  const bool want_lse = r.chance(0.8), async = r.chance(0.3), with_status = r.chance(0.4);
  const std::int64_t table_pad = r.chance(0.5) ? r.uniform(1, 5) : 0;
  const LayoutKind kind = draw_layout_kind(r);
  fc.caller_workspace = r.chance(0.15);
  fc.own_stream = r.chance(0.3);
  const std::string kernel = draw_kernel(r, variants, c.dtype, c.head_dim);
  const std::int64_t Hq = c.heads_q, Hkv = c.heads_kv, D = c.head_dim, P = num_pages, S = page;

  // Queries (packed rows past the last sequence NaN); each sequence's keys,
  // scattered into pages that are NaN wherever no key lies.
  std::vector<double> q = normal(std::int64_t{Tq} * Hq * D, c.dtype, r, c.qk_gain);
  std::fill(q.begin() + std::int64_t{rows} * Hq * D, q.end(), kNaN);
  std::vector<double> k_pages(static_cast<std::size_t>(P * S * Hkv * D), kNaN), v_pages = k_pages;
  std::vector<std::vector<double>> k_seq, v_seq;
  for (int b = 0; b < batch; ++b) {
    k_seq.push_back(normal(std::int64_t{keys[b]} * Hkv * D, c.dtype, r, c.qk_gain));
    v_seq.push_back(kind == LayoutKind::kv_one_view ? k_seq.back()
                                                    : normal(std::int64_t{keys[b]} * Hkv * D, c.dtype, r, 1.0));
    for (int j = 0; j < keys[b]; ++j) {
      const std::int64_t at = (std::int64_t{table[b * max_pages + j / page]} * S + j % page) * Hkv * D;
      std::copy_n(k_seq[b].begin() + std::int64_t{j} * Hkv * D, Hkv * D, k_pages.begin() + at);
      std::copy_n(v_seq[b].begin() + std::int64_t{j} * Hkv * D, Hkv * D, v_pages.begin() + at);
    }
  }
  fc.scores = score_inputs(c, batch, r);

  AttentionOutputs& out = fc.out;
  out.rows = rows;
  out.dense_seqlen_q = Sq;
  out.resize(c.heads_q, c.head_dim);
  for (int b = 0; b < batch; ++b)
    if (q_lens[b] > 0)
      out.add(flash::reference::forward(ref_problem(c, fc.scores, 1, q_lens[b], keys[b], b),
                                        rows_of(q, cu_q[b], q_lens[b], Hq * D), k_seq[b], v_seq[b], c.dtype),
              b, cu_q[b], q_lens[b], c.heads_q, c.head_dim);

  fc.data = Arena(c.dtype, kNaN);
  std::string layout = kLayoutNames[static_cast<int>(kind)];
  Placed pq, po, pk, pv, plse, ptable, pcu_q, pused, pstatus;
  const std::vector<std::int64_t> q_shape = packed ? std::vector<std::int64_t>{Tq, Hq, D}
                                                   : std::vector<std::int64_t>{batch, Sq, Hq, D};
  place(fc.data, r, {{"q", &pq, q_shape, 0}, {"o", &po, q_shape, 0}}, packed ? 1 : 2, packed ? "thd" : "bshd", kind,
        false, fc.data.align(), false, layout);
  std::vector<Slot> pages = {{"k pages", &pk, {P, S, Hkv, D}, 0}};
  if (kind != LayoutKind::kv_one_view) pages.push_back({"v pages", &pv, {P, S, Hkv, D}, 0});
  place(fc.data, r, pages, 2, "pshd", kind, false, fc.data.align(), false, layout);
  if (want_lse)
    place(fc.f32, r,
          {{"lse", &plse, packed ? std::vector<std::int64_t>{Hq, Tq} : std::vector<std::int64_t>{batch, Hq, Sq}, 0}},
          0, packed ? "ht" : "bhs", LayoutKind::strided, false, 1, false, layout);
  ptable = place_ints(fc.i32, {batch, max_pages}, table_pad);
  if (packed) pcu_q = place_ints(fc.i32, {batch + 1});
  if (seqused) pused = place_ints(fc.i32, {batch});
  if (with_status) pstatus = place_ints(fc.i32, {4});
  fc.allocate();

  flash::ForwardArgs& a = fc.args;
  bind_qkvo(fc.data, a, kind, pq, pk, pv, po, q, k_pages, v_pages, "k pages", "v pages");
  out.o = a.o;
  if (packed) out.o.shape[0] = rows;
  fc.data.output(out.o);
  if (want_lse) {
    a.lse = fc.f32.bind(plse, "lse");
    out.lse = *a.lse;
    if (packed) out.lse->shape[1] = rows;
    fc.f32.output(*out.lse);
  }
  a.page_table = fc.i32.bind(ptable, "page_table");
  fc.i32.put(*a.page_table, as_doubles(table));
  if (packed) {
    a.cu_seqlens_q = fc.i32.bind(pcu_q, "cu_seqlens_q");
    fc.i32.put(*a.cu_seqlens_q, as_doubles(cu_q));
    a.max_seqlen_q = max_q;
    a.max_seqlen_k = max_k;
  }
  if (seqused) {
    a.seqused_k = fc.i32.bind(pused, "seqused_k");
    fc.i32.put(*a.seqused_k, as_doubles(keys));
  }
  if (with_status) {
    a.status = out.status = fc.i32.bind(pstatus, "status");
    fc.i32.output(*a.status);
  }
  a.sync_check = !async;
  apply_common(a, c, fc.scores);
  a.kernel = kernel;
  const bool unequal = packed ? max_q != max_k : Sq != capacity;
  fc.needed = c.features(unequal, want_lse) | flash::kFeaturePaged | (seqused ? flash::kFeatureVarlen : 0u);
  fc.desc = fmt::format(
      "paged forward {} {} q lens [{}] keys [{}]{} page {} max_pages {} pages {} table pad {} tail_q {} lse {} {}{} | "
      "layout {} | {}",
      c.describe(), packed ? "packed" : "dense", fmt::join(q_lens, ","), fmt::join(keys, ","),
      seqused ? " (seqused_k)" : " (the table's capacity)", page, max_pages, num_pages, table_pad, tail_q,
      want_lse ? "yes" : "no", async ? "async" : "sync_check", with_status ? " + status" : "", layout,
      call_options(fc, kernel));
  return fc;
}

// Forward cases by kind: 0 dense, 1 variable-length, 2 paged.
ForwardCase make_forward(int kind, std::uint64_t seed) {
  return kind == 0 ? make_dense_forward(seed) : kind == 1 ? make_varlen_forward(seed) : make_paged_forward(seed);
}

// Dense backward: O and the LSE from the fp64 forward (a forward bug cannot
// hide a backward one), random dO; dsinks with sinks; deterministic mode
// run twice.
// The rest of a backward's arguments once bind_qkvo has bound q, k, v, o: o,
// dout and the LSE uploaded; dq, dk, dv (and dsinks when placed) bound and
// registered as outputs, the case's views of dq / dk / dv trimmed to the rows
// the call writes along dimension 0 (rows_q, rows_k; packed calls leave the
// rows past their last sequence alone) when rows_q >= 0.
void bind_gradients(BackwardCase& bc, const Placed& pdo, const Placed& plse, const Placed& pdq, const Placed& pdk,
                    const Placed& pdv, const Placed* pdsinks, const std::vector<double>& o,
                    const std::vector<double>& dout, const std::vector<double>& lse, std::int64_t rows_q = -1,
                    std::int64_t rows_k = -1) {
  flash::BackwardArgs& a = bc.args;
  a.dout = bc.data.bind(pdo, "dout");
  a.lse = bc.f32.bind(plse, "lse");
  bc.data.put(a.o, o);
  bc.data.put(a.dout, dout);
  bc.f32.put(a.lse, lse);
  a.dq = bc.dq = bc.data.bind(pdq, "dq");
  a.dk = bc.dk = bc.data.bind(pdk, "dk");
  a.dv = bc.dv = bc.data.bind(pdv, "dv");
  if (rows_q >= 0) {
    bc.dq.shape[0] = rows_q;
    bc.dk.shape[0] = bc.dv.shape[0] = rows_k;
  }
  for (const TensorView& t : {bc.dq, bc.dk, bc.dv}) bc.data.output(t);
  if (pdsinks != nullptr) {
    a.dsinks = bc.dsinks = bc.f32.bind(*pdsinks, "dsinks");
    bc.f32.output(*a.dsinks);
  }
}

BackwardCase make_dense_backward(std::uint64_t seed) {
  BackwardCase bc;
  Draw r(seed);
  const auto variants = flash::backward_variants();
  const auto common = draw_common(r, variants, 0);
  if (!common) return skipped(std::move(bc), "no built backward variant runs here");
  Common& c = bc.c = *common;
  int batch = r.uniform(1, 3);
  auto [sq, sk] = draw_seqlens(r);
  fit_work(batch, c, sq, sk, kMaxBackwardWork);
  const bool deterministic =
      r.chance(0.3) && any_variant_has(variants, c.dtype, c.head_dim, flash::kFeatureDeterministic);
  const bool with_dsinks = c.sinks && r.chance(0.8);
  const LayoutKind kind = draw_layout_kind(r);
  bc.caller_workspace = r.chance(0.15);
  bc.own_stream = r.chance(0.3);
  const std::string kernel = draw_kernel(r, variants, c.dtype, c.head_dim);
  const std::int64_t B = batch, Sq = sq, Sk = sk, Hq = c.heads_q, Hkv = c.heads_kv, D = c.head_dim;

  const std::vector<double> q = normal(B * Sq * Hq * D, c.dtype, r, c.qk_gain);
  const std::vector<double> k = normal(B * Sk * Hkv * D, c.dtype, r, c.qk_gain);
  const std::vector<double> v = kind == LayoutKind::kv_one_view ? k : normal(B * Sk * Hkv * D, c.dtype, r, 1.0);
  const std::vector<double> dout = normal(B * Sq * Hq * D, c.dtype, r, 1.0);
  bc.scores = score_inputs(c, batch, r);
  const auto rp = ref_problem(c, bc.scores, batch, sq, sk);
  const auto fwd = flash::reference::forward(rp, q, k, v);
  const auto g = flash::reference::backward(rp, q, k, v, dout, 0, c.dtype);
  bc.dq_want = {g.dq, g.dq_lowp};
  bc.dk_want = {g.dk, g.dk_lowp};
  bc.dv_want = {g.dv, g.dv_lowp};
  bc.dsinks_want = {g.dsinks, g.dsinks_lowp};

  bc.data = Arena(c.dtype, kNaN);
  std::string layout = kLayoutNames[static_cast<int>(kind)];
  Placed pq, pk, pv, po, pdo, pdq, pdk, pdv, plse, pdsinks;
  std::vector<Slot> slots = {{"q", &pq, {B, Sq, Hq, D}, 0},    {"o", &po, {B, Sq, Hq, D}, 0},
                             {"dout", &pdo, {B, Sq, Hq, D}, 0}, {"dq", &pdq, {B, Sq, Hq, D}, 0},
                             {"k", &pk, {B, Sk, Hkv, D}, 1},    {"dk", &pdk, {B, Sk, Hkv, D}, 1},
                             {"dv", &pdv, {B, Sk, Hkv, D}, 1}};
  if (kind != LayoutKind::kv_one_view) slots.push_back({"v", &pv, {B, Sk, Hkv, D}, 1});
  place(bc.data, r, slots, 2, "bshd", kind, sq == sk && r.chance(0.5), bc.data.align(), false, layout);
  place(bc.f32, r, {{"lse", &plse, {B, Hq, Sq}, 0}}, 1, "bhs", kind, false, 1, false, layout);
  if (with_dsinks) {
    pdsinks.offset = bc.f32.reserve(Hq);
    pdsinks.view = make_tensor(DType::f32, {Hq}, {1});
  }
  bc.allocate();

  flash::BackwardArgs& a = bc.args;
  bind_qkvo(bc.data, a, kind, pq, pk, pv, po, q, k, v);
  // (o rounded to the dtype on its way in, as a forward would store it)
  bind_gradients(bc, pdo, plse, pdq, pdk, pdv, with_dsinks ? &pdsinks : nullptr, fwd.o, dout, fwd.lse);
  apply_common(a, c, bc.scores);
  a.deterministic = bc.twice = deterministic;
  a.kernel = kernel;
  bc.needed = c.features(sq != sk, false) | (deterministic ? flash::kFeatureDeterministic : 0u);
  bc.desc = fmt::format("dense backward {} b{} sq{} sk{} dsinks {}{} | layout {} | {}", c.describe(), batch, sq, sk,
                        with_dsinks ? "yes" : "no", deterministic ? " deterministic" : "", layout,
                        call_options(bc, kernel));
  return bc;
}

// Variable-length backward: packed q, k, v, o, dout, dq, dk, dv; dk and dv
// 0 on a sequence's keys past seqused_k; rows past the last sequence left alone.
BackwardCase make_varlen_backward(std::uint64_t seed) {
  BackwardCase bc;
  Draw r(seed);
  const auto variants = flash::backward_variants();
  const auto common = draw_common(r, variants, flash::kFeatureVarlen);
  if (!common) return skipped(std::move(bc), "no built backward variant with kFeatureVarlen runs here");
  Common& c = bc.c = *common;
  const PackedSeqs ps = draw_packed_seqs(r, c, 4, kMaxBackwardWork);
  const int batch = ps.batch, rows_q = ps.rows_q, rows_k = ps.rows_k, Tq = ps.Tq, Tk = ps.Tk;
  const int max_q = ps.max_q, max_k = ps.max_k;
  const std::vector<int>& q_lens = ps.q_lens;
  const std::vector<int>& used = ps.used;
  const std::vector<int>& cu_q = ps.cu_q;
  const std::vector<int>& cu_k = ps.cu_k;
  const bool deterministic = r.chance(0.3) && any_variant_has(variants, c.dtype, c.head_dim,
                                                              flash::kFeatureDeterministic | flash::kFeatureVarlen);
  const bool with_dsinks = c.sinks && r.chance(0.8), async = r.chance(0.3), with_status = r.chance(0.4);
  const LayoutKind kind = draw_layout_kind(r);
  bc.caller_workspace = r.chance(0.15);
  bc.own_stream = r.chance(0.3);
  const std::string kernel = draw_kernel(r, variants, c.dtype, c.head_dim);
  const std::int64_t Hq = c.heads_q, Hkv = c.heads_kv, D = c.head_dim;

  std::vector<double> q = normal(std::int64_t{Tq} * Hq * D, c.dtype, r, c.qk_gain);
  std::vector<double> k = normal(std::int64_t{Tk} * Hkv * D, c.dtype, r, c.qk_gain);
  std::vector<double> v = kind == LayoutKind::kv_one_view ? k : normal(std::int64_t{Tk} * Hkv * D, c.dtype, r, 1.0);
  std::vector<double> dout = normal(std::int64_t{Tq} * Hq * D, c.dtype, r, 1.0);
  nan_unread_rows(ps, {&q, &dout}, {&k, &v}, Hq * D, Hkv * D);
  bc.scores = score_inputs(c, batch, r);

  // Per sequence: O and the LSE from the fp64 forward, then the gradients.
  std::vector<double> o(q.size(), kNaN), lse(static_cast<std::size_t>(Hq * Tq), kNaN);
  bc.dq_want.resize(static_cast<std::size_t>(rows_q * Hq * D));
  bc.dk_want.resize(static_cast<std::size_t>(rows_k * Hkv * D));
  bc.dv_want.resize(bc.dk_want.ref.size());
  if (c.sinks) bc.dsinks_want.resize(static_cast<std::size_t>(Hq));
  for (int b = 0; b < batch; ++b) {
    const auto rp = ref_problem(c, bc.scores, 1, q_lens[b], used[b], b);
    const auto qb = rows_of(q, cu_q[b], q_lens[b], Hq * D), dob = rows_of(dout, cu_q[b], q_lens[b], Hq * D);
    const auto kb = rows_of(k, cu_k[b], used[b], Hkv * D), vb = rows_of(v, cu_k[b], used[b], Hkv * D);
    const auto fwd = flash::reference::forward(rp, qb, kb, vb);
    const auto g = flash::reference::backward(rp, qb, kb, vb, dob, 0, c.dtype);
    std::copy(fwd.o.begin(), fwd.o.end(), o.begin() + std::int64_t{cu_q[b]} * Hq * D);
    for (std::int64_t h = 0; h < Hq; ++h)
      for (int i = 0; i < q_lens[b]; ++i) lse[h * Tq + cu_q[b] + i] = fwd.lse[h * q_lens[b] + i];
    const auto at_q = std::int64_t{cu_q[b]} * Hq * D, at_k = std::int64_t{cu_k[b]} * Hkv * D;
    std::copy(g.dq.begin(), g.dq.end(), bc.dq_want.ref.begin() + at_q);
    std::copy(g.dq_lowp.begin(), g.dq_lowp.end(), bc.dq_want.lowp.begin() + at_q);
    std::copy(g.dk.begin(), g.dk.end(), bc.dk_want.ref.begin() + at_k);  // keys past seqused_k: 0
    std::copy(g.dk_lowp.begin(), g.dk_lowp.end(), bc.dk_want.lowp.begin() + at_k);
    std::copy(g.dv.begin(), g.dv.end(), bc.dv_want.ref.begin() + at_k);
    std::copy(g.dv_lowp.begin(), g.dv_lowp.end(), bc.dv_want.lowp.begin() + at_k);
    for (std::size_t h = 0; h < g.dsinks.size(); ++h) {
      bc.dsinks_want.ref[h] += g.dsinks[h];
      bc.dsinks_want.lowp[h] += g.dsinks_lowp[h];
    }
  }

  bc.data = Arena(c.dtype, kNaN);
  std::string layout = kLayoutNames[static_cast<int>(kind)];
  Placed pq, pk, pv, po, pdo, pdq, pdk, pdv, plse, pdsinks;
  std::vector<Slot> slots = {{"q", &pq, {Tq, Hq, D}, 0},  {"o", &po, {Tq, Hq, D}, 0},   {"dout", &pdo, {Tq, Hq, D}, 0},
                             {"dq", &pdq, {Tq, Hq, D}, 0}, {"k", &pk, {Tk, Hkv, D}, 1}, {"dk", &pdk, {Tk, Hkv, D}, 1},
                             {"dv", &pdv, {Tk, Hkv, D}, 1}};
  if (kind != LayoutKind::kv_one_view) slots.push_back({"v", &pv, {Tk, Hkv, D}, 1});
  place(bc.data, r, slots, 1, "thd", kind, Tq == Tk && r.chance(0.5), bc.data.align(), false, layout);
  place(bc.f32, r, {{"lse", &plse, {Hq, Tq}, 0}}, 0, "ht", LayoutKind::strided, false, 1, false, layout);
  if (with_dsinks) {
    pdsinks.offset = bc.f32.reserve(Hq);
    pdsinks.view = make_tensor(DType::f32, {Hq}, {1});
  }
  const PackedSlots meta = place_packed(bc.i32, ps, with_status);
  bc.allocate();

  flash::BackwardArgs& a = bc.args;
  bind_qkvo(bc.data, a, kind, pq, pk, pv, po, q, k, v);
  bind_gradients(bc, pdo, plse, pdq, pdk, pdv, with_dsinks ? &pdsinks : nullptr, o, dout, lse, rows_q, rows_k);
  bind_packed(bc.i32, meta, ps, with_status, async, a, bc.status);
  apply_common(a, c, bc.scores);
  a.deterministic = bc.twice = deterministic;
  a.kernel = kernel;
  bc.needed = c.features(max_q != max_k, false) | flash::kFeatureVarlen |
              (deterministic ? flash::kFeatureDeterministic : 0u);
  bc.desc = fmt::format(
      "varlen backward {} q lens [{}] k lens [{}]{} tails ({}, {}) max_seqlen ({}, {}) dsinks {}{} {}{} | layout {} | "
      "{}",
      c.describe(), fmt::join(q_lens, ","), fmt::join(ps.k_lens, ","),
      ps.seqused ? fmt::format(" seqused_k [{}]", fmt::join(used, ",")) : std::string(), Tq - rows_q, Tk - rows_k,
      max_q, max_k, with_dsinks ? "yes" : "no", deterministic ? " deterministic" : "", async ? "async" : "sync_check",
      with_status ? " + status" : "", layout, call_options(bc, kernel));
  return bc;
}

// Decode: new tokens (dense [batch, seqlen_q] or packed by cu_seqlens_q)
// against a contiguous or paged cache of ragged lengths, sometimes after
// appending k_new / v_new; cache rows past a sequence's keys NaN.
DecodeCase make_decode(std::uint64_t seed) {
  DecodeCase dc;
  Draw r(seed);
  const auto variants = flash::decode_variants();
  const auto common = draw_common(r, variants, 0);
  if (!common) return skipped(std::move(dc), "no built decode variant runs here");
  Common& c = dc.c = *common;
  const int batch = r.uniform(1, 4);
  const bool varlen = r.chance(0.2) && any_variant_has(variants, c.dtype, c.head_dim, flash::kFeatureVarlen);
  const int seqlen_q = r.chance(0.5) ? 1 : r.uniform(2, 6);
  std::vector<int> q_lens(static_cast<std::size_t>(batch), seqlen_q);
  if (varlen)
    for (int& n : q_lens) n = r.uniform(0, 4);
  const int m = r.uniform(0, 9);
  const int seqlen_new = varlen ? 0 : m < 4 ? seqlen_q : m < 6 ? r.uniform(1, 4) : 0;
  const bool paged = r.chance(0.5);
  const int page = paged ? r.pick<int>({1, 4, 16, 16, 32, 64, 128, 256}) : 0;
  const int target = r.uniform(std::max(1, seqlen_new), kMaxCachedKeys);
  const int max_pages = paged ? (target + page - 1) / page + r.uniform(0, 1) : 0;
  const int capacity = paged ? max_pages * page : target;
  const int room = capacity - seqlen_new;
  std::vector<int> lens(q_lens.size()), keys(q_lens.size());
  for (int b = 0; b < batch; ++b) {
    const int d = r.uniform(0, 9);
    lens[b] = d == 0 ? 0 : d == 1 ? room : r.uniform(0, room);
    keys[b] = lens[b] + seqlen_new;
  }
  std::vector<int> table;
  int num_pages = 0;
  if (paged) {
    std::vector<int> needed(q_lens.size());
    for (int b = 0; b < batch; ++b) num_pages += needed[b] = (keys[b] + page - 1) / page;
    num_pages = std::max(1, num_pages + r.uniform(0, 3));
    std::vector<int> perm(static_cast<std::size_t>(num_pages));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), r.rng());
    table.resize(static_cast<std::size_t>(batch) * max_pages);
    for (int b = 0, next = 0; b < batch; ++b)
      for (int i = 0; i < max_pages; ++i)
        table[b * max_pages + i] = i < needed[b] ? perm[next++] : r.pick<int>({-1, num_pages + 3, -1000});
  }
  const std::vector<int> cu_q = prefix_sums(q_lens);
  const int rows = cu_q.back(), tail_q = varlen && r.chance(0.5) ? r.uniform(1, 4) : 0, Tq = rows + tail_q;
  const int max_q = varlen && r.chance(0.2) ? Tq : *std::max_element(q_lens.begin(), q_lens.end());
  const int splits_draw = r.uniform(0, 9);
  const int num_splits = splits_draw < 5 ? 0 : splits_draw < 9 ? r.uniform(1, 8) : r.uniform(9, 64);
  const bool want_lse = r.chance(0.8), async = r.chance(0.3), with_status = r.chance(0.4);
  const std::int64_t table_pad = r.chance(0.5) ? r.uniform(1, 5) : 0;
  LayoutKind kind = draw_layout_kind(r);
  if (kind == LayoutKind::kv_one_view && seqlen_new > 0) kind = LayoutKind::packed;  // appended caches are outputs
  dc.caller_workspace = r.chance(0.15);
  dc.own_stream = r.chance(0.3);
  const std::string kernel = draw_kernel(r, variants, c.dtype, c.head_dim);
  const std::int64_t Hq = c.heads_q, Hkv = c.heads_kv, D = c.head_dim, B = batch, New = seqlen_new;
  const std::int64_t blocks = paged ? num_pages : batch, block_rows = paged ? page : capacity;

  // The cache before and after the append: row `at(b, j)` holds key j of
  // sequence b; rows no sequence reaches are NaN.
  const auto at = [&](int b, int j) {
    return paged ? std::int64_t{table[b * max_pages + j / page]} * page + j % page : std::int64_t{b} * capacity + j;
  };
  std::vector<double> k_before(static_cast<std::size_t>(blocks * block_rows * Hkv * D), kNaN), v_before = k_before;
  for (int b = 0; b < batch; ++b)
    for (int j = 0; j < lens[b]; ++j) {
      const auto kr = normal(Hkv * D, c.dtype, r, c.qk_gain), vr = normal(Hkv * D, c.dtype, r, 1.0);
      std::copy(kr.begin(), kr.end(), k_before.begin() + at(b, j) * Hkv * D);
      std::copy(vr.begin(), vr.end(), v_before.begin() + at(b, j) * Hkv * D);
    }
  if (kind == LayoutKind::kv_one_view) v_before = k_before;
  const std::vector<double> k_new = normal(B * New * Hkv * D, c.dtype, r, c.qk_gain);
  const std::vector<double> v_new = normal(B * New * Hkv * D, c.dtype, r, 1.0);
  std::vector<double> k_after = k_before, v_after = v_before;
  for (int b = 0; b < batch; ++b)
    for (int i = 0; i < seqlen_new; ++i) {
      std::copy_n(k_new.begin() + (b * New + i) * Hkv * D, Hkv * D, k_after.begin() + at(b, lens[b] + i) * Hkv * D);
      std::copy_n(v_new.begin() + (b * New + i) * Hkv * D, Hkv * D, v_after.begin() + at(b, lens[b] + i) * Hkv * D);
    }
  std::vector<double> q = normal(std::int64_t{Tq} * Hq * D, c.dtype, r, c.qk_gain);
  std::fill(q.begin() + std::int64_t{rows} * Hq * D, q.end(), kNaN);
  dc.scores = score_inputs(c, batch, r);

  AttentionOutputs& out = dc.out;
  out.rows = rows;
  out.dense_seqlen_q = varlen ? 0 : seqlen_q;
  out.resize(c.heads_q, c.head_dim);
  for (int b = 0; b < batch; ++b) {
    if (q_lens[b] == 0) continue;
    std::vector<double> kb(static_cast<std::size_t>(keys[b] * Hkv * D)), vb(kb.size());
    for (int j = 0; j < keys[b]; ++j) {
      std::copy_n(k_after.begin() + at(b, j) * Hkv * D, Hkv * D, kb.begin() + std::int64_t{j} * Hkv * D);
      std::copy_n(v_after.begin() + at(b, j) * Hkv * D, Hkv * D, vb.begin() + std::int64_t{j} * Hkv * D);
    }
    out.add(flash::reference::forward(ref_problem(c, dc.scores, 1, q_lens[b], keys[b], b),
                                      rows_of(q, cu_q[b], q_lens[b], Hq * D), kb, vb, c.dtype),
            b, cu_q[b], q_lens[b], c.heads_q, c.head_dim);
  }

  dc.data = Arena(c.dtype, kNaN);
  std::string layout = kLayoutNames[static_cast<int>(kind)];
  Placed pq, po, pk, pv, pkn, pvn, plse, plens, ptable, pcu_q, pstatus;
  const std::vector<std::int64_t> q_shape = varlen ? std::vector<std::int64_t>{Tq, Hq, D}
                                                   : std::vector<std::int64_t>{B, seqlen_q, Hq, D};
  place(dc.data, r, {{"q", &pq, q_shape, 0}, {"o", &po, q_shape, 0}}, varlen ? 1 : 2, varlen ? "thd" : "bshd", kind,
        false, dc.data.align(), false, layout);
  std::vector<Slot> caches = {{"k_cache", &pk, {blocks, block_rows, Hkv, D}, 0}};
  if (kind != LayoutKind::kv_one_view) caches.push_back({"v_cache", &pv, {blocks, block_rows, Hkv, D}, 0});
  place(dc.data, r, caches, 2, paged ? "pshd" : "bshd", kind, false, dc.data.align(), false, layout);
  if (seqlen_new > 0)
    place(dc.data, r, {{"k_new", &pkn, {B, New, Hkv, D}, 0}, {"v_new", &pvn, {B, New, Hkv, D}, 0}}, 2, "bshd", kind,
          false, dc.data.align(), false, layout);
  if (want_lse)
    place(dc.f32, r,
          {{"lse", &plse, varlen ? std::vector<std::int64_t>{Hq, Tq} : std::vector<std::int64_t>{B, Hq, seqlen_q}, 0}},
          0, varlen ? "ht" : "bhs", LayoutKind::strided, false, 1, false, layout);
  plens = place_ints(dc.i32, {B});
  if (paged) ptable = place_ints(dc.i32, {B, max_pages}, table_pad);
  if (varlen) pcu_q = place_ints(dc.i32, {B + 1});
  if (with_status) pstatus = place_ints(dc.i32, {4});
  dc.allocate();

  flash::DecodeArgs& a = dc.args;
  a.q = dc.data.bind(pq, "q");
  a.o = dc.data.bind(po, "o");
  a.k_cache = dc.data.bind(pk, "k_cache");
  a.v_cache = kind == LayoutKind::kv_one_view ? a.k_cache : dc.data.bind(pv, "v_cache");
  dc.data.put(a.q, q);
  dc.data.put(a.k_cache, k_before);
  dc.data.expect(a.k_cache, k_after);
  if (kind != LayoutKind::kv_one_view) {
    dc.data.put(a.v_cache, v_before);
    dc.data.expect(a.v_cache, v_after);
  }
  if (seqlen_new > 0) {
    a.k_new = dc.data.bind(pkn, "k_new");
    a.v_new = dc.data.bind(pvn, "v_new");
    dc.data.put(*a.k_new, k_new);
    dc.data.put(*a.v_new, v_new);
  }
  out.o = a.o;
  if (varlen) out.o.shape[0] = rows;
  dc.data.output(out.o);
  if (want_lse) {
    a.lse = dc.f32.bind(plse, "lse");
    out.lse = *a.lse;
    if (varlen) out.lse->shape[1] = rows;
    dc.f32.output(*out.lse);
  }
  a.cache_seqlens = dc.i32.bind(plens, "cache_seqlens");
  dc.i32.put(a.cache_seqlens, as_doubles(lens));
  if (paged) {
    a.page_table = dc.i32.bind(ptable, "page_table");
    dc.i32.put(*a.page_table, as_doubles(table));
  }
  if (varlen) {
    a.cu_seqlens_q = dc.i32.bind(pcu_q, "cu_seqlens_q");
    dc.i32.put(*a.cu_seqlens_q, as_doubles(cu_q));
    a.max_seqlen_q = max_q;
  }
  if (with_status) {
    a.status = out.status = dc.i32.bind(pstatus, "status");
    dc.i32.output(*a.status);
  }
  a.sync_check = !async;
  a.num_splits = num_splits;
  apply_common(a, c, dc.scores);
  a.kernel = kernel;
  dc.needed = c.features((varlen ? max_q : seqlen_q) != capacity, want_lse) | (varlen ? flash::kFeatureVarlen : 0u);
  dc.desc = fmt::format(
      "decode {} {} q lens [{}] cache_seqlens [{}] append {} capacity {} {} splits {} tail_q {} lse {} {}{} | layout "
      "{} | {}",
      c.describe(), varlen ? "packed" : "dense", fmt::join(q_lens, ","), fmt::join(lens, ","), seqlen_new, capacity,
      paged ? fmt::format("page {} ({} pages, table pad {})", page, num_pages, table_pad) : std::string("contiguous"),
      num_splits, tail_q, want_lse ? "yes" : "no", async ? "async" : "sync_check", with_status ? " + status" : "",
      layout, call_options(dc, kernel));
  return dc;
}

// ---------------------------------------------------------------------------
// Running a case

void call(const flash::ForwardArgs& a) { flash::attention_forward(a); }
void call(const flash::BackwardArgs& a) { flash::attention_backward(a); }
void call(const flash::DecodeArgs& a) { flash::attention_decode(a); }
std::size_t planned_workspace(const flash::ForwardArgs& a) { return flash::plan_forward(a).workspace_bytes; }
std::size_t planned_workspace(const flash::BackwardArgs& a) { return flash::plan_backward(a).workspace_bytes; }
std::size_t planned_workspace(const flash::DecodeArgs& a) { return flash::plan_decode(a).workspace_bytes; }
std::string planned_kernel(const flash::ForwardArgs& a) { return flash::plan_forward(a).kernel; }
std::string planned_kernel(const flash::BackwardArgs& a) { return flash::plan_backward(a).kernel; }
std::string planned_kernel(const flash::DecodeArgs& a) { return flash::plan_decode(a).kernel; }
std::vector<flash::VariantInfo> variants_for(const flash::ForwardArgs&) { return flash::forward_variants(); }
std::vector<flash::VariantInfo> variants_for(const flash::BackwardArgs&) { return flash::backward_variants(); }
std::vector<flash::VariantInfo> variants_for(const flash::DecodeArgs&) { return flash::decode_variants(); }
// The views whose pointers and strides a variant's alignment applies to.
std::vector<TensorView> aligned_views(const flash::ForwardArgs& a) { return {a.q, a.k, a.v, a.o}; }
std::vector<TensorView> aligned_views(const flash::BackwardArgs& a) {
  return {a.q, a.k, a.v, a.o, a.dout, a.dq, a.dk, a.dv};
}
std::vector<TensorView> aligned_views(const flash::DecodeArgs& a) {
  std::vector<TensorView> views = {a.q, a.k_cache, a.v_cache, a.o};
  if (a.k_new) views.insert(views.end(), {*a.k_new, *a.v_new});
  return views;
}

// Whether kernel "auto" must take the call: a variant is built, runs here,
// takes the dtype and head dim, has every Feature bit the call uses and the
// alignment of its views (pointers, and the strides of every dimension but
// the last whose extent is above 1), as flash/variants.h describes them.
template <class Args> bool auto_must_take(const CaseBase& k, const Args& a) {
  const auto es = static_cast<std::int64_t>(flash::dtype_size(k.c.dtype));
  for (const auto& v : variants_for(a)) {
    if (!flash::gpu_test::runnable(v, k.c.dtype, k.c.head_dim) || (k.needed & ~v.features) != 0) continue;
    const std::int64_t align = std::max(v.alignment, 1);
    bool aligned = true;
    for (const TensorView& t : aligned_views(a)) {
      if (t.numel() == 0) continue;
      aligned = aligned && static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(t.data) % align) == 0;
      for (int d = 0; d + 1 < t.rank; ++d) aligned = aligned && (t.shape[d] <= 1 || t.stride[d] * es % align == 0);
    }
    if (aligned) return true;
  }
  return false;
}

// What running a case found.
struct Outcome {
  std::vector<std::string> failures;
  std::string skipped;  // why it did not run; empty when it ran
  std::string context;  // the variant that ran, a refusal it fell back from
};

// The arguments of one run: a named variant that refuses the call (a
// flash::Error "kernel '<name>': ...", a feature, layout or limit it lacks)
// leaves it to "auto"; with caller_workspace, a buffer of the planned size
// and some slack, filled with 0xff bytes (a call may not expect zeros).
template <class Args> void prepare(Args& a, bool caller_workspace, DeviceBuffer& workspace, std::string& note) {
  if (a.kernel != "auto") {
    try {
      planned_workspace(a);
    } catch (const flash::Error& e) {
      const std::string prefix = "kernel '" + a.kernel + "': ", what = e.what();
      if (what.rfind(prefix, 0) != 0) throw;
      note = fmt::format("{} refused the call ({}), auto ran it", a.kernel, what.substr(prefix.size()));
      a.kernel = "auto";
    }
  }
  if (caller_workspace) {
    constexpr std::size_t kSlack = 512;
    const std::size_t bytes = planned_workspace(a) + kSlack;
    workspace = DeviceBuffer(bytes);
    check(cudaMemset(workspace.get(), 0xff, bytes), "poisoning the caller's workspace");
    a.workspace = workspace.get();
    a.workspace_bytes = bytes;
  }
}

// A flash::Error from a run: auto refusing a call that no built variant can
// take skips the case; anything else fails it.
template <class Args> void on_error(const flash::Error& e, const CaseBase& k, const Args& a, Outcome& out) {
  const std::string what = e.what();
  if (a.kernel == "auto" && what.rfind("kernel auto:", 0) == 0 && !auto_must_take(k, a)) {
    out.skipped = what;  // auto's reasons, one variant a line, on one line
    std::replace(out.skipped.begin(), out.skipped.end(), '\n', ';');
  } else {
    out.failures.push_back(fmt::format("kernel {}: flash::Error: {}", a.kernel, what));
  }
}

// Uploads the case (inputs, and NaN over every output), runs it on `stream`,
// and checks what it wrote; deterministic calls run twice.
template <class Case> Outcome run_case(Case& k, cudaStream_t stream) {
  Outcome out;
  if (!k.skip.empty()) {
    out.skipped = k.skip;
    return out;
  }
  auto a = k.args;
  a.stream = stream;
  DeviceBuffer workspace;
  std::string note;
  try {
    prepare(a, k.caller_workspace, workspace, note);
    k.upload();
    call(a);
    check(cudaStreamSynchronize(stream), "the call's kernels");
    const Snapshot got = k.download();
    k.check(got, out.failures);
    if (k.twice) {
      k.upload();
      call(a);
      check(cudaStreamSynchronize(stream), "the second call's kernels");
      const std::string diff = first_difference(k.download(), got);
      if (!diff.empty()) out.failures.push_back("deterministic = true, but a second run differs: " + diff);
    }
    out.context = "ran " + planned_kernel(a) + (note.empty() ? "" : "; " + note);
  } catch (const flash::Error& e) {
    on_error(e, k, a, out);
  }
  return out;
}

// Runs the case directly on `stream` (which warms the library's workspace
// for it) and checks it, then captures the same call into a CUDA graph,
// replays it twice (the outputs poisoned again before each), and requires
// every buffer to equal the direct call's bit for bit. Calls with device
// metadata run without sync_check (a capture cannot wait).
template <class Case> Outcome run_graph(Case& k, cudaStream_t stream) {
  Outcome out;
  if (!k.skip.empty()) {
    out.skipped = k.skip;
    return out;
  }
  auto a = k.args;
  a.stream = stream;
  a.sync_check = false;
  DeviceBuffer workspace;
  std::string note;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  try {
    prepare(a, k.caller_workspace, workspace, note);
    k.upload();
    call(a);
    check(cudaStreamSynchronize(stream), "the direct call's kernels");
    const Snapshot direct = k.download();
    k.check(direct, out.failures);
    k.upload();
    check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
    try {
      call(a);
    } catch (...) {
      cudaStreamEndCapture(stream, &graph);
      throw;
    }
    check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
    check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
    for (int replay = 0; replay < 2; ++replay) {
      if (replay > 0) k.upload();
      check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
      check(cudaStreamSynchronize(stream), "the replay");
      const std::string diff = first_difference(k.download(), direct);
      if (!diff.empty())
        out.failures.push_back(fmt::format("graph replay {} differs from the direct call: {}", replay, diff));
    }
    out.context = "ran " + planned_kernel(a) + (note.empty() ? "" : "; " + note);
  } catch (const flash::Error& e) {
    on_error(e, k, a, out);
  }
  if (exec != nullptr) cudaGraphExecDestroy(exec);
  if (graph != nullptr) cudaGraphDestroy(graph);
  return out;
}

// A test's outcomes: report() adds a case's failures to the running test
// and counts it as run or skipped; summarize() closes the test with a
// summary line, and skips it when no case ran.
struct Tally {
  int ran = 0;
  std::vector<std::string> skips;

  void report(const Outcome& o) {
    for (const std::string& f : o.failures) ADD_FAILURE() << f << (o.context.empty() ? "" : " (" + o.context + ")");
    if (o.skipped.empty()) ++ran;
    else skips.push_back(o.skipped);
  }
  void summarize() const {
    fmt::print("[ fuzz     ] {} case(s) ran, {} skipped{}\n", ran, skips.size(),
               skips.empty() ? std::string() : ": " + skips.front() + (skips.size() > 1 ? " ..." : ""));
    if (ran == 0 && !skips.empty()) GTEST_SKIP() << "no case could run here: " << skips.front();
  }
};

// The cases of one test, each built by make(seed + index) and run on its
// own stream or the default one.
template <class Make> void run_cases(int count, Make&& make) {
  const std::uint64_t seed = flash::gpu_test::test_seed();
  cudaStream_t own = nullptr;
  check(cudaStreamCreate(&own), "cudaStreamCreate");
  Tally tally;
  for (const int i : case_indices(count)) {
    const std::uint64_t case_seed = seed + static_cast<std::uint64_t>(i);
    auto k = make(case_seed);
    SCOPED_TRACE(case_line(i, case_seed, k.desc));
    tally.report(run_case(k, k.own_stream ? own : nullptr));
  }
  check(cudaStreamSynchronize(own), "the cases' own stream");
  cudaStreamDestroy(own);
  tally.summarize();
}

// ---------------------------------------------------------------------------
// Tests (test_seed() mixes in the suite's and the test's name, so each test
// draws its own cases)

TEST(FuzzForward, DenseCalls) {
  SKIP_WITHOUT_GPU();
  run_cases(kDenseForwardCases, make_dense_forward);
}

TEST(FuzzForward, VarlenCalls) {
  SKIP_WITHOUT_GPU();
  run_cases(kVarlenForwardCases, make_varlen_forward);
}

TEST(FuzzForward, PagedPrefill) {
  SKIP_WITHOUT_GPU();
  run_cases(kPagedForwardCases, make_paged_forward);
}

TEST(FuzzBackward, Dense) {
  SKIP_WITHOUT_GPU();
  run_cases(kDenseBackwardCases, make_dense_backward);
}

TEST(FuzzBackward, Varlen) {
  SKIP_WITHOUT_GPU();
  run_cases(kVarlenBackwardCases, make_varlen_backward);
}

TEST(FuzzDecode, ContiguousAndPaged) {
  SKIP_WITHOUT_GPU();
  run_cases(kDecodeCases, make_decode);
}

// kThreads host threads, released together, each running its forward cases
// (dense, variable-length and paged in turn) on a stream of its own with the
// library's workspace or its own; every case is checked as when run alone.
// (The uploads and read-backs go through the legacy default stream, which
// orders them against each stream's kernels.) With FLASH_FUZZ_CASE, that
// case alone runs, on the first thread.
TEST(FuzzThreads, ConcurrentForwardCalls) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = flash::gpu_test::test_seed();
  const std::vector<int> indices = case_indices(kThreads * kCasesPerThread);
  const std::size_t n = indices.size();
  std::vector<ForwardCase> cases;
  for (const int i : indices) cases.push_back(make_forward(i % 3, seed + static_cast<std::uint64_t>(i)));
  std::vector<Outcome> outcomes(n);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      cudaStream_t stream = nullptr;
      const cudaError_t created = cudaStreamCreate(&stream);
      start.arrive_and_wait();
      for (std::size_t j = static_cast<std::size_t>(t); j < n; j += kThreads) {
        try {
          check(created, "cudaStreamCreate");
          outcomes[j] = run_case(cases[j], stream);
        } catch (const std::exception& e) {
          outcomes[j].failures.push_back(e.what());
        }
      }
      if (created == cudaSuccess) {
        cudaStreamSynchronize(stream);
        cudaStreamDestroy(stream);
      }
    });
  for (auto& th : threads) th.join();
  Tally tally;
  for (std::size_t j = 0; j < n; ++j) {
    const int i = indices[j];
    SCOPED_TRACE(fmt::format("thread {}: {}", j % kThreads,
                             case_line(i, seed + static_cast<std::uint64_t>(i), cases[j].desc)));
    tally.report(outcomes[j]);
  }
  tally.summarize();
}

// A warm call captured into a CUDA graph on a non-default stream replays to
// the direct call's bits: a dense forward, a variable-length or paged one,
// and a decode step (with its append) in turn.
TEST(FuzzThreads, GraphReplayMatchesDirectCall) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = flash::gpu_test::test_seed();
  cudaStream_t stream = nullptr;
  check(cudaStreamCreate(&stream), "cudaStreamCreate");
  Tally tally;
  for (const int i : case_indices(kGraphCases)) {
    const std::uint64_t case_seed = seed + static_cast<std::uint64_t>(i);
    Outcome o;
    std::string desc;
    if (i % 3 == 2) {
      DecodeCase k = make_decode(case_seed);
      desc = k.desc;
      o = run_graph(k, stream);
    } else {
      ForwardCase k = make_forward(i % 3 == 0 ? 0 : 1 + i / 3 % 2, case_seed);
      desc = k.desc;
      o = run_graph(k, stream);
    }
    SCOPED_TRACE(case_line(i, case_seed, desc));
    tally.report(o);
  }
  check(cudaStreamSynchronize(stream), "the graph stream");
  cudaStreamDestroy(stream);
  tally.summarize();
}

// Negative controls: on a drawn dense forward case that passes, a call that
// computes something else (twice the softmax scale), one that leaves rows
// unwritten (q and o one row short), and an input changed behind the call's
// back must each fail the checks, or the tests above would prove nothing.
TEST(FuzzChecks, MismatchUnwrittenAndStrayWritesFail) {
  SKIP_WITHOUT_GPU();
  const std::uint64_t seed = flash::gpu_test::test_seed();
  // The first draw with several keys and query rows, and no mask, softcap
  // or sink (every row's output moves with the scale), that runs here.
  std::optional<ForwardCase> found;
  for (std::uint64_t i = 0; i < 1000 && !found; ++i) {
    ForwardCase k = make_dense_forward(seed + i);
    if (!k.skip.empty() || k.args.q.shape[1] < 2 || k.args.k.shape[1] < 32 || k.c.causal || k.c.window_left >= 0 ||
        k.c.window_right >= 0 || k.c.softcap > 0.0f || k.c.sinks || k.args.seqused_k)
      continue;
    const Outcome clean = run_case(k, nullptr);
    if (!clean.skipped.empty()) continue;
    SCOPED_TRACE(fmt::format("FLASH_TEST_SEED={} (draw {}): {}", flash::gpu_test::base_seed(), i, k.desc));
    ASSERT_TRUE(clean.failures.empty()) << "the unperturbed case fails: " << clean.failures.front();
    found = std::move(k);
  }
  if (!found) GTEST_SKIP() << "no dense forward case to perturb runs here";
  ForwardCase& k = *found;
  SCOPED_TRACE(k.desc);
  const auto mentions = [](const Outcome& o, const char* what) {
    return std::any_of(o.failures.begin(), o.failures.end(),
                       [&](const std::string& f) { return f.find(what) != std::string::npos; });
  };

  const flash::ForwardArgs args = k.args;
  k.args.softmax_scale = static_cast<float>(2 * k.c.scale_value());
  EXPECT_TRUE(mentions(run_case(k, nullptr), "o: error")) << "twice the softmax scale passed the check";

  k.args = args;
  k.args.q.shape[1] -= 1;
  k.args.o.shape[1] -= 1;
  if (k.args.lse) k.args.lse->shape[2] -= 1;
  EXPECT_TRUE(mentions(run_case(k, nullptr), "unwritten")) << "a row left unwritten passed the check";

  k.args = args;
  k.args.kernel = "auto";
  k.upload();
  flash::attention_forward(k.args);
  check(cudaDeviceSynchronize(), "the call");
  check(cudaMemset(k.args.q.data, 0, 2), "changing q");  // one element of q, behind the call's back
  Outcome stray;
  k.check(k.download(), stray.failures);
  EXPECT_TRUE(mentions(stray, "outside the outputs")) << "a changed input passed the check";
}

}  // namespace
