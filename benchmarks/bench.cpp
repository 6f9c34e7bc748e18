// bench: Google Benchmark over every variant that supports the shape.
//
//   ./bench --seq 4096 --dhead 128            FlashAttention's defaults: batch = 16384 / seq,
//                                             heads = 2048 / dhead, bf16, non-causal
//   ./bench --seq 8192 --causal --kernel tiled --benchmark_format=json
//   ./bench --bwd --seq 8192 --dhead 128      the backward (every backward variant, and
//                                             each in deterministic mode: "<name>-det");
//                                             O and the LSE come from a forward call
//   ./bench --decode                          decode with a KV cache: the three shapes of
//                                             the issue (batch 1 x 128k, 16 x 8k, 64 x 4k keys),
//                                             heads 32 / 8, dhead 128, bf16, contiguous and
//                                             paged (page 16 and 256) caches
//   ./bench --decode --batch 4 --cache 32768 --page-size 64 --seqlen-q 4 --splits 8
//
// Decode counters: us (median) and GB/s = bytes of K and V read / time. The
// call is timed whole (metadata check, attention, combine) on the
// asynchronous path (sync_check off, a status tensor instead).
//
// Each iteration times one forward call with CUDA events (manual time) after
// warm-up launches; when the inputs would fit in L2 a buffer twice its size is
// overwritten before every iteration, so no run reads a warm cache. Counters:
// ms (median over the iterations) and TFLOPS = 4 * B * Hq * Sq * Sk * D /
// median time, halved when causal; the backward counts 2.5x that.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "flash/flash.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::testing::check;
using flash::testing::DeviceBuffer;

struct Options {
  int seq = 4096, seq_k = -1, dhead = 128, batch = -1, heads = -1, heads_kv = -1;
  DType dtype = DType::bf16;
  bool causal = false;
  std::string kernel = "all";
  bool bwd = false;
  // --decode
  bool decode = false;
  int cache = -1, page_size = -1, seqlen_q = 1, splits = 0, append = 0;
};

constexpr int kWarmupLaunches = 3;

// Takes our flags out of argv, leaving Google Benchmark's.
Options parse(int& argc, char** argv) {
  Options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "bench: {} needs a value\n", a);
        std::exit(2);
      }
      return argv[++i];
    };
    auto number = [&]() {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n <= 0) {
        fmt::print(stderr, "bench: {} expects a positive integer, got '{}'\n", a, v);
        std::exit(2);
      }
      return static_cast<int>(n);
    };
    if (a == "--seq") o.seq = number();
    else if (a == "--seq-k") o.seq_k = number();
    else if (a == "--dhead") o.dhead = number();
    else if (a == "--batch") o.batch = number();
    else if (a == "--heads") o.heads = number();
    else if (a == "--heads-kv") o.heads_kv = number();
    else if (a == "--causal") o.causal = true;
    else if (a == "--decode") o.decode = true;
    else if (a == "--bwd") o.bwd = true;
    else if (a == "--cache") o.cache = number();
    else if (a == "--page-size") {
      const std::string v = value();
      o.page_size = v == "0" ? 0 : std::atoi(v.c_str());
      if (o.page_size <= 0 && v != "0") {
        fmt::print(stderr, "bench: --page-size expects 0 (contiguous) or a power of two\n");
        std::exit(2);
      }
    } else if (a == "--seqlen-q") o.seqlen_q = number();
    else if (a == "--splits") o.splits = number();
    else if (a == "--append") o.append = number();
    else if (a == "--kernel") o.kernel = value();
    else if (a == "--dtype") {
      const std::string d = value();
      if (d == "bf16") o.dtype = DType::bf16;
      else if (d == "f16") o.dtype = DType::f16;
      else if (d == "f32") o.dtype = DType::f32;
      else {
        fmt::print(stderr, "bench: --dtype must be bf16, f16 or f32\n");
        std::exit(2);
      }
    } else argv[out++] = argv[i];
  }
  argc = out;
  if (o.decode) return o;  // decode fills its own defaults (decode_shapes)
  if (o.seq_k < 0) o.seq_k = o.seq;
  if (o.batch < 0) o.batch = std::max(1, 16384 / o.seq);
  if (o.heads < 0) o.heads = std::max(1, 2048 / o.dhead);
  if (o.heads_kv < 0) o.heads_kv = o.heads;
  return o;
}

struct Inputs {
  DeviceBuffer q, k, v, o, lse, flush;
  flash::ForwardArgs args;
  // --bwd: dO, the gradients, and the call (O and LSE from a forward call).
  DeviceBuffer dout, dq, dk, dv;
  flash::BackwardArgs bwd;
};

