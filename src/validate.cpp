// Argument checks shared by the entry points (validate.h).
#include "validate.h"

#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace flash::detail {

namespace {
constexpr std::int64_t kMaxDim = std::numeric_limits<int>::max();
}  // namespace
[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

std::string shape_str(const TensorView& t) {
  std::ostringstream s;
  s << '[';
  for (int i = 0; i < t.rank; ++i) s << (i ? ", " : "") << t.shape[i];
  s << ']';
  return s.str();
}

// Largest element offset a view can address: sum of (size - 1) * stride.
// Returns false when that overflows int64 (so does any index type we use).
bool max_offset(const TensorView& t, std::int64_t& out) {
  out = 0;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] == 0) { out = 0; return true; }
  }
  for (int i = 0; i < t.rank; ++i) {
    std::int64_t term = 0;
    if (__builtin_mul_overflow(t.shape[i] - 1, t.stride[i], &term)) return false;
    if (__builtin_add_overflow(out, term, &out)) return false;
  }
  std::int64_t bytes = 0;  // the byte offset of the last element must fit too
  return !__builtin_mul_overflow(out + 1, static_cast<std::int64_t>(dtype_size(t.dtype)), &bytes);
}

// A view of the given rank, non-negative sizes and strides, contiguous last
// dimension, and a pointer that is non-null and element-aligned unless the
// view is empty.
void check_view(const char* name, const TensorView& t, int rank) {
  const std::string n(name);
  if (t.rank != rank) fail(n + ": expected a rank-" + std::to_string(rank) + " view, got rank " + std::to_string(t.rank));
  for (int i = 0; i < rank; ++i) {
    if (t.shape[i] < 0) fail(n + ".shape[" + std::to_string(i) + "] = " + std::to_string(t.shape[i]) + "; expected >= 0");
    if (t.shape[i] > kMaxDim)
      fail(n + ".shape[" + std::to_string(i) + "] = " + std::to_string(t.shape[i]) + " exceeds 2^31 - 1");
    if (t.stride[i] < 0)
      fail(n + ".stride[" + std::to_string(i) + "] = " + std::to_string(t.stride[i]) + "; expected >= 0");
  }
  if (t.stride[rank - 1] != 1 && t.shape[rank - 1] > 1)
    fail(n + ".stride[" + std::to_string(rank - 1) + "] = " + std::to_string(t.stride[rank - 1]) +
         "; the last dimension must be contiguous (stride 1)");
  std::int64_t off = 0;
  if (!max_offset(t, off)) fail(n + ": shape " + shape_str(t) + " with its strides addresses offsets that overflow 64 bits");
  if (t.numel() == 0) return;
  if (t.data == nullptr) fail(n + ".data is null");
  if (reinterpret_cast<std::uintptr_t>(t.data) % dtype_size(t.dtype) != 0)
    fail(n + ".data is not aligned to its " + std::to_string(dtype_size(t.dtype)) + "-byte elements");
}

// Outputs must not alias themselves: sorted by stride, each dimension must
// step past the whole extent of the smaller ones.
void check_no_self_overlap(const char* name, const TensorView& t) {
  if (t.numel() <= 1) return;
  int order[TensorView::kMaxRank];
  for (int i = 0; i < t.rank; ++i) order[i] = i;
  for (int i = 1; i < t.rank; ++i)
    for (int j = i; j > 0 && t.stride[order[j]] < t.stride[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  std::int64_t extent = 1;  // elements spanned by the dimensions so far
  for (int i = 0; i < t.rank; ++i) {
    const int d = order[i];
    if (t.shape[d] == 1) continue;
    if (t.stride[d] < extent)
      fail(std::string(name) + ": its strides make elements overlap (dimension " + std::to_string(d) + " has stride " +
           std::to_string(t.stride[d]) + "); an output needs distinct elements");
    extent = t.stride[d] * (t.shape[d] - 1) + extent;
  }
}

void check_same_dtype(const char* name, const TensorView& t, DType expected) {
  if (t.dtype != expected)
    fail(std::string(name) + ".dtype is " + std::string(dtype_name(t.dtype)) + "; expected " +
         std::string(dtype_name(expected)) + " (the dtype of q)");
}

void check_dim(const char* name, const TensorView& t, int dim, const char* what, std::int64_t expected,
               const char* from) {
  if (t.shape[dim] != expected)
    fail(std::string(name) + ".shape[" + std::to_string(dim) + "] (" + what + ") = " + std::to_string(t.shape[dim]) +
         "; expected " + std::to_string(expected) + " (" + from + ")");
}

void check_lse(const TensorView& l, std::int64_t batch, std::int64_t heads_q, std::int64_t seqlen_q) {
  check_view("lse", l, 3);
  if (l.dtype != DType::f32) fail("lse.dtype is " + std::string(dtype_name(l.dtype)) + "; expected f32");
  check_dim("lse", l, 0, "batch", batch, "q.shape[0]");
  check_dim("lse", l, 1, "heads_q", heads_q, "q.shape[2]");
  check_dim("lse", l, 2, "seqlen_q", seqlen_q, "q.shape[1]");
  check_no_self_overlap("lse", l);
}

float softmax_scale(const std::optional<float>& given, int head_dim) {
  const float scale = given ? *given : 1.0f / std::sqrt(static_cast<float>(head_dim));
  if (!std::isfinite(scale) || scale <= 0.0f)
    fail("softmax_scale = " + std::to_string(scale) + "; expected a finite value > 0");
  return scale;
}

std::string compute_capability_reason(int cc, int min_cc, int max_cc) {
  auto str = [](int c) { return std::to_string(c / 10) + "." + std::to_string(c % 10); };
  if (cc < min_cc) return "needs compute capability " + str(min_cc) + "; this GPU has " + str(cc);
  if (max_cc != 0 && cc > max_cc)
    return "built for compute capability " + str(max_cc) + " only (architecture-specific code); this GPU has " + str(cc);
  return {};
}

std::string alignment_reason(const char* name, const TensorView& t, int alignment) {
  if (alignment <= 0 || t.numel() == 0) return {};
  if (reinterpret_cast<std::uintptr_t>(t.data) % alignment != 0)
    return std::string(name) + ".data is not " + std::to_string(alignment) + "-byte aligned";
  const auto esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (int d = 0; d < 3 && d < t.rank; ++d)
    if (t.shape[d] > 1 && (t.stride[d] * esize) % alignment != 0)
      return std::string(name) + ".stride[" + std::to_string(d) + "] = " + std::to_string(t.stride[d]) +
             " elements is not a multiple of " + std::to_string(alignment) + " bytes";
  return {};
}

std::string offset_reason(const char* name, const TensorView& t, std::int64_t max_offset) {
  std::int64_t off = 0;
  detail::max_offset(t, off);
  if (off <= max_offset) return {};
  return std::string(name) + "'s largest element offset " + std::to_string(off) + " exceeds the variant's index limit " +
         std::to_string(max_offset);
}

}  // namespace flash::detail
