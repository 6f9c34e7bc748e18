// Argument checks shared by the entry points (forward, decode): each throws
// flash::Error naming the argument and what was expected.
#pragma once

#include <cstdint>
#include <string>

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

}  // namespace flash::detail
