// The C ABI (include/flash/flash_c.h) over the C++ API: converts the plain
// structs into ForwardArgs / BackwardArgs / DecodeArgs, calls the C++ entry
// point, and turns every exception into a status and a thread-local message.
// Recording the message allocates nothing (a fixed thread-local buffer), so
// even std::bad_alloc is reported rather than thrown across the ABI.
#include "flash/flash_c.h"

#include <cstddef>
#include <cstdio>
#include <cstring>
#include <exception>
#include <new>
#include <optional>
#include <string>

#include "flash/backward.h"
#include "flash/decode.h"
#include "flash/error.h"
#include "flash/forward.h"
#include "internal.h"

namespace {

// The last failure's message on this thread: a fixed buffer, so that
// recording it cannot fail. Longer messages are cut.
constexpr std::size_t kMessageSize = 4096;
thread_local char last_error[kMessageSize] = "";

int32_t set_error(flash_status status, const char* message) {
  std::snprintf(last_error, kMessageSize, "%s", message);
  return status;
}

// An argument the C layer itself rejects, before the C++ API sees the call.
// Throws flash::Error, like the C++ API's own checks.
[[noreturn]] void reject(const std::string& message) { throw flash::Error(message); }

flash_status cuda_status(cudaError_t code) {
  switch (code) {
    case cudaErrorMemoryAllocation: return FLASH_ERROR_OUT_OF_MEMORY;
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorDevicesUnavailable:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice: return FLASH_ERROR_NO_DEVICE;
    default: return FLASH_ERROR_CUDA;
  }
}

// Runs call() and maps what it throws to a status; the only place where
// exceptions stop.
template <class Call>
int32_t guarded(Call&& call) noexcept {
  try {
    call();
    return FLASH_OK;
  } catch (const flash::detail::CudaError& e) {
    return set_error(cuda_status(e.code()), e.what());
  } catch (const flash::Error& e) {
    return set_error(FLASH_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return set_error(FLASH_ERROR_OUT_OF_MEMORY, "out of host memory");
  } catch (const std::exception& e) {
    return set_error(FLASH_ERROR_INTERNAL, e.what());
  } catch (...) {
    return set_error(FLASH_ERROR_INTERNAL, "an unknown exception");
  }
}

// The earlier versions of each struct, oldest first (version 2 is the first):
// each ends where the first field of the next version begins. A struct that
// did not change in a version keeps its size, so one size may stand for
// several versions.
struct EarlierVersion {
  std::size_t size;
  const char* versions;
};
template <class Args>
struct EarlierVersions;
template <>
struct EarlierVersions<flash_forward_args> {
  static constexpr EarlierVersion list[] = {{offsetof(flash_forward_args, softcap), "version 2"},
                                            {offsetof(flash_forward_args, cu_seqlens_q), "version 3"},
                                            {offsetof(flash_forward_args, page_table), "version 4"}};
};
template <>
struct EarlierVersions<flash_backward_args> {
  static constexpr EarlierVersion list[] = {{offsetof(flash_backward_args, softcap), "version 2"},
                                            {offsetof(flash_backward_args, cu_seqlens_q), "versions 3 to 5"}};
};
template <>
struct EarlierVersions<flash_decode_args> {
  static constexpr EarlierVersion list[] = {{offsetof(flash_decode_args, softcap), "version 2"}};
};
static_assert(EarlierVersions<flash_forward_args>::list[0].size == 464 &&
                  EarlierVersions<flash_forward_args>::list[1].size == 632 &&
                  EarlierVersions<flash_forward_args>::list[2].size == 968 &&
                  EarlierVersions<flash_backward_args>::list[0].size == 784 &&
                  EarlierVersions<flash_backward_args>::list[1].size == 1032 &&
                  EarlierVersions<flash_decode_args>::list[0].size == 872,
              "the earlier versions' structs are prefixes of this header's (fields are only appended)");

void init(flash_forward_args* a) { flash_forward_args_init(a); }
void init(flash_backward_args* a) { flash_backward_args_init(a); }
void init(flash_decode_args* a) { flash_decode_args_init(a); }

// The caller's struct as this header's: one of this version as it is; one of
// an earlier version (its struct_size is one of EarlierVersions) copied into
// *upgraded over an initialised struct, so that the fields appended since
// keep their defaults (off). Reads no byte past the caller's struct_size.
template <class Args>
const Args* read_struct(const char* name, const Args* args, Args* upgraded) {
  if (args == nullptr) reject(std::string(name) + " is null");
  if (args->struct_size == sizeof(Args)) return args;
  std::string earlier;
  for (const EarlierVersion& version : EarlierVersions<Args>::list) {
    if (args->struct_size == version.size) {
      init(upgraded);
      std::memcpy(upgraded, args, version.size);
      upgraded->struct_size = sizeof(Args);
      return upgraded;
    }
    earlier += ", or " + std::to_string(version.size) + " for " + version.versions;
  }
  reject(std::string(name) + "->struct_size = " + std::to_string(args->struct_size) + "; this library's " + name +
         " has " + std::to_string(sizeof(Args)) + " bytes" + earlier + " (initialise it with " + name +
         "_init; or flash_c.h is newer than the library)");
}

flash::TensorView to_view(const char* name, const flash_tensor& t) {
  if (t.dtype < FLASH_F32 || t.dtype > FLASH_I32)
    reject(std::string(name) + ".dtype = " + std::to_string(t.dtype) + " is not a flash_dtype");
  if (t.rank < 0 || t.rank > FLASH_C_MAX_RANK)
    reject(std::string(name) + ".rank = " + std::to_string(t.rank) + "; expected 1 to " +
           std::to_string(FLASH_C_MAX_RANK));
  flash::TensorView v;
  v.data = t.data;
  v.dtype = static_cast<flash::DType>(t.dtype);
  v.rank = t.rank;
  for (int i = 0; i < t.rank; ++i) {
    v.shape[i] = t.shape[i];
    v.stride[i] = t.strides[i];
  }
  return v;
}

// An optional argument: absent when its rank is 0.
std::optional<flash::TensorView> to_optional(const char* name, const flash_tensor& t) {
  if (t.rank == 0) return std::nullopt;
  return to_view(name, t);
}

std::optional<float> to_scale(int32_t has_scale, float scale) {
  return has_scale ? std::optional<float>(scale) : std::nullopt;
}

flash::Stream to_stream(void* stream) { return static_cast<flash::Stream>(stream); }

std::string to_kernel(const char* kernel) { return kernel != nullptr ? kernel : "auto"; }

// The arguments forward, backward and decode share, under the same names in
// the C structs and the C++ Args: one place for a field all three take.
template <class CArgs, class CppArgs> void copy_common(const CArgs* a, CppArgs& out) {
  out.softmax_scale = to_scale(a->has_softmax_scale, a->softmax_scale);
  out.causal = a->causal != 0;
  out.window_left = a->window_left;
  out.window_right = a->window_right;
  out.softcap = a->softcap;
  out.alibi_slopes = to_optional("alibi_slopes", a->alibi_slopes);
  out.sinks = to_optional("sinks", a->sinks);
  out.stream = to_stream(a->stream);
  out.kernel = to_kernel(a->kernel);
  out.workspace = a->workspace;
  out.workspace_bytes = a->workspace_bytes;
}

// The variable-length fields, under the same names in the forward's and the
// backward's C structs and C++ Args.
template <class CArgs, class CppArgs> void copy_varlen(const CArgs* a, CppArgs& out) {
  out.cu_seqlens_q = to_optional("cu_seqlens_q", a->cu_seqlens_q);
  out.cu_seqlens_k = to_optional("cu_seqlens_k", a->cu_seqlens_k);
  out.seqused_k = to_optional("seqused_k", a->seqused_k);
  out.status = to_optional("status", a->status);
  out.max_seqlen_q = a->max_seqlen_q;
  out.max_seqlen_k = a->max_seqlen_k;
  out.sync_check = a->sync_check != 0;
}

flash::ForwardArgs to_cpp(const flash_forward_args* args) {
  flash_forward_args upgraded;
  const flash_forward_args* a = read_struct("flash_forward_args", args, &upgraded);
  flash::ForwardArgs f;
  f.q = to_view("q", a->q);
  f.k = to_view("k", a->k);
  f.v = to_view("v", a->v);
  f.o = to_view("o", a->o);
  f.lse = to_optional("lse", a->lse);
  copy_common(a, f);
  copy_varlen(a, f);
  f.page_table = to_optional("page_table", a->page_table);
  return f;
}

flash::BackwardArgs to_cpp(const flash_backward_args* args) {
  flash_backward_args upgraded;
  const flash_backward_args* a = read_struct("flash_backward_args", args, &upgraded);
  flash::BackwardArgs b;
  b.q = to_view("q", a->q);
  b.k = to_view("k", a->k);
  b.v = to_view("v", a->v);
  b.o = to_view("o", a->o);
  b.lse = to_view("lse", a->lse);
  b.dout = to_view("dout", a->dout);
  b.dq = to_view("dq", a->dq);
  b.dk = to_view("dk", a->dk);
  b.dv = to_view("dv", a->dv);
  copy_common(a, b);
  b.dsinks = to_optional("dsinks", a->dsinks);
  b.deterministic = a->deterministic != 0;
  copy_varlen(a, b);
  return b;
}

flash::DecodeArgs to_cpp(const flash_decode_args* args) {
  flash_decode_args upgraded;
  const flash_decode_args* a = read_struct("flash_decode_args", args, &upgraded);
  flash::DecodeArgs d;
  d.q = to_view("q", a->q);
  d.k_cache = to_view("k_cache", a->k_cache);
  d.v_cache = to_view("v_cache", a->v_cache);
  d.page_table = to_optional("page_table", a->page_table);
  d.cache_seqlens = to_view("cache_seqlens", a->cache_seqlens);
  d.k_new = to_optional("k_new", a->k_new);
  d.v_new = to_optional("v_new", a->v_new);
  d.o = to_view("o", a->o);
  d.lse = to_optional("lse", a->lse);
  d.status = to_optional("status", a->status);
  copy_common(a, d);
  d.num_splits = a->num_splits;
  d.sync_check = a->sync_check != 0;
  return d;
}

void fill_plan(flash_plan* plan, const std::string& kernel, std::size_t workspace_bytes, int num_splits) {
  if (kernel.size() >= FLASH_C_KERNEL_NAME_SIZE)
    throw std::length_error("variant name '" + kernel + "' does not fit in flash_plan::kernel");
  std::memset(plan, 0, sizeof(*plan));
  std::memcpy(plan->kernel, kernel.c_str(), kernel.size() + 1);
  plan->workspace_bytes = workspace_bytes;
  plan->num_splits = num_splits;
}

void check_plan(const flash_plan* plan) {
  if (plan == nullptr) reject("plan is null");
}

}  // namespace

extern "C" {

int32_t flash_c_abi_version(void) { return FLASH_C_ABI_VERSION; }

const char* flash_last_error(void) { return last_error; }

int32_t flash_attention_forward(const flash_forward_args* args) {
  return guarded([&] { flash::attention_forward(to_cpp(args)); });
}

int32_t flash_attention_backward(const flash_backward_args* args) {
  return guarded([&] { flash::attention_backward(to_cpp(args)); });
}

int32_t flash_attention_decode(const flash_decode_args* args) {
  return guarded([&] { flash::attention_decode(to_cpp(args)); });
}

int32_t flash_plan_forward(const flash_forward_args* args, flash_plan* plan) {
  return guarded([&] {
    check_plan(plan);
    const flash::ForwardPlan p = flash::plan_forward(to_cpp(args));
    fill_plan(plan, p.kernel, p.workspace_bytes, 0);
  });
}

int32_t flash_plan_backward(const flash_backward_args* args, flash_plan* plan) {
  return guarded([&] {
    check_plan(plan);
    const flash::BackwardPlan p = flash::plan_backward(to_cpp(args));
    fill_plan(plan, p.kernel, p.workspace_bytes, 0);
  });
}

int32_t flash_plan_decode(const flash_decode_args* args, flash_plan* plan) {
  return guarded([&] {
    check_plan(plan);
    const flash::DecodePlan p = flash::plan_decode(to_cpp(args));
    fill_plan(plan, p.kernel, p.workspace_bytes, p.num_splits);
  });
}

size_t flash_describe_decode_status(const int32_t status[4], char* buf, size_t size) {
  std::size_t length = 0;
  const int32_t result = guarded([&] {
    if (status == nullptr) reject("status is null");
    const int words[4] = {status[0], status[1], status[2], status[3]};
    const std::string message = flash::describe_decode_status(words);
    length = message.size();
    if (buf != nullptr && size > 0) std::snprintf(buf, size, "%s", message.c_str());
  });
  if (result != FLASH_OK && buf != nullptr && size > 0) buf[0] = '\0';
  return length;
}

}  // extern "C"
