// Argument checks shared by the entry points (validate.h).
#include "validate.h"

#include "flash/variants.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <utility>

namespace flash::detail {

namespace {
constexpr std::int64_t kMaxDim = std::numeric_limits<int>::max();
// A float for messages, in as many digits as it takes (1e-40, not 0.000000).
std::string num(float v) {
  std::ostringstream s;
  s << v;
  return s.str();
}
}  // namespace
[[noreturn]] void fail(const std::string& msg) { throw Error(msg); }

std::string packed_message(const std::string& msg, std::initializer_list<const char*> names, bool keys_packed) {
  const auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; };
  std::string out;
  std::size_t i = 0;
  while (i < msg.size()) {
    bool renamed = false;
    if (i == 0 || !ident(msg[i - 1]))
      for (const char* name : names)
        for (const char* what : {".shape[", ".stride["}) {
          const std::string key = std::string(name) + what;
          if (renamed || msg.compare(i, key.size(), key) != 0) continue;
          std::size_t j = i + key.size(), d = 0, digits = 0;
          while (j < msg.size() && std::isdigit(static_cast<unsigned char>(msg[j]))) d = d * 10 + (msg[j++] - '0'), ++digits;
          if (digits == 0 || j >= msg.size() || msg[j] != ']' || d == 0) continue;
          out += key + std::to_string(d - 1) + "]";
          i = j + 1;
          renamed = true;
        }
    if (!renamed) out += msg[i++];
  }
  const auto replace_all = [&](const std::string& from, const std::string& to) {
    for (std::size_t at = out.find(from); at != std::string::npos; at = out.find(from, at + to.size()))
      out.replace(at, from.size(), to);
  };
  replace_all("(seqlen_q)", "(total_q)");
  if (keys_packed) replace_all("(seqlen_k)", "(total_k)");
  return out;
}

std::string shape_str(const TensorView& t) {
  std::ostringstream s;
  s << '[';
  for (int i = 0; i < t.rank; ++i) s << (i ? ", " : "") << t.shape[i];
  s << ']';
  return s.str();
}

// Largest element offset a view can address: sum of (size - 1) * stride.
// Returns false when that overflows int64 (so does any index type we use).
bool max_offset(const TensorView& t, std::int64_t& out) {
  out = 0;
  for (int i = 0; i < t.rank; ++i) {
    if (t.shape[i] == 0) { out = 0; return true; }
  }
  for (int i = 0; i < t.rank; ++i) {
    std::int64_t term = 0;
    if (__builtin_mul_overflow(t.shape[i] - 1, t.stride[i], &term)) return false;
    if (__builtin_add_overflow(out, term, &out)) return false;
  }
  std::int64_t end = 0, bytes = 0;  // the byte offset of the last element must fit too
  return !__builtin_add_overflow(out, 1, &end) &&
         !__builtin_mul_overflow(end, static_cast<std::int64_t>(dtype_size(t.dtype)), &bytes);
}

// A view of the given rank, non-negative sizes and strides, contiguous last
// dimension, and a pointer that is non-null and element-aligned unless the
// view is empty.
void check_view(const char* name, const TensorView& t, int rank) {
  const std::string n(name);
  if (t.rank != rank) fail(n + ": expected a rank-" + std::to_string(rank) + " view, got rank " + std::to_string(t.rank));
  for (int i = 0; i < rank; ++i) {
    if (t.shape[i] < 0) fail(n + ".shape[" + std::to_string(i) + "] = " + std::to_string(t.shape[i]) + "; expected >= 0");
    if (t.shape[i] > kMaxDim)
      fail(n + ".shape[" + std::to_string(i) + "] = " + std::to_string(t.shape[i]) + " exceeds 2^31 - 1");
    if (t.stride[i] < 0)
      fail(n + ".stride[" + std::to_string(i) + "] = " + std::to_string(t.stride[i]) + "; expected >= 0");
  }
  if (t.stride[rank - 1] != 1 && t.shape[rank - 1] > 1)
    fail(n + ".stride[" + std::to_string(rank - 1) + "] = " + std::to_string(t.stride[rank - 1]) +
         "; the last dimension must be contiguous (stride 1)");
  std::int64_t off = 0;
  if (!max_offset(t, off)) fail(n + ": shape " + shape_str(t) + " with its strides addresses offsets that overflow 64 bits");
  if (t.numel() == 0) return;
  if (t.data == nullptr) fail(n + ".data is null");
  if (reinterpret_cast<std::uintptr_t>(t.data) % dtype_size(t.dtype) != 0)
    fail(n + ".data is not aligned to its " + std::to_string(dtype_size(t.dtype)) + "-byte elements");
}

