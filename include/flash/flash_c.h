/* flash's C ABI: the forward, backward and decode entry points of the C++ API
 * (flash/forward.h, backward.h, decode.h) behind plain C structs, for callers
 * that cannot or should not share a C++ ABI with the library: Python through
 * ctypes (the flash-ladder package), other languages' FFIs, C programs.
 *
 * It lives in the shared library libflash_c.so (CMake target flash::flash_c),
 * which links the CUDA runtime statically and exports nothing but the
 * functions declared here. No C++ type and no exception crosses it: every
 * function returns a flash_status, and on failure the message of the C++ API's
 * flash::Error (or of whatever else went wrong) is readable through
 * flash_last_error() on the same thread.
 *
 * The rules of the C++ API hold unchanged: views of any strides with a
 * contiguous last dimension, GQA, bottom-right causal masks, outputs that may
 * not share memory with inputs, the workspace (caller's or the library's
 * per-stream buffer), CUDA graph capture. A rejected call has launched and
 * written nothing. Calls run on the calling thread's current CUDA device.
 *
 *   flash_forward_args a;
 *   flash_forward_args_init(&a);
 *   a.q = (flash_tensor){q_ptr, FLASH_BF16, 4, {b, sq, hq, d}, {sq * hq * d, hq * d, d, 1}};
 *   ...
 *   if (flash_attention_forward(&a) != FLASH_OK) fprintf(stderr, "%s\n", flash_last_error());
 */
#ifndef FLASH_FLASH_C_H
#define FLASH_FLASH_C_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__GNUC__)
#define FLASH_C_API __attribute__((visibility("default")))
#else
#define FLASH_C_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped whenever a struct or a function of this header changes. Version 3
 * added the score modifiers (softcap, alibi_slopes, sinks; dsinks); version
 * 4 the forward's variable-length batches (cu_seqlens_q, ...); version 5 the
 * forward's paged KV cache (page_table) and seqused_k with any forward call;
 * version 6 the backward's variable-length batches. */
#define FLASH_C_ABI_VERSION 6

/* The largest rank of a view (the C++ API's TensorView::kMaxRank). */
#define FLASH_C_MAX_RANK 4

/* The length of flash_plan::kernel, the terminating NUL included. */
#define FLASH_C_KERNEL_NAME_SIZE 64

/* Element types (flash::DType). i32 is for metadata: cache lengths, page
 * tables, the decode status words. */
typedef enum flash_dtype { FLASH_F32 = 0, FLASH_F16 = 1, FLASH_BF16 = 2, FLASH_I32 = 3 } flash_dtype;

/* What a call returns. Anything but FLASH_OK leaves a message for
 * flash_last_error(). */
typedef enum flash_status {
  FLASH_OK = 0,
  /* A bad argument (shape, dtype, stride, alignment, overlap, scale, an
   * unsupported combination, bad decode metadata found by sync_check):
   * nothing was launched or written. */
  FLASH_ERROR_INVALID_ARGUMENT = 1,
  /* No usable CUDA device (no GPU, no driver, a driver too old). Argument
   * checks come first, so a bad call reports FLASH_ERROR_INVALID_ARGUMENT
   * even without a GPU. */
  FLASH_ERROR_NO_DEVICE = 2,
  /* A CUDA call failed (a launch, a synchronization, a query). */
  FLASH_ERROR_CUDA = 3,
  /* A host or device allocation failed. */
  FLASH_ERROR_OUT_OF_MEMORY = 4,
  /* Anything else: a bug in the library. */
  FLASH_ERROR_INTERNAL = 5
} flash_status;

/* A view of device memory (flash::TensorView). Shapes and strides are in
 * elements. An optional argument is absent when its rank is 0, as in a
 * zero-initialised flash_tensor. dtype and rank are int32_t (not the enum)
 * so that the layout is the same for every compiler. */
