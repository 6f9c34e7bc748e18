#include "testing/testing.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <thread>

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
  if (layout == Layout::kv_expanded)  // every batch on batch 0's elements
    return make_view(data, dtype, {batch, seqlen, heads, head_dim}, {0, heads * head_dim, head_dim, 1});
  // Memory is [batch, heads, seqlen, head_dim]; the view stays [b, s, h, d].
  return make_view(data, dtype, {batch, seqlen, heads, head_dim},
                   {heads * seqlen * head_dim, head_dim, seqlen * head_dim, 1});
}

std::vector<double> random_values(std::size_t n, DType dtype, std::mt19937_64& rng, double stddev, double mean) {
  std::normal_distribution<double> dist(mean, stddev);
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
    case DType::i32: { const std::int32_t i = static_cast<std::int32_t>(x); std::memcpy(&bytes[off * 4], &i, 4); break; }
  }
}

double load(const std::vector<unsigned char>& bytes, std::int64_t off, DType dtype) {
  switch (dtype) {
    case DType::f32: { float f; std::memcpy(&f, &bytes[off * 4], 4); return f; }
    case DType::f16: { __half h; std::memcpy(&h, &bytes[off * 2], 2); return __half2float(h); }
    case DType::bf16: { __nv_bfloat16 h; std::memcpy(&h, &bytes[off * 2], 2); return __bfloat162float(h); }
    case DType::i32: { std::int32_t i; std::memcpy(&i, &bytes[off * 4], 4); return i; }
  }
  return 0;
}

// splitmix64's output for state x: a 64-bit mix, so that consecutive
// counters give independent-looking words.
std::uint64_t splitmix64(std::uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

bool is_contiguous(const TensorView& t) {
  std::int64_t expect = 1;
  for (int i = t.rank - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.stride[i] != expect) return false;
    expect *= t.shape[i];
  }
  return true;
}

}  // namespace

std::vector<unsigned char> random_bytes(std::size_t n, DType dtype, std::uint64_t seed, double stddev, double mean,
                                        unsigned threads) {
  constexpr std::uint64_t kGamma = 0x9e3779b97f4a7c15ull;  // splitmix64's increment
  constexpr double kTwoPi = 6.283185307179586, kUnit = 1.0 / 9007199254740992.0;  // 2^-53
  std::vector<unsigned char> bytes(n * dtype_size(dtype));
  const std::uint64_t key = splitmix64(seed * kGamma + kGamma);
  const std::size_t pairs = (n + 1) / 2;
  // Pair k: two uniform words from counters 2k and 2k + 1, two normals for
  // elements 2k and 2k + 1.
  const auto fill = [&](std::size_t k0, std::size_t k1) {
    for (std::size_t k = k0; k < k1; ++k) {
      const std::uint64_t a = splitmix64(key + (2 * k + 1) * kGamma), b = splitmix64(key + (2 * k + 2) * kGamma);
      const double u1 = (static_cast<double>(a >> 11) + 0.5) * kUnit, u2 = static_cast<double>(b >> 11) * kUnit;
      const double r = std::sqrt(-2.0 * std::log(u1));
      store(bytes, static_cast<std::int64_t>(2 * k), dtype, mean + stddev * r * std::cos(kTwoPi * u2));
      if (2 * k + 1 < n) store(bytes, static_cast<std::int64_t>(2 * k + 1), dtype, mean + stddev * r * std::sin(kTwoPi * u2));
    }
  };
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(1, pairs / 65536)));
  std::vector<std::thread> pool;
  const std::size_t per = (pairs + threads - 1) / threads;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(fill, std::min(pairs, t * per), std::min(pairs, (t + 1) * per));
  fill(0, std::min(pairs, per));
  for (auto& th : pool) th.join();
  return bytes;
}