Inputs make_inputs(const Options& o) {
  Inputs in;
  const std::size_t es = flash::dtype_size(o.dtype);
  const std::size_t nq = std::size_t(o.batch) * o.seq * o.heads * o.dhead;
  const std::size_t nkv = std::size_t(o.batch) * o.seq_k * o.heads_kv * o.dhead;
  in.q = DeviceBuffer(nq * es);
  in.k = DeviceBuffer(nkv * es);
  in.v = DeviceBuffer(nkv * es);
  in.o = DeviceBuffer(nq * es);
  in.lse = DeviceBuffer(std::size_t(o.batch) * o.heads * o.seq * sizeof(float));
  auto& a = in.args;
  a.q = flash::make_contiguous(in.q.get(), o.dtype, {o.batch, o.seq, o.heads, o.dhead});
  a.k = flash::make_contiguous(in.k.get(), o.dtype, {o.batch, o.seq_k, o.heads_kv, o.dhead});
  a.v = flash::make_contiguous(in.v.get(), o.dtype, {o.batch, o.seq_k, o.heads_kv, o.dhead});
  a.o = flash::make_contiguous(in.o.get(), o.dtype, {o.batch, o.seq, o.heads, o.dhead});
  a.lse = flash::make_contiguous(in.lse.get(), DType::f32, {o.batch, o.heads, o.seq});
  a.causal = o.causal;
  // Random normal inputs (never zeros: they run faster than real data).
  std::mt19937_64 rng(42);
  flash::testing::upload(flash::testing::random_values(nq, o.dtype, rng), a.q);
  flash::testing::upload(flash::testing::random_values(nkv, o.dtype, rng), a.k);
  flash::testing::upload(flash::testing::random_values(nkv, o.dtype, rng), a.v);

  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
  if ((2 * nq + 2 * nkv) * es < 4 * std::size_t(l2)) in.flush = DeviceBuffer(2 * std::size_t(l2));
  if (o.bwd) {
    in.dout = DeviceBuffer(nq * es), in.dq = DeviceBuffer(nq * es);
    in.dk = DeviceBuffer(nkv * es), in.dv = DeviceBuffer(nkv * es);
    auto& b = in.bwd;
    b.q = a.q, b.k = a.k, b.v = a.v, b.o = a.o, b.lse = *a.lse;
    b.dout = flash::make_contiguous(in.dout.get(), o.dtype, {o.batch, o.seq, o.heads, o.dhead});
    b.dq = flash::make_contiguous(in.dq.get(), o.dtype, {o.batch, o.seq, o.heads, o.dhead});
    b.dk = flash::make_contiguous(in.dk.get(), o.dtype, {o.batch, o.seq_k, o.heads_kv, o.dhead});
    b.dv = flash::make_contiguous(in.dv.get(), o.dtype, {o.batch, o.seq_k, o.heads_kv, o.dhead});
    b.causal = o.causal;
    flash::testing::upload(flash::testing::random_values(nq, o.dtype, rng), b.dout);
    flash::attention_forward(a);  // the real O and LSE
    check(cudaDeviceSynchronize(), "forward for the backward inputs");
  }
  return in;
}

// Every benchmark of one process shares the shape, so the inputs are made once.
Inputs& shared_inputs(const Options& o) {
  static Inputs in = make_inputs(o);
  return in;
}

