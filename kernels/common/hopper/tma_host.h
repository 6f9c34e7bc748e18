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

// A paged cache [num_pages, page_size, heads, head_dim] (element strides;
// head_dim contiguous, a multiple of 64) as a 5-D tensor map whose box, a
// run of 8-row groups each in every 64-column block, lands in shared memory
// as [group][column block][8 rows][128 bytes] (128B swizzle): the row-group
// layout of the Hopper forward's paged K / V tiles.
// With groups_per_page > 0 (paged_groups_per_page: page_stride / (8 *
// row_stride)) the map is (64 columns, 8 rows, head_dim / 64 blocks, g,
// heads), g counting 8-row groups across pages (row r of page j is group j
// * groups_per_page + r / 8), and a box holds box_rows rows of one page:
// one box per page. With 0 (strides that no group count steps: a page
// stride that is no multiple of 8 rows, pages that overlap) it is (64
// columns, page_size rows, blocks, num_pages, heads) and a box holds one
// 8-row group.
std::int64_t paged_groups_per_page(int num_pages, int page_size, std::int64_t page_stride, std::int64_t row_stride);
std::string make_paged_row_group_tensor_map(CUtensorMap* map, const void* data, DType dtype, int num_pages,
                                            int page_size, int heads, int head_dim, std::int64_t groups_per_page,
                                            std::int64_t page_stride, std::int64_t row_stride,
                                            std::int64_t head_stride, int box_rows);

}  // namespace flash::detail
