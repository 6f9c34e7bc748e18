// Argument checks shared by the entry points (forward, backward, decode):
// each throws flash::Error naming the argument and what was expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/params.h"
#include "common/variant.h"
#include "flash/error.h"
#include "flash/tensor.h"

namespace flash::detail {

[[noreturn]] void fail(const std::string& msg);

// Packed (variable-length) views are checked as rank-4 views with a unit
// batch in front (with_unit_batch), so a message from those checks names
// their dimensions one higher than the caller's: packed_message renames
// "NAME.shape[d]" and "NAME.stride[d]" to d - 1 for each packed NAME (whole
// names: "dq" is not "q") and "(seqlen_q)" to "(total_q)" (with packed keys,
// "(seqlen_k)" to "(total_k)"). packed_checks runs `check` and throws its
// flash::Error so renamed.
std::string packed_message(const std::string& msg, std::initializer_list<const char*> names, bool keys_packed);
template <class Check> void packed_checks(std::initializer_list<const char*> names, bool keys_packed, Check&& check) {
  try {
    check();
  } catch (const Error& e) {
    throw Error(packed_message(e.what(), names, keys_packed));
  }
}

// "[2, 3, 4]"
std::string shape_str(const TensorView& t);

// Largest element offset a view can address: sum of (size - 1) * stride.
// Returns false when that overflows int64 (so does any index type we use).
bool max_offset(const TensorView& t, std::int64_t& out);

// A view of the given rank, non-negative sizes (each below 2^31) and
// strides, contiguous last dimension, and a pointer that is non-null and
// element-aligned unless the view is empty.
void check_view(const char* name, const TensorView& t, int rank);

// Outputs must not alias themselves.
void check_no_self_overlap(const char* name, const TensorView& t);

// A tensor of a call, named for messages; view is null for an optional
// argument that was not given.
struct NamedView {
  const char* name;
  const TensorView* view;
};

inline const TensorView* view_or_null(const std::optional<TensorView>& t) { return t ? &*t : nullptr; }

// Whether two views share memory, decided on their bytes (see views_overlap).
enum class Overlap { none, shared, undecided };

// Steps views_overlap may take to decide one pair of views. The usual
// layouts (separate buffers, packed qkv, aliases) take a handful; the
// budget bounds pathological strides.
inline constexpr std::int64_t kOverlapWorkBudget = std::int64_t{1} << 16;

// Whether views a and b (each valid for check_view) have a byte in common:
// exactly, from each one's data pointer, element size, shape and strides, so
// views that interleave without sharing a byte (dq, dk and dv in one packed
// [batch, seqlen, 3, heads, head_dim] buffer) are `none`. A view with no
// element shares nothing. `undecided` when the search needed more than
// `budget` steps (0: only the byte ranges [first, last] are compared).
Overlap views_overlap(const TensorView& a, const TensorView& b, std::int64_t budget = kOverlapWorkBudget);

// Outputs may share no byte with an input or with another output: throws
// "<output> overlaps <other>: ..." for the first pair that does, and "<output>
// may overlap <other>: ..." when views_overlap is undecided for a pair (such
// a call is rejected too). Inputs may overlap each other. Null views are
// skipped.
void check_no_overlap(std::span<const NamedView> inputs, std::span<const NamedView> outputs,
                      std::int64_t budget = kOverlapWorkBudget);
inline void check_no_overlap(std::initializer_list<NamedView> inputs, std::initializer_list<NamedView> outputs,
                             std::int64_t budget = kOverlapWorkBudget) {
  check_no_overlap(std::span<const NamedView>(inputs.begin(), inputs.size()),
                   std::span<const NamedView>(outputs.begin(), outputs.size()), budget);
}

// A caller's workspace, of which a call uses the first `bytes`, is written
// by the call: those bytes may share none with any of its views (inputs and
// outputs), else "workspace overlaps <view>: ...".
void check_workspace_overlap(const void* workspace, std::size_t bytes, std::span<const NamedView> inputs,
                             std::span<const NamedView> outputs);

// A caller's workspace for a call that needs `bytes` (> 0): at least that
// large (larger is fine) and 256-byte aligned; `plan` names the function
// that sizes it.
void check_caller_workspace(const void* given, std::size_t given_bytes, std::size_t bytes, std::string_view plan);

// t.dtype == expected, which is the dtype of q.
void check_same_dtype(const char* name, const TensorView& t, DType expected);

// t.shape[dim] == expected; `what` names the dimension, `from` where the
// expected value comes from.
void check_dim(const char* name, const TensorView& t, int dim, const char* what, std::int64_t expected,
               const char* from);

// An optional LSE output: fp32 [batch, heads_q, seqlen_q] with distinct elements.
void check_lse(const TensorView& lse, std::int64_t batch, std::int64_t heads_q, std::int64_t seqlen_q);

// The attention tensors every entry point takes, checked once for forward,
// backward and decode: q and o [batch, seqlen_q, heads_q, head_dim]; k and v
// [k_batch, seqlen_k, heads_kv, head_dim] with k_batch the batch (or, for a
// paged cache, the pages: k_batch_is_batch false, the caller checks it);
// the dtype of q everywhere; heads_q a multiple of heads_kv; the softmax
// scale; the optional lse fp32 [batch, heads_q, seqlen_q]. Fills the params
// core: the problem, the pointers and strides of q, k, v, o and lse.
struct AttnTensors {
  const TensorView& q;
  const TensorView& k;
  const TensorView& v;
  const TensorView& o;
  const TensorView* lse = nullptr;
  const char* k_name = "k";
  const char* v_name = "v";
  bool k_batch_is_batch = true;
};
void check_attention(const AttnTensors& t, const std::optional<float>& softmax_scale, const MaskSpec& mask,
                     AttnParams& p);

// A paged KV cache (ForwardArgs::page_table, DecodeArgs::page_table): the
// table int32 [batch, max_pages] (a contiguous last dimension; `batch_from`
// names where the batch comes from) over pages k [num_pages, page_size,
// heads_kv, head_dim] (named k_name; check_attention has checked its shape
// against v and q), page_size a power of two from min_page_size to 2^30 and
// max_pages * page_size below 2^31. Fills p's page fields and returns the
// capacity, max_pages * page_size keys per sequence.
int check_page_table(const TensorView& table, const TensorView& k, const char* k_name, std::int64_t batch,
                     const char* batch_from, int min_page_size, AttnParams& p);

// An int32 view of `rank` dimensions (metadata: cu_seqlens, seqused_k, status).
void check_i32(const char* name, const TensorView& t, int rank);

// A packed [rows, a, b] view as [1, rows, a, b] (batch stride 0), so that
// the dense checks and the kernels' arithmetic serve a variable-length call
// (ForwardArgs / BackwardArgs::cu_seqlens_q).
TensorView with_unit_batch(const TensorView& t);

// The metadata of a variable-length call, after check_attention has filled
// p from the packed views as one sequence (p.seqlen_q and p.seqlen_k are
// the packed rows, total_q and total_k): cu_seqlens_q and cu_seqlens_k
// int32 [batch + 1] (batch >= 0; cu_seqlens_k null with a paged cache,
// whose keys come from seqused_k), seqused_k int32 [batch], max_seqlen_q
// from 0 to total_q and max_seqlen_k from 0 to keys_bound (-1: total_k;
// paged: the table's capacity, named by keys_bound_name), status int32 [4]
// with stride 1 (each optional one null when not given). Then p.batch,
// p.seqlen_q and p.seqlen_k become batch and the bounds, the call's mask is
// derived for them (kernels take each sequence's own), and the metadata
// pointers are set; p.total_q and p.total_k get the packed rows (0 keys
// when paged). The values are the device's to check
// (check_varlen_metadata).
struct VarlenViews {
  const TensorView& cu_seqlens_q;
  const TensorView* cu_seqlens_k;
  const TensorView* seqused_k;
  int max_seqlen_q, max_seqlen_k;
  const TensorView* status;
  int keys_bound = -1;
  const char* keys_bound_name = "total_k";
};
void check_varlen_args(const VarlenViews& v, AttnParams& p);

// The optional status words of a call with device metadata: int32 [4], stride 1.
void check_status(const TensorView& status);

// The mask of a call from its arguments: each window side -1 (unbounded) or
// >= 0; causal is window_right = 0, so causal with window_right > 0 is an
// error (FlashAttention silently sets it to 0).
MaskSpec mask_spec(bool causal, int window_left, int window_right);

// The score modifiers (ForwardArgs::softcap, alibi_slopes, sinks), after
// check_attention has filled p's sizes: softcap 0 or finite and > 0;
// alibi_slopes fp32 [heads_q] or [batch, heads_q]; sinks fp32 [heads_q].
// Fills p.scores and the score units (AttnProblem::derive_scores).
void check_scores(float softcap, const TensorView* alibi_slopes, const TensorView* sinks, AttnParams& p);

// Why a variant with these Feature bits cannot take problem p (empty: it
// can): the first feature the call uses that the variant lacks. writes_lse:
// the call asks for the LSE output (the forward's kFeatureLse).
std::string feature_reason(unsigned features, const AttnProblem& p, bool writes_lse);

// The softmax scale: the given one, or 1 / sqrt(head_dim); finite and > 0.
float softmax_scale(const std::optional<float>& given, int head_dim);

// Empty when compute capability cc lies in [min_cc, max_cc] (max_cc 0: no
// upper bound), else why not.
std::string compute_capability_reason(int cc, int min_cc, int max_cc);

// Empty when t's pointer and its strides of dimensions 0-2 (those of size > 1)
// are multiples of `alignment` bytes, else why not.
std::string alignment_reason(const char* name, const TensorView& t, int alignment);

// Empty when each stepped stride of t's first three dimensions spans at
// least head_dim elements (Variant::strides_nest), else why not.
std::string nesting_reason(const char* name, const TensorView& t, int head_dim);

// Empty when t's largest element offset is at most max_offset (a variant's
// index limit), else why not.
std::string offset_reason(const char* name, const TensorView& t, std::int64_t max_offset);

// Why variant v (built) cannot take a call of this dtype and head dim over
// these tensors, short of device checks (empty: it can): its dtypes, its
// head dims, its alignment of pointers, strides and rows, its index limit.
// Optional tensors not given have a null view. Shared by forward, backward
// and decode; each adds what is its own (the forward's feature bits).
template <class Params>
std::string variant_reason(const Variant<Params>& v, DType dtype, int head_dim, std::initializer_list<NamedView> views) {
  if (!(v.dtype_mask & dtype_bit(dtype))) return "dtype " + std::string(dtype_name(dtype)) + " is not supported";
  bool hdim_ok = v.num_head_dims == 0 && head_dim <= v.max_head_dim;
  std::string dims;
  for (int i = 0; i < v.num_head_dims; ++i) {
    hdim_ok = hdim_ok || v.head_dims[i] == head_dim;
    dims += (i ? ", " : "") + std::to_string(v.head_dims[i]);
  }
  if (dims.empty()) dims = "1 to " + std::to_string(v.max_head_dim);
  if (!hdim_ok) return "head_dim " + std::to_string(head_dim) + " is not supported (built: " + dims + ")";
  if (v.alignment > 0) {
    for (const auto& [name, t] : views) {
      const std::string why = t != nullptr ? alignment_reason(name, *t, v.alignment) : std::string();
      if (!why.empty()) return why;
    }
    if ((head_dim * static_cast<int>(dtype_size(dtype))) % v.alignment != 0)
      return "head_dim * element size is not a multiple of " + std::to_string(v.alignment) + " bytes";
  }
  for (const auto& [name, t] : views) {
    const std::string why = t != nullptr ? offset_reason(name, *t, v.max_offset) : std::string();
    if (!why.empty()) return why;
  }
  if (v.strides_nest)
    for (const auto& [name, t] : views) {
      const std::string why = t != nullptr ? nesting_reason(name, *t, head_dim) : std::string();
      if (!why.empty()) return why;
    }
  return {};
}

// The variant named `kernel`, or for "auto" the last one in `registry` that
// takes the call. unsupported(r) and on_device(r) say why r cannot take it
// (empty: it can); on_device runs only for a variant that passed unsupported.
// `kind` ("" or "decode ") goes into the messages.
template <class Registered, class Unsupported, class OnDevice>
const Registered& pick_variant(const std::vector<Registered>& registry, const std::string& kernel, const char* kind,
                               Unsupported&& unsupported, OnDevice&& on_device) {
  if (kernel != "auto") {
    for (const auto& r : registry) {
      if (r.name != kernel) continue;
      std::string why = unsupported(r);
      if (why.empty()) why = on_device(r);
      if (!why.empty()) fail("kernel '" + kernel + "': " + why);
      return r;
    }
    std::string known;
    for (const auto& r : registry) known += (known.empty() ? "" : ", ") + std::string(r.name);
    fail("kernel: unknown " + std::string(kind) + "variant '" + kernel + "'; expected auto or one of: " + known);
  }
  std::string reasons;
  for (auto it = registry.rbegin(); it != registry.rend(); ++it) {
    std::string why = unsupported(*it);
    if (why.empty()) why = on_device(*it);
    if (why.empty()) return *it;
    reasons += "\n  " + std::string(it->name) + ": " + why;
  }
  fail("kernel auto: no " + std::string(kind) + "variant supports this call:" + reasons);
}

}  // namespace flash::detail