namespace {

// Byte offsets in the overlap search: sums of two views' extents and a
// pointer difference can pass 2^63, so they are 128-bit.
using Wide = __int128;

Wide floor_div(Wide a, Wide b) {  // b > 0
  const Wide q = a / b;
  return q * b > a ? q - 1 : q;
}
Wide ceil_div(Wide a, Wide b) { return -floor_div(-a, b); }
Wide gcd(Wide a, Wide b) {
  while (b != 0) a = std::exchange(b, a % b);
  return a;
}

// coef * m for an integer m in [lo, hi]: one dimension of one of the two
// views, in bytes (coef > 0).
struct Term {
  Wide coef, lo, hi;
};
constexpr int kMaxTerms = 2 * TensorView::kMaxRank;

// Merges terms that one term can stand for exactly: when coef_j = k * coef_i
// and k is at most the number of values of m_i, m_i + k * m_j takes every
// integer in [lo_i + k lo_j, hi_i + k hi_j]. Equal strides of the two views
// (the batch and row strides of a packed layout) and dimensions nested
// contiguously collapse this way. Returns the new count, in ascending order.
int merge_terms(Term* terms, int n) {
  for (int i = 1; i < n; ++i)
    for (int j = i; j > 0 && terms[j].coef < terms[j - 1].coef; --j) std::swap(terms[j], terms[j - 1]);
  for (bool merged = true; merged;) {
    merged = false;
    for (int i = 0; i < n && !merged; ++i)
      for (int j = i + 1; j < n && !merged; ++j) {
        Term& t = terms[i];
        const Term& u = terms[j];
        if (u.coef % t.coef != 0 || u.coef / t.coef > t.hi - t.lo + 1) continue;
        const Wide k = u.coef / t.coef;
        t.lo += k * u.lo;
        t.hi += k * u.hi;
        std::copy(terms + j + 1, terms + n, terms + j);
        --n;
        merged = true;
      }
  }
  return n;
}

// Folds terms into the target interval [lo, hi] while the smallest
// coefficient is at most its width: the intervals [lo - m coef, hi - m coef]
// of consecutive m then touch, so "the rest lies in one of them" is "the
// rest lies in their union". Terms are in ascending order; returns the count
// left.
int absorb_terms(Term* terms, int n, Wide& lo, Wide& hi) {
  int first = 0;
  while (first < n && terms[first].coef <= hi - lo + 1) {
    const Term& t = terms[first++];
    lo -= t.coef * t.hi;
    hi -= t.coef * t.lo;
  }
  std::copy(terms + first, terms + n, terms);
  return n - first;
}

// Depth-first search for multipliers of terms[k..n) (largest coefficient
// first) whose sum lies in [lo, hi]. A node is pruned when the range the
// remaining terms reach misses [lo, hi] or no multiple of their gcd lies in
// it; each node is one step of the budget.
class OverlapSearch {
 public:
  OverlapSearch(const Term* terms, int n, std::int64_t budget) : terms_(terms), n_(n), budget_(budget) {
    for (int k = n - 1; k >= 0; --k) {
      min_[k] = min_[k + 1] + terms[k].coef * terms[k].lo;
      max_[k] = max_[k + 1] + terms[k].coef * terms[k].hi;
      gcd_[k] = gcd(terms[k].coef, gcd_[k + 1]);
    }
  }

  Overlap find(int k, Wide lo, Wide hi) {
    if (budget_-- <= 0) return Overlap::undecided;
    if (hi < min_[k] || lo > max_[k]) return Overlap::none;
    if (k == n_) return Overlap::shared;  // no term left, and 0 lies in [lo, hi]
    if (floor_div(hi, gcd_[k]) * gcd_[k] < lo) return Overlap::none;
    const Term& t = terms_[k];
    const Wide first = std::max(t.lo, ceil_div(lo - max_[k + 1], t.coef));
    const Wide last = std::min(t.hi, floor_div(hi - min_[k + 1], t.coef));
    for (Wide m = first; m <= last; ++m) {
      const Overlap r = find(k + 1, lo - m * t.coef, hi - m * t.coef);
      if (r != Overlap::none) return r;
    }
    return Overlap::none;
  }

