// bench's and runner's --varlen and --paged helpers
// (benchmarks/varlen_lengths.h, benchmarks/paged_table.h): the lengths flag,
// the visible-pair count against the reference's mask rule
// (reference::visible, pair by pair), the FLOPs of FA4's varlen batch
// (forward and backward), the even split of the dense comparison row; the
// page sizes flag and the shuffled page table.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "flash/reference.h"
#include "paged_table.h"
#include "varlen_lengths.h"

namespace {

using flash::testing::UsageError;

TEST(BenchVarlen, DefaultLengthsAreFa4s) {
  const std::vector<int> lengths = flash::testing::default_varlen_lengths();
  EXPECT_EQ(lengths, (std::vector<int>{1374, 3778, 2225, 3022, 3204, 498, 2283}));
  std::int64_t total = 0;
  for (int len : lengths) total += len;
  EXPECT_EQ(total, 16384);
}

TEST(BenchVarlen, ParsesCommaLists) {
  EXPECT_EQ(flash::testing::parse_varlen_lengths("1374,3778"), (std::vector<int>{1374, 3778}));
  EXPECT_EQ(flash::testing::parse_varlen_lengths("7"), (std::vector<int>{7}));
  EXPECT_EQ(flash::testing::parse_varlen_lengths("0,5,0"), (std::vector<int>{0, 5, 0}));
  EXPECT_EQ(flash::testing::parse_varlen_lengths("2147483647"), (std::vector<int>{2147483647}));
  for (const char* bad : {"", ",", "1,", ",1", "1,,2", "-1", "+1", " 1", "1.5", "a", "0", "0,0", "2147483648",
                          "2147483647,1", "99999999999"})
    EXPECT_THROW(flash::testing::parse_varlen_lengths(bad), UsageError) << "'" << bad << "'";
}

// --varlen takes the next argument as its list only when it starts with a digit.
TEST(BenchVarlen, FlagValueIsOptional) {
  auto parse = [](std::vector<std::string> args, int at, std::optional<std::vector<int>>& lengths) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int i = at;
    const bool taken = flash::testing::parse_varlen_flag(static_cast<int>(argv.size()), argv.data(), i, lengths);
    return std::pair{taken, i};
  };
  std::optional<std::vector<int>> lengths;
  EXPECT_EQ(parse({"bench", "--varlen", "--causal"}, 1, lengths), (std::pair{true, 1}));
  EXPECT_EQ(lengths, flash::testing::default_varlen_lengths());
  lengths.reset();
  EXPECT_EQ(parse({"bench", "--causal", "--varlen"}, 2, lengths), (std::pair{true, 2}));
  EXPECT_EQ(lengths, flash::testing::default_varlen_lengths());
  EXPECT_EQ(parse({"bench", "--varlen", "10,20", "--causal"}, 1, lengths), (std::pair{true, 2}));
  EXPECT_EQ(lengths, (std::vector<int>{10, 20}));
  lengths.reset();
  EXPECT_EQ(parse({"bench", "--seq", "10"}, 1, lengths), (std::pair{false, 1}));
  EXPECT_FALSE(lengths.has_value());
  EXPECT_THROW(parse({"bench", "--varlen", "10,x"}, 1, lengths), UsageError);
}

// The count against reference::visible pair by pair: seqlen_q below, equal
// to and above seqlen_k, empty sides, causal and windows on either side.
TEST(BenchVarlen, VisiblePairsFollowTheReferenceRule) {
  const int lens[] = {0, 1, 2, 3, 5, 8, 17, 33};
  const int lefts[] = {-1, 0, 1, 3, 20}, rights[] = {-1, 0, 2, 20};
  for (int sq : lens)
    for (int sk : lens)
      for (bool causal : {false, true})
        for (int left : lefts)
          for (int right : rights) {
            if (causal && right > 0) continue;  // the API refuses causal with window_right > 0
            flash::reference::Problem rp;
            rp.seqlen_q = sq, rp.seqlen_k = sk, rp.causal = causal, rp.window_left = left, rp.window_right = right;
            std::int64_t want = 0;
            for (int i = 0; i < sq; ++i)
              for (int j = 0; j < sk; ++j) want += flash::reference::visible(rp, i, j);
            EXPECT_EQ(flash::testing::visible_pairs(sq, sk, causal, left, right), want)
                << "sq " << sq << " sk " << sk << " causal " << causal << " window (" << left << ", " << right << ")";
          }
}

