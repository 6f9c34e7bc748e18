#include "testing/tools.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace flash::testing {

namespace {

std::vector<DType> parse_dtypes(const std::string& s) {
  if (s == "all") return {DType::bf16, DType::f16, DType::f32};
  if (s == "bf16") return {DType::bf16};
  if (s == "f16") return {DType::f16};
  if (s == "f32") return {DType::f32};
  throw UsageError("--dtype must be bf16, f16, f32 or all, got '" + s + "'");
}

}  // namespace

bool parse_problem_flag(int argc, char** argv, int& i, ProblemFlags& f) {
  const std::string a = argv[i];
  auto value = [&]() -> std::string {
    if (i + 1 >= argc) throw UsageError(a + " needs a value");
    return argv[++i];
  };
  auto number = [&]() {
    const std::string v = value();
    char* end = nullptr;
    const long n = std::strtol(v.c_str(), &end, 10);
    if (end == v.c_str() || *end != '\0' || n < 0 || n > INT_MAX)
      throw UsageError(a + " expects a non-negative integer, got '" + v + "'");
    return static_cast<int>(n);
  };
  if (a == "--kernel") f.kernel = value();
  else if (a == "--dtype") f.dtypes = parse_dtypes(value());
  else if (a == "--batch") f.batch = number();
  else if (a == "--heads") f.heads = number();
  else if (a == "--heads-kv") f.heads_kv = number();
  else if (a == "--seq") f.seq = number();
  else if (a == "--seq-k") f.seq_k = number();
  else if (a == "--dhead") f.dhead = number();
  else if (a == "--causal") f.causal = true;
  else if (a == "--window") {
    const std::string v = value();
    const std::size_t comma = v.find(',');
    char* end1 = nullptr;
    char* end2 = nullptr;
    const long l = std::strtol(v.c_str(), &end1, 10);
    const long r = comma == std::string::npos ? 0 : std::strtol(v.c_str() + comma + 1, &end2, 10);
    if (comma == std::string::npos || end1 != v.c_str() + comma || end2 == nullptr || *end2 != '\0' ||
        end2 == v.c_str() + comma + 1 || l < -1 || r < -1 || l > INT_MAX || r > INT_MAX)
      throw UsageError("--window expects L,R (each -1 for unbounded or >= 0), got '" + v + "'");
    f.window_left = static_cast<int>(l);
    f.window_right = static_cast<int>(r);
  }
  else if (a == "--softcap") {
    const std::string v = value();
    char* end = nullptr;
    const float c = std::strtof(v.c_str(), &end);
    if (end == v.c_str() || *end != '\0' || !std::isfinite(c) || c < 0.0f)
      throw UsageError("--softcap expects a finite value >= 0 (0: off), got '" + v + "'");
    f.softcap = c;
  }
  else if (a == "--sinks") f.sinks = true;
  else if (a == "--alibi") f.alibi = true;
  else if (a == "--bwd") f.bwd = true;
  else if (a == "--decode") f.decode = true;
  else if (a == "--cache") f.cache = number();
  else if (a == "--page-size") f.page_size = number();
  else if (a == "--seqlen-q") f.seqlen_q = number();
  else if (a == "--append") f.append = number();
  else if (a == "--splits") f.splits = number();
  else return false;
  return true;
}

void check_problem_flags(const ProblemFlags& f) {
  if (f.bwd && f.decode) throw UsageError("--bwd and --decode are separate runs; give one of them");
  const std::pair<const char*, bool> decode_only[] = {{"--cache", f.cache.has_value()},
                                                       {"--page-size", f.page_size.has_value()},
                                                       {"--seqlen-q", f.seqlen_q.has_value()},
                                                       {"--append", f.append.has_value()},
                                                       {"--splits", f.splits.has_value()}};
  for (const auto& [flag, given] : decode_only)
    if (given && !f.decode) throw UsageError(std::string(flag) + " applies to --decode only");
  if (f.decode && (f.seq || f.seq_k))
    throw UsageError("--decode takes --cache (keys per sequence) and --seqlen-q (new tokens), not --seq/--seq-k");
}

std::string problem_flags_help() {
  return "  --kernel NAME     a variant name (runner --list), auto (the API's default: each case prints\n"
         "                    the variant it picked) or all (every built variant; the default)\n"
         "  --dtype T         bf16 (default), f16, f32, or all (runner only: each in turn)\n"
         "  --batch N         sequences per call\n"
         "  --heads N         query heads\n"
         "  --heads-kv N      key/value heads (fewer than --heads: GQA/MQA)\n"
         "  --seq N           query tokens per sequence (and keys, unless --seq-k)\n"
         "  --seq-k N         keys per sequence\n"
         "  --dhead N         head dim\n"
         "  --causal          causal mask, bottom-right aligned\n"
         "  --window L,R      sliding window: L keys left and R right of the diagonal (-1: unbounded;\n"
         "                    with --causal R must be 0 or -1)\n"
         "  --softcap C       cap the scores: C * tanh(score / C) (0: off)\n"
         "  --sinks           a random sink logit per query head (gpt-oss's attention sinks)\n"
         "  --alibi           random ALiBi slopes, one per query head\n"
         "  --bwd             the backward: every backward variant, each also in deterministic mode\n"
         "  --decode          decode with a KV cache: every decode variant, contiguous and paged caches\n"
         "  with --decode:\n"
         "  --cache N         keys already in each sequence's cache\n"
         "  --page-size N     0: a contiguous cache; else pages of N keys (a power of two, 16 to 256)\n"
         "  --seqlen-q N      new query tokens per sequence\n"
         "  --append N        new keys and values written into the cache before the attention\n"
         "  --splits N        splits of each sequence's keys (0: the library's heuristic)\n";
}