 private:
  const Term* terms_;
  int n_;
  std::int64_t budget_;
  // Over terms[k..n): the least and greatest sum, and the gcd of the coefficients.
  Wide min_[kMaxTerms + 1] = {}, max_[kMaxTerms + 1] = {}, gcd_[kMaxTerms + 1] = {};
};

// Whether sum_k coef_k * m_k lies in [lo, hi] for some m_k in each term's
// range: the terms merged and absorbed where that is exact, the rest
// searched.
Overlap solve_terms(Term* terms, int n, Wide lo, Wide hi, std::int64_t budget) {
  n = merge_terms(terms, n);
  n = absorb_terms(terms, n, lo, hi);
  std::reverse(terms, terms + n);  // the search takes the largest coefficient first
  return OverlapSearch(terms, n, budget).find(0, lo, hi);
}

}  // namespace

// The bytes of a view are data + sum_i x_i * stride_i * esize + r, for
// 0 <= x_i < shape_i and 0 <= r < esize. So a and b share a byte iff
//   sum_i x_i * (a.stride_i * ea) - sum_j y_j * (b.stride_j * eb)
// lies in [d - (ea - 1), d + (eb - 1)], d = b.data - a.data: a bounded
// linear Diophantine problem (NumPy's shares_memory solves the same one),
// in which each dimension is a term coef * m. merge_terms and absorb_terms
// rewrite it exactly; for the usual layouts nothing is left to search.
Overlap views_overlap(const TensorView& a, const TensorView& b, std::int64_t budget) {
  for (const TensorView* t : {&a, &b})
    for (int i = 0; i < t->rank; ++i)
      if (t->shape[i] == 0) return Overlap::none;
  const Wide a0 = static_cast<Wide>(reinterpret_cast<std::uintptr_t>(a.data));
  const Wide b0 = static_cast<Wide>(reinterpret_cast<std::uintptr_t>(b.data));
  const Wide ea = static_cast<Wide>(dtype_size(a.dtype)), eb = static_cast<Wide>(dtype_size(b.dtype));
  auto last_byte = [](const TensorView& t, Wide esize) {
    Wide last = 0;
    for (int i = 0; i < t.rank; ++i) last += static_cast<Wide>(t.shape[i] - 1) * t.stride[i];
    return (last + 1) * esize - 1;
  };
  if (a0 + last_byte(a, ea) < b0 || b0 + last_byte(b, eb) < a0) return Overlap::none;

  Term terms[kMaxTerms];
  int n = 0;
  for (int i = 0; i < a.rank; ++i)
    if (a.shape[i] > 1 && a.stride[i] != 0) terms[n++] = {a.stride[i] * ea, 0, a.shape[i] - 1};
  for (int j = 0; j < b.rank; ++j)
    if (b.shape[j] > 1 && b.stride[j] != 0) terms[n++] = {b.stride[j] * eb, -(b.shape[j] - 1), 0};
  Wide lo = b0 - a0 - (ea - 1), hi = b0 - a0 + (eb - 1);
  return solve_terms(terms, n, lo, hi, budget);
}

