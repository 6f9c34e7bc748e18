// The current device's properties (cached per device) and CUDA error checks.
#include <array>
#include <mutex>
#include <string>

#include "internal.h"

namespace flash::detail {

void check_cuda(cudaError_t err, std::string_view what) {
  if (err != cudaSuccess) {
    // The error is this call's to report (thrown here); cleared, so that the
    // next call's launch checks (cudaGetLastError) see only their own. A
    // sticky error stays: the context is lost.
    cudaGetLastError();
    throw CudaError(std::string(what) + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")", err);
  }
}

void check_stream_device(cudaStream_t stream) {
#if CUDART_VERSION >= 12080
  // Not while the stream is being captured (a capture makes its own checks;
  // only queries that captures allow are made here).
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
    cudaGetLastError();
    return;
  }
  int current = 0, owner = 0;
  if (cudaGetDevice(&current) != cudaSuccess || cudaStreamGetDevice(stream, &owner) != cudaSuccess) {
    cudaGetLastError();  // undecided: the launch reports what is wrong
    return;
  }
  if (owner != current)
    throw Error("stream: it belongs to device " + std::to_string(owner) + " and device " + std::to_string(current) +
                " is current; make the stream's device current (cudaSetDevice) before the call");
#else
  (void)stream;
#endif
}

const DeviceInfo& current_device() {
  constexpr int kMaxDevices = 64;
  static std::array<DeviceInfo, kMaxDevices> cache;
  static std::array<bool, kMaxDevices> known{};
  static std::mutex mutex;

  int device = 0;
  const cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    throw CudaError(std::string("no usable CUDA device: ") + cudaGetErrorString(err), err);
  }
  if (device < 0 || device >= kMaxDevices) throw Error("CUDA device index " + std::to_string(device) + " is out of range");

  std::lock_guard<std::mutex> lock(mutex);
  if (!known[device]) {
    DeviceInfo info;
    info.device = device;
    int major = 0, minor = 0, sms = 0, smem = 0, smem_sm = 0, l2 = 0;
    check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "querying the device");
    check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "querying the device");
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), "querying the device");
    check_cuda(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), "querying the device");
    check_cuda(cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
               "querying the device");
    check_cuda(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "querying the device");
    info.compute_capability = major * 10 + minor;
    info.sm_count = sms;
    info.smem_per_block_optin = static_cast<std::size_t>(smem);
    info.smem_per_sm = static_cast<std::size_t>(smem_sm);
    info.l2_bytes = static_cast<std::size_t>(l2);
    cache[device] = info;
    known[device] = true;
  }
  return cache[device];
}

}  // namespace flash::detail
