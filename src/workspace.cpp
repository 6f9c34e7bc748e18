// The library's own workspace: one growing device buffer per (device,
// stream), leased to one call at a time.
//
// A call holds its stream's lease from taking the buffer until its last
// kernel is enqueued, so calls from several host threads on one stream
// enqueue their kernels one call after another, and each call's kernels run
// before the next call's overwrite the buffer (stream order). Calls on
// different streams use different buffers and different locks.
//
// A buffer too small for a call is replaced by a new one of twice its size
// (or the call's size, if larger; just the call's size when twice does not
// fit in memory). The old buffer is never freed: kernels already queued may
// still read it, and so may a CUDA graph captured with it and replayed
// later. With doubling, the retired buffers of a stream add up to less than
// its current one; all of them live until the process exits.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>

#include "internal.h"

namespace flash::detail {
namespace {

struct StreamWorkspace {
  std::mutex lease;  // held by the call that is enqueueing work on the stream
  void* ptr = nullptr;
  std::size_t bytes = 0;
};

// The entry of (device, stream). cudaStreamPerThread names a different
// stream in every host thread, so for it the thread is part of the key.
// Entries are never removed, and map nodes never move, so a reference stays
// valid after the index lock is released; each thread remembers the entry
// it used last, so that a thread calling on one stream takes the index lock
// only on its first call.
StreamWorkspace& stream_workspace(int device, cudaStream_t stream) {
  // A thread's number, never reused (std::thread::id is: a thread started
  // after another ended may get its id, and with it a buffer whose work on
  // the ended thread's stream may still run).
  static std::atomic<std::uint64_t> threads{0};
  thread_local const std::uint64_t thread = ++threads;
  using Key = std::tuple<int, cudaStream_t, std::uint64_t>;
  static std::mutex index_mutex;
  static std::map<Key, StreamWorkspace> index;
  thread_local Key last_key;
  thread_local StreamWorkspace* last = nullptr;
  const Key key{device, stream, stream == cudaStreamPerThread ? thread : 0};
  if (last != nullptr && key == last_key) return *last;
  std::lock_guard<std::mutex> lock(index_mutex);
  last_key = key;
  last = &index[key];
  return *last;
}

// cudaMalloc in relaxed capture mode: while another thread captures a graph
// in the default (global) mode, cudaMalloc is a prohibited call that would
// invalidate that capture; the allocation itself enqueues nothing.
cudaError_t allocate(void** ptr, std::size_t bytes) {
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  const cudaError_t err = cudaMalloc(ptr, bytes);
  cudaThreadExchangeStreamCaptureMode(&mode);
  if (err != cudaSuccess) cudaGetLastError();  // an allocation failure is not sticky; clear it
  return err;
}

// Replaces ws's buffer with one of at least `bytes` (the caller holds ws.lease).
void grow(StreamWorkspace& ws, cudaStream_t stream, std::size_t bytes) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream, &capture), "workspace: querying the stream's capture status");
  if (capture != cudaStreamCaptureStatusNone)
    throw Error("workspace: this call needs " + std::to_string(bytes) + " bytes and the library's workspace of this "
                "stream holds " + std::to_string(ws.bytes) + "; it cannot grow while the stream is being captured "
                "into a CUDA graph: make the same call once before the capture (the workspace is then warm), or "
                "pass a workspace of your own");
  const std::size_t doubled = ws.bytes > std::numeric_limits<std::size_t>::max() / 2
                                  ? std::numeric_limits<std::size_t>::max()
                                  : 2 * ws.bytes;
  std::size_t size = std::max(bytes, doubled);
  void* ptr = nullptr;
  cudaError_t err = allocate(&ptr, size);
  if (err == cudaErrorMemoryAllocation && size > bytes) err = allocate(&ptr, size = bytes);  // no room to double
  if (err != cudaSuccess)
    throw CudaError("workspace: cannot allocate " + std::to_string(size) + " bytes: " + cudaGetErrorString(err), err);
  ws.ptr = ptr;  // the old buffer stays allocated (see the top of this file)
  ws.bytes = size;
}

}  // namespace

WorkspaceLease cached_workspace(int device, cudaStream_t stream, std::size_t bytes) {
  StreamWorkspace& ws = stream_workspace(device, stream);
  std::unique_lock<std::mutex> lock(ws.lease);
  if (ws.bytes < bytes) grow(ws, stream, bytes);
  return WorkspaceLease(ws.ptr, std::move(lock));
}

void read_status_back(int (&status)[4], const int* device_status, cudaStream_t stream, WorkspaceLease& lease,
                      std::string_view what) {
  check_cuda(cudaMemcpyAsync(status, device_status, sizeof(status), cudaMemcpyDeviceToHost, stream),
             std::string("reading the ") + std::string(what) + " status");
  lease.release();
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  cudaThreadExchangeStreamCaptureMode(&mode);
  const cudaError_t err = cudaStreamSynchronize(stream);
  cudaThreadExchangeStreamCaptureMode(&mode);
  check_cuda(err, std::string("waiting for the ") + std::string(what) + " status");
}

void check_sync_check_allowed(cudaStream_t stream) {
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  check_cuda(cudaStreamIsCapturing(stream, &capture), "sync_check: querying the stream's capture status");
  if (capture != cudaStreamCaptureStatusNone)
    throw Error("sync_check: the call would wait for its stream to read the metadata check back, and the stream is "
                "being captured into a CUDA graph: pass sync_check = false to capture it (bad metadata is then "
                "reported through status, when given, and no kernel writes anything)");
}

WorkspaceLease call_workspace(void* given, std::size_t given_bytes, std::size_t bytes, std::string_view plan,
                              int device, cudaStream_t stream) {
  if (bytes == 0) return {};
  if (given == nullptr) return cached_workspace(device, stream, bytes);
  check_caller_workspace(given, given_bytes, bytes, plan);
  return WorkspaceLease(given, {});
}

}  // namespace flash::detail
