// bench: Google Benchmark over every variant that supports the shape.
//
//   ./bench --seq 4096 --dhead 128            FlashAttention's defaults: batch = 16384 / seq,
//                                             heads = 2048 / dhead, bf16, non-causal
//   ./bench --seq 8192 --causal --kernel tiled --benchmark_format=json
//   ./bench --kernel auto                     what the API's default picks (its name in the label)
//   ./bench --bwd --seq 8192 --dhead 128      the backward (every backward variant, and
//                                             each in deterministic mode: "<name>-det");
//                                             O and the LSE come from a forward call
//   ./bench --decode                          decode with a KV cache: the three shapes of
//                                             the issue (batch 1 x 128k, 16 x 8k, 64 x 4k keys),
//                                             heads 32 / 8, dhead 128, bf16, contiguous and
//                                             paged (page 16 and 256) caches
//   ./bench --decode --batch 4 --cache 32768 --page-size 64 --seqlen-q 4 --append 4 --causal --splits 8
//   ./bench --seq 8192 --causal --softcap 30  score modifiers (--softcap C, --sinks, --alibi; forward, --bwd
//                                             and --decode): names gain _cap<C>, _sinks, _alibi; the
//                                             FLOP count is the same (only the mask changes it)
//   ./bench --varlen --causal                 a variable-length forward: one packed call over
//                                             FA4's 7 sequences of 16384 tokens (or --varlen
//                                             1374,3778,...), seqlen_q = seqlen_k per sequence
//                                             ("fwd_varlen/..."), and beside it the dense call
//                                             of as many sequences of the mean length
//                                             ("fwd_varlen_dense/...", batch 7 x 2341)
//   ./bench --varlen --bwd --causal           the same two calls' backward ("bwd_varlen/...",
//                                             "bwd_varlen_dense/...", each variant also "-det")
//   ./bench --paged 16,256 --seq 4096         paged prefill: the dense call with its keys in pages
//                                             of 16 and of 256 keys of a shuffled pool
//                                             ("fwd_paged16/...", "fwd_paged256/..."), beside the
//                                             same call on a contiguous cache ("fwd_paged_contig/...")
//   ./bench --paged 16 --varlen --causal      the varlen call with its keys in pages
//                                             ("fwd_varlen_paged16/...", seqused_k the lengths),
//                                             beside the varlen call ("fwd_varlen/...")
//   ./bench --min-time 0.04 --seq 4096        40 ms of timed calls per benchmark (default 0.5 s):
//                                             FA4's do_bench bursts, at the boost clock
//   ./bench --help                            bench's flags, then Google Benchmark's
//
// The flags, the FLOP counts and the timer are runner's too
// (src/testing/tools.h): each iteration times one call with CUDA events
// after kWarmupCalls untimed calls; when the inputs would fit in L2 a buffer
// twice its size is overwritten before every iteration, so no call reads a
// warm cache. Counters: ms (median over the iterations) and TFLOPS = 4 * B *
// Hq * Sq * Sk * D / median, halved when causal; the backward counts 2.5x.
// Decode: us (median), GB/s = bytes of K and V read / time, TFLOPS over the
// keys each query row sees, and the split count; the call is timed whole
// (metadata check, append, attention, combine) on the asynchronous path
// (sync_check off, a status tensor instead).
// Varlen: TFLOPS = 4 * Hq * D * the visible (query, key) pairs, counted
// exactly per sequence (causal: L (L + 1) / 2; benchmarks/varlen_lengths.h),
// and the same count for its dense row (2.5x both with --bwd); the call runs
// on the asynchronous path too (sync_check off, its status read after the
// timed calls). Paged: the FLOPs of the same call on a contiguous cache; the
// pages are a copy of that cache's keys (benchmarks/paged_table.h), so both
// rows read the same values and flush L2 alike; asynchronous path as varlen.
#include <benchmark/benchmark.h>
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "flash/flash.h"
#include "paged_table.h"
#include "testing/testing.h"
#include "testing/tools.h"
#include "varlen_lengths.h"

