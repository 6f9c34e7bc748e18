// The library's workspace under concurrent callers (ctest label gpu).
//
// Host threads call forward, backward (deterministic) and decode with
// workspace = nullptr, each thread with problem sizes of its own so that the
// cached buffer grows while other threads' calls use it: all on ONE shared
// stream, then each thread on a stream of its own. Every output must be
// bit-identical to the output of the same calls made alone. Then the rules
// around it: a caller's workspace (larger is fine, 256-byte alignment and
// the size are checked before anything runs), and CUDA graph capture (a
// cold workspace cannot grow during capture; a graph captured with a warm
// one still replays correctly after the buffer has grown).
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <exception>
#include <iterator>
#include <latch>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "flash/flash.h"
#include "gpu_test.h"
#include "testing/testing.h"

namespace {

using flash::DType;
using flash::TensorView;
using flash::gpu_test::test_seed;
using flash::testing::check;
using flash::testing::DeviceBuffer;

constexpr DType kDtype = DType::bf16;
constexpr int kThreads = 6;
constexpr int kIterations = 20;

// A new stream that is never destroyed: no later stream can get its handle,
// so each stream made here starts with a cold library workspace.
cudaStream_t fresh_stream() {
  cudaStream_t s = nullptr;
  check(cudaStreamCreate(&s), "cudaStreamCreate");
  return s;
}

// A head dim that a built forward, backward and decode variant all run on
// this GPU (128 in a full build), or 0.
int common_head_dim() {
  auto runs = [](const std::vector<flash::VariantInfo>& variants, int head_dim) {
    for (const auto& v : variants)
      if (flash::gpu_test::runnable(v, kDtype, head_dim)) return true;
    return false;
  };
  for (int d : {128, 64, 256})
    if (runs(flash::forward_variants(), d) && runs(flash::backward_variants(), d) && runs(flash::decode_variants(), d))
      return d;
  return 0;
}

// Everything the calls write, in this order.
const char* const kOutputNames[] = {"forward o", "forward lse", "dq", "dk", "dv",
                                    "decode o",  "decode lse",  "k_cache", "v_cache"};
using Outputs = std::vector<std::vector<double>>;

// "" when got and want are equal element by element (NaN equals nothing,
// so an unwritten output differs), else the first difference.
std::string first_difference(const Outputs& got, const Outputs& want, std::size_t first = 0,
                             std::size_t last = std::size(kOutputNames)) {
  for (std::size_t i = first; i < last; ++i) {
    if (got[i].size() != want[i].size())
      return fmt::format("{}: {} elements, expected {}", kOutputNames[i], got[i].size(), want[i].size());
    for (std::size_t j = 0; j < got[i].size(); ++j)
      if (!(got[i][j] == want[i][j]))
        return fmt::format("{}[{}] = {}, alone {}", kOutputNames[i], j, got[i][j], want[i][j]);
  }
  return {};
}

// One thread's calls: a forward, a backward of that forward (it reads the
// forward's O and LSE) and a decode step with an append, each sized by the
// thread's index t, so every thread needs a workspace of another size.
struct Job {
  flash::testing::Problem fwd_problem;
  DeviceBuffer dout, dq, dk, dv;
  flash::testing::DecodeProblem dec_problem;
  flash::ForwardArgs fwd;
  flash::BackwardArgs bwd;
  flash::DecodeArgs dec;

