// runner: checks every variant against the fp64 CPU reference and prints a
// table; exits 1 if anything failed, 2 when there is no GPU.
//
//   ./runner                         the default list of shapes
//   ./runner --seq 16384 --dhead 128 one shape (query rows sampled when large)
//   ./runner --kernel tiled --dtype f16 --causal
//   ./runner --bwd                   the backward variants (both modes) on the default shapes
#include <cuda_runtime_api.h>
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flash/flash.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::testing::Layout;
using flash::testing::Shape;

struct Options {
  std::string kernel = "all";
  std::optional<int> batch, heads, heads_kv, seq, seq_k, dhead;
  std::string dtype = "bf16";
  bool causal = false;
  bool causal_given = false;
  bool list = false;
  bool bwd = false;
  Layout layout = Layout::bshd;
  int sample_rows = 64;
  std::uint64_t seed = std::random_device{}();
};

[[noreturn]] void usage(int code) {
  fmt::print(
      "usage: runner [--kernel NAME|all] [--batch N] [--heads N] [--heads-kv N] [--seq N] [--seq-k N]\n"
      "              [--dhead N] [--dtype bf16|f16|f32|all] [--causal] [--layout bshd|bhsd]\n"
      "              [--rows N (query rows checked per shape when seq is larger)] [--seed N]\n"
      "              [--bwd (the backward: dq, dk, dv of every backward variant, both modes)]\n"
      "       runner --list   (the registered variants)\n"
      "Without --seq, runs the default list of shapes.\n");
  std::exit(code);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        fmt::print(stderr, "runner: {} needs a value\n", a);
        usage(2);
      }
      return argv[++i];
    };
    auto number = [&]() {
      const std::string v = value();
      char* end = nullptr;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || n < 0) {
        fmt::print(stderr, "runner: {} expects a non-negative integer, got '{}'\n", a, v);
        usage(2);
      }
      return static_cast<int>(n);
    };
    if (a == "--kernel") o.kernel = value();
    else if (a == "--batch") o.batch = number();
    else if (a == "--heads") o.heads = number();
    else if (a == "--heads-kv") o.heads_kv = number();
    else if (a == "--seq") o.seq = number();
    else if (a == "--seq-k") o.seq_k = number();
    else if (a == "--dhead") o.dhead = number();
    else if (a == "--dtype") o.dtype = value();
    else if (a == "--causal") o.causal = o.causal_given = true;
    else if (a == "--layout") o.layout = value() == "bhsd" ? Layout::bhsd : Layout::bshd;
    else if (a == "--rows") o.sample_rows = number();
    else if (a == "--seed") o.seed = std::strtoull(value().c_str(), nullptr, 10);
    else if (a == "--list") o.list = true;
    else if (a == "--bwd") o.bwd = true;
    else if (a == "--help" || a == "-h") usage(0);
    else {
      fmt::print(stderr, "runner: unknown flag {}\n", a);
      usage(2);
    }
  }
  return o;
}

std::vector<DType> dtypes_of(const std::string& s) {
  if (s == "all") return {DType::bf16, DType::f16, DType::f32};
  if (s == "bf16") return {DType::bf16};
  if (s == "f16") return {DType::f16};
  if (s == "f32") return {DType::f32};
  fmt::print(stderr, "runner: --dtype must be bf16, f16, f32 or all\n");
  usage(2);
}

