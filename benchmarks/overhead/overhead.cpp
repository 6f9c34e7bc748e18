// Host time of one flash forward call at a tiny shape, through the C++ API
// (flash::attention_forward) and through the C ABI (flash_attention_forward),
// measured the way benchmarks/overhead.py measures the Python package:
//
//   repeat --reps times:
//     enqueue one large forward call (the "busy" call, milliseconds of GPU work)
//     t0; enqueue --iters tiny calls; t1      (the GPU is still on the busy call,
//                                              so no call waits for the GPU)
//     wait for the stream
//   per call: (t1 - t0) / iters; print the median and the minimum over reps.
//
// So both sides time the same thing: what the host spends to validate and
// enqueue one call, with the kernel's own run time out of the picture. The
// tiny call writes no LSE and uses the library's workspace, as
// flash_attn_func(q, k, v) does; the output is allocated once here (the
// Python side allocates it per call: that is part of its overhead).
#include <cuda_runtime_api.h>
#include <flash/flash.h>
#include <flash/flash_c.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Options {
  int batch = 1, seq = 128, heads = 8, dhead = 64;  // the tiny call
  bool causal = false;
  int busy_seq = 16384, busy_heads = 16, busy_dhead = 128;
  int iters = 100, reps = 30;
};

void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(err));
    std::exit(1);
  }
}

struct Attention {
  flash::ForwardArgs args;
  std::vector<void*> buffers;
  Attention(int batch, int seq, int heads, int dhead) {
    for (int i = 0; i < 4; ++i) {
      void* p = nullptr;
      const std::size_t bytes = static_cast<std::size_t>(batch) * seq * heads * dhead * 2;
      check(cudaMalloc(&p, bytes), "cudaMalloc");
      check(cudaMemset(p, 0, bytes), "cudaMemset");
      buffers.push_back(p);
    }
    const auto view = [&](int i) {
      return flash::make_contiguous(buffers[i], flash::DType::bf16, {batch, seq, heads, dhead});
    };
    args.q = view(0), args.k = view(1), args.v = view(2), args.o = view(3);
  }
  ~Attention() {
    for (void* p : buffers) cudaFree(p);
  }
  flash_forward_args c_args() const {
    flash_forward_args a;
    flash_forward_args_init(&a);
    const auto to_c = [](const flash::TensorView& t) {
      flash_tensor c{};
      c.data = t.data, c.dtype = FLASH_BF16, c.rank = t.rank;
      for (int i = 0; i < t.rank; ++i) c.shape[i] = t.shape[i], c.strides[i] = t.stride[i];
      return c;
    };
    a.q = to_c(args.q), a.k = to_c(args.k), a.v = to_c(args.v), a.o = to_c(args.o);
    a.causal = args.causal;
    return a;
  }
};

// Median and minimum microseconds per call of `call`, by the method above.
std::pair<double, double> measure(const Options& opt, const std::function<void()>& busy,
                                  const std::function<void()>& call) {
  for (int i = 0; i < 10; ++i) call();  // warm: workspace, device info, lazy loading
  check(cudaDeviceSynchronize(), "warm-up");
  std::vector<double> per_call;
  int idle = 0;
  cudaEvent_t busy_done;
  check(cudaEventCreateWithFlags(&busy_done, cudaEventDisableTiming), "cudaEventCreate");
  for (int r = 0; r < opt.reps; ++r) {
    busy();
    check(cudaEventRecord(busy_done, nullptr), "cudaEventRecord");
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < opt.iters; ++i) call();
    const auto t1 = std::chrono::steady_clock::now();
    idle += cudaEventQuery(busy_done) == cudaSuccess;  // the busy call ended before the loop did
    check(cudaDeviceSynchronize(), "synchronize");
    per_call.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / opt.iters);
  }
  cudaEventDestroy(busy_done);
  if (idle > 0) std::fprintf(stderr, "warning: in %d of %d reps the busy call ended before the timed loop\n", idle, opt.reps);
  std::sort(per_call.begin(), per_call.end());
  return {per_call[per_call.size() / 2], per_call.front()};
}

int int_arg(int& i, int argc, char** argv) {
  if (i + 1 >= argc) {
    std::fprintf(stderr, "%s needs a value\n", argv[i]);
    std::exit(2);
  }
  return std::atoi(argv[++i]);
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--batch") opt.batch = int_arg(i, argc, argv);
    else if (a == "--seq") opt.seq = int_arg(i, argc, argv);
    else if (a == "--heads") opt.heads = int_arg(i, argc, argv);
    else if (a == "--dhead") opt.dhead = int_arg(i, argc, argv);
    else if (a == "--causal") opt.causal = true;
    else if (a == "--busy-seq") opt.busy_seq = int_arg(i, argc, argv);
    else if (a == "--iters") opt.iters = int_arg(i, argc, argv);
    else if (a == "--reps") opt.reps = int_arg(i, argc, argv);
    else {
      std::printf("usage: overhead [--batch B --seq S --heads H --dhead D] [--causal] [--busy-seq S] [--iters N] [--reps R]\n");
      return a == "--help" ? 0 : 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device\n");
    return 0;
  }
  Attention tiny(opt.batch, opt.seq, opt.heads, opt.dhead);
  tiny.args.causal = opt.causal;
  Attention big(1, opt.busy_seq, opt.busy_heads, opt.busy_dhead);
  const flash::ForwardPlan plan = flash::plan_forward(tiny.args);
  std::printf("tiny call: bf16 batch %d seq %d heads %d head_dim %d%s, kernel %s; busy call: seq %d heads %d head_dim %d\n",
              opt.batch, opt.seq, opt.heads, opt.dhead, opt.causal ? " causal" : "", plan.kernel.c_str(), opt.busy_seq, opt.busy_heads,
              opt.busy_dhead);

  const auto busy = [&] { flash::attention_forward(big.args); };
  const auto [cpp_median, cpp_min] = measure(opt, busy, [&] { flash::attention_forward(tiny.args); });
  const flash_forward_args c_args = tiny.c_args();
  const auto [c_median, c_min] = measure(opt, busy, [&] {
    if (flash_attention_forward(&c_args) != FLASH_OK) {
      std::fprintf(stderr, "%s\n", flash_last_error());
      std::exit(1);
    }
  });
  std::printf("cpp_api_us median %.3f min %.3f\n", cpp_median, cpp_min);
  std::printf("c_abi_us median %.3f min %.3f\n", c_median, c_min);
  return 0;
}
