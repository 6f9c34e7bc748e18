// The --paged flag of bench and runner: the forward's paged prefill
// (ForwardArgs::page_table) over page sizes given on the command line, each
// sequence's keys in pages drawn from a shuffled pool, as a serving
// engine's allocator leaves them after a while. Host code only;
// tests/test_bench_varlen.cpp checks it on the CPU.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "testing/tools.h"

namespace flash::testing {

// The page sizes the forward takes (ForwardArgs::page_table): powers of two
// from 16 to 2^30.
inline constexpr int kMinPageSize = 16;
inline constexpr int kMaxPageSize = 1 << 30;

// "16" or "16,256": each a power of two from kMinPageSize to kMaxPageSize,
// written in decimal, none twice. Throws UsageError naming the flag otherwise.
inline std::vector<int> parse_page_sizes(const std::string& text) {
  const UsageError bad("--paged expects page sizes, a comma list of distinct powers of two from " +
                       std::to_string(kMinPageSize) + " to " + std::to_string(kMaxPageSize) + ", got '" + text + "'");
  std::vector<int> sizes;
  for (const long long n : parse_decimal_list(text, bad)) {
    if (n < kMinPageSize || n > kMaxPageSize || (n & (n - 1)) != 0) throw bad;
    if (std::find(sizes.begin(), sizes.end(), n) != sizes.end()) throw bad;
    sizes.push_back(static_cast<int>(n));
  }
  return sizes;
}

// When argv[i] is --paged, reads its value (the next argument, required)
// into `sizes`, advancing i, and returns true. Returns false for any other
// argument.
inline bool parse_paged_flag(int argc, char** argv, int& i, std::optional<std::vector<int>>& sizes) {
  if (std::string(argv[i]) != "--paged") return false;
  if (i + 1 >= argc) throw UsageError("--paged needs a value: page sizes, e.g. --paged 16 or --paged 16,256");
  sizes = parse_page_sizes(argv[++i]);
  return true;
}

// Pages that hold `keys` keys.
inline std::int64_t pages_for(std::int64_t keys, int page_size) { return (keys + page_size - 1) / page_size; }

// A page table [batch, max_pages] over a pool of num_pages pages of
// page_size keys: key j of sequence b lives in page entries[b * max_pages +
// j / page_size], row j % page_size.
struct PageTable {
  int page_size = 0, max_pages = 0, num_pages = 0;
  std::vector<int> entries;
};

// Sequence b's keys[b] keys in pages_for(keys[b]) pages of a pool that
// holds exactly the pages used (one spare when no sequence has a key, so
// that k and v are never empty), handed out in sequence order from a random
// permutation of the pool drawn from `seed` (`shuffle` false: the pool in
// order, so each sequence's pages lie as a contiguous cache's rows would:
// bench --page-order sequential). max_pages is the most pages a sequence
// needs (at least 1); the entries no key reaches are -1 (the forward reads
// only the entries a sequence's keys reach).
inline PageTable shuffled_page_table(const std::vector<int>& keys, int page_size, std::uint64_t seed,
                                     bool shuffle = true) {
  PageTable t;
  t.page_size = page_size;
  t.max_pages = 1;
  std::int64_t used = 0;
  for (int n : keys) {
    t.max_pages = std::max<int>(t.max_pages, static_cast<int>(pages_for(n, page_size)));
    used += pages_for(n, page_size);
  }
  t.num_pages = static_cast<int>(std::max<std::int64_t>(used, 1));
  std::vector<int> pool(static_cast<std::size_t>(t.num_pages));
  for (int p = 0; p < t.num_pages; ++p) pool[p] = p;
  std::mt19937_64 rng(seed);
  if (shuffle) std::shuffle(pool.begin(), pool.end(), rng);
  t.entries.assign(keys.size() * static_cast<std::size_t>(t.max_pages), -1);
  std::size_t next = 0;
  for (std::size_t b = 0; b < keys.size(); ++b)
    for (std::int64_t i = 0; i < pages_for(keys[b], page_size); ++i)
      t.entries[b * t.max_pages + static_cast<std::size_t>(i)] = pool[next++];
  return t;
}

}  // namespace flash::testing