void upload_random(const TensorView& t, std::uint64_t seed, double stddev, double mean) {
  const std::size_t n = static_cast<std::size_t>(t.numel());
  if (n == 0) return;
  if (!is_contiguous(t)) throw Error("upload_random: the view must be contiguous (upload(random_values()) takes strides)");
  const std::vector<unsigned char> bytes = random_bytes(n, t.dtype, seed, stddev, mean);
  check(cudaMemcpy(t.data, bytes.data(), bytes.size(), cudaMemcpyHostToDevice), "upload_random");
}

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

double typical_row_max(double qk_gain, float softcap) {
  const double row_max = 3.0 * qk_gain * qk_gain;
  return softcap > 0.0f ? std::min<double>(row_max, softcap) : row_max;
}

ScoreInputs make_score_inputs(int batch, int heads_q, float softcap, Alibi alibi, bool sinks, double level,
                              std::mt19937_64& rng) {
  ScoreInputs in;
  in.softcap = softcap;
  auto to_f32 = [](double x) { return static_cast<double>(static_cast<float>(x)); };
  if (alibi != Alibi::none) {
    const int rows = alibi == Alibi::per_batch ? batch : 1;
    std::uniform_real_distribution<double> u(0.0, 1.0);
    in.alibi.resize(static_cast<std::size_t>(rows) * heads_q);
    for (double& x : in.alibi) x = to_f32(0.5 * std::exp2(-8.0 * u(rng)));
    in.d_alibi = DeviceBuffer(std::max<std::size_t>(1, in.alibi.size()) * sizeof(float));
    in.alibi_view = alibi == Alibi::per_batch
                        ? make_contiguous(in.d_alibi.get(), DType::f32, {batch, heads_q})
                        : make_contiguous(in.d_alibi.get(), DType::f32, {heads_q});
    upload(in.alibi, *in.alibi_view);
  }
  if (sinks) {
    std::normal_distribution<double> n(0.0, 2.0);
    std::uniform_real_distribution<double> u(-1.0, 1.0), far(8.0, 20.0);
    in.sinks.resize(static_cast<std::size_t>(heads_q));
    for (int h = 0; h < heads_q; ++h) {
      const bool large = h % 4 == 1, above = h % 8 == 1;  // head 1 above the scores, head 5 below, ...
      const double x = large ? (above ? level + far(rng) : -(level + far(rng))) : level * u(rng) + n(rng);
      in.sinks[h] = to_f32(x);
    }
    in.d_sinks = DeviceBuffer(std::max<std::size_t>(1, in.sinks.size()) * sizeof(float));
    in.sinks_view = make_contiguous(in.d_sinks.get(), DType::f32, {heads_q});
    upload(in.sinks, *in.sinks_view);
  }
  return in;
}

void ScoreInputs::apply(reference::Problem& rp) const {
  rp.softcap = softcap;
  rp.alibi_slopes = alibi;
  rp.sinks = sinks;
}

namespace {

ScoreInputs score_inputs(const Shape& s, std::mt19937_64& rng) {
  return make_score_inputs(s.batch, s.heads_q, s.softcap, s.alibi, s.sinks, typical_row_max(s.qk_gain, s.softcap), rng);
}

reference::Problem reference_problem(const Shape& s, bool causal, const ScoreInputs& scores) {
  reference::Problem rp;
  rp.batch = s.batch;
  rp.seqlen_q = s.seqlen_q;
  rp.seqlen_k = s.seqlen_k;
  rp.heads_q = s.heads_q;
  rp.heads_kv = s.heads_kv;
  rp.head_dim = s.head_dim;
  rp.softmax_scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(s.head_dim)));
  rp.causal = causal;
  rp.window_left = s.window_left;
  rp.window_right = s.window_right;
  scores.apply(rp);
  return rp;
}

}  // namespace