  Job(int t, int head_dim, std::uint64_t seed) {
    flash::testing::Shape s;
    s.batch = 1 + t % 2;
    s.seqlen_q = 128 * (t + 1) + 3;
    s.seqlen_k = 160 * (t + 1);
    s.heads_q = 4;
    s.heads_kv = 2;
    s.head_dim = head_dim;
    const bool causal = t % 2 == 1;
    fwd_problem = flash::testing::make_problem(s, kDtype, causal, flash::testing::Layout::bshd, seed, {0});
    fwd.q = fwd_problem.vq, fwd.k = fwd_problem.vk, fwd.v = fwd_problem.vv;
    fwd.o = fwd_problem.vo, fwd.lse = fwd_problem.vlse;
    fwd.causal = causal;
    // Even threads use the naive forward when it runs here: its N x N
    // workspace makes the forward take part in the growth too.
    for (const auto& v : flash::forward_variants())
      if (t % 2 == 0 && v.name == "naive" && flash::gpu_test::runnable(v, kDtype, head_dim)) fwd.kernel = "naive";

    const flash::testing::ViewSpec q_spec{s.batch, s.seqlen_q, s.heads_q, s.head_dim};
    const flash::testing::ViewSpec kv_spec{s.batch, s.seqlen_k, s.heads_kv, s.head_dim};
    const std::size_t esize = flash::dtype_size(kDtype);
    dout = DeviceBuffer(q_spec.elements() * esize);
    dq = DeviceBuffer(q_spec.elements() * esize);
    dk = DeviceBuffer(kv_spec.elements() * esize);
    dv = DeviceBuffer(kv_spec.elements() * esize);
    bwd.q = fwd.q, bwd.k = fwd.k, bwd.v = fwd.v, bwd.o = fwd.o, bwd.lse = *fwd.lse;
    bwd.dout = q_spec.view(dout.get(), kDtype);
    bwd.dq = q_spec.view(dq.get(), kDtype);
    bwd.dk = kv_spec.view(dk.get(), kDtype);
    bwd.dv = kv_spec.view(dv.get(), kDtype);
    bwd.causal = causal;
    bwd.deterministic = true;
    std::mt19937_64 rng(seed + 1);
    flash::testing::upload(flash::testing::random_values(q_spec.elements(), kDtype, rng), bwd.dout);

    flash::testing::DecodeSpec d;
    d.dtype = kDtype;
    d.batch = 1 + t;
    d.seqlen_q = 1 + t % 2;
    d.heads_q = 8;
    d.heads_kv = 2;
    d.head_dim = head_dim;
    d.capacity = 256 * (t + 1);  // up to t + 1 splits of at least four 64-key tiles
    d.page_size = t % 2 == 0 ? 0 : 64;
    d.seqlen_new = 1;
    d.causal = true;
    std::uniform_int_distribution<int> len(0, d.capacity - d.seqlen_new);
    for (int b = 0; b < d.batch; ++b) d.lens.push_back(len(rng));
    dec_problem = flash::testing::make_decode_problem(d, seed + 2);
    dec = dec_problem.args;
    dec.sync_check = t % 2 == 0;  // both paths: waiting for the status, and fully asynchronous
  }

  // The views run() writes; the caches get the same append every time.
  std::vector<TensorView> poisoned() const { return {fwd.o, *fwd.lse, bwd.dq, bwd.dk, bwd.dv, dec.o, *dec.lse}; }

  // Poisons the outputs (0xff bytes: NaN in bf16 and f32), then enqueues
  // the calls on `stream`; the decode goes first on odd iterations.
  void run(cudaStream_t stream, int iteration = 0) {
    for (const TensorView& t : poisoned())
      check(cudaMemsetAsync(t.data, 0xff, flash::testing::view_bytes(t), stream), "poisoning an output");
    fwd.stream = bwd.stream = dec.stream = stream;
    if (iteration % 2 == 1) flash::attention_decode(dec);
    flash::attention_forward(fwd);
    flash::attention_backward(bwd);
    if (iteration % 2 == 0) flash::attention_decode(dec);
  }