// Outputs must not alias themselves. Sorted by stride, when each dimension
// steps past the whole extent of the smaller ones the elements are distinct
// (every usual layout). Otherwise two elements x != y share one exactly
// when sum_i (x_i - y_i) stride_i = 0 (same dtype, element-aligned): for
// each dimension d, a search for m_d in [1, n_d - 1], m_j = 0 before d and
// m_j in [-(n_j - 1), n_j - 1] after it (the first nonzero difference taken
// positive), as views_overlap searches its terms.
void check_no_self_overlap(const char* name, const TensorView& t) {
  if (t.numel() <= 1) return;
  int order[TensorView::kMaxRank];
  for (int i = 0; i < t.rank; ++i) order[i] = i;
  for (int i = 1; i < t.rank; ++i)
    for (int j = i; j > 0 && t.stride[order[j]] < t.stride[order[j - 1]]; --j) std::swap(order[j], order[j - 1]);
  std::int64_t extent = 1;  // elements spanned by the dimensions so far
  bool nested = true;
  for (int i = 0; i < t.rank && nested; ++i) {
    const int d = order[i];
    if (t.shape[d] == 1) continue;
    nested = t.stride[d] >= extent;
    extent = t.stride[d] * (t.shape[d] - 1) + extent;
  }
  if (nested) return;
  auto overlap = [&](int d, const char* how) {
    fail(std::string(name) + ": its strides " + how + " elements overlap (dimension " + std::to_string(d) +
         " has stride " + std::to_string(t.stride[d]) + "); an output needs distinct elements");
  };
  for (int d = 0; d < t.rank; ++d)
    if (t.shape[d] > 1 && t.stride[d] == 0) overlap(d, "make");
  for (int d = 0; d < t.rank; ++d) {
    if (t.shape[d] == 1) continue;
    Term terms[kMaxTerms];
    int n = 0;
    terms[n++] = {t.stride[d], 1, t.shape[d] - 1};
    for (int j = d + 1; j < t.rank; ++j)
      if (t.shape[j] > 1) terms[n++] = {t.stride[j], -(t.shape[j] - 1), t.shape[j] - 1};
    const Overlap r = solve_terms(terms, n, 0, 0, kOverlapWorkBudget);
    if (r == Overlap::shared) overlap(d, "make");
    if (r == Overlap::undecided) overlap(d, "may make");
  }
}

void check_no_overlap(std::span<const NamedView> inputs, std::span<const NamedView> outputs, std::int64_t budget) {
  auto check = [budget](const NamedView& out, const NamedView& other) {
    if (out.view == nullptr || other.view == nullptr) return;
    const Overlap overlap = views_overlap(*out.view, *other.view, budget);
    if (overlap == Overlap::shared)
      fail(std::string(out.name) + " overlaps " + other.name +
           ": outputs must not share memory with inputs or other outputs");
    if (overlap == Overlap::undecided)
      fail(std::string(out.name) + " may overlap " + other.name + ": their strides interleave too intricately for " +
           "the overlap check to decide in " + std::to_string(budget) +
           " steps; outputs must not share memory with inputs or other outputs");
  };
  for (auto out = outputs.begin(); out != outputs.end(); ++out) {
    for (const NamedView& in : inputs) check(*out, in);
    for (auto other = outputs.begin(); other != out; ++other) check(*out, *other);
  }
}

void check_workspace_overlap(const void* workspace, std::size_t bytes, std::span<const NamedView> inputs,
                             std::span<const NamedView> outputs) {
  if (workspace == nullptr || bytes == 0) return;
  // As 32-bit words: workspace sizes are whole words, and the pointer is
  // 256-byte aligned (check_caller_workspace).
  const TensorView ws = make_contiguous(const_cast<void*>(workspace), DType::i32,
                                        {static_cast<std::int64_t>((bytes + 3) / 4)});
  const NamedView out[] = {{"workspace", &ws}};
  for (std::span<const NamedView> views : {inputs, outputs}) check_no_overlap(views, out);
}

void check_caller_workspace(const void* given, std::size_t given_bytes, std::size_t bytes, std::string_view plan) {
  constexpr std::size_t kAlignment = 256;
  if (given_bytes < bytes)
    fail("workspace_bytes = " + std::to_string(given_bytes) + "; this call needs " + std::to_string(bytes) + " (see " +
         std::string(plan) + ")");
  if (reinterpret_cast<std::uintptr_t>(given) % kAlignment != 0)
    fail("workspace is not " + std::to_string(kAlignment) + "-byte aligned");
}

void check_same_dtype(const char* name, const TensorView& t, DType expected) {
  if (t.dtype != expected)
    fail(std::string(name) + ".dtype is " + std::string(dtype_name(t.dtype)) + "; expected " +
         std::string(dtype_name(expected)) + " (the dtype of q)");
}

void check_dim(const char* name, const TensorView& t, int dim, const char* what, std::int64_t expected,
               const char* from) {
  if (t.shape[dim] != expected)
    fail(std::string(name) + ".shape[" + std::to_string(dim) + "] (" + what + ") = " + std::to_string(t.shape[dim]) +
         "; expected " + std::to_string(expected) + " (" + from + ")");
}

