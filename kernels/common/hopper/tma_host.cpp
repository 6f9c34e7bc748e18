#include "common/hopper/tma_host.h"

#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <mutex>

namespace flash::detail {
namespace {

PFN_cuTensorMapEncodeTiled_v12000 encode_fn(std::string* err) {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = nullptr;
  static std::string why;
  static std::once_flag once;
  std::call_once(once, [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult q{};
    const cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || p == nullptr)
      why = std::string("the driver has no cuTensorMapEncodeTiled (") + cudaGetErrorString(e) + ")";
    else
      fn = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  });
  if (fn == nullptr) *err = why;
  return fn;
}

}  // namespace

std::string tensor_map_driver_reason() {
  std::string err;
  encode_fn(&err);
  return err.empty() ? err : "TMA tensor map: " + err;
}

namespace {

CUtensorMapDataType map_type(DType dtype) {
  return dtype == DType::f16 ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16 : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
}

std::string encode_4d(CUtensorMap* map, const void* data, DType dtype, const cuuint64_t (&dims)[4],
                      const cuuint64_t (&strides)[3], int box_rows) {
  std::string err;
  const auto fn = encode_fn(&err);
  if (fn == nullptr) return err;
  const cuuint32_t box[4] = {64, static_cast<cuuint32_t>(box_rows), 1, 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = fn(map, map_type(dtype), 4, const_cast<void*>(data), dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) + ")";
  return {};
}

constexpr std::uint64_t kElemBytes = 2;  // f16 and bf16

}  // namespace

std::string make_bshd_tensor_map(CUtensorMap* map, const void* data, DType dtype, int batch, int seqlen, int heads,
                                 int head_dim, std::int64_t batch_stride, std::int64_t row_stride,
                                 std::int64_t head_stride, int box_rows) {
  // A dimension of extent 1 is never stepped along: give it a stride TMA
  // accepts whatever the view holds there (0, say).
  auto stride_bytes = [&](std::int64_t stride, int extent) -> cuuint64_t {
    return extent > 1 ? static_cast<cuuint64_t>(stride) * kElemBytes : 16;
  };
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(seqlen),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(batch)};
  const cuuint64_t strides[3] = {stride_bytes(row_stride, seqlen), stride_bytes(head_stride, heads),
                                 stride_bytes(batch_stride, batch)};
  return encode_4d(map, data, dtype, dims, strides, box_rows);
}

std::string make_ragged_tensor_map(CUtensorMap* map, const void* data, DType dtype, int total, int max_rows, int heads,
                                   int head_dim, std::int64_t row_stride, std::int64_t head_stride, int box_rows) {
  const int x_rows = max_rows > 0 ? max_rows : 1;
  // One packed row (total 1): its stride is the view's to choose (any value;
  // validation skips a dimension of extent 1) and the map only ever reads
  // that row at the data pointer, so a whole row's bytes stand in for it.
  const cuuint64_t row_bytes = total > 1 ? static_cast<cuuint64_t>(row_stride) * kElemBytes
                                         : (static_cast<cuuint64_t>(head_dim) * kElemBytes + 15) / 16 * 16;
  // The base, x_rows rows before the data: only its in-bounds elements are
  // ever read, and those are rows of the data (y + x - x_rows >= 0 for the
  // coordinates the kernel gives).
  const auto base = reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(data) - x_rows * row_bytes);
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(head_dim), static_cast<cuuint64_t>(x_rows),
                              static_cast<cuuint64_t>(heads), static_cast<cuuint64_t>(total) + 1};
  const cuuint64_t strides[3] = {row_bytes, heads > 1 ? static_cast<cuuint64_t>(head_stride) * kElemBytes : 16,
                                 row_bytes};
  return encode_4d(map, base, dtype, dims, strides, box_rows);
}

std::int64_t paged_groups_per_page(int num_pages, int page_size, std::int64_t page_stride, std::int64_t row_stride) {
  const std::int64_t in_page = page_size / 8;
  if (num_pages == 1) return in_page;  // the page stride is never stepped along
  if (row_stride <= 0 || page_stride <= 0 || page_stride % (8 * row_stride) != 0) return 0;
  const std::int64_t groups = page_stride / (8 * row_stride);
  return groups >= in_page ? groups : 0;
}

std::string make_paged_row_group_tensor_map(CUtensorMap* map, const void* data, DType dtype, int num_pages,
                                            int page_size, int heads, int head_dim, std::int64_t groups_per_page,
                                            std::int64_t page_stride, std::int64_t row_stride,
                                            std::int64_t head_stride, int box_rows) {
  std::string err;
  const auto fn = encode_fn(&err);
  if (fn == nullptr) return err;
  const cuuint64_t row_bytes = static_cast<cuuint64_t>(row_stride) * kElemBytes;
  const cuuint64_t head_bytes = heads > 1 ? static_cast<cuuint64_t>(head_stride) * kElemBytes : 16;
  const auto blocks = static_cast<cuuint64_t>(head_dim / 64);
  // (Strides need not grow with the dimension: the column blocks' 128 bytes
  // sit between the rows' and the groups' or pages'.)
  const bool grouped = groups_per_page > 0;
  const cuuint64_t dims[5] = {
      64, grouped ? 8u : static_cast<cuuint64_t>(page_size), blocks,
      grouped ? static_cast<cuuint64_t>((num_pages - 1) * groups_per_page + page_size / 8)
              : static_cast<cuuint64_t>(num_pages),
      static_cast<cuuint64_t>(heads)};
  const cuuint64_t page_bytes = num_pages > 1 ? static_cast<cuuint64_t>(page_stride) * kElemBytes : 16;
  const cuuint64_t strides[4] = {row_bytes, 128, grouped ? 8 * row_bytes : page_bytes, head_bytes};
  const cuuint32_t box[5] = {64, 8, static_cast<cuuint32_t>(blocks),
                             grouped ? static_cast<cuuint32_t>(box_rows / 8) : 1u, 1};
  const cuuint32_t elem_strides[5] = {1, 1, 1, 1, 1};
  const CUresult r = fn(map, map_type(dtype), 5, const_cast<void*>(data), dims, strides, box, elem_strides,
                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (CUresult " + std::to_string(static_cast<int>(r)) + ")";
  return {};
}

}  // namespace flash::detail