namespace {

// Layout::kv_expanded: the host values of every batch made batch 0's (BSHD
// order: batch-major), so that the reference sees what the expanded view
// addresses.
void expand_over_batch(std::vector<double>& x, int batch) {
  const std::size_t per = x.size() / static_cast<std::size_t>(std::max(1, batch));
  for (int b = 1; b < batch; ++b) std::copy_n(x.begin(), per, x.begin() + static_cast<std::ptrdiff_t>(b * per));
}

// The views of q, o and the gradients: BSHD under kv_expanded.
Layout q_layout(Layout layout) { return layout == Layout::kv_expanded ? Layout::bshd : layout; }

}  // namespace

Problem make_problem(const Shape& s, DType dtype, bool causal, Layout layout, std::uint64_t seed, std::vector<int> rows) {
  Problem p;
  p.shape = s;
  p.dtype = dtype;
  p.causal = causal;
  p.layout = layout;
  p.rows = std::move(rows);
  std::mt19937_64 rng(seed);
  const ViewSpec q_spec{s.batch, s.seqlen_q, s.heads_q, s.head_dim, q_layout(layout)};
  const ViewSpec kv_spec{s.batch, s.seqlen_k, s.heads_kv, s.head_dim, layout};
  p.q = random_values(q_spec.elements(), dtype, rng, s.qk_gain, s.qk_mean);
  p.k = random_values(kv_spec.elements(), dtype, rng, s.qk_gain, -s.qk_mean);
  p.v = random_values(kv_spec.elements(), dtype, rng);
  if (layout == Layout::kv_expanded) expand_over_batch(p.k, s.batch), expand_over_batch(p.v, s.batch);
  p.scores = score_inputs(s, rng);

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

  p.ref = reference::forward(reference_problem(s, causal, p.scores), p.q, p.k, p.v, dtype, p.rows);
  return p;
}

double rounding_floor(DType dtype) {
  switch (dtype) {
    case DType::f32: return std::ldexp(1.0, -20);  // a few ulps: the lowp reference models the fp32 math
    case DType::f16: return std::ldexp(1.0, -11);  // one rounding of O
    case DType::bf16: return std::ldexp(1.0, -8);
    case DType::i32: return 0;
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
  args.window_left = s.window_left;
  args.window_right = s.window_right;
  prob.scores.apply(args);
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
  double lowp_err = 0, max_ref = 0, max_lse = 1, lse_lowp_err = 0;
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
          lse_lowp_err = std::max(lse_lowp_err, std::fabs(prob.ref.lse_lowp[li] - ref_lse));
        }
      }
  r.bound = output_bound(lowp_err, max_ref, prob.dtype);
  r.lse_bound = lse_bound(lse_lowp_err, max_lse);
  if (lse_inf_mismatch) r.lse_err = std::numeric_limits<double>::infinity();
  r.ok = r.unwritten == 0 && r.max_err <= r.bound && r.lse_err <= r.lse_bound;
  return r;
}

