// flash::TensorView: a non-owning view of a device tensor (pointer, dtype, shape, strides).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string_view>

namespace flash {

// i32 is for metadata (cache lengths, page tables), not for attention tensors.
enum class DType : std::uint8_t { f32, f16, bf16, i32 };

constexpr std::size_t dtype_size(DType t) { return t == DType::f32 || t == DType::i32 ? 4 : 2; }

constexpr std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::i32: return "i32";
  }
  return "?";
}

// A view over device memory. Shapes and strides are in elements; rank is at
// most 4. Attention tensors are [batch, seqlen, heads, head_dim] with a
// contiguous last dimension, so BSHD and BHSD layouts are both just strides.
struct TensorView {
  static constexpr int kMaxRank = 4;

  void* data = nullptr;
  DType dtype = DType::bf16;
  int rank = 0;
  std::array<std::int64_t, kMaxRank> shape{};
  std::array<std::int64_t, kMaxRank> stride{};

  // The number of elements: 0 when a size is 0, else the product of the
  // sizes, saturated at INT64_MAX when it does not fit in int64 (a view
  // that validation rejects, as it rejects any negative size).
  std::int64_t numel() const {
    for (int i = 0; i < rank; ++i)
      if (shape[i] == 0) return 0;
    std::int64_t n = 1;
    for (int i = 0; i < rank; ++i)
      if (__builtin_mul_overflow(n, shape[i], &n)) return std::numeric_limits<std::int64_t>::max();
    return n;
  }
};

// A view with the given shape and strides.
inline TensorView make_view(void* data, DType dtype, std::initializer_list<std::int64_t> shape,
                            std::initializer_list<std::int64_t> stride) {
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size() < stride.size() ? shape.size() : stride.size());
  if (shape.size() != stride.size() || shape.size() > TensorView::kMaxRank) t.rank = -1;  // rejected by validation
  int i = 0;
  for (auto s : shape) if (i < TensorView::kMaxRank) t.shape[i++] = s;
  i = 0;
  for (auto s : stride) if (i < TensorView::kMaxRank) t.stride[i++] = s;
  return t;
}

// A row-major (contiguous) view with the given shape. When the product of
// the sizes does not fit in int64, the strides that would overflow are
// INT64_MAX, and validation rejects the view ("... addresses offsets that
// overflow 64 bits") unless it is empty.
inline TensorView make_contiguous(void* data, DType dtype, std::initializer_list<std::int64_t> shape) {
  TensorView t;
  t.data = data;
  t.dtype = dtype;
  t.rank = shape.size() <= TensorView::kMaxRank ? static_cast<int>(shape.size()) : -1;
  int i = 0;
  for (auto s : shape) if (i < TensorView::kMaxRank) t.shape[i++] = s;
  std::int64_t stride = 1;
  for (int d = (t.rank > 0 ? t.rank : 0) - 1; d >= 0; --d) {
    t.stride[d] = stride;
    if (__builtin_mul_overflow(stride, t.shape[d], &stride)) stride = std::numeric_limits<std::int64_t>::max();
  }
  return t;
}

}  // namespace flash