namespace {

// Keys that query row i sees, of seqlen_k, under the mask (the rule of
// reference::visible, counted per row).
double visible_keys(int i, int seqlen_q, int seqlen_k, bool causal, int left, int right) {
  const std::int64_t d = static_cast<std::int64_t>(i) + seqlen_k - seqlen_q;
  if (causal) right = 0;
  const std::int64_t lo = left >= 0 ? std::max<std::int64_t>(0, d - left) : 0;
  const std::int64_t hi = right >= 0 ? std::min<std::int64_t>(seqlen_k - 1, d + right) : seqlen_k - 1;
  return hi >= lo ? static_cast<double>(hi - lo + 1) : 0.0;
}

}  // namespace

double forward_flops(const Shape& s, bool causal) {
  const double per_pair = 4.0 * s.batch * s.heads_q * s.head_dim;
  const bool window = s.window_left >= 0 || (!causal && s.window_right >= 0);
  if (!window) return per_pair * double(s.seqlen_q) * s.seqlen_k * (causal ? 0.5 : 1.0);
  double pairs = 0;  // a window: the work that is visible
  for (int i = 0; i < s.seqlen_q; ++i)
    pairs += visible_keys(i, s.seqlen_q, s.seqlen_k, causal, s.window_left, s.window_right);
  return per_pair * pairs;
}

double backward_flops(const Shape& s, bool causal) { return 2.5 * forward_flops(s, causal); }

std::string score_note(const Shape& s) {
  std::string note;
  if (s.softcap > 0.0f) {
    char cap[32];
    std::snprintf(cap, sizeof(cap), " cap%g", static_cast<double>(s.softcap));
    note += cap;
  }
  if (s.sinks) note += " sinks";
  if (s.alibi == Alibi::per_head) note += " alibi";
  if (s.alibi == Alibi::per_batch) note += " alibi_per_batch";
  return note;
}

double decode_flops(const DecodeSpec& s) {
  double keys = 0;  // summed over the sequences and their query rows
  for (int b = 0; b < s.batch; ++b) {
    const int held = s.lens[b] + s.seqlen_new;
    for (int i = 0; i < s.seqlen_q; ++i)
      keys += visible_keys(i, s.seqlen_q, held, s.causal, s.window_left, s.window_right);
  }
  return 4.0 * s.heads_q * s.head_dim * keys;
}

double decode_kv_bytes(const DecodeSpec& s) {
  double keys = 0;
  for (int b = 0; b < s.batch; ++b) keys += s.lens[b] + s.seqlen_new;
  return 2.0 * keys * s.heads_kv * s.head_dim * double(dtype_size(s.dtype));
}

GpuTimer::GpuTimer() {
  check(cudaEventCreate(&start_), "cudaEventCreate");
  const cudaError_t err = cudaEventCreate(&stop_);
  if (err != cudaSuccess) {
    cudaEventDestroy(start_);
    check(err, "cudaEventCreate");
  }
}

GpuTimer::~GpuTimer() {
  cudaEventDestroy(start_);
  cudaEventDestroy(stop_);
}

void GpuTimer::record_start() { check(cudaEventRecord(start_, nullptr), "cudaEventRecord"); }

double GpuTimer::record_stop() {
  check(cudaEventRecord(stop_, nullptr), "cudaEventRecord");
  check(cudaEventSynchronize(stop_), "timed call");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, start_, stop_), "cudaEventElapsedTime");
  return ms;
}

L2Flush::L2Flush(std::size_t input_bytes, std::size_t always_bytes) {
  int device = 0, l2 = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  check(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device), "L2 size");
  if (always_bytes > 0) buffer_ = DeviceBuffer(std::max(always_bytes, 2 * std::size_t(l2)));
  else if (input_bytes < 4 * std::size_t(l2)) buffer_ = DeviceBuffer(2 * std::size_t(l2));
}

void L2Flush::operator()() {
  // A new byte each round, so no two overwrites are alike.
  if (buffer_.get()) check(cudaMemsetAsync(buffer_.get(), round_++ & 0xff, buffer_.bytes()), "L2 flush");
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

int device_compute_capability() {
  int device = 0, major = 0, minor = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess)
    return 0;
  return major * 10 + minor;
}

std::vector<long long> parse_decimal_list(const std::string& text, const UsageError& bad) {
  std::vector<long long> values;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = text.find(',', begin);
    const std::string item = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (item.empty() || item.size() > 10 || item.find_first_not_of("0123456789") != std::string::npos) throw bad;
    values.push_back(std::strtoll(item.c_str(), nullptr, 10));
    if (comma == std::string::npos) return values;
    begin = comma + 1;
  }
}

}  // namespace flash::testing