typedef struct flash_tensor {
  void* data;
  int32_t dtype; /* a flash_dtype */
  int32_t rank;  /* 1 to FLASH_C_MAX_RANK; 0: absent */
  int64_t shape[FLASH_C_MAX_RANK];
  int64_t strides[FLASH_C_MAX_RANK];
} flash_tensor;

/* flash::ForwardArgs. Initialise with flash_forward_args_init, which sets
 * struct_size and the C++ defaults; then set the tensors.
 *
 * struct_size versions the structs: fields are only ever appended, so each
 * version's struct is a prefix of the next. A call's struct_size must be
 * this header's sizeof or the size of an earlier version: version 2 ends
 * where softcap begins, offsetof(..., softcap), the forward's version 3
 * where cu_seqlens_q begins and its version 4 where page_table begins (a
 * caller compiled against that header; the
 * fields added since are then off, as their init sets them); any other size
 * is rejected (a header newer than the library, or a struct not
 * initialised). */
typedef struct flash_forward_args {
  uint64_t struct_size;
  flash_tensor q;   /* [batch, seqlen_q, heads_q, head_dim] */
  flash_tensor k;   /* [batch, seqlen_k, heads_kv, head_dim] */
  flash_tensor v;
  flash_tensor o;   /* output, like q */
  flash_tensor lse; /* optional output: f32 [batch, heads_q, seqlen_q] */
  void* stream;     /* a cudaStream_t; NULL: the legacy default stream */
  const char* kernel; /* a variant name, or NULL / "auto" */
  void* workspace;    /* optional caller workspace (flash_plan_forward sizes it) */
  uint64_t workspace_bytes;
  float softmax_scale;       /* used when has_softmax_scale; else 1 / sqrt(head_dim) */
  int32_t has_softmax_scale; /* 0 or 1 */
  int32_t causal;            /* 0 or 1: bottom-right aligned */
  int32_t window_left;       /* sliding window sides: -1 unbounded (the init's default) or >= 0 */
  int32_t window_right;
  int32_t reserved;          /* 0 */
  /* Version 3: score modifiers (flash::ForwardArgs::softcap, alibi_slopes,
   * sinks; FlashAttention's semantics). */
  float softcap;             /* 0: off (the init's default); else finite and > 0: s = softcap * tanh(s / softcap) */
  int32_t reserved3;         /* 0 */
  flash_tensor alibi_slopes; /* optional: f32 [heads_q] or [batch, heads_q]; s -= slope * |i + seqlen_k - seqlen_q - j| */
  flash_tensor sinks;        /* optional: f32 [heads_q], a logit per head in the softmax's denominator, no value */
  /* Version 4: a variable-length batch (flash::ForwardArgs::cu_seqlens_q and
   * the rest; FlashAttention's flash_attn_varlen_func), on when cu_seqlens_q
   * is present: q and o are then packed [total_q, heads_q, head_dim], k and v
   * [total_k, heads_kv, head_dim], lse f32 [heads_q, total_q]. The metadata
   * is checked on the device before anything is written, as decode's. */
  flash_tensor cu_seqlens_q; /* optional: i32 [batch + 1] device offsets of each sequence's queries, from 0, non-decreasing */
  flash_tensor cu_seqlens_k; /* with cu_seqlens_q: i32 [batch + 1], the keys' offsets */
  flash_tensor seqused_k;    /* optional: i32 [batch], keys used of each sequence (its first ones); any call (version 4: with cu_seqlens_q) */
  flash_tensor status;       /* optional output, with device metadata: i32 [4], {code, array or sequence, index, value} */
  int32_t max_seqlen_q;      /* with cu_seqlens_q: 0 to total_q, at least every sequence's query count */
  int32_t max_seqlen_k;      /* with cu_seqlens_q: 0 to total_k, at least every sequence's key count */
  int32_t sync_check;        /* 1 (the init's default): wait for the device-side metadata check and report it */
  int32_t reserved4;         /* 0 */
  /* Version 5: a paged KV cache (flash::ForwardArgs::page_table; FA4's
   * page_table): k and v are then pages [num_pages, page_size, heads_kv,
   * head_dim], page_size a power of two from 16; each sequence's keys are
   * seqused_k[b] (required with cu_seqlens_q, which then takes no
   * cu_seqlens_k), else the whole table's. Checked on the device with the
   * rest of the metadata. */
  flash_tensor page_table;   /* optional: i32 [batch, max_pages] device page indices */
} flash_forward_args;