void check_lse(const TensorView& l, std::int64_t batch, std::int64_t heads_q, std::int64_t seqlen_q) {
  check_view("lse", l, 3);
  if (l.dtype != DType::f32) fail("lse.dtype is " + std::string(dtype_name(l.dtype)) + "; expected f32");
  check_dim("lse", l, 0, "batch", batch, "q.shape[0]");
  check_dim("lse", l, 1, "heads_q", heads_q, "q.shape[2]");
  check_dim("lse", l, 2, "seqlen_q", seqlen_q, "q.shape[1]");
  check_no_self_overlap("lse", l);
}

void check_i32(const char* name, const TensorView& t, int rank) {
  check_view(name, t, rank);
  if (t.dtype != DType::i32) fail(std::string(name) + ".dtype is " + std::string(dtype_name(t.dtype)) + "; expected i32");
}

int check_page_table(const TensorView& t, const TensorView& k, const char* k_name, std::int64_t batch,
                     const char* batch_from, int min_page_size, AttnParams& p) {
  check_i32("page_table", t, 2);
  check_dim("page_table", t, 0, "batch", batch, batch_from);
  const std::int64_t page_size = k.shape[1];
  constexpr std::int64_t kMaxPageSize = std::int64_t{1} << 30;
  if (page_size < min_page_size || page_size > kMaxPageSize || (page_size & (page_size - 1)) != 0)
    fail(std::string(k_name) + ".shape[1] (page_size) = " + std::to_string(page_size) + "; expected a power of two (" +
         std::to_string(min_page_size) + " to 2^30)");
  const std::int64_t capacity = t.shape[1] * page_size;
  if (capacity > std::numeric_limits<int>::max())
    fail("page_table.shape[1] (max_pages) * page_size = " + std::to_string(capacity) +
         " keys per sequence exceeds 2^31 - 1");
  p.page_table = static_cast<const int*>(t.data);
  p.page_table_stride = t.stride[0];
  p.max_pages = static_cast<int>(t.shape[1]);
  p.num_pages = static_cast<int>(k.shape[0]);
  p.page_size = static_cast<int>(page_size);
  p.page_shift = 0;
  while ((1 << p.page_shift) < p.page_size) ++p.page_shift;
  return static_cast<int>(capacity);
}

TensorView with_unit_batch(const TensorView& t) {
  TensorView v = t;
  v.rank = t.rank + 1;
  for (int d = t.rank; d > 0; --d) v.shape[d] = t.shape[d - 1], v.stride[d] = t.stride[d - 1];
  v.shape[0] = 1, v.stride[0] = 0;
  return v;
}

void check_status(const TensorView& t) {
  check_i32("status", t, 1);
  check_dim("status", t, 0, "size", 4, "four status words");
  if (t.stride[0] != 1) fail("status.stride[0] = " + std::to_string(t.stride[0]) + "; expected 1");
}

void check_varlen_args(const VarlenViews& a, AttnParams& p) {
  check_i32("cu_seqlens_q", a.cu_seqlens_q, 1);
  const std::int64_t batch = a.cu_seqlens_q.shape[0] - 1;
  if (batch < 0) fail("cu_seqlens_q.shape[0] = 0; expected batch + 1 >= 1 entries");
  if (a.cu_seqlens_k != nullptr) {
    check_i32("cu_seqlens_k", *a.cu_seqlens_k, 1);
    check_dim("cu_seqlens_k", *a.cu_seqlens_k, 0, "batch + 1", batch + 1, "cu_seqlens_q.shape[0]");
  }
  if (a.seqused_k != nullptr) {
    check_i32("seqused_k", *a.seqused_k, 1);
    check_dim("seqused_k", *a.seqused_k, 0, "batch", batch, "cu_seqlens_q.shape[0] - 1");
  }
  if (a.max_seqlen_q < 0 || a.max_seqlen_q > p.seqlen_q)
    fail("max_seqlen_q = " + std::to_string(a.max_seqlen_q) + "; expected 0 to total_q = " + std::to_string(p.seqlen_q));
  const int keys_bound = a.keys_bound >= 0 ? a.keys_bound : p.seqlen_k;
  if (a.max_seqlen_k < 0 || a.max_seqlen_k > keys_bound)
    fail("max_seqlen_k = " + std::to_string(a.max_seqlen_k) + "; expected 0 to " + a.keys_bound_name + " = " +
         std::to_string(keys_bound));
  if (a.status != nullptr) check_status(*a.status);
  p.total_q = p.seqlen_q, p.total_k = a.cu_seqlens_k != nullptr ? p.seqlen_k : 0;
  p.batch = static_cast<int>(batch);
  p.seqlen_q = a.max_seqlen_q;
  p.seqlen_k = a.max_seqlen_k;
  p.derive_mask();  // kernels take each sequence's own (mask_for(seqlen_q, seqlen_k))
  p.cu_seqlens_q = static_cast<const int*>(a.cu_seqlens_q.data);
  p.cu_seqlens_k = a.cu_seqlens_k != nullptr ? static_cast<const int*>(a.cu_seqlens_k->data) : nullptr;
  p.seqused_k = a.seqused_k != nullptr ? static_cast<const int*>(a.seqused_k->data) : nullptr;
}

