// bench: Google Benchmark over every variant that supports the shape.
//
//   ./bench --seq 4096 --dhead 128            FlashAttention's defaults: batch = 16384 / seq,
//                                             heads = 2048 / dhead, bf16, non-causal
//   ./bench --seq 8192 --causal --kernel tiled --benchmark_format=json
//
// Each iteration times one forward call with CUDA events (manual time) after
// warm-up launches; when the inputs would fit in L2 a buffer twice its size is
// overwritten before every iteration, so no run reads a warm cache. Counters:
// ms (median over the iterations) and TFLOPS = 4 * B * Hq * Sq * Sk * D /
// median time, halved when causal.
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
  if (o.seq_k < 0) o.seq_k = o.seq;
  if (o.batch < 0) o.batch = std::max(1, 16384 / o.seq);
  if (o.heads < 0) o.heads = std::max(1, 2048 / o.dhead);
  if (o.heads_kv < 0) o.heads_kv = o.heads;
  return o;
}

struct Inputs {
  DeviceBuffer q, k, v, o, lse, flush;
  flash::ForwardArgs args;
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
  return in;
}

// Every benchmark of one process shares the shape, so the inputs are made once.
Inputs& shared_inputs(const Options& o) {
  static Inputs in = make_inputs(o);
  return in;
}

void run_variant(benchmark::State& state, const Options& o, const std::string& kernel) {
  flash::ForwardArgs args;
  try {
    Inputs& in = shared_inputs(o);
    args = in.args;
    args.kernel = kernel;
    for (int i = 0; i < kWarmupLaunches; ++i) flash::attention_forward(args);
    check(cudaDeviceSynchronize(), "warm-up");
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> seconds;
  const Inputs& in = shared_inputs(o);
  for (auto _ : state) {
    if (in.flush.get()) check(cudaMemsetAsync(in.flush.get(), seconds.size() & 0xff, in.flush.bytes()), "L2 flush");
    check(cudaEventRecord(start), "event");
    flash::attention_forward(args);
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
  const double median = seconds[seconds.size() / 2];
  const double flops = 4.0 * o.batch * o.heads * double(o.seq) * o.seq_k * o.dhead * (o.causal ? 0.5 : 1.0);
  state.counters["ms"] = median * 1e3;
  state.counters["TFLOPS"] = flops / median / 1e12;
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
  const std::string shape = fmt::format("b{}_hq{}_hkv{}_sq{}_sk{}_d{}_{}{}", o.batch, o.heads, o.heads_kv, o.seq,
                                        o.seq_k, o.dhead, flash::dtype_name(o.dtype), o.causal ? "_causal" : "");
  int registered = 0;
  for (const auto& v : flash::forward_variants()) {
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