namespace {

using flash::DType;
using flash::testing::check;
using flash::testing::DeviceBuffer;
using flash::testing::L2Flush;
using flash::testing::ProblemFlags;
using flash::testing::Shape;
using flash::testing::UsageError;

struct Options {
  ProblemFlags flags;
  DType dtype = DType::bf16;
  Shape shape;  // forward and backward; with --varlen the dense comparison's
  std::optional<std::vector<int>> varlen;  // --varlen: the sequence lengths
  std::optional<std::vector<int>> paged;   // --paged: the page sizes
  std::optional<double> min_time;          // --min-time: seconds of timed calls per benchmark
  bool flush_always = false;               // --flush always: 256 MB cleared before every timed call
  bool pages_in_order = false;             // --page-order sequential: the page pool unshuffled
};

// The flush before each timed call: over L2-sized inputs only, or (--flush
// always) 256 MB before every call, as triton's do_bench times FA4.
std::unique_ptr<L2Flush> make_flush(const Options& o, std::size_t input_bytes) {
  return std::make_unique<L2Flush>(input_bytes, o.flush_always ? std::size_t(256000000) : 0);
}

// "_w<left>_<right>" for a sliding window in a benchmark's name; "" without one.
std::string window_suffix(int left, int right) {
  return left >= 0 || right >= 0 ? fmt::format("_w{}_{}", left, right) : std::string();
}

// "_cap<C>", "_sinks" and "_alibi" for the score modifiers in a benchmark's name.
std::string score_suffix(const ProblemFlags& f) {
  return (f.softcap > 0.0f ? fmt::format("_cap{}", f.softcap) : std::string()) + (f.sinks ? "_sinks" : "") +
         (f.alibi ? "_alibi" : "");
}

// The score modifiers of --softcap, --sinks and --alibi: random slopes and
// sinks (one per query head) on the device.
flash::testing::ScoreInputs score_inputs(const ProblemFlags& f, int batch, int heads_q, std::mt19937_64& rng) {
  return flash::testing::make_score_inputs(batch, heads_q, f.softcap,
                                           f.alibi ? flash::testing::Alibi::per_head : flash::testing::Alibi::none,
                                           f.sinks, flash::testing::typical_row_max(1.0, f.softcap), rng);
}

void print_help() {
  fmt::print(
      "usage: bench [flags] [Google Benchmark flags]\n"
      "Times every built variant that supports one shape (Google Benchmark, CUDA events).\n"
      "{}"
      "  --varlen [L,L,..] a variable-length forward over these sequence lengths, seqlen_q = seqlen_k\n"
      "                    (default {}: FA4's 16384 tokens\n"
      "                    in 7), and per kernel the dense call of as many sequences of the mean length;\n"
      "                    with --bwd, the backward of both\n"
      "  --paged P[,P..]   paged prefill (forward): the call's keys in pages of P keys (powers of two >= 16)\n"
      "                    from a shuffled pool, per kernel beside the same call on a contiguous cache;\n"
      "                    the dense call's keys: --seq-k per sequence (seqused_k when not a multiple of\n"
      "                    P); with --varlen the packed queries, their keys seqused_k = the lengths\n"
      "  --min-time S      seconds of timed calls per benchmark (default 0.5, decode 0.3); 0.04 times\n"
      "                    40 ms bursts, as fa4_bench.py's do_bench does (the H200 holds its boost clock\n"
      "                    through a burst and throttles under a sustained load)\n"
      "  --flush always    clear 256 MB before every timed call, as triton's do_bench does when it\n"
      "                    times FA4 and cuDNN (default auto: a flush only where the inputs would fit\n"
      "                    in L2; calls otherwise run back to back)\n"
      "  --page-order O    the pool of --decode's paged caches and of --paged: 'shuffled' (default:\n"
      "                    pages scattered, as in a serving engine) or 'sequential' (each sequence's\n"
      "                    pages in order, a contiguous cache's bytes at its addresses: what the page\n"
      "                    table's lookups cost without the pages' scatter)\n"
      "Defaults: --seq 4096 --dhead 128, batch = 16384 / seq, heads = 2048 / dhead, --heads-kv = --heads,\n"
      "bf16, non-causal. With --decode: batch x cache 1 x 131072, 16 x 8192 and 64 x 4096 (or --batch\n"
      "and --cache), --heads 32 --heads-kv 8 --dhead 128, page sizes 0, 16 and 256, --seqlen-q 1.\n\n"
      "Google Benchmark's flags:\n",
      flash::testing::problem_flags_help(), fmt::join(flash::testing::default_varlen_lengths(), ","));
  benchmark::PrintDefaultHelp();
}

// Takes our flags out of argv, leaving Google Benchmark's.
Options parse(int& argc, char** argv) {
  Options o;
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "-h") {
      print_help();
      std::exit(0);
    }
    if (flash::testing::parse_varlen_flag(argc, argv, i, o.varlen)) continue;
    if (flash::testing::parse_paged_flag(argc, argv, i, o.paged)) continue;
    if (std::string(argv[i]) == "--flush") {
      if (i + 1 >= argc || (std::string(argv[i + 1]) != "always" && std::string(argv[i + 1]) != "auto"))
        throw UsageError("--flush takes 'always' or 'auto'");
      o.flush_always = std::string(argv[++i]) == "always";
      continue;
    }
    if (std::string(argv[i]) == "--page-order") {
      if (i + 1 >= argc || (std::string(argv[i + 1]) != "shuffled" && std::string(argv[i + 1]) != "sequential"))
        throw UsageError("--page-order takes 'shuffled' or 'sequential'");
      o.pages_in_order = std::string(argv[++i]) == "sequential";
      continue;
    }
    if (std::string(argv[i]) == "--min-time") {
      if (i + 1 >= argc) throw UsageError("--min-time needs a number of seconds");
      char* end = nullptr;
      o.min_time = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || !(*o.min_time > 0.0) || *o.min_time > 60.0)
        throw UsageError(fmt::format("--min-time takes seconds in (0, 60], not '{}'", argv[i]));
      continue;
    }
    if (!flash::testing::parse_problem_flag(argc, argv, i, o.flags)) argv[out++] = argv[i];
  }
  argc = out;
  const ProblemFlags& f = o.flags;
  flash::testing::check_problem_flags(f);
  if (o.varlen && f.decode) throw UsageError("--varlen times the forward or (--bwd) the backward; not with --decode");
  if (o.paged && (f.bwd || f.decode))
    throw UsageError("--paged times the forward's paged prefill; not with --bwd or --decode (decode: --page-size)");
  if (o.varlen && (f.seq || f.seq_k || f.batch))
    throw UsageError("--varlen gives the sequences and their lengths; not with --seq, --seq-k or --batch");
  if (f.dtypes.size() > 1) throw UsageError("bench times one dtype per run (--dtype all is the runner's)");
  if (!f.dtypes.empty()) o.dtype = f.dtypes[0];
  if (f.decode) return o;  // decode fills its own defaults (decode_shapes)
  Shape& s = o.shape;
  s.seqlen_q = f.seq.value_or(4096);
  s.head_dim = f.dhead.value_or(128);
  if (s.seqlen_q == 0 || s.head_dim == 0) throw UsageError("--seq and --dhead must be positive");
  s.seqlen_k = f.seq_k.value_or(s.seqlen_q);
  s.window_left = f.window_left, s.window_right = f.window_right;
  s.batch = f.batch.value_or(std::max(1, 16384 / s.seqlen_q));
  s.heads_q = f.heads.value_or(std::max(1, 2048 / s.head_dim));
  s.heads_kv = f.heads_kv.value_or(s.heads_q);
  if (o.varlen) {  // the dense comparison: as many sequences, the tokens split evenly
    const flash::testing::EvenSplit split = flash::testing::even_split(*o.varlen);
    s.batch = split.batch;
    s.seqlen_q = s.seqlen_k = split.seqlen;
  }
  return o;
}

// Google Benchmark's display reporter (console or JSON, as
// --benchmark_format says) less one line of its context: Debian's
// libbenchmark was built without NDEBUG and prints "***WARNING*** Library
// was built as DEBUG. Timings may be affected.", which reads as if flash
// were a debug build. It concerns the library's own CPU-side bookkeeping;
// every time here is a CUDA event pair (manual time). The JSON file of
// --benchmark_out is written by the library's own reporter, unchanged.
class DisplayReporter : public benchmark::BenchmarkReporter {
 public:
  // The library owns the default reporter (a static), so it is not deleted here.
  DisplayReporter() : inner_(benchmark::CreateDefaultDisplayReporter()) {}

  bool ReportContext(const Context& context) override {
    std::ostringstream err;
    inner_->SetOutputStream(&GetOutputStream());
    inner_->SetErrorStream(&err);
    const bool go_on = inner_->ReportContext(context);
    inner_->SetErrorStream(&GetErrorStream());
    std::istringstream lines(err.str());
    for (std::string line; std::getline(lines, line);)
      if (line.find("Library was built as DEBUG") == std::string::npos) GetErrorStream() << line << '\n';
    return go_on;
  }
  void ReportRuns(const std::vector<Run>& runs) override { inner_->ReportRuns(runs); }
  void Finalize() override { inner_->Finalize(); }