MaskSpec mask_spec(bool causal, int window_left, int window_right) {
  if (window_left < -1) fail("window_left = " + std::to_string(window_left) + ": expected -1 (unbounded) or >= 0");
  if (window_right < -1) fail("window_right = " + std::to_string(window_right) + ": expected -1 (unbounded) or >= 0");
  if (causal && window_right > 0)
    fail("window_right = " + std::to_string(window_right) + " with causal = true: causal means window_right = 0 "
         "(pass causal = false for a window that reaches past the diagonal)");
  MaskSpec m;
  m.causal = causal;
  m.window_left = window_left;
  m.window_right = causal ? 0 : window_right;
  return m;
}

void check_attention(const AttnTensors& t, const std::optional<float>& given_scale, const MaskSpec& mask,
                     AttnParams& p) {
  const std::string k_name(t.k_name), v_name(t.v_name);
  check_view("q", t.q, 4);
  check_view(t.k_name, t.k, 4);
  check_view(t.v_name, t.v, 4);
  check_view("o", t.o, 4);
  const DType dtype = t.q.dtype;
  check_same_dtype(t.k_name, t.k, dtype);
  check_same_dtype(t.v_name, t.v, dtype);
  check_same_dtype("o", t.o, dtype);

  const std::int64_t batch = t.q.shape[0], seqlen_q = t.q.shape[1], heads_q = t.q.shape[2], head_dim = t.q.shape[3];
  const std::int64_t seqlen_k = t.k.shape[1], heads_kv = t.k.shape[2];
  if (heads_q < 1) fail("q.shape[2] (heads_q) = " + std::to_string(heads_q) + "; expected >= 1");
  if (head_dim < 1) fail("q.shape[3] (head_dim) = " + std::to_string(head_dim) + "; expected >= 1");
  if (t.k_batch_is_batch) check_dim(t.k_name, t.k, 0, "batch", batch, "q.shape[0]");
  if (heads_kv < 1) fail(k_name + ".shape[2] (heads_kv) = " + std::to_string(heads_kv) + "; expected >= 1");
  check_dim(t.k_name, t.k, 3, "head_dim", head_dim, "q.shape[3]");
  const std::string k_shape = k_name + "'s shape";
  for (int d = 0; d < 4; ++d) {
    static const char* kWhat[] = {"batch", "seqlen_k", "heads_kv", "head_dim"};
    static const char* kCacheWhat[] = {"batch or pages", "capacity or page_size", "heads_kv", "head_dim"};
    check_dim(t.v_name, t.v, d, t.k_batch_is_batch ? kWhat[d] : kCacheWhat[d], t.k.shape[d], k_shape.c_str());
  }
  for (int d = 0; d < 4; ++d) {
    static const char* kWhat[] = {"batch", "seqlen_q", "heads_q", "head_dim"};
    check_dim("o", t.o, d, kWhat[d], t.q.shape[d], "q's shape");
  }
  if (heads_q % heads_kv != 0)
    fail("q.shape[2] (heads_q) = " + std::to_string(heads_q) + " is not a multiple of " + k_name +
         ".shape[2] (heads_kv) = " + std::to_string(heads_kv));
  if (t.lse != nullptr) check_lse(*t.lse, batch, heads_q, seqlen_q);
  const float scale = softmax_scale(given_scale, static_cast<int>(head_dim));

  p.batch = static_cast<int>(batch);
  p.seqlen_q = static_cast<int>(seqlen_q);
  p.seqlen_k = static_cast<int>(seqlen_k);
  p.heads_q = static_cast<int>(heads_q);
  p.heads_kv = static_cast<int>(heads_kv);
  p.head_dim = static_cast<int>(head_dim);
  p.group_size = static_cast<int>(heads_q / heads_kv);
  p.scale = scale;
  p.scale_log2 = static_cast<float>(scale * kLog2e);
  p.mask = mask;
  p.derive_mask();
  p.dtype = dtype;
  p.q = t.q.data, p.k = t.k.data, p.v = t.v.data, p.o = t.o.data;
  p.q_batch_stride = t.q.stride[0], p.q_row_stride = t.q.stride[1], p.q_head_stride = t.q.stride[2];
  p.k_batch_stride = t.k.stride[0], p.k_row_stride = t.k.stride[1], p.k_head_stride = t.k.stride[2];
  p.v_batch_stride = t.v.stride[0], p.v_row_stride = t.v.stride[1], p.v_head_stride = t.v.stride[2];
  p.o_batch_stride = t.o.stride[0], p.o_row_stride = t.o.stride[1], p.o_head_stride = t.o.stride[2];
  if (t.lse != nullptr) {
    p.lse = static_cast<float*>(t.lse->data);
    p.lse_batch_stride = t.lse->stride[0], p.lse_head_stride = t.lse->stride[1], p.lse_row_stride = t.lse->stride[2];
  }
}

