// Argument checks shared by the entry points (forward, decode): each throws
// flash::Error naming the argument and what was expected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flash/error.h"
#include "flash/tensor.h"

namespace flash::detail {

[[noreturn]] void fail(const std::string& msg);

// "[2, 3, 4]"
std::string shape_str(const TensorView& t);

// Largest element offset a view can address: sum of (size - 1) * stride.
// Returns false when that overflows int64 (so does any index type we use).
bool max_offset(const TensorView& t, std::int64_t& out);

// A view of the given rank, non-negative sizes (each below 2^31) and
// strides, contiguous last dimension, and a pointer that is non-null and
// element-aligned unless the view is empty.
void check_view(const char* name, const TensorView& t, int rank);

// Outputs must not alias themselves.
void check_no_self_overlap(const char* name, const TensorView& t);

// t.dtype == expected, which is the dtype of q.
void check_same_dtype(const char* name, const TensorView& t, DType expected);

// t.shape[dim] == expected; `what` names the dimension, `from` where the
// expected value comes from.
void check_dim(const char* name, const TensorView& t, int dim, const char* what, std::int64_t expected,
               const char* from);

// An optional LSE output: fp32 [batch, heads_q, seqlen_q] with distinct elements.
void check_lse(const TensorView& lse, std::int64_t batch, std::int64_t heads_q, std::int64_t seqlen_q);

// The softmax scale: the given one, or 1 / sqrt(head_dim); finite and > 0.
float softmax_scale(const std::optional<float>& given, int head_dim);

// Empty when compute capability cc lies in [min_cc, max_cc] (max_cc 0: no
// upper bound), else why not.
std::string compute_capability_reason(int cc, int min_cc, int max_cc);

// Empty when t's pointer and its strides of dimensions 0-2 (those of size > 1)
// are multiples of `alignment` bytes, else why not.
std::string alignment_reason(const char* name, const TensorView& t, int alignment);

// Empty when t's largest element offset is at most max_offset (a variant's
// index limit), else why not.
std::string offset_reason(const char* name, const TensorView& t, std::int64_t max_offset);

// The variant named `kernel`, or for "auto" the last one in `registry` that
// takes the call. unsupported(r) and on_device(r) say why r cannot take it
// (empty: it can); on_device runs only for a variant that passed unsupported.
// `kind` ("" or "decode ") goes into the messages.
template <class Registered, class Unsupported, class OnDevice>
const Registered& pick_variant(const std::vector<Registered>& registry, const std::string& kernel, const char* kind,
                               Unsupported&& unsupported, OnDevice&& on_device) {
  if (kernel != "auto") {
    for (const auto& r : registry) {
      if (r.name != kernel) continue;
      std::string why = unsupported(r);
      if (why.empty()) why = on_device(r);
      if (!why.empty()) fail("kernel '" + kernel + "': " + why);
      return r;
    }
    std::string known;
    for (const auto& r : registry) known += (known.empty() ? "" : ", ") + std::string(r.name);
    fail("kernel: unknown " + std::string(kind) + "variant '" + kernel + "'; expected auto or one of: " + known);
  }
  std::string reasons;
  for (auto it = registry.rbegin(); it != registry.rend(); ++it) {
    std::string why = unsupported(*it);
    if (why.empty()) why = on_device(*it);
    if (why.empty()) return *it;
    reasons += "\n  " + std::string(it->name) + ": " + why;
  }
  fail("kernel auto: no " + std::string(kind) + "variant supports this call:" + reasons);
}

}  // namespace flash::detail