/* flash::BackwardArgs. Versioned as flash_forward_args: version 2 ends
 * where softcap begins, versions 3 to 5 where cu_seqlens_q begins (the
 * backward did not change in versions 4 and 5). */
typedef struct flash_backward_args {
  uint64_t struct_size;
  flash_tensor q, k, v; /* the forward's inputs */
  flash_tensor o;       /* the forward's output */
  flash_tensor lse;     /* the forward's LSE, f32 [batch, heads_q, seqlen_q] (varlen: [heads_q, total_q]) */
  flash_tensor dout;    /* dL/dO, like o */
  flash_tensor dq, dk, dv; /* outputs, like q, k, v */
  void* stream;
  const char* kernel;
  void* workspace;
  uint64_t workspace_bytes;
  float softmax_scale;
  int32_t has_softmax_scale;
  int32_t causal;
  int32_t window_left;   /* the forward's window */
  int32_t window_right;
  int32_t deterministic; /* 1: bit-identical gradients from run to run */
  /* Version 3: the forward's score modifiers, and the sinks' gradient. */
  float softcap;
  int32_t reserved3;         /* 0 */
  flash_tensor alibi_slopes; /* optional, as the forward's (no gradient) */
  flash_tensor sinks;        /* optional, as the forward's */
  flash_tensor dsinks;       /* optional output, only with sinks: f32 [heads_q], dL/dsinks (overwritten) */
  /* Version 6: a variable-length batch (flash::BackwardArgs::cu_seqlens_q and
   * the rest), the forward's fields with the forward's meaning, on when
   * cu_seqlens_q is present: q, o, dout and dq are then packed [total_q,
   * heads_q, head_dim], k, v, dk and dv [total_k, heads_kv, head_dim], lse
   * f32 [heads_q, total_q] (the forward's packed LSE). dk and dv are zero on
   * key rows past seqused_k; rows past the last sequence are not written.
   * The metadata is checked on the device before anything is written. */
  flash_tensor cu_seqlens_q; /* optional: i32 [batch + 1] device offsets of each sequence's queries */
  flash_tensor cu_seqlens_k; /* with cu_seqlens_q: i32 [batch + 1], the keys' offsets */
  flash_tensor seqused_k;    /* optional, with cu_seqlens_q: i32 [batch], keys used of each sequence */
  flash_tensor status;       /* optional output, with cu_seqlens_q: i32 [4], {code, array or sequence, index, value} */
  int32_t max_seqlen_q;      /* with cu_seqlens_q: 0 to total_q, at least every sequence's query count */
  int32_t max_seqlen_k;      /* with cu_seqlens_q: 0 to total_k, at least every sequence's key count */
  int32_t sync_check;        /* 1 (the init's default): wait for the device-side metadata check and report it */
  int32_t reserved6;         /* 0 */
} flash_backward_args;