void check_scores(float softcap, const TensorView* alibi, const TensorView* sinks, AttnParams& p) {
  // Where batch and heads_q come from, for messages (packed q: [total_q, heads_q, head_dim]).
  const bool packed = p.cu_seqlens_q != nullptr;
  const char* batch_from = packed ? "cu_seqlens_q.shape[0] - 1" : "q.shape[0]";
  const char* heads_from = packed ? "q.shape[1]" : "q.shape[2]";
  if (!std::isfinite(softcap) || softcap < 0.0f)
    fail("softcap = " + std::to_string(softcap) + "; expected 0 (off) or a finite value > 0");
  // The kernels compute softcap * tanh(score * (softmax_scale / softcap)) and
  // scale it by softcap * log2(e), both in fp32.
  if (softcap > 0.0f && (!std::isfinite(static_cast<float>(static_cast<double>(p.scale) / softcap)) ||
                         !std::isfinite(static_cast<float>(softcap * kLog2e))))
    fail("softcap = " + num(softcap) + " with softmax_scale = " + num(p.scale) +
         "; expected 0 (off) or a value > 0 for which softmax_scale / softcap and softcap * log2(e) are finite in fp32");
  p.scores = ScoreSpec{};
  p.scores.softcap = softcap;
  auto check_f32 = [](const char* name, const TensorView& t, int rank) {
    check_view(name, t, rank);
    if (t.dtype != DType::f32) fail(std::string(name) + ".dtype is " + std::string(dtype_name(t.dtype)) + "; expected f32");
  };
  if (alibi != nullptr) {
    const TensorView& t = *alibi;
    if (t.rank != 1 && t.rank != 2)
      fail("alibi_slopes: expected a rank-1 [heads_q] or rank-2 [batch, heads_q] view, got rank " +
           std::to_string(t.rank));
    check_f32("alibi_slopes", t, t.rank);
    if (t.rank == 2) check_dim("alibi_slopes", t, 0, "batch", p.batch, batch_from);
    check_dim("alibi_slopes", t, t.rank - 1, "heads_q", p.heads_q, heads_from);
    p.scores.alibi = static_cast<const float*>(t.data);
    p.scores.alibi_batch_stride = t.rank == 2 ? t.stride[0] : 0;
    p.scores.alibi_head_stride = t.stride[t.rank - 1];
  }
  if (sinks != nullptr) {
    check_f32("sinks", *sinks, 1);
    check_dim("sinks", *sinks, 0, "heads_q", p.heads_q, heads_from);
    p.scores.sinks = static_cast<const float*>(sinks->data);
    p.scores.sinks_stride = sinks->stride[0];
  }
  // An empty view (heads_q 0 cannot happen: check_attention wants >= 1) has a
  // null pointer only when it has no element; batch 0 may leave alibi empty.
  if (p.scores.alibi != nullptr && alibi->numel() == 0) p.scores.alibi = nullptr;
  p.derive_scores();
}