 private:
  benchmark::BenchmarkReporter* inner_;
};

struct Inputs {
  DeviceBuffer q, k, v, o, lse;
  flash::testing::ScoreInputs scores;
  flash::ForwardArgs args;
  // --bwd: dO, the gradients (dsinks too with --sinks), and the call (O and
  // LSE from a forward call).
  DeviceBuffer dout, dq, dk, dv, dsinks;
  flash::BackwardArgs bwd;
  std::unique_ptr<L2Flush> flush;
};

// Seeds of the random inputs (flash::testing::upload_random: normal values
// made on all host cores; one tensor of a 16k-token call is 3.4e7 values).
constexpr std::uint64_t kSeedQ = 1, kSeedK = 2, kSeedV = 3, kSeedDout = 4;

Inputs make_inputs(const Options& o) {
  Inputs in;
  const Shape& s = o.shape;
  const std::size_t es = flash::dtype_size(o.dtype);
  const std::size_t nq = std::size_t(s.batch) * s.seqlen_q * s.heads_q * s.head_dim;
  const std::size_t nkv = std::size_t(s.batch) * s.seqlen_k * s.heads_kv * s.head_dim;
  in.q = DeviceBuffer(nq * es);
  in.k = DeviceBuffer(nkv * es);
  in.v = DeviceBuffer(nkv * es);
  in.o = DeviceBuffer(nq * es);
  in.lse = DeviceBuffer(std::size_t(s.batch) * s.heads_q * s.seqlen_q * sizeof(float));
  auto& a = in.args;
  a.q = flash::make_contiguous(in.q.get(), o.dtype, {s.batch, s.seqlen_q, s.heads_q, s.head_dim});
  a.k = flash::make_contiguous(in.k.get(), o.dtype, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim});
  a.v = flash::make_contiguous(in.v.get(), o.dtype, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim});
  a.o = flash::make_contiguous(in.o.get(), o.dtype, {s.batch, s.seqlen_q, s.heads_q, s.head_dim});
  a.lse = flash::make_contiguous(in.lse.get(), DType::f32, {s.batch, s.heads_q, s.seqlen_q});
  a.causal = o.flags.causal;
  a.window_left = s.window_left, a.window_right = s.window_right;
  // Random normal inputs (never zeros: they run faster than real data).
  std::mt19937_64 rng(42);
  flash::testing::upload_random(a.q, kSeedQ);
  flash::testing::upload_random(a.k, kSeedK);
  flash::testing::upload_random(a.v, kSeedV);
  in.scores = score_inputs(o.flags, s.batch, s.heads_q, rng);
  in.scores.apply(a);
  in.flush = make_flush(o, (2 * nq + 2 * nkv) * es);
  if (o.flags.bwd) {
    in.dout = DeviceBuffer(nq * es), in.dq = DeviceBuffer(nq * es);
    in.dk = DeviceBuffer(nkv * es), in.dv = DeviceBuffer(nkv * es);
    auto& b = in.bwd;
    b.q = a.q, b.k = a.k, b.v = a.v, b.o = a.o, b.lse = *a.lse;
    b.dout = flash::make_contiguous(in.dout.get(), o.dtype, {s.batch, s.seqlen_q, s.heads_q, s.head_dim});
    b.dq = flash::make_contiguous(in.dq.get(), o.dtype, {s.batch, s.seqlen_q, s.heads_q, s.head_dim});
    b.dk = flash::make_contiguous(in.dk.get(), o.dtype, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim});
    b.dv = flash::make_contiguous(in.dv.get(), o.dtype, {s.batch, s.seqlen_k, s.heads_kv, s.head_dim});
    b.causal = o.flags.causal;
    b.window_left = s.window_left, b.window_right = s.window_right;
    in.scores.apply(b);
    if (o.flags.sinks) {  // the sinks' gradient, as a training step with learned sinks takes it
      in.dsinks = DeviceBuffer(std::size_t(s.heads_q) * sizeof(float));
      b.dsinks = flash::make_contiguous(in.dsinks.get(), DType::f32, {s.heads_q});
    }
    flash::testing::upload_random(b.dout, kSeedDout);
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

// kWarmupCalls untimed calls, then one timed call per iteration (after
// `flush`); returns the median in ms, or a negative value when the
// warm-up threw (the benchmark is then skipped with the error).
template <class Call> double time_iterations(benchmark::State& state, L2Flush& flush, Call&& call) {
  try {
    for (int i = 0; i < flash::testing::kWarmupCalls; ++i) call();
    check(cudaDeviceSynchronize(), "warm-up");
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return -1;
  }
  flash::testing::GpuTimer timer;
  std::vector<double> ms;
  for (auto _ : state) {
    flush();
    ms.push_back(timer.time_ms(call));
    state.SetIterationTime(ms.back() * 1e-3);
  }
  return flash::testing::median(std::move(ms));
}

// Sets ms and TFLOPS from the median time of `call`.
template <class Call> void time_call(benchmark::State& state, const Options& o, Call&& call, double flops) {
  const double ms = time_iterations(state, *shared_inputs(o).flush, call);
  if (ms < 0) return;
  state.counters["ms"] = ms;
  state.counters["TFLOPS"] = flops / (ms * 1e-3) / 1e12;
}

// The FLOPs of the dense forward call: forward_flops, or with --varlen
// (the dense comparison) the count of the varlen row, so the two compare.
double dense_forward_flops(const Options& o) {
  const Shape& s = o.shape;
  if (!o.varlen) return flash::testing::forward_flops(s, o.flags.causal);
  return flash::testing::varlen_forward_flops(std::vector<int>(s.batch, s.seqlen_q), s.heads_q, s.head_dim,
                                              o.flags.causal, s.window_left, s.window_right);
}

// The same for the dense backward call: backward_flops, or with --varlen
// the count of the varlen backward row.
double dense_backward_flops(const Options& o) {
  const Shape& s = o.shape;
  if (!o.varlen) return flash::testing::backward_flops(s, o.flags.causal);
  return flash::testing::varlen_backward_flops(std::vector<int>(s.batch, s.seqlen_q), s.heads_q, s.head_dim,
                                               o.flags.causal, s.window_left, s.window_right);
}