BwdProblem make_bwd_problem(const Shape& s, DType dtype, bool causal, Layout layout, std::uint64_t seed) {
  BwdProblem p;
  p.shape = s;
  p.dtype = dtype;
  p.causal = causal;
  p.layout = layout;
  std::mt19937_64 rng(seed);
  const ViewSpec q_spec{s.batch, s.seqlen_q, s.heads_q, s.head_dim, q_layout(layout)};
  const ViewSpec kv_spec{s.batch, s.seqlen_k, s.heads_kv, s.head_dim, layout};
  const ViewSpec dkv_spec{s.batch, s.seqlen_k, s.heads_kv, s.head_dim, q_layout(layout)};
  p.q = random_values(q_spec.elements(), dtype, rng, s.qk_gain, s.qk_mean);
  p.k = random_values(kv_spec.elements(), dtype, rng, s.qk_gain, -s.qk_mean);
  p.v = random_values(kv_spec.elements(), dtype, rng);
  if (layout == Layout::kv_expanded) expand_over_batch(p.k, s.batch), expand_over_batch(p.v, s.batch);
  p.dout = random_values(q_spec.elements(), dtype, rng);
  p.scores = score_inputs(s, rng);
  const reference::Problem rp = reference_problem(s, causal, p.scores);
  const reference::Result fwd = reference::forward(rp, p.q, p.k, p.v);
  p.ref = reference::backward(rp, p.q, p.k, p.v, p.dout, 0, dtype);

  const std::size_t esize = dtype_size(dtype), nq = q_spec.elements() * esize, nkv = kv_spec.elements() * esize;
  p.bq = DeviceBuffer(nq), p.bo = DeviceBuffer(nq), p.bdo = DeviceBuffer(nq), p.bdq = DeviceBuffer(nq);
  p.bk = DeviceBuffer(nkv), p.bv = DeviceBuffer(nkv), p.bdk = DeviceBuffer(nkv), p.bdv = DeviceBuffer(nkv);
  p.blse = DeviceBuffer(static_cast<std::size_t>(s.batch) * s.heads_q * s.seqlen_q * sizeof(float));
  BackwardArgs& a = p.args;
  a.q = q_spec.view(p.bq.get(), dtype);
  a.k = kv_spec.view(p.bk.get(), dtype);
  a.v = kv_spec.view(p.bv.get(), dtype);
  a.o = q_spec.view(p.bo.get(), dtype);
  a.dout = q_spec.view(p.bdo.get(), dtype);
  a.dq = q_spec.view(p.bdq.get(), dtype);
  a.dk = dkv_spec.view(p.bdk.get(), dtype);
  a.dv = dkv_spec.view(p.bdv.get(), dtype);
  a.lse = make_contiguous(p.blse.get(), DType::f32, {s.batch, s.heads_q, s.seqlen_q});
  a.causal = causal;
  a.window_left = s.window_left;
  a.window_right = s.window_right;
  p.scores.apply(a);
  if (s.sinks) {
    p.bdsinks = DeviceBuffer(static_cast<std::size_t>(std::max(1, s.heads_q)) * sizeof(float));
    a.dsinks = make_contiguous(p.bdsinks.get(), DType::f32, {s.heads_q});
  }
  upload(p.q, a.q);
  upload(p.k, a.k);
  upload(p.v, a.v);
  upload(p.dout, a.dout);
  upload(fwd.o, a.o);      // rounded to the dtype by the upload
  upload(fwd.lse, a.lse);  // -inf stays -inf
  return p;
}

BwdCheck run_and_check_backward(BwdProblem& prob, const std::string& kernel, bool deterministic) {
  BwdCheck r;
  BackwardArgs a = prob.args;
  a.kernel = kernel;
  a.deterministic = deterministic;
  poison(a.dq);
  poison(a.dk);
  poison(a.dv);
  if (a.dsinks) poison(*a.dsinks);
  try {
    attention_backward(a);
    check(cudaDeviceSynchronize(), "kernel execution");
  } catch (const Error& e) {
    r.error = e.what();
    return r;
  }
  const TensorView* views[4] = {&a.dq, &a.dk, &a.dv, a.dsinks ? &*a.dsinks : nullptr};
  const std::vector<double>* refs[4] = {&prob.ref.dq, &prob.ref.dk, &prob.ref.dv, &prob.ref.dsinks};
  const std::vector<double>* lowps[4] = {&prob.ref.dq_lowp, &prob.ref.dk_lowp, &prob.ref.dv_lowp,
                                         &prob.ref.dsinks_lowp};
  r.ok = true;
  for (int t = 0; t < 4; ++t) {
    if (views[t] == nullptr) continue;
    const std::vector<double> got = download(*views[t]);
    double lowp_err = 0, max_ref = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
      const double ref = (*refs[t])[i];
      if (std::isnan(got[i])) {
        ++r.unwritten;
        r.err[t] = std::numeric_limits<double>::infinity();
        continue;
      }
      r.err[t] = std::max(r.err[t], std::fabs(got[i] - ref));
      lowp_err = std::max(lowp_err, std::fabs((*lowps[t])[i] - ref));
      max_ref = std::max(max_ref, std::fabs(ref));
    }
    r.bound[t] = gradient_bound(lowp_err, max_ref, prob.dtype);
    r.ok = r.ok && r.err[t] <= r.bound[t];
  }
  r.ok = r.ok && r.unwritten == 0;
  return r;
}

}  // namespace flash::testing