// Times `call` once per benchmark iteration with CUDA events (after
// `before`, untimed) and returns the median in seconds.
template <class Before, class Call> double median_seconds(benchmark::State& state, Before&& before, Call&& call) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> seconds;
  for (auto _ : state) {
    before(seconds.size());
    check(cudaEventRecord(start), "event");
    call();
    check(cudaEventRecord(stop), "event");
    check(cudaEventSynchronize(stop), "kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start, stop), "event");
    seconds.push_back(ms * 1e-3);
    state.SetIterationTime(ms * 1e-3);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(seconds.begin(), seconds.end());
  return seconds[seconds.size() / 2];
}

// Warms up, then times `call` once per iteration (the L2 flushed before
// each when the inputs fit in it); sets ms and TFLOPS for `flops`.
template <class Call> void time_call(benchmark::State& state, const Options& o, Call&& call, double flops) {
  try {
    for (int i = 0; i < kWarmupLaunches; ++i) call();
    check(cudaDeviceSynchronize(), "warm-up");
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const Inputs& in = shared_inputs(o);
  const double median = median_seconds(
      state,
      [&](std::size_t i) {
        if (in.flush.get()) check(cudaMemsetAsync(in.flush.get(), i & 0xff, in.flush.bytes()), "L2 flush");
      },
      call);
  state.counters["ms"] = median * 1e3;
  state.counters["TFLOPS"] = flops / median / 1e12;
}

double forward_flops(const Options& o) {
  return 4.0 * o.batch * o.heads * double(o.seq) * o.seq_k * o.dhead * (o.causal ? 0.5 : 1.0);
}

void run_variant(benchmark::State& state, const Options& o, const std::string& kernel) {
  flash::ForwardArgs args;
  try {
    args = shared_inputs(o).args;
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  args.kernel = kernel;
  time_call(state, o, [&] { flash::attention_forward(args); }, forward_flops(o));
}

void run_backward(benchmark::State& state, const Options& o, const std::string& kernel, bool deterministic) {
  flash::BackwardArgs args;
  try {
    args = shared_inputs(o).bwd;
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  args.kernel = kernel;
  args.deterministic = deterministic;
  time_call(state, o, [&] { flash::attention_backward(args); }, 2.5 * forward_flops(o));
}

// --- decode ---------------------------------------------------------------

struct DecodeShape {
  int batch, cache, page_size;  // page_size 0: contiguous
};

std::vector<DecodeShape> decode_shapes(const Options& o) {
  std::vector<std::pair<int, int>> sizes = {{1, 131072}, {16, 8192}, {64, 4096}};
  if (o.batch > 0 || o.cache > 0) sizes = {{o.batch > 0 ? o.batch : 1, o.cache > 0 ? o.cache : 8192}};
  std::vector<int> pages = {0, 16, 256};
  if (o.page_size >= 0) pages = {o.page_size};
  std::vector<DecodeShape> out;
  for (auto [b, c] : sizes)
    for (int p : pages) out.push_back({b, c, p});
  return out;
}

// Fills a device buffer with random values of dtype: a 4 MiB random block,
// copied over and over (fresh values per block would cost minutes of host time).
void fill_random(void* dst, std::size_t bytes, DType dtype, std::mt19937_64& rng) {
  const std::size_t block = std::min<std::size_t>(bytes, 4u << 20);
  const std::size_t es = flash::dtype_size(dtype);
  std::vector<double> vals = flash::testing::random_values(block / es, dtype, rng);
  DeviceBuffer tmp(block);
  flash::testing::upload(vals, flash::make_contiguous(tmp.get(), dtype, {static_cast<std::int64_t>(block / es)}));
  for (std::size_t off = 0; off < bytes; off += block)
    check(cudaMemcpy(static_cast<char*>(dst) + off, tmp.get(), std::min(block, bytes - off), cudaMemcpyDeviceToDevice),
          "fill");
}

void run_decode(benchmark::State& state, const Options& o, const DecodeShape& sh, const std::string& kernel) {
  const int B = sh.batch, L = sh.cache, Hq = o.heads > 0 ? o.heads : 32, Hkv = o.heads_kv > 0 ? o.heads_kv : 8;
  const int D = o.dhead, Sq = o.seqlen_q, Snew = o.append;
  const std::size_t es = flash::dtype_size(o.dtype);
  const bool paged = sh.page_size > 0;
  const int capacity = L + Snew;  // room for the appended keys
  const int max_pages = paged ? (capacity + sh.page_size - 1) / sh.page_size : 0;
  const std::int64_t blocks = paged ? std::int64_t(B) * max_pages : B;
  const std::int64_t rows = paged ? sh.page_size : capacity;
  const std::size_t cache_bytes = std::size_t(blocks) * rows * Hkv * D * es;
  std::mt19937_64 rng(7);
  DeviceBuffer q(std::size_t(B) * Sq * Hq * D * es), o_buf(std::size_t(B) * Sq * Hq * D * es);
  DeviceBuffer kc(cache_bytes), vc(cache_bytes), lens(std::size_t(B) * 4), table(std::max<std::size_t>(4, std::size_t(B) * max_pages * 4));
  DeviceBuffer kn(std::max<std::size_t>(16, std::size_t(B) * Snew * Hkv * D * es)), vn(kn.bytes());
  DeviceBuffer lse(std::size_t(B) * Hq * Sq * 4), status(16);
  fill_random(q.get(), q.bytes(), o.dtype, rng);
  fill_random(kc.get(), cache_bytes, o.dtype, rng);
  fill_random(vc.get(), cache_bytes, o.dtype, rng);
  fill_random(kn.get(), kn.bytes(), o.dtype, rng);
  fill_random(vn.get(), vn.bytes(), o.dtype, rng);
  flash::DecodeArgs a;
  a.q = flash::make_contiguous(q.get(), o.dtype, {B, Sq, Hq, D});
  a.o = flash::make_contiguous(o_buf.get(), o.dtype, {B, Sq, Hq, D});
  a.lse = flash::make_contiguous(lse.get(), DType::f32, {B, Hq, Sq});
  a.k_cache = flash::make_contiguous(kc.get(), o.dtype, {blocks, rows, Hkv, D});
  a.v_cache = flash::make_contiguous(vc.get(), o.dtype, {blocks, rows, Hkv, D});
  a.cache_seqlens = flash::make_contiguous(lens.get(), DType::i32, {B});
  flash::testing::upload(std::vector<double>(B, L), a.cache_seqlens);
  if (paged) {
    std::vector<double> perm(std::size_t(B) * max_pages);
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = double(i);
    std::shuffle(perm.begin(), perm.end(), rng);  // pages scattered as in a real pool
    a.page_table = flash::make_contiguous(table.get(), DType::i32, {B, max_pages});
    flash::testing::upload(perm, *a.page_table);
  }
  if (Snew > 0) {
    a.k_new = flash::make_contiguous(kn.get(), o.dtype, {B, Snew, Hkv, D});
    a.v_new = flash::make_contiguous(vn.get(), o.dtype, {B, Snew, Hkv, D});
  }
  a.causal = true;
  a.num_splits = o.splits;
  a.kernel = kernel;
  a.sync_check = false;
  a.status = flash::make_contiguous(status.get(), DType::i32, {4});
  int splits = 0;
  try {
    splits = flash::plan_decode(a).num_splits;
    for (int i = 0; i < kWarmupLaunches; ++i) flash::attention_decode(a);
    check(cudaDeviceSynchronize(), "warm-up");
    std::int32_t st = 0;
    check(cudaMemcpy(&st, status.get(), 4, cudaMemcpyDeviceToHost), "status");
    if (st != 0) throw flash::Error("decode status " + std::to_string(st));
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  // The caches (>= 256 MiB at the default shapes) are far larger than L2.
  const double median = median_seconds(state, [](std::size_t) {}, [&] { flash::attention_decode(a); });
  const double kv_bytes = 2.0 * B * double(L + Snew) * Hkv * D * es;
  state.counters["us"] = median * 1e6;
  state.counters["GB/s"] = kv_bytes / median / 1e9;
  state.counters["splits"] = splits;
}

int register_decode(const Options& o) {
  int registered = 0;
  for (const auto& v : flash::decode_variants()) {
    if (o.kernel != "all" && v.name != o.kernel) continue;
    if (!v.supports(o.dtype, o.dhead)) continue;
    for (const DecodeShape& sh : decode_shapes(o)) {
      const std::string name = fmt::format(
          "decode/{}/b{}_cache{}_{}_hq{}_hkv{}_sq{}{}_d{}_{}", v.name, sh.batch, sh.cache,
          sh.page_size ? fmt::format("page{}", sh.page_size) : std::string("contiguous"), o.heads > 0 ? o.heads : 32,
          o.heads_kv > 0 ? o.heads_kv : 8, o.seqlen_q, o.append ? fmt::format("_new{}", o.append) : std::string(),
          o.dhead, flash::dtype_name(o.dtype));
      benchmark::RegisterBenchmark(name.c_str(), [o, sh, kn = v.name](benchmark::State& st) { run_decode(st, o, sh, kn); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(0.3);
      ++registered;
    }
  }
  return registered;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  std::string why;
  if (!flash::testing::gpu_available(&why)) {
    fmt::print(stderr, "bench: {}\n", why);
    return 2;
  }
  if (o.decode) {
    if (register_decode(o) == 0) {
      fmt::print(stderr, "bench: no built decode variant supports dhead {} {}\n", o.dhead, flash::dtype_name(o.dtype));
      return 2;
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  const std::string shape = fmt::format("b{}_hq{}_hkv{}_sq{}_sk{}_d{}_{}{}", o.batch, o.heads, o.heads_kv, o.seq,
                                        o.seq_k, o.dhead, flash::dtype_name(o.dtype), o.causal ? "_causal" : "");
  int registered = 0;
  for (const auto& v : flash::backward_variants()) {
    if (!o.bwd) break;
    if (o.kernel != "all" && v.name != o.kernel) continue;
    if (!v.supports(o.dtype, o.dhead)) continue;
    for (bool det : {false, true}) {
      benchmark::RegisterBenchmark(("bwd/" + v.name + (det ? "-det/" : "/") + shape).c_str(),
                                   [o, det, name = v.name](benchmark::State& st) { run_backward(st, o, name, det); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond)
          ->MinTime(0.5);
      ++registered;
    }
  }
  for (const auto& v : flash::forward_variants()) {
    if (o.bwd) break;
    if (o.kernel != "all" && v.name != o.kernel) continue;
    if (!v.supports(o.dtype, o.dhead)) continue;
    benchmark::RegisterBenchmark(("fwd/" + v.name + "/" + shape).c_str(),
                                 [o, name = v.name](benchmark::State& st) { run_variant(st, o, name); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond)
        ->MinTime(0.5);
    ++registered;
  }
  if (registered == 0) {
    fmt::print(stderr, "bench: no built variant supports {} (kernel {})\n", shape, o.kernel);
    return 2;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