std::string feature_reason(unsigned features, const AttnProblem& p, bool writes_lse) {
  const struct { unsigned bit; bool used; const char* what; } used[] = {
      {kFeatureCausal, p.mask.causal, "the causal mask"},
      {kFeatureGqa, p.group_size > 1, "heads_q != heads_kv (GQA/MQA)"},
      {kFeatureLse, writes_lse, "the LSE output"},
      {kFeatureUnequalSeqlens, p.seqlen_q != p.seqlen_k, "seqlen_q != seqlen_k"},
      {kFeatureWindow, p.mask.window_left >= 0 || (!p.mask.causal && p.mask.window_right >= 0), "a sliding window"},
      {kFeatureSoftcap, p.scores.softcap > 0.0f, "softcap"},
      {kFeatureAlibi, p.scores.alibi != nullptr, "alibi_slopes"},
      {kFeatureSinks, p.scores.sinks != nullptr, "sinks"},
  };
  for (const auto& f : used)
    if (f.used && !(features & f.bit)) return std::string(f.what) + " is not supported";
  return {};
}

float softmax_scale(const std::optional<float>& given, int head_dim) {
  const float scale = given ? *given : 1.0f / std::sqrt(static_cast<float>(head_dim));
  if (!std::isfinite(scale) || scale <= 0.0f)
    fail("softmax_scale = " + std::to_string(scale) + "; expected a finite value > 0");
  // The kernels scale by softmax_scale * log2(e) in fp32 (exp2).
  if (!std::isfinite(static_cast<float>(scale * kLog2e)))
    fail("softmax_scale = " + num(scale) + "; expected a finite value > 0 whose product with log2(e) is " +
         "finite in fp32 (below ~2.36e38)");
  return scale;
}

std::string compute_capability_reason(int cc, int min_cc, int max_cc) {
  auto str = [](int c) { return std::to_string(c / 10) + "." + std::to_string(c % 10); };
  if (cc < min_cc) return "needs compute capability " + str(min_cc) + "; this GPU has " + str(cc);
  if (max_cc != 0 && cc > max_cc)
    return "built for compute capability " + str(max_cc) + " only (architecture-specific code); this GPU has " + str(cc);
  return {};
}

std::string alignment_reason(const char* name, const TensorView& t, int alignment) {
  if (alignment <= 0 || t.numel() == 0) return {};
  if (reinterpret_cast<std::uintptr_t>(t.data) % alignment != 0)
    return std::string(name) + ".data is not " + std::to_string(alignment) + "-byte aligned";
  const auto esize = static_cast<std::int64_t>(dtype_size(t.dtype));
  for (int d = 0; d < 3 && d < t.rank; ++d)
    if (t.shape[d] > 1 && (t.stride[d] * esize) % alignment != 0)
      return std::string(name) + ".stride[" + std::to_string(d) + "] = " + std::to_string(t.stride[d]) +
             " elements is not a multiple of " + std::to_string(alignment) + " bytes";
  return {};
}

std::string nesting_reason(const char* name, const TensorView& t, int head_dim) {
  if (t.numel() == 0) return {};
  for (int d = 0; d < 3 && d < t.rank; ++d)
    if (t.shape[d] > 1 && t.stride[d] < head_dim)
      return std::string(name) + ".stride[" + std::to_string(d) + "] = " + std::to_string(t.stride[d]) +
             " elements is below head_dim (" + std::to_string(head_dim) + "): TMA maps step whole rows";
  return {};
}

std::string offset_reason(const char* name, const TensorView& t, std::int64_t max_offset) {
  std::int64_t off = 0;
  detail::max_offset(t, off);
  if (off <= max_offset) return {};
  return std::string(name) + "'s largest element offset " + std::to_string(off) + " exceeds the variant's index limit " +
         std::to_string(max_offset);
}

}  // namespace flash::detail