// Median time of 5 calls of `call`, in ms (after the checked launch warmed up).
template <class Call> double median_ms(Call&& call) {
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  std::vector<float> ms;
  for (int rep = 0; rep < 5; ++rep) {
    cudaEventRecord(start);
    call();
    cudaEventRecord(stop);
    cudaEventSynchronize(stop);
    float t = 0;
    cudaEventElapsedTime(&t, start, stop);
    ms.push_back(t);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

double time_ms(flash::testing::Problem& p, const std::string& kernel) {
  flash::ForwardArgs args;
  args.q = p.vq, args.k = p.vk, args.v = p.vv, args.o = p.vo, args.lse = p.vlse;
  args.causal = p.causal;
  args.kernel = kernel;
  return median_ms([&] { flash::attention_forward(args); });
}

}  // namespace

void print_variants(const std::vector<flash::VariantInfo>& variants) {
  for (const auto& v : variants) {
    std::string dtypes, dims;
    for (auto t : v.dtypes) dtypes += std::string(dtypes.empty() ? "" : ",") + std::string(flash::dtype_name(t));
    for (int d : v.head_dims) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    if (v.built && dims.empty()) dims = fmt::format("any <= {}", v.max_head_dim);
    fmt::print("{:<17} {:<5} {:<6} {:<14} {:<22} {}\n", v.name, v.built ? "yes" : "no",
               !v.built ? "-"
               : v.max_compute_capability == v.min_compute_capability
                   ? fmt::format("={}.{}", v.min_compute_capability / 10, v.min_compute_capability % 10)
                   : fmt::format("{}.{}", v.min_compute_capability / 10, v.min_compute_capability % 10),
               dtypes,
               dims, v.description);
  }
}

void list_variants() {
  fmt::print("{:<17} {:<5} {:<6} {:<14} {:<22} {}\n", "variant", "built", "cc", "dtypes", "head dims", "description");
  print_variants(flash::forward_variants());
  fmt::print("\nbackward (flash::attention_backward; ./runner --bwd, ./bench --bwd):\n");
  print_variants(flash::backward_variants());
  fmt::print("\ndecode (flash::attention_decode; ./bench --decode):\n");
  print_variants(flash::decode_variants());
}

// --bwd: every backward variant in both modes; the reference is the full
// fp64 backward (no row sampling), so large shapes take CPU time.
int run_backward(const Options& opt, const std::vector<Shape>& shapes, const std::vector<int>& dheads,
                 const std::vector<bool>& causals) {
  std::vector<std::string> kernels;
  for (const auto& v : flash::backward_variants())
    if ((opt.kernel == "all" || v.name == opt.kernel) && v.built) kernels.push_back(v.name);
  if (kernels.empty()) {
    fmt::print(stderr, "runner: no built backward variant named '{}'\n", opt.kernel);
    return 2;
  }
  fmt::print("seed {}\n", opt.seed);
  fmt::print("{:<13} {:>22} {:>4} {:>5} {:>21} {:>21} {:>21} {:>8} {:>7}  {}\n", "backward", "b x sq x sk x hq/hkv", "d",
             "dtype", "dq err / bound", "dk err / bound", "dv err / bound", "ms", "TFLOPS", "result");
  int failed = 0, passed = 0;
  std::uint64_t case_seed = opt.seed;
  for (DType dtype : dtypes_of(opt.dtype))
    for (int d : dheads)
      for (bool causal : causals)
        for (Shape s : shapes) {
          s.head_dim = d;
          bool any = false;
          for (const auto& v : flash::backward_variants()) any = any || v.supports(dtype, d);
          if (!any) continue;
          auto prob = flash::testing::make_bwd_problem(s, dtype, causal, opt.layout, case_seed++);
          const std::string shape = fmt::format("{}x{}x{}x{}/{}", s.batch, s.seqlen_q, s.seqlen_k, s.heads_q, s.heads_kv);
          for (const std::string& k : kernels) {
            bool supported = false;
            for (const auto& v : flash::backward_variants())
              if (v.name == k) supported = v.supports(dtype, d);
            if (!supported) continue;
            for (bool deterministic : {false, true}) {
              const std::string name = k + (deterministic ? "/det" : "");
              const auto r = flash::testing::run_and_check_backward(prob, k, deterministic);
              if (!r.error.empty()) {
                fmt::print("{:<13} {:>22} {:>4} {:>5}  ERROR {}\n", name, shape, d, flash::dtype_name(dtype), r.error);
                ++failed;
                continue;
              }
              flash::BackwardArgs a = prob.args;
              a.kernel = k;
              a.deterministic = deterministic;
              const double ms = median_ms([&] { flash::attention_backward(a); });
              const double flops =
                  2.5 * 4.0 * s.batch * s.heads_q * double(s.seqlen_q) * s.seqlen_k * d * (causal ? 0.5 : 1.0);
              fmt::print("{:<13} {:>22} {:>4} {:>5} {:>10.3e}/{:>10.3e} {:>10.3e}/{:>10.3e} {:>10.3e}/{:>10.3e} {:>8.3f} "
                         "{:>7.2f}  {}{}{}\n",
                         name, shape, d, flash::dtype_name(dtype), r.err[0], r.bound[0], r.err[1], r.bound[1], r.err[2],
                         r.bound[2], ms, flops / (ms * 1e-3) / 1e12, r.ok ? "[OK]" : "[FAIL]", causal ? " causal" : "",
                         r.unwritten ? fmt::format(" ({} unwritten)", r.unwritten) : "");
              (r.ok ? passed : failed)++;
            }
          }
        }
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  if (opt.list) {
    list_variants();
    return 0;
  }
  std::string why;
  if (!flash::testing::gpu_available(&why)) {
    fmt::print("runner: {}; nothing to check\n", why);
    return 2;
  }

  std::vector<std::string> kernels;
  for (const auto& v : flash::forward_variants()) {
    if (opt.bwd) break;
    if (opt.kernel != "all" && v.name != opt.kernel) continue;
    if (!v.built) {
      fmt::print("{:<13} not built (FLASH_VARIANTS)\n", v.name);
      continue;
    }
    kernels.push_back(v.name);
  }
  if (kernels.empty() && opt.kernel != "all" && !opt.bwd) {
    fmt::print(stderr, "runner: no built variant named '{}'\n", opt.kernel);
    return 2;
  }

  std::vector<Shape> shapes;
  std::vector<int> dheads;
  std::vector<bool> causals;
  if (opt.seq) {
    Shape s;
    s.seqlen_q = *opt.seq;
    s.seqlen_k = opt.seq_k.value_or(*opt.seq);
    s.batch = opt.batch.value_or(2);
    s.heads_q = opt.heads.value_or(8);
    s.heads_kv = opt.heads_kv.value_or(s.heads_q);
    shapes.push_back(s);
    dheads = {opt.dhead.value_or(128)};
    causals = {opt.causal};
  } else {
    const int sq_sk[][2] = {{1, 1}, {17, 17}, {113, 203}, {128, 128}, {257, 129}, {1023, 1024}, {2048, 2048}};
    for (const auto& [sq, sk] : sq_sk) {
      Shape s;
      s.seqlen_q = sq, s.seqlen_k = sk;
      s.batch = opt.batch.value_or(2);
      s.heads_q = opt.heads.value_or(8);
      s.heads_kv = opt.heads_kv.value_or(2);
      shapes.push_back(s);
    }
    dheads = opt.dhead ? std::vector<int>{*opt.dhead} : std::vector<int>{64, 128, 256};
    causals = opt.causal_given ? std::vector<bool>{true} : std::vector<bool>{false, true};
  }
  if (opt.bwd) return run_backward(opt, shapes, dheads, causals);

  fmt::print("seed {}\n", opt.seed);
  fmt::print("{:<13} {:>22} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8}  {}\n", "variant", "b x sq x sk x hq/hkv",
             "d", "dtype", "max err", "bound", "lse err", "lse bnd", "ms", "TFLOPS", "result");
  int failed = 0, passed = 0;
  std::uint64_t case_seed = opt.seed;
  for (DType dtype : dtypes_of(opt.dtype))
    for (int d : dheads)
      for (bool causal : causals)
        for (Shape s : shapes) {
          s.head_dim = d;
          const auto rows = flash::testing::sample_rows(s.seqlen_q, std::max(opt.sample_rows, 1), case_seed);
          flash::testing::Problem prob;
          try {
            prob = flash::testing::make_problem(s, dtype, causal, opt.layout, case_seed++,
                                                static_cast<int>(rows.size()) < s.seqlen_q ? rows : std::vector<int>{});
          } catch (const flash::Error& e) {
            fmt::print("cannot set up shape: {}\n", e.what());
            ++failed;
            continue;
          }
          const std::string shape = fmt::format("{}x{}x{}x{}/{}", s.batch, s.seqlen_q, s.seqlen_k, s.heads_q, s.heads_kv);
          for (const std::string& k : kernels) {
            bool supported = false;
            for (const auto& v : flash::forward_variants())
              if (v.name == k) supported = v.supports(dtype, d);
            if (!supported) continue;
            const auto r = flash::testing::run_and_check(prob, k);
            if (!r.error.empty()) {
              fmt::print("{:<13} {:>22} {:>5} {:>6}  ERROR {}\n", k, shape, d, flash::dtype_name(dtype), r.error);
              ++failed;
              continue;
            }
            const double ms = time_ms(prob, k);
            const double flops = 4.0 * s.batch * s.heads_q * double(s.seqlen_q) * s.seqlen_k * d * (causal ? 0.5 : 1.0);
            const char* status = r.ok ? "[OK]" : "[FAIL]";
            fmt::print("{:<13} {:>22} {:>5} {:>6} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>9.3f} {:>8.2f}  {}{}{}\n", k,
                       shape, d, flash::dtype_name(dtype), r.max_err, r.bound, r.lse_err, r.lse_bound, ms,
                       flops / (ms * 1e-3) / 1e12, status, causal ? " causal" : "",
                       r.unwritten ? fmt::format(" ({} unwritten)", r.unwritten) : "");
            (r.ok ? passed : failed)++;
          }
        }
  fmt::print("{} passed, {} failed\n", passed, failed);
  return failed == 0 ? 0 : 1;
}
