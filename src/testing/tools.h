// What runner and bench share, so that one shape gives one set of numbers in
// both: the flags that name a problem, the FLOP and byte counts, and the
// timer (CUDA events, an L2 flush between calls, the median).
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "flash/tensor.h"
#include "testing/testing.h"

struct CUevent_st;

namespace flash::testing {

// --- Flags ------------------------------------------------------------------

// The flags that name a problem, read alike by runner and bench. A flag left
// unset keeps the tool's default (each tool's --help says which).
struct ProblemFlags {
  std::string kernel = "all";  // --kernel: a variant name, "auto" or "all"
  std::vector<DType> dtypes;   // --dtype; empty when not given
  std::optional<int> batch, heads, heads_kv, seq, seq_k, dhead;
  bool causal = false;
  int window_left = -1, window_right = -1;  // --window L,R
  // Score modifiers: --softcap C (0: off), --sinks (random, one per query
  // head), --alibi (random slopes, one per query head).
  float softcap = 0.0f;
  bool sinks = false, alibi = false;
  bool bwd = false;     // --bwd: the backward
  bool decode = false;  // --decode: decode with a KV cache
  // Decode only.
  std::optional<int> cache, page_size, seqlen_q, append, splits;
};

// A malformed or inconsistent flag; what() names it.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// "16,256": a flag's comma list of non-negative decimal integers, each
// 1 to 10 digits, at least one; throws `bad` otherwise. The caller checks
// each value's range.
std::vector<long long> parse_decimal_list(const std::string& text, const UsageError& bad);

// When argv[i] is one of ProblemFlags' flags, reads it (and its value,
// advancing i) into `flags` and returns true; returns false for any other
// argument. Throws UsageError on a missing or malformed value.
bool parse_problem_flag(int argc, char** argv, int& i, ProblemFlags& flags);

// Throws UsageError when the flags contradict each other (--bwd with
// --decode, a decode flag without --decode, --seq with --decode).
void check_problem_flags(const ProblemFlags& flags);

// The --help lines of ProblemFlags' flags, one per flag.
std::string problem_flags_help();

// --- Work counts ------------------------------------------------------------

// A forward call: 4 * B * Hq * Sq * Sk * D (S = Q K^T and O = P V, each
// 2 * Sq * Sk * D per head), halved when causal (FlashAttention's count);
// with a sliding window, 4 * B * Hq * D * the (query, key) pairs visible.
// The score modifiers (softcap, ALiBi, sinks) add no FLOPs to the count.
double forward_flops(const Shape& s, bool causal);

// A backward call: 2.5x the forward (five matmuls to the forward's two).
double backward_flops(const Shape& s, bool causal);

// A decode call: 4 * Hq * D * the keys each query row sees, summed over the
// sequences; sequence b holds lens[b] + seqlen_new keys and row i sees the
// ones its mask (causal, window) leaves visible.
double decode_flops(const DecodeSpec& s);

// Bytes of K and V a decode call reads: each key a sequence holds, once per
// KV head (GQA reads each K/V head once for its group).
double decode_kv_bytes(const DecodeSpec& s);

// " cap<C> sinks alibi" (those the shape uses): the score modifiers of a
// case in runner's result notes.
std::string score_note(const Shape& s);

// --- Timing -----------------------------------------------------------------

// CUDA events around the work one call enqueues on the default stream (the
// stream every call of runner and bench uses).
class GpuTimer {
 public:
  GpuTimer();
  ~GpuTimer();
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  // Milliseconds the GPU spent on what `call` enqueued (waits for it).
  template <class Call> double time_ms(Call&& call) {
    record_start();
    call();
    return record_stop();
  }

 private:
  void record_start();
  double record_stop();
  CUevent_st* start_ = nullptr;
  CUevent_st* stop_ = nullptr;
};

// Overwrites a buffer twice the L2's size before a timed call, so that the
// call reads its inputs from memory rather than from an L2 the previous call
// left warm. Only inputs under 4x the L2's size can be partly cached; for
// larger ones it allocates nothing and does nothing.
class L2Flush {
 public:
  // always_bytes > 0: overwrite that many bytes (at least twice the L2)
  // before every call, whatever the inputs' size, as triton's do_bench
  // clears 256 MB before each call it times (FA4's and cuDNN's figures);
  // that also leaves the GPU the clear's time between calls.
  explicit L2Flush(std::size_t input_bytes, std::size_t always_bytes = 0);
  void operator()();  // enqueues the overwrite on the default stream

 private:
  DeviceBuffer buffer_;
  unsigned round_ = 0;
};

// Untimed calls before the first timed one (lazy module loading, the
// library's workspace, clocks).
inline constexpr int kWarmupCalls = 3;

double median(std::vector<double> values);

// The timing of runner and bench: kWarmupCalls calls, then `reps` calls,
// each after a flush and timed alone; the median, in ms. (bench runs the
// same steps inside Google Benchmark's loop, which chooses the count.)
template <class Call> double median_ms(int reps, L2Flush& flush, Call&& call) {
  for (int i = 0; i < kWarmupCalls; ++i) call();
  GpuTimer timer;
  std::vector<double> ms;
  for (int i = 0; i < reps; ++i) {
    flush();
    ms.push_back(timer.time_ms(call));
  }
  return median(std::move(ms));
}

// This GPU's compute capability as major * 10 + minor (0 without one).
int device_compute_capability();

}  // namespace flash::testing