namespace flash::testing {

DecodeProblem make_decode_problem(const DecodeSpec& spec, std::uint64_t seed) {
  DecodeProblem p;
  p.spec = spec;
  const DecodeSpec& s = spec;
  std::mt19937_64 rng(seed);
  const std::int64_t B = s.batch, Hq = s.heads_q, Hkv = s.heads_kv, D = s.head_dim;
  const bool paged = s.page_size > 0;
  const std::size_t es = dtype_size(s.dtype);

  p.q = random_values(static_cast<std::size_t>(B * s.seqlen_q * Hq * D), s.dtype, rng, s.qk_gain);
  p.k_new = random_values(static_cast<std::size_t>(B * s.seqlen_new * Hkv * D), s.dtype, rng, s.qk_gain);
  p.v_new = random_values(p.k_new.size(), s.dtype, rng);
  std::int64_t blocks = B, block_rows = s.capacity;
  if (paged) {
    p.max_pages = s.capacity / s.page_size;
    p.num_pages = s.batch * p.max_pages + 3;  // a few pages no sequence uses
    blocks = p.num_pages;
    block_rows = s.page_size;
    std::vector<int> perm(p.num_pages);
    for (int i = 0; i < p.num_pages; ++i) perm[i] = i;
    std::shuffle(perm.begin(), perm.end(), rng);
    p.page_table.assign(static_cast<std::size_t>(B * p.max_pages), -1);
    for (int b = 0; b < s.batch; ++b) {
      const int used = (s.lens[b] + s.seqlen_new + s.page_size - 1) / s.page_size;
      for (int i = 0; i < used && i < p.max_pages; ++i) p.page_table[b * p.max_pages + i] = perm[b * p.max_pages + i];
    }
  }
  const std::size_t cache_elems = static_cast<std::size_t>(blocks * block_rows * Hkv * D);
  p.k_cache = random_values(cache_elems, s.dtype, rng, s.qk_gain);
  p.v_cache = random_values(cache_elems, s.dtype, rng);
  p.scores = make_score_inputs(s.batch, s.heads_q, s.softcap, s.alibi, s.sinks, typical_row_max(s.qk_gain, s.softcap),
                               rng);

  // Where key `pos` of sequence b, head h lives in the cache (element index).
  auto at = [&](int b, int pos, int h) -> std::size_t {
    std::int64_t block = b, row = pos;
    if (paged) block = p.page_table[b * p.max_pages + pos / s.page_size], row = pos % s.page_size;
    return static_cast<std::size_t>(((block * block_rows + row) * Hkv + h) * D);
  };
  p.k_expected = p.k_cache;
  p.v_expected = p.v_cache;
  for (int b = 0; b < s.batch; ++b)
    for (int i = 0; i < s.seqlen_new; ++i)
      for (int h = 0; h < s.heads_kv; ++h) {
        const std::size_t src = static_cast<std::size_t>(((b * s.seqlen_new + i) * Hkv + h) * D);
        const std::size_t dst = at(b, s.lens[b] + i, h);
        std::copy_n(p.k_new.begin() + src, D, p.k_expected.begin() + dst);
        std::copy_n(p.v_new.begin() + src, D, p.v_expected.begin() + dst);
      }

  // Device buffers and views.
  p.dq = DeviceBuffer(p.q.size() * es);
  p.dkc = DeviceBuffer(cache_elems * es);
  p.dvc = DeviceBuffer(cache_elems * es);
  p.dkn = DeviceBuffer(std::max<std::size_t>(1, p.k_new.size()) * es);
  p.dvn = DeviceBuffer(std::max<std::size_t>(1, p.v_new.size()) * es);
  p.d_o = DeviceBuffer(p.q.size() * es);
  p.d_lse = DeviceBuffer(static_cast<std::size_t>(B * Hq * s.seqlen_q) * sizeof(float));
  p.d_lens = DeviceBuffer(static_cast<std::size_t>(std::max<std::int64_t>(1, B)) * 4);
  DecodeArgs& a = p.args;
  a.q = make_contiguous(p.dq.get(), s.dtype, {B, s.seqlen_q, Hq, D});
  a.k_cache = make_contiguous(p.dkc.get(), s.dtype, {blocks, block_rows, Hkv, D});
  a.v_cache = make_contiguous(p.dvc.get(), s.dtype, {blocks, block_rows, Hkv, D});
  a.o = make_contiguous(p.d_o.get(), s.dtype, {B, s.seqlen_q, Hq, D});
  a.lse = make_contiguous(p.d_lse.get(), DType::f32, {B, Hq, s.seqlen_q});
  a.cache_seqlens = make_contiguous(p.d_lens.get(), DType::i32, {B});
  if (s.seqlen_new > 0) {
    a.k_new = make_contiguous(p.dkn.get(), s.dtype, {B, s.seqlen_new, Hkv, D});
    a.v_new = make_contiguous(p.dvn.get(), s.dtype, {B, s.seqlen_new, Hkv, D});
    upload(p.k_new, *a.k_new);
    upload(p.v_new, *a.v_new);
  }
  if (paged) {
    p.d_table = DeviceBuffer(p.page_table.size() * 4);
    a.page_table = make_contiguous(p.d_table.get(), DType::i32, {B, p.max_pages});
    upload(std::vector<double>(p.page_table.begin(), p.page_table.end()), *a.page_table);
  }
  a.causal = s.causal;
  a.window_left = s.window_left;
  a.window_right = s.window_right;
  a.num_splits = s.num_splits;
  p.scores.apply(a);
  upload(p.q, a.q);
  upload(p.k_cache, a.k_cache);
  upload(p.v_cache, a.v_cache);
  upload(std::vector<double>(s.lens.begin(), s.lens.end()), a.cache_seqlens);

  // The reference, one sequence at a time (each has its own length).
  p.ref.o.assign(p.q.size(), 0.0);
  p.ref.o_lowp.assign(p.q.size(), 0.0);
  p.ref.lse.assign(static_cast<std::size_t>(B * Hq * s.seqlen_q), 0.0);
  p.ref.lse_lowp.assign(p.ref.lse.size(), 0.0);
  for (int b = 0; b < s.batch; ++b) {
    const int L = s.lens[b] + s.seqlen_new;
    reference::Problem rp;
    rp.batch = 1;
    rp.seqlen_q = s.seqlen_q;
    rp.seqlen_k = L;
    rp.heads_q = s.heads_q;
    rp.heads_kv = s.heads_kv;
    rp.head_dim = s.head_dim;
    rp.softmax_scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(s.head_dim)));
    rp.causal = s.causal;
    rp.window_left = s.window_left;
    rp.window_right = s.window_right;
    p.scores.apply(rp);
    if (s.alibi == Alibi::per_batch)  // this sequence's row of slopes, one per head
      rp.alibi_slopes.assign(p.scores.alibi.begin() + static_cast<std::ptrdiff_t>(b) * Hq,
                             p.scores.alibi.begin() + static_cast<std::ptrdiff_t>(b + 1) * Hq);
    const std::size_t q_elems = static_cast<std::size_t>(s.seqlen_q * Hq * D);
    std::vector<double> qb(p.q.begin() + b * q_elems, p.q.begin() + (b + 1) * q_elems);
    std::vector<double> kb(static_cast<std::size_t>(L * Hkv * D)), vb(kb.size());
    for (int j = 0; j < L; ++j)
      for (int h = 0; h < s.heads_kv; ++h) {
        std::copy_n(p.k_expected.begin() + at(b, j, h), D, kb.begin() + (j * Hkv + h) * D);
        std::copy_n(p.v_expected.begin() + at(b, j, h), D, vb.begin() + (j * Hkv + h) * D);
      }
    const reference::Result r = reference::forward(rp, qb, kb, vb, s.dtype, {}, 1);
    std::copy(r.o.begin(), r.o.end(), p.ref.o.begin() + b * q_elems);
    std::copy(r.o_lowp.begin(), r.o_lowp.end(), p.ref.o_lowp.begin() + b * q_elems);
    std::copy(r.lse.begin(), r.lse.end(), p.ref.lse.begin() + static_cast<std::size_t>(b) * Hq * s.seqlen_q);
    std::copy(r.lse_lowp.begin(), r.lse_lowp.end(),
              p.ref.lse_lowp.begin() + static_cast<std::size_t>(b) * Hq * s.seqlen_q);
  }
  return p;
}

