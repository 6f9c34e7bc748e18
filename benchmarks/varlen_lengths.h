// The --varlen flag of bench and runner: a variable-length forward (or,
// bench --bwd, backward) over a list of sequence lengths (seqlen_q =
// seqlen_k per sequence), and the work such a call does, counted as the
// visible (query, key) pairs. Host code only; tests/test_bench_varlen.cpp
// checks it on the CPU.
#pragma once

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "testing/tools.h"

namespace flash::testing {

// The lengths of `--varlen` without a list: 16384 tokens in 7 sequences,
// the batch FlashAttention-4's fa4_bench.py times with `--parts varlen`.
inline std::vector<int> default_varlen_lengths() { return {1374, 3778, 2225, 3022, 3204, 498, 2283}; }

// "1374,3778,2225": at least one length, each a non-negative decimal
// integer (0: an empty sequence), their sum from 1 to INT_MAX (cu_seqlens
// are int32). Throws UsageError naming the flag otherwise.
inline std::vector<int> parse_varlen_lengths(const std::string& text) {
  const UsageError bad("--varlen expects a comma list of sequence lengths (each >= 0, their sum 1 to " +
                       std::to_string(INT_MAX) + "), got '" + text + "'");
  std::vector<int> lengths;
  std::int64_t total = 0;
  for (const long long n : parse_decimal_list(text, bad)) {
    total += n;
    if (n > INT_MAX || total > INT_MAX) throw bad;
    lengths.push_back(static_cast<int>(n));
  }
  if (total == 0) throw bad;
  return lengths;
}

// When argv[i] is --varlen, reads it into `lengths` and returns true: the
// next argument is its list when it starts with a digit (advancing i),
// else the default lengths. Returns false for any other argument.
inline bool parse_varlen_flag(int argc, char** argv, int& i, std::optional<std::vector<int>>& lengths) {
  if (std::string(argv[i]) != "--varlen") return false;
  const bool has_list = i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9';
  lengths = has_list ? parse_varlen_lengths(argv[++i]) : default_varlen_lengths();
  return true;
}

// The (query, key) pairs one sequence's mask leaves visible, counted exactly,
// row by row: query i sees keys max(0, d - left) to min(seqlen_k - 1, d +
// right), d = i + seqlen_k - seqlen_q (bottom-right aligned; causal is right
// = 0; -1 leaves a side unbounded), the rule of reference::visible.
inline std::int64_t visible_pairs(int seqlen_q, int seqlen_k, bool causal, int window_left, int window_right) {
  const int right = causal ? 0 : window_right;
  std::int64_t pairs = 0;
  for (int i = 0; i < seqlen_q; ++i) {
    const std::int64_t d = static_cast<std::int64_t>(i) + seqlen_k - seqlen_q;
    const std::int64_t lo = window_left >= 0 ? std::max<std::int64_t>(0, d - window_left) : 0;
    const std::int64_t hi = right >= 0 ? std::min<std::int64_t>(seqlen_k - 1, d + right) : seqlen_k - 1;
    if (hi >= lo) pairs += hi - lo + 1;
  }
  return pairs;
}

// A variable-length forward's FLOPs: 4 * Hq * D per visible pair (S = Q K^T
// and O = P V), summed over the sequences, each of seqlen_q = seqlen_k =
// its length. Exact for any mask: causal counts L (L + 1) / 2 pairs, not
// FlashAttention's L^2 / 2.
inline double varlen_forward_flops(const std::vector<int>& lengths, int heads_q, int head_dim, bool causal,
                                   int window_left, int window_right) {
  std::int64_t pairs = 0;
  for (int len : lengths) pairs += visible_pairs(len, len, causal, window_left, window_right);
  return 4.0 * heads_q * head_dim * static_cast<double>(pairs);
}

// A variable-length backward's FLOPs: 2.5x the forward's, the rule of
// testing::backward_flops (five matmuls to the forward's two), over the
// same exact count of visible pairs.
inline double varlen_backward_flops(const std::vector<int>& lengths, int heads_q, int head_dim, bool causal,
                                    int window_left, int window_right) {
  return 2.5 * varlen_forward_flops(lengths, heads_q, head_dim, causal, window_left, window_right);
}

// The dense batch of as many sequences with the same tokens split evenly:
// batch = the sequences (at least one), seq = round(total / batch) (at least 1).
struct EvenSplit {
  int batch = 0, seqlen = 0;
};

inline EvenSplit even_split(const std::vector<int>& lengths) {
  std::int64_t total = 0;
  for (int len : lengths) total += len;
  const int batch = static_cast<int>(lengths.size());
  const auto seqlen = static_cast<int>(std::llround(static_cast<double>(total) / batch));
  return {batch, std::max(1, seqlen)};
}

}  // namespace flash::testing
