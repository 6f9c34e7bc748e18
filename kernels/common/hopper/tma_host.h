// Host side of TMA: building the tensor maps (CUtensorMap) that a kernel
// takes as __grid_constant__ parameters. The driver's cuTensorMapEncodeTiled
// is reached through the runtime's entry-point query, so flash needs no link
// against libcuda.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>

#include "flash/tensor.h"

namespace flash::detail {

// Empty when the driver can encode tensor maps (cuTensorMapEncodeTiled), else why not.
std::string tensor_map_driver_reason();

// A [batch, seqlen, heads, head_dim] tensor (element strides; head_dim
// contiguous) as a 4-D tensor map (head_dim, seqlen, heads, batch) whose box
// is 64 elements of head_dim (128 bytes, swizzled 128B) by box_rows rows.
// Rows outside [0, seqlen) read as zero and are never written. Returns an
// empty string on success, else what the driver refused.
std::string make_bshd_tensor_map(CUtensorMap* map, const void* data, DType dtype, int batch, int seqlen, int heads,
                                 int head_dim, std::int64_t batch_stride, std::int64_t row_stride,
                                 std::int64_t head_stride, int box_rows);

// A packed [total, heads, head_dim] tensor of variable-length sequences (row
// strides in elements) as a 4-D tensor map (head_dim, x, heads, y) in which
// every sequence ends in zeros: rows at or past a sequence's end read as
// zero, as a dense map's rows past seqlen do, and never as the next
// sequence's rows (or NaN). Element (c, x, h, y) is packed row y + x -
// max_rows: the map's base is max_rows rows before the data, and x and y
// both step one row. Row r of a sequence of n rows that ends at packed row
// e (= its first row + n) is at x = max_rows - n + r, y = e (ragged_x /
// the kernel): in bounds exactly when r < n (x < max_rows), and y <= total
// (extent total + 1). max_rows bounds every sequence's n (max_seqlen; at
// least 1); the box is 64 elements of head_dim by box_rows rows.
std::string make_ragged_tensor_map(CUtensorMap* map, const void* data, DType dtype, int total, int max_rows, int heads,
                                   int head_dim, std::int64_t row_stride, std::int64_t head_stride, int box_rows);

}  // namespace flash::detail