void run_variant(benchmark::State& state, const Options& o, const std::string& kernel) {
  flash::ForwardArgs args;
  try {
    args = shared_inputs(o).args;
    args.kernel = kernel;
    if (kernel == "auto") state.SetLabel(flash::plan_forward(args).kernel);
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  time_call(state, o, [&] { flash::attention_forward(args); }, dense_forward_flops(o));
}

void run_backward(benchmark::State& state, const Options& o, const std::string& kernel, bool deterministic) {
  flash::BackwardArgs args;
  try {
    args = shared_inputs(o).bwd;
    args.kernel = kernel;
    args.deterministic = deterministic;
    if (kernel == "auto") state.SetLabel(flash::plan_backward(args).kernel);
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  time_call(state, o, [&] { flash::attention_backward(args); }, dense_backward_flops(o));
}

// After the timed calls of a call with device metadata: its status words
// (sync_check off). Non-zero cannot happen with metadata from the host, and
// nothing was computed if it did: the benchmark is then skipped with the
// words. Returns whether they were 0.
bool metadata_ok(benchmark::State& state, const DeviceBuffer& status, const char* what) {
  int words[4] = {};
  check(cudaMemcpy(words, status.get(), sizeof(words), cudaMemcpyDeviceToHost), "status");
  if (words[0] == 0) return true;
  state.SkipWithError(fmt::format("{} metadata status {} {} {} {}", what, words[0], words[1], words[2], words[3]).c_str());
  return false;
}

// --- varlen -----------------------------------------------------------------

// --varlen: one packed batch over the lengths (seqlen_q = seqlen_k per
// sequence; q, k, v, o [total, heads, head_dim], lse [heads_q, total]), the
// heads, head dim, mask and modifiers of the dense shape, and a status
// tensor, so that the timed call runs on the asynchronous path (sync_check
// off: no wait for the metadata check; its verdict is read afterwards).
// With --bwd also dO, the gradients (dsinks too with --sinks) and the
// backward call, on the same path, with O and the LSE from a forward call.
struct VarlenInputs {
  DeviceBuffer q, k, v, o, lse, cu_seqlens, status;
  flash::testing::ScoreInputs scores;
  flash::ForwardArgs args;
  DeviceBuffer dout, dq, dk, dv, dsinks;
  flash::BackwardArgs bwd;
  std::unique_ptr<L2Flush> flush;
};

VarlenInputs make_varlen_inputs(const Options& o) {
  VarlenInputs in;
  const std::vector<int>& lengths = *o.varlen;
  const Shape& s = o.shape;  // its heads, head dim and window (its batch and seqlen are the dense row's)
  std::vector<double> cu = {0};
  for (int len : lengths) cu.push_back(cu.back() + len);
  const auto total = static_cast<std::int64_t>(cu.back());
  const int batch = static_cast<int>(lengths.size());
  const int longest = *std::max_element(lengths.begin(), lengths.end());
  const std::size_t es = flash::dtype_size(o.dtype);
  const std::size_t nq = std::size_t(total) * s.heads_q * s.head_dim;
  const std::size_t nkv = std::size_t(total) * s.heads_kv * s.head_dim;
  in.q = DeviceBuffer(nq * es), in.o = DeviceBuffer(nq * es);
  in.k = DeviceBuffer(nkv * es), in.v = DeviceBuffer(nkv * es);
  in.lse = DeviceBuffer(std::size_t(s.heads_q) * total * sizeof(float));
  in.cu_seqlens = DeviceBuffer(cu.size() * sizeof(std::int32_t));
  in.status = DeviceBuffer(4 * sizeof(std::int32_t));
  auto& a = in.args;
  a.q = flash::make_contiguous(in.q.get(), o.dtype, {total, s.heads_q, s.head_dim});
  a.k = flash::make_contiguous(in.k.get(), o.dtype, {total, s.heads_kv, s.head_dim});
  a.v = flash::make_contiguous(in.v.get(), o.dtype, {total, s.heads_kv, s.head_dim});
  a.o = flash::make_contiguous(in.o.get(), o.dtype, {total, s.heads_q, s.head_dim});
  a.lse = flash::make_contiguous(in.lse.get(), DType::f32, {s.heads_q, total});
  // Self-attention: the queries and the keys share one cu_seqlens.
  a.cu_seqlens_q = flash::make_contiguous(in.cu_seqlens.get(), DType::i32, {batch + 1});
  a.cu_seqlens_k = a.cu_seqlens_q;
  flash::testing::upload(cu, *a.cu_seqlens_q);
  a.max_seqlen_q = a.max_seqlen_k = longest;
  a.sync_check = false;
  a.status = flash::make_contiguous(in.status.get(), DType::i32, {4});
  a.causal = o.flags.causal;
  a.window_left = s.window_left, a.window_right = s.window_right;
  std::mt19937_64 rng(42);
  flash::testing::upload_random(a.q, kSeedQ);
  flash::testing::upload_random(a.k, kSeedK);
  flash::testing::upload_random(a.v, kSeedV);
  in.scores = score_inputs(o.flags, batch, s.heads_q, rng);
  in.scores.apply(a);
  in.flush = make_flush(o, (2 * nq + 2 * nkv) * es);
  if (o.flags.bwd) {
    in.dout = DeviceBuffer(nq * es), in.dq = DeviceBuffer(nq * es);
    in.dk = DeviceBuffer(nkv * es), in.dv = DeviceBuffer(nkv * es);
    auto& b = in.bwd;
    b.q = a.q, b.k = a.k, b.v = a.v, b.o = a.o, b.lse = *a.lse;
    b.dout = flash::make_contiguous(in.dout.get(), o.dtype, {total, s.heads_q, s.head_dim});
    b.dq = flash::make_contiguous(in.dq.get(), o.dtype, {total, s.heads_q, s.head_dim});
    b.dk = flash::make_contiguous(in.dk.get(), o.dtype, {total, s.heads_kv, s.head_dim});
    b.dv = flash::make_contiguous(in.dv.get(), o.dtype, {total, s.heads_kv, s.head_dim});
    b.causal = a.causal;
    b.window_left = a.window_left, b.window_right = a.window_right;
    in.scores.apply(b);
    if (o.flags.sinks) {  // the sinks' gradient, as the dense --bwd row takes it
      in.dsinks = DeviceBuffer(std::size_t(s.heads_q) * sizeof(float));
      b.dsinks = flash::make_contiguous(in.dsinks.get(), DType::f32, {s.heads_q});
    }
    b.cu_seqlens_q = a.cu_seqlens_q, b.cu_seqlens_k = a.cu_seqlens_k;
    b.max_seqlen_q = a.max_seqlen_q, b.max_seqlen_k = a.max_seqlen_k;
    b.sync_check = false;
    b.status = a.status;
    flash::testing::upload_random(b.dout, kSeedDout);
    flash::attention_forward(a);  // the real O and LSE
    check(cudaDeviceSynchronize(), "forward for the backward inputs");
    const std::vector<double> words = flash::testing::download(*a.status);
    if (words[0] != 0)
      throw flash::Error(fmt::format("varlen forward for the backward inputs: metadata status {} {} {} {}", words[0],
                                     words[1], words[2], words[3]));
  }
  return in;
}

VarlenInputs& shared_varlen_inputs(const Options& o) {
  static VarlenInputs in = make_varlen_inputs(o);
  return in;
}

// The varlen rows' FLOPs: forward, or with --bwd backward.
double varlen_flops(const Options& o) {
  const Shape& s = o.shape;
  return (o.flags.bwd ? flash::testing::varlen_backward_flops : flash::testing::varlen_forward_flops)(
      *o.varlen, s.heads_q, s.head_dim, o.flags.causal, s.window_left, s.window_right);
}

void run_varlen(benchmark::State& state, const Options& o, const std::string& kernel) {
  VarlenInputs* in = nullptr;
  flash::ForwardArgs args;
  try {
    in = &shared_varlen_inputs(o);
    args = in->args;
    args.kernel = kernel;
    const std::string planned = flash::plan_forward(args).kernel;  // a variant without varlen refuses here
    if (kernel == "auto") state.SetLabel(planned);
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const double ms = time_iterations(state, *in->flush, [&] { flash::attention_forward(args); });
  if (ms < 0 || !metadata_ok(state, in->status, "varlen")) return;
  state.counters["ms"] = ms;
  state.counters["TFLOPS"] = varlen_flops(o) / (ms * 1e-3) / 1e12;
}

void run_varlen_backward(benchmark::State& state, const Options& o, const std::string& kernel, bool deterministic) {
  VarlenInputs* in = nullptr;
  flash::BackwardArgs args;
  try {
    in = &shared_varlen_inputs(o);
    args = in->bwd;
    args.kernel = kernel;
    args.deterministic = deterministic;
    const std::string planned = flash::plan_backward(args).kernel;  // a variant without varlen refuses here
    if (kernel == "auto") state.SetLabel(planned);
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const double ms = time_iterations(state, *in->flush, [&] { flash::attention_backward(args); });
  if (ms < 0 || !metadata_ok(state, in->status, "varlen")) return;
  state.counters["ms"] = ms;
  state.counters["TFLOPS"] = varlen_flops(o) / (ms * 1e-3) / 1e12;
}

// --- paged ------------------------------------------------------------------

// --paged P: the call of the contiguous row (the dense call, or with
// --varlen the packed one) with its K and V copied into pages of P keys,
// handed out from a shuffled pool (shuffled_page_table), and the page table
// [batch, max_pages]. Dense queries attend every sequence's seq_k keys,
// through seqused_k unless the table holds exactly those (seq_k a multiple
// of P); packed queries attend seqused_k = the lengths (FA4's rule: no
// cu_seqlens_k with a page table). q, o, the LSE and the modifiers are the
// contiguous call's; the page table is metadata, so the call has a status
// tensor and runs on the asynchronous path, as varlen's.
struct PagedInputs {
  DeviceBuffer k_pages, v_pages, table, seqused_k, status;
  flash::ForwardArgs args;
};

// The pool's shuffle: one fixed seed, so every run lays the pages out alike.
constexpr std::uint64_t kPageShuffleSeed = 17;

// Copies sequence b's keys[b] rows, from row row0[b] of a contiguous [rows,
// heads_kv, head_dim] tensor, into its pages of the pool, one copy per page.
void copy_into_pages(const void* src, void* pool, std::size_t row_bytes, const std::vector<std::int64_t>& row0,
                     const std::vector<int>& keys, const flash::testing::PageTable& t) {
  const std::size_t page_bytes = row_bytes * t.page_size;
  for (std::size_t b = 0; b < keys.size(); ++b)
    for (std::int64_t i = 0; i < flash::testing::pages_for(keys[b], t.page_size); ++i) {
      const std::int64_t first = i * t.page_size;
      const std::int64_t rows = std::min<std::int64_t>(t.page_size, keys[b] - first);
      const int page = t.entries[b * t.max_pages + static_cast<std::size_t>(i)];
      check(cudaMemcpy(static_cast<char*>(pool) + std::size_t(page) * page_bytes,
                       static_cast<const char*>(src) + std::size_t(row0[b] + first) * row_bytes,
                       std::size_t(rows) * row_bytes, cudaMemcpyDeviceToDevice),
            "copy into pages");
    }
}

PagedInputs make_paged_inputs(const Options& o, int page_size) {
  PagedInputs in;
  const Shape& s = o.shape;
  const flash::ForwardArgs& base = o.varlen ? shared_varlen_inputs(o).args : shared_inputs(o).args;
  std::vector<int> keys;  // per sequence, and its first row in base's k and v
  std::vector<std::int64_t> row0;
  if (o.varlen) {
    keys = *o.varlen;
    std::int64_t row = 0;
    for (int len : keys) row0.push_back(row), row += len;
  } else {
    keys.assign(s.batch, s.seqlen_k);
    for (int b = 0; b < s.batch; ++b) row0.push_back(std::int64_t(b) * s.seqlen_k);
  }
  const flash::testing::PageTable t =
      flash::testing::shuffled_page_table(keys, page_size, kPageShuffleSeed, !o.pages_in_order);
  const std::size_t row_bytes = std::size_t(s.heads_kv) * s.head_dim * flash::dtype_size(o.dtype);
  const std::size_t pool_bytes = std::size_t(t.num_pages) * t.page_size * row_bytes;
  in.k_pages = DeviceBuffer(pool_bytes), in.v_pages = DeviceBuffer(pool_bytes);
  // The rows of a last page past its sequence's keys are never attended: zeros.
  check(cudaMemset(in.k_pages.get(), 0, pool_bytes), "memset of the pages");
  check(cudaMemset(in.v_pages.get(), 0, pool_bytes), "memset of the pages");
  copy_into_pages(base.k.data, in.k_pages.get(), row_bytes, row0, keys, t);
  copy_into_pages(base.v.data, in.v_pages.get(), row_bytes, row0, keys, t);

  const int batch = static_cast<int>(keys.size());
  auto& a = in.args;
  a = base;
  a.k = flash::make_contiguous(in.k_pages.get(), o.dtype, {t.num_pages, t.page_size, s.heads_kv, s.head_dim});
  a.v = flash::make_contiguous(in.v_pages.get(), o.dtype, {t.num_pages, t.page_size, s.heads_kv, s.head_dim});
  in.table = DeviceBuffer(t.entries.size() * sizeof(std::int32_t));
  a.page_table = flash::make_contiguous(in.table.get(), DType::i32, {batch, t.max_pages});
  flash::testing::upload(std::vector<double>(t.entries.begin(), t.entries.end()), *a.page_table);
  const std::int64_t capacity = std::int64_t(t.max_pages) * t.page_size;
  const bool whole_table = !o.varlen && std::all_of(keys.begin(), keys.end(), [&](int n) { return n == capacity; });
  if (!whole_table) {
    in.seqused_k = DeviceBuffer(keys.size() * sizeof(std::int32_t));
    a.seqused_k = flash::make_contiguous(in.seqused_k.get(), DType::i32, {batch});
    flash::testing::upload(std::vector<double>(keys.begin(), keys.end()), *a.seqused_k);
  }
  a.cu_seqlens_k.reset();  // packed queries: the keys come from the table and seqused_k
  in.status = DeviceBuffer(4 * sizeof(std::int32_t));
  a.sync_check = false;
  a.status = flash::make_contiguous(in.status.get(), DType::i32, {4});
  return in;
}

// One PagedInputs per page size, made on first use and kept for the process.
PagedInputs& shared_paged_inputs(const Options& o, int page_size) {
  static std::map<int, PagedInputs> by_page_size;
  auto it = by_page_size.find(page_size);
  if (it == by_page_size.end()) it = by_page_size.emplace(page_size, make_paged_inputs(o, page_size)).first;
  return it->second;
}

void run_paged(benchmark::State& state, const Options& o, const std::string& kernel, int page_size) {
  PagedInputs* in = nullptr;
  L2Flush* flush = nullptr;
  flash::ForwardArgs args;
  try {
    in = &shared_paged_inputs(o, page_size);
    flush = o.varlen ? shared_varlen_inputs(o).flush.get() : shared_inputs(o).flush.get();
    args = in->args;
    args.kernel = kernel;
    const std::string planned = flash::plan_forward(args).kernel;  // a variant without kFeaturePaged refuses here
    if (kernel == "auto") state.SetLabel(planned);
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  const double ms = time_iterations(state, *flush, [&] { flash::attention_forward(args); });
  if (ms < 0 || !metadata_ok(state, in->status, "paged")) return;
  state.counters["ms"] = ms;
  const double flops = o.varlen ? varlen_flops(o) : flash::testing::forward_flops(o.shape, o.flags.causal);
  state.counters["TFLOPS"] = flops / (ms * 1e-3) / 1e12;
}

// The backward modes to register for `kernel`: deterministic too, unless it
// names a variant without kFeatureDeterministic ("auto" takes one that has it).
std::vector<bool> backward_modes(const std::string& kernel) {
  for (const auto& v : flash::backward_variants())
    if (v.name == kernel && !(v.features & flash::kFeatureDeterministic)) return {false};
  return {false, true};
}

// The names to register for --kernel: every variant that supports the
// dtype and head dim ("all"), "auto" (the API resolves it per call), or the
// one named.
std::vector<std::string> kernels_to_run(const std::vector<flash::VariantInfo>& variants, const std::string& kernel,
                                        DType dtype, int head_dim) {
  if (kernel == "auto") return {"auto"};
  std::vector<std::string> names;
  for (const auto& v : variants)
    if ((kernel == "all" || v.name == kernel) && v.supports(dtype, head_dim)) names.push_back(v.name);
  return names;
}

// --- decode ---------------------------------------------------------------

struct DecodeShape {
  int batch, cache, page_size;  // page_size 0: contiguous
};

std::vector<DecodeShape> decode_shapes(const ProblemFlags& f) {
  std::vector<std::pair<int, int>> sizes = {{1, 131072}, {16, 8192}, {64, 4096}};
  if (f.batch || f.cache) sizes = {{f.batch.value_or(1), f.cache.value_or(8192)}};
  std::vector<int> pages = {0, 16, 256};
  if (f.page_size) pages = {*f.page_size};
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

// The decode problem's dimensions (the buffers are bench's own: far larger
// than the tests' DecodeProblem, and without a reference).
flash::testing::DecodeSpec decode_spec(const Options& o, const DecodeShape& sh) {
  const ProblemFlags& f = o.flags;
  flash::testing::DecodeSpec s;
  s.dtype = o.dtype;
  s.batch = sh.batch;
  s.seqlen_q = f.seqlen_q.value_or(1);
  s.heads_q = f.heads.value_or(32);
  s.heads_kv = f.heads_kv.value_or(8);
  s.head_dim = f.dhead.value_or(128);
  s.page_size = sh.page_size;
  s.seqlen_new = f.append.value_or(0);
  s.capacity = sh.cache + s.seqlen_new;  // room for the appended keys
  s.causal = f.causal;
  s.window_left = f.window_left, s.window_right = f.window_right;
  s.num_splits = f.splits.value_or(0);
  s.lens.assign(sh.batch, sh.cache);  // every sequence's cache full
  return s;
}

void run_decode(benchmark::State& state, const Options& o, const DecodeShape& sh, const std::string& kernel) {
  const flash::testing::DecodeSpec spec = decode_spec(o, sh);
  const int B = spec.batch, Hq = spec.heads_q, Hkv = spec.heads_kv, D = spec.head_dim, Sq = spec.seqlen_q;
  const int Snew = spec.seqlen_new;
  const std::size_t es = flash::dtype_size(spec.dtype);
  const bool paged = sh.page_size > 0;
  const int max_pages = paged ? (spec.capacity + sh.page_size - 1) / sh.page_size : 0;
  const std::int64_t blocks = paged ? std::int64_t(B) * max_pages : B;
  const std::int64_t rows = paged ? sh.page_size : spec.capacity;
  const std::size_t cache_bytes = std::size_t(blocks) * rows * Hkv * D * es;
  std::mt19937_64 rng(7);
  DeviceBuffer q(std::size_t(B) * Sq * Hq * D * es), o_buf(std::size_t(B) * Sq * Hq * D * es);
  DeviceBuffer kc(cache_bytes), vc(cache_bytes), lens(std::size_t(B) * 4), table(std::max<std::size_t>(4, std::size_t(B) * max_pages * 4));
  DeviceBuffer kn(std::max<std::size_t>(16, std::size_t(B) * Snew * Hkv * D * es)), vn(kn.bytes());
  DeviceBuffer lse(std::size_t(B) * Hq * Sq * 4), status(16);
  fill_random(q.get(), q.bytes(), spec.dtype, rng);
  fill_random(kc.get(), cache_bytes, spec.dtype, rng);
  fill_random(vc.get(), cache_bytes, spec.dtype, rng);
  fill_random(kn.get(), kn.bytes(), spec.dtype, rng);
  fill_random(vn.get(), vn.bytes(), spec.dtype, rng);
  flash::DecodeArgs a;
  a.q = flash::make_contiguous(q.get(), spec.dtype, {B, Sq, Hq, D});
  a.o = flash::make_contiguous(o_buf.get(), spec.dtype, {B, Sq, Hq, D});
  a.lse = flash::make_contiguous(lse.get(), DType::f32, {B, Hq, Sq});
  a.k_cache = flash::make_contiguous(kc.get(), spec.dtype, {blocks, rows, Hkv, D});
  a.v_cache = flash::make_contiguous(vc.get(), spec.dtype, {blocks, rows, Hkv, D});
  a.cache_seqlens = flash::make_contiguous(lens.get(), DType::i32, {B});
  flash::testing::upload(std::vector<double>(spec.lens.begin(), spec.lens.end()), a.cache_seqlens);
  if (paged) {
    std::vector<double> perm(std::size_t(B) * max_pages);
    for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = double(i);
    if (!o.pages_in_order) std::shuffle(perm.begin(), perm.end(), rng);  // pages scattered as in a real pool
    a.page_table = flash::make_contiguous(table.get(), DType::i32, {B, max_pages});
    flash::testing::upload(perm, *a.page_table);
  }
  if (Snew > 0) {
    a.k_new = flash::make_contiguous(kn.get(), spec.dtype, {B, Snew, Hkv, D});
    a.v_new = flash::make_contiguous(vn.get(), spec.dtype, {B, Snew, Hkv, D});
  }
  a.causal = spec.causal;
  a.window_left = spec.window_left, a.window_right = spec.window_right;
  a.num_splits = spec.num_splits;
  const flash::testing::ScoreInputs scores = score_inputs(o.flags, B, Hq, rng);
  scores.apply(a);
  a.kernel = kernel;
  a.sync_check = false;
  a.status = flash::make_contiguous(status.get(), DType::i32, {4});
  int splits = 0;
  try {
    const flash::DecodePlan plan = flash::plan_decode(a);
    splits = plan.num_splits;
    if (kernel == "auto") state.SetLabel(plan.kernel);
  } catch (const flash::Error& e) {
    state.SkipWithError(e.what());
    return;
  }
  // The caches (>= 256 MiB at the default shapes) are far larger than L2:
  // the flush then does nothing.
  const auto flush = make_flush(o, 2 * cache_bytes + q.bytes() + o_buf.bytes());
  const double ms = time_iterations(state, *flush, [&] { flash::attention_decode(a); });
  if (ms < 0) return;
  int words[4] = {};
  check(cudaMemcpy(words, status.get(), sizeof(words), cudaMemcpyDeviceToHost), "status");
  if (words[0] != 0) {
    state.SkipWithError(("decode status: " + flash::describe_decode_status(words)).c_str());
    return;
  }
  state.counters["us"] = ms * 1e3;
  state.counters["GB/s"] = flash::testing::decode_kv_bytes(spec) / (ms * 1e-3) / 1e9;
  state.counters["TFLOPS"] = flash::testing::decode_flops(spec) / (ms * 1e-3) / 1e12;
  state.counters["splits"] = splits;
}

int register_decode(const Options& o) {
  const ProblemFlags& f = o.flags;
  int registered = 0;
  for (const std::string& kernel : kernels_to_run(flash::decode_variants(), f.kernel, o.dtype, f.dhead.value_or(128))) {
    for (const DecodeShape& sh : decode_shapes(f)) {
      const flash::testing::DecodeSpec s = decode_spec(o, sh);
      const std::string name = fmt::format(
          "decode/{}/b{}_cache{}_{}_hq{}_hkv{}_sq{}{}_d{}_{}{}{}{}", kernel, sh.batch, sh.cache,
          sh.page_size ? fmt::format("page{}", sh.page_size) : std::string("contiguous"), s.heads_q, s.heads_kv,
          s.seqlen_q, s.seqlen_new ? fmt::format("_new{}", s.seqlen_new) : std::string(), s.head_dim,
          flash::dtype_name(s.dtype), s.causal ? "_causal" : "", window_suffix(s.window_left, s.window_right),
          score_suffix(f));
      benchmark::RegisterBenchmark(name.c_str(), [o, sh, kernel](benchmark::State& st) { run_decode(st, o, sh, kernel); })
          ->UseManualTime()
          ->Unit(benchmark::kMicrosecond)
          ->MinTime(o.min_time.value_or(0.3));
      ++registered;
    }
  }
  return registered;
}

// Registers one benchmark timed with CUDA events (manual time), in ms, over
// o.min_time seconds of calls (default 0.5).
template <class Run> void add_timed(const Options& o, const std::string& name, Run run) {
  benchmark::RegisterBenchmark(name.c_str(), run)
      ->UseManualTime()
      ->Unit(benchmark::kMillisecond)
      ->MinTime(o.min_time.value_or(0.5));
}

// The dense call's part of a benchmark name, e.g. b4_hq16_hkv16_sq4096_sk4096_d128_bf16_causal.
std::string dense_shape_name(const Options& o) {
  const ProblemFlags& f = o.flags;
  const Shape& s = o.shape;
  return fmt::format("b{}_hq{}_hkv{}_sq{}_sk{}_d{}_{}{}{}{}", s.batch, s.heads_q, s.heads_kv, s.seqlen_q, s.seqlen_k,
                     s.head_dim, flash::dtype_name(o.dtype), f.causal ? "_causal" : "",
                     window_suffix(s.window_left, s.window_right), score_suffix(f));
}

// --varlen's parts of the names: the packed call's (hq16_hkv16_d128_bf16_7seq16384_causal)
// and the dense comparison's (hq16_hkv16_d128_bf16_7x2341_causal).
struct VarlenNames {
  std::string varlen, dense;
};

VarlenNames varlen_names(const Options& o) {
  const ProblemFlags& f = o.flags;
  const Shape& s = o.shape;
  std::int64_t total = 0;
  for (int len : *o.varlen) total += len;
  const std::string head = fmt::format("hq{}_hkv{}_d{}_{}", s.heads_q, s.heads_kv, s.head_dim, flash::dtype_name(o.dtype));
  const std::string mask = fmt::format("{}{}{}", f.causal ? "_causal" : "", window_suffix(s.window_left, s.window_right),
                                       score_suffix(f));
  return {fmt::format("{}_{}seq{}{}", head, o.varlen->size(), total, mask),
          fmt::format("{}_{}x{}{}", head, s.batch, s.seqlen_q, mask)};
}

// Per kernel, the varlen row and the dense row of the same tokens split
// evenly, e.g. fwd_varlen/mma_pipeline/hq16_hkv16_d128_bf16_7seq16384_causal
// and fwd_varlen_dense/mma_pipeline/hq16_hkv16_d128_bf16_7x2341_causal; with
// --bwd, per backward kernel and mode, bwd_varlen/mma/... and
// bwd_varlen_dense/mma/..., then bwd_varlen/mma-det/... and
// bwd_varlen_dense/mma-det/... (deterministic).
int register_varlen(const Options& o) {
  const ProblemFlags& f = o.flags;
  const VarlenNames names = varlen_names(o);
  int registered = 0;
  if (f.bwd) {
    for (const std::string& kernel : kernels_to_run(flash::backward_variants(), f.kernel, o.dtype, o.shape.head_dim))
      for (bool det : backward_modes(kernel)) {
        const std::string shown = kernel + (det ? "-det" : "");
        add_timed(o, "bwd_varlen/" + shown + "/" + names.varlen,
                  [o, kernel, det](benchmark::State& st) { run_varlen_backward(st, o, kernel, det); });
        add_timed(o, "bwd_varlen_dense/" + shown + "/" + names.dense,
                  [o, kernel, det](benchmark::State& st) { run_backward(st, o, kernel, det); });
        registered += 2;
      }
    return registered;
  }
  for (const std::string& kernel : kernels_to_run(flash::forward_variants(), f.kernel, o.dtype, o.shape.head_dim)) {
    add_timed(o, "fwd_varlen/" + kernel + "/" + names.varlen,
              [o, kernel](benchmark::State& st) { run_varlen(st, o, kernel); });
    add_timed(o, "fwd_varlen_dense/" + kernel + "/" + names.dense,
              [o, kernel](benchmark::State& st) { run_variant(st, o, kernel); });
    registered += 2;
  }
  return registered;
}

// Per kernel, the call on a contiguous cache once, then the same call through
// a page table per page size, e.g.
// fwd_paged_contig/mma_pipeline/b4_hq16_hkv16_sq4096_sk4096_d128_bf16_causal,
// fwd_paged16/mma_pipeline/... and fwd_paged256/mma_pipeline/...; with
// --varlen, fwd_varlen/mma_pipeline/hq16_hkv16_d128_bf16_7seq16384_causal and
// fwd_varlen_paged16/mma_pipeline/.... Variants without kFeaturePaged are
// registered too, and skipped with the library's refusal.
int register_paged(const Options& o) {
  const ProblemFlags& f = o.flags;
  const std::string shape = o.varlen ? varlen_names(o).varlen : dense_shape_name(o);
  const std::string contiguous = o.varlen ? "fwd_varlen/" : "fwd_paged_contig/";
  const std::string paged = o.varlen ? "fwd_varlen_paged" : "fwd_paged";
  int registered = 0;
  for (const std::string& kernel : kernels_to_run(flash::forward_variants(), f.kernel, o.dtype, o.shape.head_dim)) {
    add_timed(o, contiguous + kernel + "/" + shape, [o, kernel](benchmark::State& st) {
      if (o.varlen) run_varlen(st, o, kernel);
      else run_variant(st, o, kernel);
    });
    ++registered;
    for (int page_size : *o.paged) {
      add_timed(o, fmt::format("{}{}/{}/{}", paged, page_size, kernel, shape),
                [o, kernel, page_size](benchmark::State& st) { run_paged(st, o, kernel, page_size); });
      ++registered;
    }
  }
  return registered;
}

// The GPU's name in the context block (console and JSON), beside the CPU's.
void add_gpu_context() {
  int device = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&device) != cudaSuccess || cudaGetDeviceProperties(&prop, device) != cudaSuccess) return;
  benchmark::AddCustomContext("gpu", fmt::format("{} (compute capability {}.{}, {} SMs)", prop.name, prop.major,
                                                 prop.minor, prop.multiProcessorCount));
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  try {
    o = parse(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "bench: {} (bench --help lists the flags)\n", e.what());
    return 2;
  }
  benchmark::Initialize(&argc, argv, print_help);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  std::string why;
  if (!flash::testing::gpu_available(&why)) {
    fmt::print(stderr, "bench: {}; nothing to time\n", why);
    return 2;
  }
  add_gpu_context();
  const ProblemFlags& f = o.flags;
  int registered = 0;
  std::string what;
  if (f.decode) {
    registered = register_decode(o);
    what = fmt::format("decode at dhead {} {}", f.dhead.value_or(128), flash::dtype_name(o.dtype));
  } else if (o.paged) {
    registered = register_paged(o);
    what = fmt::format("paged prefill at dhead {} {}", o.shape.head_dim, flash::dtype_name(o.dtype));
  } else if (o.varlen) {
    registered = register_varlen(o);
    what = fmt::format("varlen at dhead {} {}", o.shape.head_dim, flash::dtype_name(o.dtype));
  } else {
    const Shape& s = o.shape;
    const std::string shape = dense_shape_name(o);
    what = shape;
    if (f.bwd) {
      for (const std::string& kernel : kernels_to_run(flash::backward_variants(), f.kernel, o.dtype, s.head_dim))
        for (bool det : backward_modes(kernel)) {
          add_timed(o, "bwd/" + kernel + (det ? "-det/" : "/") + shape,
                    [o, det, kernel](benchmark::State& st) { run_backward(st, o, kernel, det); });
          ++registered;
        }
    } else {
      for (const std::string& kernel : kernels_to_run(flash::forward_variants(), f.kernel, o.dtype, s.head_dim)) {
        add_timed(o, "fwd/" + kernel + "/" + shape, [o, kernel](benchmark::State& st) { run_variant(st, o, kernel); });
        ++registered;
      }
    }
  }
  if (registered == 0) {
    fmt::print(stderr, "bench: no built variant supports {} (kernel {})\n", what, f.kernel);
    return 2;
  }
  DisplayReporter display;
  benchmark::RunSpecifiedBenchmarks(&display);
  benchmark::Shutdown();
  return 0;
}
