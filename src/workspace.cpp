// The library's own workspace: one growing device buffer per (device, stream).
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "internal.h"

namespace flash::detail {

void* cached_workspace(int device, cudaStream_t stream, std::size_t bytes) {
  struct Buffer {
    void* ptr = nullptr;
    std::size_t bytes = 0;
  };
  static std::mutex mutex;
  static std::map<std::pair<int, cudaStream_t>, Buffer> buffers;

  std::lock_guard<std::mutex> lock(mutex);
  Buffer& buf = buffers[{device, stream}];
  if (buf.bytes >= bytes) return buf.ptr;
  if (buf.ptr != nullptr) {
    // Work queued on this stream may still read the old buffer; wait for it
    // before giving the memory back.
    check_cuda(cudaStreamSynchronize(stream), "waiting for the stream before growing the workspace");
    check_cuda(cudaFree(buf.ptr), "freeing the old workspace");
    buf = Buffer{};
  }
  void* ptr = nullptr;
  const cudaError_t err = cudaMalloc(&ptr, bytes);
  if (err != cudaSuccess) {
    cudaGetLastError();  // an allocation failure is not sticky; clear it
    throw Error("workspace: cannot allocate " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(err));
  }
  buf = Buffer{ptr, bytes};
  return ptr;
}

void* call_workspace(void* given, std::size_t given_bytes, std::size_t bytes, std::string_view plan, int device,
                     cudaStream_t stream) {
  constexpr std::size_t kAlignment = 256;
  if (given == nullptr) return cached_workspace(device, stream, bytes);
  if (given_bytes < bytes)
    throw Error("workspace_bytes = " + std::to_string(given_bytes) + "; this call needs " + std::to_string(bytes) +
                " (see " + std::string(plan) + ")");
  if (reinterpret_cast<std::uintptr_t>(given) % kAlignment != 0)
    throw Error("workspace is not " + std::to_string(kAlignment) + "-byte aligned");
  return given;
}

}  // namespace flash::detail