TEST(BenchVarlen, CausalCountsTheTriangleExactly) {
  for (int len : flash::testing::default_varlen_lengths()) {
    const std::int64_t l = len;
    EXPECT_EQ(flash::testing::visible_pairs(len, len, true, -1, -1), l * (l + 1) / 2) << len;
    EXPECT_EQ(flash::testing::visible_pairs(len, len, false, -1, -1), l * l) << len;
  }
}

// FA4's batch at heads 16, head dim 128: sum L (L + 1) / 2 = 22993181 visible
// pairs causal, sum L^2 = 45969978 full; 4 * 16 * 128 FLOPs each.
TEST(BenchVarlen, Fa4BatchFlops) {
  const auto lengths = flash::testing::default_varlen_lengths();
  EXPECT_EQ(flash::testing::varlen_forward_flops(lengths, 16, 128, true, -1, -1), 4.0 * 16 * 128 * 22993181);
  EXPECT_EQ(flash::testing::varlen_forward_flops(lengths, 16, 128, false, -1, -1), 4.0 * 16 * 128 * 45969978);
}

// The backward's count is 2.5x the forward's, and for lengths whose exact
// count equals FlashAttention's (no causal triangle) it is backward_flops'
// of the dense call, so the varlen and dense --bwd rows compare.
TEST(BenchVarlen, BackwardCountsTwoAndAHalfForwards) {
  const auto lengths = flash::testing::default_varlen_lengths();
  for (bool causal : {false, true})
    EXPECT_EQ(flash::testing::varlen_backward_flops(lengths, 16, 128, causal, -1, -1),
              2.5 * flash::testing::varlen_forward_flops(lengths, 16, 128, causal, -1, -1));
  flash::testing::Shape s;
  s.batch = 3, s.seqlen_q = s.seqlen_k = 500, s.heads_q = 8, s.heads_kv = 2, s.head_dim = 64;
  const std::vector<int> same(3, 500);
  EXPECT_EQ(flash::testing::varlen_backward_flops(same, 8, 64, false, -1, -1), flash::testing::backward_flops(s, false));
  s.window_left = 100, s.window_right = 7;
  EXPECT_EQ(flash::testing::varlen_backward_flops(same, 8, 64, false, 100, 7), flash::testing::backward_flops(s, false));
}

TEST(BenchVarlen, EvenSplitRoundsTheMeanLength) {
  auto split = [](const std::vector<int>& lengths) {
    const auto s = flash::testing::even_split(lengths);
    return std::pair{s.batch, s.seqlen};
  };
  EXPECT_EQ(split(flash::testing::default_varlen_lengths()), (std::pair{7, 2341}));  // 16384 / 7 = 2340.57
  EXPECT_EQ(split({1, 2}), (std::pair{2, 2}));                                       // 1.5: half away from zero
  EXPECT_EQ(split({10, 0, 0, 0}), (std::pair{4, 3}));                                // 2.5
  EXPECT_EQ(split({0, 1, 0}), (std::pair{3, 1}));                                    // at least one token
}

TEST(BenchPaged, ParsesPageSizes) {
  EXPECT_EQ(flash::testing::parse_page_sizes("16"), (std::vector<int>{16}));
  EXPECT_EQ(flash::testing::parse_page_sizes("16,256"), (std::vector<int>{16, 256}));
  EXPECT_EQ(flash::testing::parse_page_sizes("256,16,64"), (std::vector<int>{256, 16, 64}));
  EXPECT_EQ(flash::testing::parse_page_sizes("1073741824"), (std::vector<int>{1 << 30}));
  for (const char* bad : {"", ",", "16,", ",16", "16,,64", "0", "1", "8", "24", "48", "-16", "+16", " 16", "16.0",
                          "0x10", "16,16", "2147483648", "4294967312", "99999999999"})
    EXPECT_THROW(flash::testing::parse_page_sizes(bad), UsageError) << "'" << bad << "'";
}

