// bench's and runner's --varlen helpers (benchmarks/varlen_lengths.h): the
// lengths flag, the visible-pair count against the reference's mask rule
// (reference::visible, pair by pair), the FLOPs of FA4's varlen batch, and
// the even split of the dense comparison row.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flash/reference.h"
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

}  // namespace
