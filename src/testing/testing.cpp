#include "testing/testing.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

namespace flash::testing {

void check(int err, const char* what) {
  const auto e = static_cast<cudaError_t>(err);
  if (e != cudaSuccess) throw Error(std::string(what) + ": " + cudaGetErrorString(e));
}

bool gpu_available(std::string* why) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    if (why) *why = err != cudaSuccess ? std::string("no CUDA device: ") + cudaGetErrorString(err) : "no CUDA device found";
    return false;
  }
  return true;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes > 0) check(cudaMalloc(&ptr_, bytes), "cudaMalloc");
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  std::swap(ptr_, o.ptr_);
  std::swap(bytes_, o.bytes_);
  return *this;
}

TensorView ViewSpec::view(void* data, DType dtype) const {
  if (layout == Layout::bshd) return make_contiguous(data, dtype, {batch, seqlen, heads, head_dim});
  // Memory is [batch, heads, seqlen, head_dim]; the view stays [b, s, h, d].
  return make_view(data, dtype, {batch, seqlen, heads, head_dim},
                   {heads * seqlen * head_dim, head_dim, seqlen * head_dim, 1});
}

std::vector<double> random_values(std::size_t n, DType dtype, std::mt19937_64& rng) {
  std::normal_distribution<double> dist(0.0, 1.0);
  std::vector<double> out(n);
  for (auto& x : out) x = reference::round_to(dtype, dist(rng));
  return out;
}

std::size_t view_bytes(const TensorView& t) {
  if (t.numel() == 0) return 0;
  std::int64_t last = 0;
  for (int i = 0; i < t.rank; ++i) last += (t.shape[i] - 1) * t.stride[i];
  return static_cast<std::size_t>(last + 1) * dtype_size(t.dtype);
}

namespace {

// Calls f(host_index, element_offset) for every element of a view, host
// index in row-major order of the view's shape.
template <class F> void for_each_element(const TensorView& t, F&& f) {
  std::int64_t idx[TensorView::kMaxRank] = {};
  const std::int64_t n = t.numel();
  for (std::int64_t i = 0; i < n; ++i) {
    std::int64_t off = 0;
    for (int d = 0; d < t.rank; ++d) off += idx[d] * t.stride[d];
    f(static_cast<std::size_t>(i), off);
    for (int d = t.rank - 1; d >= 0; --d) {
      if (++idx[d] < t.shape[d]) break;
      idx[d] = 0;
    }
  }
}

void store(std::vector<unsigned char>& bytes, std::int64_t off, DType dtype, double x) {
  const float f = static_cast<float>(x);
  switch (dtype) {
    case DType::f32: std::memcpy(&bytes[off * 4], &f, 4); break;
    case DType::f16: { const __half h = __float2half_rn(f); std::memcpy(&bytes[off * 2], &h, 2); break; }
    case DType::bf16: { const __nv_bfloat16 h = __float2bfloat16_rn(f); std::memcpy(&bytes[off * 2], &h, 2); break; }
  }
}

double load(const std::vector<unsigned char>& bytes, std::int64_t off, DType dtype) {
  switch (dtype) {
    case DType::f32: { float f; std::memcpy(&f, &bytes[off * 4], 4); return f; }
    case DType::f16: { __half h; std::memcpy(&h, &bytes[off * 2], 2); return __half2float(h); }
    case DType::bf16: { __nv_bfloat16 h; std::memcpy(&h, &bytes[off * 2], 2); return __bfloat162float(h); }
  }
  return 0;
}

}  // namespace

