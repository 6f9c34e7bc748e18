// Host-side internals shared by the files of src/: the registry, the device
// query and the workspace cache.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/bwd_params.h"
#include "common/decode_params.h"
#include "common/variant.h"
#include "flash/error.h"
#include "validate.h"

namespace flash::detail {

// A variant as the registry holds it: its name and description from
// kernels/variants.def and its descriptor (null: left out of this build).
template <class V> struct Registered {
  std::string_view name;
  std::string_view description;
  const V* impl;
};
using RegisteredFwd = Registered<FwdVariant>;
using RegisteredBwd = Registered<BwdVariant>;
using RegisteredDecode = Registered<DecodeVariant>;

// Every variant of one kind (FwdVariant, BwdVariant or DecodeVariant) in
// kernels/variants.def, in ladder order.
template <class V> const std::vector<Registered<V>>& registry();
inline const std::vector<RegisteredFwd>& forward_registry() { return registry<FwdVariant>(); }
inline const std::vector<RegisteredBwd>& backward_registry() { return registry<BwdVariant>(); }
inline const std::vector<RegisteredDecode>& decode_registry() { return registry<DecodeVariant>(); }

// The current device, or a flash::Error when there is none.
const DeviceInfo& current_device();

// The workspace of one call, held from before its first kernel is enqueued
// until after its last: the caller's buffer, or the library's buffer of
// (device, stream) together with that stream's lock, so that no other call
// enqueues work on the stream in between (workspace.cpp). Empty (null, no
// lock) for a call that needs no workspace.
class WorkspaceLease {
 public:
  WorkspaceLease() = default;
  WorkspaceLease(void* ptr, std::unique_lock<std::mutex> lock) : ptr_(ptr), lock_(std::move(lock)) {}
  void* get() const { return ptr_; }
  // Lets other threads enqueue on the stream before this object ends (the
  // buffer stays valid: buffers are never freed).
  void release() {
    if (lock_.owns_lock()) lock_.unlock();
  }

 private:
  void* ptr_ = nullptr;
  std::unique_lock<std::mutex> lock_;
};

// sync_check's read-back: the four status words copied (enqueued on the
// stream under the lease, so no later call on the stream rewrites them
// first), the lease released, then the wait for the stream, in relaxed
// capture mode (another thread's global-mode capture on the device is left
// valid; this stream is not capturing: check_sync_check_allowed).
void read_status_back(int (&status)[4], const int* device_status, cudaStream_t stream, WorkspaceLease& lease,
                      std::string_view what);

// The library's buffer of (device, stream), at least `bytes` long, with the
// stream's lock. Warm, it allocates nothing, makes no CUDA call and takes
// no other lock (once the thread has called on the stream before). To grow
// it allocates a bigger buffer and keeps the old one (queued work or a
// captured graph may still read it); while the stream is being captured it
// throws instead.
WorkspaceLease cached_workspace(int device, cudaStream_t stream, std::size_t bytes);

// The workspace of a call that needs `bytes`: the caller's (checked for size
// and 256-byte alignment; `plan` names the function that sizes it) or the
// library's cached one.
WorkspaceLease call_workspace(void* given, std::size_t given_bytes, std::size_t bytes, std::string_view plan,
                              int device, cudaStream_t stream);

// sync_check: a call that reads its metadata status back waits for its
// stream, which it cannot while the stream is being captured into a CUDA
// graph; such a call throws before it enqueues anything.
void check_sync_check_allowed(cudaStream_t stream);

// Why a registered variant cannot run params p on dev (empty: it can): its
// compute-capability range, then its own limits check.
template <class Registered, class Params>
std::string device_reason(const Registered& r, const Params& p, const DeviceInfo& dev) {
  std::string why =
      compute_capability_reason(dev.compute_capability, r.impl->min_compute_capability, r.impl->max_compute_capability);
  if (why.empty() && r.impl->check != nullptr) why = r.impl->check(p, dev);
  return why;
}

// A failed CUDA call (check_cuda, the device query, a workspace
// allocation): a flash::Error that keeps CUDA's code, so that the C API
// (c_api.cpp) reports it apart from invalid arguments.
class CudaError : public Error {
 public:
  CudaError(const std::string& what, cudaError_t code) : Error(what), code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

// Throws CudaError("<what>: <CUDA's error string>") when err is not cudaSuccess.
void check_cuda(cudaError_t err, std::string_view what);
// The stream belongs to the current device (the one whose properties and
// workspace a call takes), else flash::Error naming the stream before
// anything is enqueued. (Needs cudaStreamGetDevice, CUDA 12.8; earlier the
// launch reports a foreign stream.)
void check_stream_device(cudaStream_t stream);

}  // namespace flash::detail