std::vector<int> ragged_lens(int batch, int capacity, int seqlen_new, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const int room = capacity - seqlen_new;
  std::uniform_int_distribution<int> dist(2, room);
  std::vector<int> lens;
  for (int b = 0; b < batch; ++b) lens.push_back(b == 0 ? 0 : b == 1 ? std::min(1, room) : b == 2 ? room : dist(rng));
  return lens;
}

DecodeCheck run_and_check_decode(DecodeProblem& prob, const std::string& kernel) {
  DecodeCheck r;
  DecodeArgs args = prob.args;
  args.kernel = kernel;
  poison(args.o);
  poison(*args.lse);
  upload(prob.k_cache, args.k_cache);  // undo an earlier call's append
  upload(prob.v_cache, args.v_cache);
  try {
    attention_decode(args);
    check(cudaDeviceSynchronize(), "kernel execution");
  } catch (const Error& e) {
    r.error = e.what();
    return r;
  }
  const std::vector<double> o = download(args.o), lse = download(*args.lse);
  const std::vector<double> kc = download(args.k_cache), vc = download(args.v_cache);
  for (std::size_t i = 0; i < kc.size(); ++i)
    r.cache_mismatch += (kc[i] != prob.k_expected[i]) + (vc[i] != prob.v_expected[i]);
  double lowp_err = 0, max_ref = 0, max_lse = 1, lse_lowp_err = 0;
  bool lse_inf_mismatch = false;
  for (std::size_t i = 0; i < o.size(); ++i) {
    r.unwritten += std::isnan(o[i]);
    const double err = std::fabs(o[i] - prob.ref.o[i]);
    r.max_err = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(r.max_err, err);
    lowp_err = std::max(lowp_err, std::fabs(prob.ref.o_lowp[i] - prob.ref.o[i]));
    max_ref = std::max(max_ref, std::fabs(prob.ref.o[i]));
  }
  for (std::size_t i = 0; i < lse.size(); ++i) {
    r.unwritten += std::isnan(lse[i]);
    if (std::isinf(prob.ref.lse[i])) {
      lse_inf_mismatch = lse_inf_mismatch || lse[i] != prob.ref.lse[i];
    } else {
      const double err = std::fabs(lse[i] - prob.ref.lse[i]);
      r.lse_err = std::isnan(err) ? std::numeric_limits<double>::infinity() : std::max(r.lse_err, err);
      max_lse = std::max(max_lse, std::fabs(prob.ref.lse[i]));
      lse_lowp_err = std::max(lse_lowp_err, std::fabs(prob.ref.lse_lowp[i] - prob.ref.lse[i]));
    }
  }
  r.bound = output_bound(lowp_err, max_ref, prob.spec.dtype);
  r.lse_bound = lse_bound(lse_lowp_err, max_lse);
  if (lse_inf_mismatch) r.lse_err = std::numeric_limits<double>::infinity();
  r.ok = r.unwritten == 0 && r.cache_mismatch == 0 && r.max_err <= r.bound && r.lse_err <= r.lse_bound;
  return r;
}

}  // namespace flash::testing