void upload(const std::vector<double>& host, const TensorView& t) {
  std::vector<unsigned char> bytes(view_bytes(t));
  for_each_element(t, [&](std::size_t i, std::int64_t off) { store(bytes, off, t.dtype, host[i]); });
  check(cudaMemcpy(t.data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "upload");
}

std::vector<double> download(const TensorView& t) {
  std::vector<unsigned char> bytes(view_bytes(t));
  check(cudaMemcpy(bytes.data(), t.data, bytes.size(), cudaMemcpyDeviceToHost), "download");
  std::vector<double> out(static_cast<std::size_t>(t.numel()));
  for_each_element(t, [&](std::size_t i, std::int64_t off) { out[i] = load(bytes, off, t.dtype); });
  return out;
}

void poison(const TensorView& t) {
  std::vector<double> nan(static_cast<std::size_t>(t.numel()), std::numeric_limits<double>::quiet_NaN());
  upload(nan, t);
}

std::vector<int> sample_rows(int seqlen_q, int count, std::uint64_t seed) {
  std::vector<int> rows;
  if (seqlen_q <= count) {
    for (int i = 0; i < seqlen_q; ++i) rows.push_back(i);
    return rows;
  }
  std::set<int> picked = {0, 1, seqlen_q - 2, seqlen_q - 1};
  for (int edge : {63, 64, 127, 128, 191, 192}) picked.insert(std::min(edge, seqlen_q - 1));
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> dist(0, seqlen_q - 1);
  while (static_cast<int>(picked.size()) < count) picked.insert(dist(rng));
  return {picked.begin(), picked.end()};
}

Problem make_problem(const Shape& s, DType dtype, bool causal, Layout layout, std::uint64_t seed, std::vector<int> rows) {
  Problem p;
  p.shape = s;
  p.dtype = dtype;
  p.causal = causal;
  p.layout = layout;
  p.rows = std::move(rows);
  std::mt19937_64 rng(seed);
  const ViewSpec q_spec{s.batch, s.seqlen_q, s.heads_q, s.head_dim, layout};
  const ViewSpec kv_spec{s.batch, s.seqlen_k, s.heads_kv, s.head_dim, layout};
  p.q = random_values(q_spec.elements(), dtype, rng);
  p.k = random_values(kv_spec.elements(), dtype, rng);
  p.v = random_values(kv_spec.elements(), dtype, rng);

  const std::size_t esize = dtype_size(dtype);
  p.dq = DeviceBuffer(q_spec.elements() * esize);
  p.dk = DeviceBuffer(kv_spec.elements() * esize);
  p.dv = DeviceBuffer(kv_spec.elements() * esize);
  p.d_o = DeviceBuffer(q_spec.elements() * esize);
  p.d_lse = DeviceBuffer(static_cast<std::size_t>(s.batch) * s.heads_q * s.seqlen_q * sizeof(float));
  p.vq = q_spec.view(p.dq.get(), dtype);
  p.vk = kv_spec.view(p.dk.get(), dtype);
  p.vv = kv_spec.view(p.dv.get(), dtype);
  p.vo = q_spec.view(p.d_o.get(), dtype);
  p.vlse = make_contiguous(p.d_lse.get(), DType::f32, {s.batch, s.heads_q, s.seqlen_q});
  upload(p.q, p.vq);
  upload(p.k, p.vk);
  upload(p.v, p.vv);

  reference::Problem rp;
  rp.batch = s.batch;
  rp.seqlen_q = s.seqlen_q;
  rp.seqlen_k = s.seqlen_k;
  rp.heads_q = s.heads_q;
  rp.heads_kv = s.heads_kv;
  rp.head_dim = s.head_dim;
  rp.softmax_scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(s.head_dim)));
  rp.causal = causal;
  p.ref = reference::forward(rp, p.q, p.k, p.v, dtype, p.rows);
  return p;
}

double rounding_floor(DType dtype) {
  switch (dtype) {
    case DType::f32: return std::ldexp(1.0, -20);  // a few ulps: the lowp reference models the fp32 math
    case DType::f16: return std::ldexp(1.0, -11);  // one rounding of O
    case DType::bf16: return std::ldexp(1.0, -8);
  }
  return 0;
}

CheckResult run_and_check(Problem& prob, const std::string& kernel) {
  CheckResult r;
  const Shape& s = prob.shape;
  poison(prob.vo);
  poison(prob.vlse);
  ForwardArgs args;
  args.q = prob.vq;
  args.k = prob.vk;
  args.v = prob.vv;
  args.o = prob.vo;
  args.lse = prob.vlse;
  args.causal = prob.causal;
  args.kernel = kernel;
  try {
    attention_forward(args);
    check(cudaDeviceSynchronize(), "kernel execution");
  } catch (const Error& e) {
    r.error = e.what();
    return r;
  }
  const std::vector<double> o = download(prob.vo);
  const std::vector<double> lse = download(prob.vlse);
  for (double x : o) r.unwritten += std::isnan(x);
  for (double x : lse) r.unwritten += std::isnan(x);

  std::vector<int> rows = prob.rows;
  if (rows.empty())
    for (int i = 0; i < s.seqlen_q; ++i) rows.push_back(i);
  double lowp_err = 0, max_ref = 0, max_lse = 1;
  bool lse_inf_mismatch = false;
  for (int b = 0; b < s.batch; ++b)
    for (int i : rows)
      for (int h = 0; h < s.heads_q; ++h) {
        const std::size_t base = ((static_cast<std::size_t>(b) * s.seqlen_q + i) * s.heads_q + h) * s.head_dim;
        for (int d = 0; d < s.head_dim; ++d) {
          const double ref = prob.ref.o[base + d];
          const double err = std::fabs(o[base + d] - ref);
          r.max_err = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(r.max_err, err);
          lowp_err = std::max(lowp_err, std::fabs(prob.ref.o_lowp[base + d] - ref));
          max_ref = std::max(max_ref, std::fabs(ref));
        }
        const std::size_t li = (static_cast<std::size_t>(b) * s.heads_q + h) * s.seqlen_q + i;
        const double ref_lse = prob.ref.lse[li];
        if (std::isinf(ref_lse)) {
          lse_inf_mismatch = lse_inf_mismatch || lse[li] != ref_lse;
        } else {
          const double err = std::fabs(lse[li] - ref_lse);
          r.lse_err = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(r.lse_err, err);
          max_lse = std::max(max_lse, std::fabs(ref_lse));
        }
      }
  r.bound = 2 * lowp_err + rounding_floor(prob.dtype) * max_ref;
  r.lse_bound = std::ldexp(1.0, -16) * max_lse;  // the reference LSE has no low-precision step
  if (lse_inf_mismatch) r.lse_err = std::numeric_limits<double>::infinity();
  r.ok = r.unwritten == 0 && r.max_err <= r.bound && r.lse_err <= r.lse_bound;
  return r;
}

}  // namespace flash::testing