/* flash::DecodeArgs. */
typedef struct flash_decode_args {
  uint64_t struct_size;
  flash_tensor q;             /* [batch, seqlen_q, heads_q, head_dim] */
  flash_tensor k_cache;       /* [batch, capacity, heads_kv, head_dim] or pages [num_pages, page_size, heads_kv, head_dim] */
  flash_tensor v_cache;
  flash_tensor page_table;    /* optional: i32 [batch, max_pages_per_seq] */
  flash_tensor cache_seqlens; /* i32 [batch] */
  flash_tensor k_new;         /* optional, both or neither: [batch, seqlen_new, heads_kv, head_dim] */
  flash_tensor v_new;
  flash_tensor o;             /* output, like q */
  flash_tensor lse;           /* optional output: f32 [batch, heads_q, seqlen_q] */
  flash_tensor status;        /* optional output: i32 [4] (flash_describe_decode_status) */
  void* stream;
  const char* kernel;
  void* workspace;
  uint64_t workspace_bytes;
  float softmax_scale;
  int32_t has_softmax_scale;
  int32_t causal;
  int32_t window_left; /* over each sequence's keys, as the forward's */
  int32_t window_right;
  int32_t num_splits; /* 0: a heuristic; 1 to 256: as given */
  int32_t sync_check; /* 1 (the default): wait for the device-side metadata check and report it */
  int32_t reserved;   /* 0 */
  /* Version 3: score modifiers, as the forward's (query i of the seqlen_q new
   * tokens sits at key position i + L - seqlen_q of a sequence of L keys). */
  float softcap;
  int32_t reserved3;         /* 0 */
  flash_tensor alibi_slopes; /* optional: f32 [heads_q] or [batch, heads_q] */
  flash_tensor sinks;        /* optional: f32 [heads_q] */
} flash_decode_args;

/* What a call would run (flash::ForwardPlan, BackwardPlan, DecodePlan). */
typedef struct flash_plan {
  char kernel[FLASH_C_KERNEL_NAME_SIZE]; /* the variant's name, NUL-terminated */
  uint64_t workspace_bytes;
  int32_t num_splits; /* decode: the splits it would use; 0 otherwise */
  int32_t reserved;
} flash_plan;

/* FLASH_C_ABI_VERSION of the library that is loaded. */
FLASH_C_API int32_t flash_c_abi_version(void);

/* The message of the last call on this thread that did not return FLASH_OK
 * (empty before the first). Valid until the next failing call on this
 * thread; never NULL. */
FLASH_C_API const char* flash_last_error(void);

/* Validate and launch (asynchronously, on args->stream). */
FLASH_C_API int32_t flash_attention_forward(const flash_forward_args* args);
FLASH_C_API int32_t flash_attention_backward(const flash_backward_args* args);
FLASH_C_API int32_t flash_attention_decode(const flash_decode_args* args);

/* Validate and fill *plan; launch nothing. */
FLASH_C_API int32_t flash_plan_forward(const flash_forward_args* args, flash_plan* plan);
FLASH_C_API int32_t flash_plan_backward(const flash_backward_args* args, flash_plan* plan);
FLASH_C_API int32_t flash_plan_decode(const flash_decode_args* args, flash_plan* plan);

/* The message for status words read back from flash_decode_args::status
 * (empty for code 0), written to buf (at most size bytes, NUL included).
 * Returns the message's full length, as snprintf. */
FLASH_C_API size_t flash_describe_decode_status(const int32_t status[4], char* buf, size_t size);

/* Zero every field, set struct_size, and the C++ API's defaults (no window;
 * softcap 0 and the optional tensors absent: no score modifier; the
 * forward's and the backward's cu_seqlens_q and the forward's page_table
 * absent: a padded batch, with sync_check 1). */
static inline void flash_forward_args_init(flash_forward_args* a) {
  memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  a->window_left = a->window_right = -1;
  a->sync_check = 1;
}
static inline void flash_backward_args_init(flash_backward_args* a) {
  memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  a->window_left = a->window_right = -1;
  a->sync_check = 1;
}
static inline void flash_decode_args_init(flash_decode_args* a) {
  memset(a, 0, sizeof *a);
  a->struct_size = sizeof *a;
  a->window_left = a->window_right = -1;
  a->sync_check = 1;
}

#ifdef __cplusplus
}
#endif

#endif /* FLASH_FLASH_C_H */