// --paged always takes the next argument as its value.
TEST(BenchPaged, FlagNeedsItsValue) {
  auto parse = [](std::vector<std::string> args, int at, std::optional<std::vector<int>>& sizes) {
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    int i = at;
    const bool taken = flash::testing::parse_paged_flag(static_cast<int>(argv.size()), argv.data(), i, sizes);
    return std::pair{taken, i};
  };
  std::optional<std::vector<int>> sizes;
  EXPECT_EQ(parse({"bench", "--paged", "16,256", "--causal"}, 1, sizes), (std::pair{true, 2}));
  EXPECT_EQ(sizes, (std::vector<int>{16, 256}));
  sizes.reset();
  EXPECT_EQ(parse({"bench", "--seq", "16"}, 1, sizes), (std::pair{false, 1}));
  EXPECT_FALSE(sizes.has_value());
  EXPECT_THROW(parse({"bench", "--paged"}, 1, sizes), UsageError);
  EXPECT_THROW(parse({"bench", "--paged", "--causal"}, 1, sizes), UsageError);
}

TEST(BenchPaged, PagesForRoundsUp) {
  EXPECT_EQ(flash::testing::pages_for(0, 16), 0);
  EXPECT_EQ(flash::testing::pages_for(1, 16), 1);
  EXPECT_EQ(flash::testing::pages_for(16, 16), 1);
  EXPECT_EQ(flash::testing::pages_for(17, 16), 2);
  EXPECT_EQ(flash::testing::pages_for(4096, 256), 16);
}

// Every key of every sequence has its own (page, row) of the pool, each
// page of the pool is used once, the entries past a sequence's keys are -1,
// and the order is a shuffle (fixed by the seed).
TEST(BenchPaged, TableGivesEveryKeyItsOwnRow) {
  const std::vector<std::vector<int>> cases = {{4096, 4096, 4096, 4096}, {1000, 0, 17, 16, 1}, {5}, {300, 4095}};
  for (int page_size : {16, 64, 256})
    for (const std::vector<int>& keys : cases) {
      const flash::testing::PageTable t = flash::testing::shuffled_page_table(keys, page_size, 17);
      std::int64_t needed = 0, most = 0;
      for (int n : keys) needed += flash::testing::pages_for(n, page_size);
      for (int n : keys) most = std::max(most, flash::testing::pages_for(n, page_size));
      EXPECT_EQ(t.page_size, page_size);
      EXPECT_EQ(t.num_pages, needed);
      EXPECT_EQ(t.max_pages, most);
      ASSERT_EQ(t.entries.size(), keys.size() * static_cast<std::size_t>(t.max_pages));
      std::set<int> used;
      for (std::size_t b = 0; b < keys.size(); ++b)
        for (int i = 0; i < t.max_pages; ++i) {
          const int entry = t.entries[b * t.max_pages + i];
          if (i < flash::testing::pages_for(keys[b], page_size)) {
            EXPECT_GE(entry, 0);
            EXPECT_LT(entry, t.num_pages);
            EXPECT_TRUE(used.insert(entry).second) << "page " << entry << " handed out twice";
          } else {
            EXPECT_EQ(entry, -1) << "sequence " << b << " entry " << i << " is past its keys";
          }
        }
      EXPECT_EQ(static_cast<std::int64_t>(used.size()), t.num_pages);
    }
  // 1024 pages in sequence order would be 0, 1, 2, ...: the shuffle moves them,
  // the same way for the same seed and another way for another.
  const std::vector<int> keys(4, 4096);
  const flash::testing::PageTable a = flash::testing::shuffled_page_table(keys, 16, 17);
  std::vector<int> in_order(a.entries.size());
  for (std::size_t i = 0; i < in_order.size(); ++i) in_order[i] = static_cast<int>(i);
  EXPECT_NE(a.entries, in_order);
  EXPECT_EQ(flash::testing::shuffled_page_table(keys, 16, 17).entries, a.entries);
  EXPECT_NE(flash::testing::shuffled_page_table(keys, 16, 18).entries, a.entries);
  // Unshuffled (bench --page-order sequential): the pool in sequence order.
  EXPECT_EQ(flash::testing::shuffled_page_table(keys, 16, 17, false).entries, in_order);
}

// No keys at all: one spare page and a table of one unreached entry per
// sequence, so that k, v and the table are never empty.
TEST(BenchPaged, TableWithoutKeysKeepsOnePage) {
  const flash::testing::PageTable t = flash::testing::shuffled_page_table({0, 0}, 16, 17);
  EXPECT_EQ(t.num_pages, 1);
  EXPECT_EQ(t.max_pages, 1);
  EXPECT_EQ(t.entries, (std::vector<int>{-1, -1}));
}

}  // namespace