  // Every output, once the work on it is done.
  Outputs outputs() const {
    Outputs out;
    for (const TensorView& t : {fwd.o, *fwd.lse, bwd.dq, bwd.dk, bwd.dv, dec.o, *dec.lse, dec.k_cache, dec.v_cache})
      out.push_back(flash::testing::download(t));
    return out;
  }
};

// kThreads jobs and their outputs when run alone, one after another, on a
// stream of their own.
struct Jobs {
  std::vector<std::unique_ptr<Job>> jobs;
  std::vector<Outputs> alone;
};

Jobs make_jobs(int head_dim) {
  Jobs j;
  const cudaStream_t stream = fresh_stream();
  for (int t = 0; t < kThreads; ++t) {
    j.jobs.push_back(std::make_unique<Job>(t, head_dim, test_seed() + 1000 * t));
    j.jobs.back()->run(stream);
    check(cudaStreamSynchronize(stream), "the calls made alone");
    j.alone.push_back(j.jobs.back()->outputs());
  }
  return j;
}

// Runs job t on streams[t] from thread t, kIterations times, all threads
// released together; returns each thread's first failure ("" for none).
std::vector<std::string> hammer(Jobs& j, const std::vector<cudaStream_t>& streams) {
  std::vector<std::string> failures(kThreads);
  std::latch start(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      start.arrive_and_wait();
      try {
        for (int it = 0; it < kIterations && failures[t].empty(); ++it) {
          j.jobs[t]->run(streams[t], it);
          check(cudaStreamSynchronize(streams[t]), "the concurrent calls");
          const std::string diff = first_difference(j.jobs[t]->outputs(), j.alone[t]);
          if (!diff.empty()) failures[t] = fmt::format("iteration {}: {}", it, diff);
        }
      } catch (const std::exception& e) {
        failures[t] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  return failures;
}

class Concurrency : public ::testing::Test {
 protected:
  void SetUp() override {
    SKIP_WITHOUT_GPU();
    head_dim_ = common_head_dim();
    if (head_dim_ == 0) GTEST_SKIP() << "no head dim that a built forward, backward and decode variant all run here";
    jobs_ = make_jobs(head_dim_);
    for (int t = 0; t < kThreads; ++t) {
      const std::string unwritten = first_difference(jobs_.alone[t], jobs_.alone[t]);
      ASSERT_TRUE(unwritten.empty()) << "job " << t << " alone left an output unwritten: " << unwritten;
    }
  }
  void expect_no_failures(const std::vector<std::string>& failures) {
    for (int t = 0; t < kThreads; ++t) EXPECT_TRUE(failures[t].empty()) << "thread " << t << ": " << failures[t];
  }
  int head_dim_ = 0;
  Jobs jobs_;
};

// The case that corrupted gradients before the lease: every thread's
// forward, backward and decode on one stream, the cache cold at the start.
TEST_F(Concurrency, ManyThreadsOneStream) {
  expect_no_failures(hammer(jobs_, std::vector<cudaStream_t>(kThreads, fresh_stream())));
}

TEST_F(Concurrency, OneStreamPerThread) {
  std::vector<cudaStream_t> streams;
  for (int t = 0; t < kThreads; ++t) streams.push_back(fresh_stream());
  expect_no_failures(hammer(jobs_, streams));
}

// A caller's workspace: larger than plan_backward says is fine, and the
// result is the same; misaligned or one byte short is a flash::Error before
// anything runs (the gradients stay poisoned).
TEST(ConcurrencyCallerWorkspace, LargerIsFineMisalignedOrShortIsRejected) {
  SKIP_WITHOUT_GPU();
  const int head_dim = common_head_dim();
  if (head_dim == 0) GTEST_SKIP() << "no head dim that a built forward, backward and decode variant all run here";
  Job job(1, head_dim, test_seed());
  const cudaStream_t stream = fresh_stream();
  job.run(stream);
  check(cudaStreamSynchronize(stream), "the calls with the library's workspace");
  const Outputs want = job.outputs();

  flash::BackwardArgs a = job.bwd;
  const std::size_t need = flash::plan_backward(a).workspace_bytes;
  ASSERT_GT(need, 0u);
  DeviceBuffer ws(need + 1024);
  auto poison_gradients = [&] {
    for (const TensorView& t : {a.dq, a.dk, a.dv})
      check(cudaMemsetAsync(t.data, 0xff, flash::testing::view_bytes(t), stream), "poisoning a gradient");
  };
  poison_gradients();
  a.workspace = static_cast<char*>(ws.get()) + 256;
  a.workspace_bytes = need + 768;
  flash::attention_backward(a);
  check(cudaStreamSynchronize(stream), "the call with a larger workspace");
  EXPECT_EQ(first_difference(job.outputs(), want, 2, 5), "");

  const struct { void* ptr; std::size_t bytes; const char* message; } bad[] = {
      {static_cast<char*>(ws.get()) + 16, need, "256-byte aligned"},
      {ws.get(), need - 1, "workspace_bytes"},
  };
  for (const auto& b : bad) {
    poison_gradients();
    a.workspace = b.ptr;
    a.workspace_bytes = b.bytes;
    try {
      flash::attention_backward(a);
      ADD_FAILURE() << "no flash::Error for " << b.message;
    } catch (const flash::Error& e) {
      EXPECT_NE(std::string(e.what()).find(b.message), std::string::npos) << e.what();
    }
    check(cudaStreamSynchronize(stream), "after the rejected call");
    const Outputs got = job.outputs();
    for (int i = 2; i < 5; ++i)
      for (double x : got[i]) ASSERT_TRUE(std::isnan(x)) << kOutputNames[i] << " was written by a rejected call";
  }
}

// CUDA graph capture: a cold workspace cannot grow during capture (a
// flash::Error, nothing captured); after one call outside the capture it is
// warm and the call captures. When the buffer later grows for a bigger call,
// the captured graph still reads the old buffer, which is kept: replaying it
// gives the same gradients.
// Chained forward calls in a CUDA graph: the second call's queries are the
// first call's output and the third's the second's, so each kernel reads
// what the one before it wrote (the Hopper forward starts by programmatic
// dependent launch and waits for the kernel before it; the causal calls'
// tile-counter memset sits between two of them). Three replays equal the
// calls made eagerly, bit for bit, and write every element.
TEST(ConcurrencyCapture, ChainedForwardCallsReplayBitwise) {
  SKIP_WITHOUT_GPU();
  const int head_dim = common_head_dim();
  if (head_dim == 0) GTEST_SKIP() << "no head dim that a built forward, backward and decode variant all run here";
  flash::testing::Shape s;
  s.batch = 2;
  s.seqlen_q = s.seqlen_k = 1000;
  s.heads_q = s.heads_kv = 8;
  s.head_dim = head_dim;
  auto p = flash::testing::make_problem(s, kDtype, true, flash::testing::Layout::bshd, test_seed(), {0});
  const flash::testing::ViewSpec spec{s.batch, s.seqlen_q, s.heads_q, s.head_dim};
  DeviceBuffer o2(spec.elements() * flash::dtype_size(kDtype)), o3(spec.elements() * flash::dtype_size(kDtype));
  flash::ForwardArgs a;
  a.q = p.vq, a.k = p.vk, a.v = p.vv, a.o = p.vo, a.lse = p.vlse;
  a.causal = true;
  flash::ForwardArgs b = a, c = a;
  b.q = a.o, b.o = spec.view(o2.get(), kDtype), b.lse.reset(), b.causal = false;
  c.q = b.o, c.o = spec.view(o3.get(), kDtype), c.lse.reset();
  const cudaStream_t stream = fresh_stream();
  a.stream = b.stream = c.stream = stream;
  const auto calls = [&] {
    for (const TensorView& t : {a.o, *a.lse, b.o, c.o})
      check(cudaMemsetAsync(t.data, 0xff, flash::testing::view_bytes(t), stream), "poisoning an output");
    flash::attention_forward(a);
    flash::attention_forward(b);
    flash::attention_forward(c);
  };
  const auto outputs = [&] {
    Outputs out;
    for (const TensorView& t : {a.o, *a.lse, b.o, c.o}) out.push_back(flash::testing::download(t));
    return out;
  };
  // "" when equal element by element (NaN, the poison, equals nothing).
  const auto difference = [](const Outputs& got, const Outputs& want) -> std::string {
    const char* const names[] = {"first o", "first lse", "second o", "third o"};
    for (std::size_t i = 0; i < want.size(); ++i)
      for (std::size_t j = 0; j < want[i].size(); ++j)
        if (!(got[i][j] == want[i][j])) return fmt::format("{}[{}] = {}, eager {}", names[i], j, got[i][j], want[i][j]);
    return {};
  };
  calls();  // eagerly (and warms the workspace)
  check(cudaStreamSynchronize(stream), "the eager calls");
  const Outputs want = outputs();
  ASSERT_EQ(difference(want, want), "") << "an eager call left an output unwritten";
  cudaGraph_t graph = nullptr;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  calls();
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");
  for (int replay = 0; replay < 3; ++replay) {
    check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
    check(cudaStreamSynchronize(stream), "the replay");
    EXPECT_EQ(difference(outputs(), want), "") << "replay " << replay;
  }
  check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check(cudaGraphDestroy(graph), "cudaGraphDestroy");
}

TEST(ConcurrencyCapture, WarmBeforeCaptureAndKeptAfterGrowth) {
  SKIP_WITHOUT_GPU();
  const int head_dim = common_head_dim();
  if (head_dim == 0) GTEST_SKIP() << "no head dim that a built forward, backward and decode variant all run here";
  Job job(0, head_dim, test_seed()), bigger(kThreads - 1, head_dim, test_seed() + 1);
  const cudaStream_t alone = fresh_stream();
  for (Job* j : {&job, &bigger}) j->run(alone);  // the forward's O and LSE for each backward
  check(cudaStreamSynchronize(alone), "the calls made alone");
  const Outputs want = job.outputs();

  const cudaStream_t stream = fresh_stream();
  flash::BackwardArgs a = job.bwd;
  a.stream = stream;
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  try {
    flash::attention_backward(a);
    ADD_FAILURE() << "a cold workspace grew during capture";
  } catch (const flash::Error& e) {
    EXPECT_NE(std::string(e.what()).find("being captured"), std::string::npos) << e.what();
  }
  cudaGraph_t graph = nullptr;
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  check(cudaGraphDestroy(graph), "cudaGraphDestroy");

  flash::attention_backward(a);  // warms the workspace of `stream`
  for (const TensorView& t : {a.dq, a.dk, a.dv})
    check(cudaMemsetAsync(t.data, 0xff, flash::testing::view_bytes(t), stream), "poisoning a gradient");
  check(cudaStreamSynchronize(stream), "the warming call");
  check(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal), "cudaStreamBeginCapture");
  flash::attention_backward(a);
  check(cudaStreamEndCapture(stream, &graph), "cudaStreamEndCapture");
  cudaGraphExec_t exec = nullptr;
  check(cudaGraphInstantiate(&exec, graph, 0), "cudaGraphInstantiate");

  flash::BackwardArgs big = bigger.bwd;
  big.stream = stream;
  ASSERT_GT(flash::plan_backward(big).workspace_bytes, flash::plan_backward(a).workspace_bytes);
  flash::attention_backward(big);  // grows the workspace of `stream`
  check(cudaGraphLaunch(exec, stream), "cudaGraphLaunch");
  check(cudaStreamSynchronize(stream), "the replay");
  EXPECT_EQ(first_difference(job.outputs(), want, 2, 5), "");
  check(cudaGraphExecDestroy(exec), "cudaGraphExecDestroy");
  check(cudaGraphDestroy(graph), "cudaGraphDestroy");
}

}  // namespace
