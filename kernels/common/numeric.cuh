// Element types and conversions shared by every kernel: the storage type of
// each DType, float <-> element conversion, and 16-byte vector loads/stores.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "flash/tensor.h"

namespace flash::detail {

template <DType kDType> struct ElementOf;
template <> struct ElementOf<DType::f32> { using type = float; };
template <> struct ElementOf<DType::f16> { using type = __half; };
template <> struct ElementOf<DType::bf16> { using type = __nv_bfloat16; };

template <class T> struct TypeTag { using type = T; };

// Calls f(TypeTag<Element>{}) for the element type of dtype.
template <class F> decltype(auto) dispatch_dtype(DType dtype, F&& f) {
  switch (dtype) {
    case DType::f32: return f(TypeTag<float>{});
    case DType::f16: return f(TypeTag<__half>{});
    case DType::bf16:
    case DType::i32: break;  // never an attention dtype: validation rejects it first
  }
  return f(TypeTag<__nv_bfloat16>{});
}

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// Elements of T in one 16-byte vector.
template <class T> inline constexpr int kVec16 = 16 / static_cast<int>(sizeof(T));

// One 16-byte global load of kVec16<T> elements, widened to float.
template <class T> __device__ __forceinline__ void load16_as_float(const T* g, float* out) {
  const uint4 raw = *reinterpret_cast<const uint4*>(g);
  const T* e = reinterpret_cast<const T*>(&raw);
#pragma unroll
  for (int i = 0; i < kVec16<T>; ++i) out[i] = to_float(e[i]);
}

// Stores four floats as four elements of T (16 bytes for f32, 8 for f16/bf16).
template <class T> __device__ __forceinline__ void store4_from_float(T* g, float a, float b, float c, float d) {
  if constexpr (std::is_same_v<T, float>) {
    *reinterpret_cast<float4*>(g) = make_float4(a, b, c, d);
  } else {
    union { T e[4]; uint2 raw; } u;
    u.e[0] = from_float<T>(a);
    u.e[1] = from_float<T>(b);
    u.e[2] = from_float<T>(c);
    u.e[3] = from_float<T>(d);
    *reinterpret_cast<uint2*>(g) = u.raw;
  }
}

}  // namespace flash::detail
