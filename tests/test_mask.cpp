// The mask component (kernels/common/mask.h) against its own element rule
// and the fp64 reference's: every tile range a kernel iterates holds every
// visible key and starts and ends on a tile that has one; every tile it
// calls fully visible is. Shapes are random (seeded), with ragged lengths,
// seqlen_q != seqlen_k both ways, and windows on either side.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <utility>
#include <string>
#include <vector>

#include "common/mask.h"
#include "flash/reference.h"

namespace {

using flash::detail::Mask;
using flash::detail::MaskSpec;

// The window rule written out independently of Mask.
bool window_rule(const MaskSpec& s, int sq, int sk, int i, int j) {
  if (j < 0 || j >= sk) return false;
  const long long diag = static_cast<long long>(sk) - sq;
  const int right = s.causal ? 0 : s.window_right;
  if (right >= 0 && j > i + diag + right) return false;
  if (s.window_left >= 0 && j < i + diag - s.window_left) return false;
  return true;
}

template <int kBlockM, int kBlockN> void check_tiles(const MaskSpec& spec, int sq, int sk) {
  const Mask mask(spec, sq, sk);
  const std::string where = "sq " + std::to_string(sq) + " sk " + std::to_string(sk) + " causal " +
                            std::to_string(spec.causal) + " window (" + std::to_string(spec.window_left) + ", " +
                            std::to_string(spec.window_right) + ")";
  for (int i = 0; i < sq; ++i)
    for (int j = 0; j < sk; ++j) ASSERT_EQ(mask.visible(i, j), window_rule(spec, sq, sk, i, j)) << where << " i " << i << " j " << j;

  // Query blocks: the key-tile range and the fully visible tiles.
  for (int m0 = 0; m0 < sq; m0 += kBlockM) {
    const auto keys = mask.row_block(m0, kBlockM);
    const auto tiles = keys.key_tiles<kBlockN>();
    const int rows_end = std::min(m0 + kBlockM, sq);
    auto tile_has_visible = [&](int n) {
      for (int i = m0; i < rows_end; ++i)
        for (int j = n * kBlockN; j < std::min((n + 1) * kBlockN, sk); ++j)
          if (mask.visible(i, j)) return true;
      return false;
    };
    const int num_n = (sk + kBlockN - 1) / kBlockN;
    for (int n = 0; n < num_n; ++n) {
      const bool inside = n >= tiles.begin && n < tiles.end;
      if (!inside) EXPECT_FALSE(tile_has_visible(n)) << where << " m0 " << m0 << ": tile " << n << " skipped";
      if (inside && !keys.needs_mask(n * kBlockN, kBlockN)) {
        for (int i = m0; i < rows_end; ++i)
          for (int j = n * kBlockN; j < (n + 1) * kBlockN; ++j)
            ASSERT_TRUE(j < sk && mask.visible(i, j)) << where << " m0 " << m0 << ": tile " << n << " unmasked";
      }
    }
    if (tiles.count() > 0) {
      EXPECT_TRUE(tile_has_visible(tiles.begin)) << where << " m0 " << m0 << ": range not tight at the start";
      EXPECT_TRUE(tile_has_visible(tiles.end - 1)) << where << " m0 " << m0 << ": range not tight at the end";
    }
  }

  // Key blocks (the backward): the query-tile range.
  for (int n0 = 0; n0 < sk; n0 += kBlockN) {
    const auto q_tiles = mask.query_tiles<kBlockM>(n0, kBlockN);
    auto tile_sees = [&](int m) {
      for (int i = m * kBlockM; i < std::min((m + 1) * kBlockM, sq); ++i)
        for (int j = n0; j < std::min(n0 + kBlockN, sk); ++j)
          if (mask.visible(i, j)) return true;
      return false;
    };
    const int num_m = (sq + kBlockM - 1) / kBlockM;
    for (int m = 0; m < num_m; ++m)
      if (m < q_tiles.begin || m >= q_tiles.end) EXPECT_FALSE(tile_sees(m)) << where << " n0 " << n0 << ": query tile " << m << " skipped";
    if (q_tiles.count() > 0) {
      EXPECT_TRUE(tile_sees(q_tiles.begin)) << where << " n0 " << n0;
      EXPECT_TRUE(tile_sees(q_tiles.end - 1)) << where << " n0 " << n0;
    }
    // The run of mask-free tiles (the backward's choice of step body, once per
    // key block) is exactly the tiles of the walk that the per-tile question
    // calls mask-free.
    const auto free_run = mask.mask_free_tiles<kBlockM>(q_tiles, n0, kBlockN);
    for (int m = q_tiles.begin; m < q_tiles.end; ++m)
      ASSERT_EQ(m >= free_run.begin && m < free_run.end, !mask.row_block(m * kBlockM, kBlockM).needs_mask(n0, kBlockN))
          << where << " n0 " << n0 << ": query tile " << m << " of run [" << free_run.begin << ", " << free_run.end << ")";
  }
}

// The kernels' Mask and the reference's rule agree for causal calls and
// every kind of window (the reference states the rule on its own).
// The width the kernels pick tiles and schedules by: only windows bounded
// on both sides (causal closing the right) have one.
TEST(Mask, WindowSpanCountsBothSides) {
  EXPECT_EQ((MaskSpec{true, 127, -1}.window_span()), 128);
  EXPECT_EQ((MaskSpec{true, 127, 0}.window_span()), 128);
  EXPECT_EQ((MaskSpec{false, 64, 32}.window_span()), 97);
  EXPECT_EQ((MaskSpec{false, 0, 0}.window_span()), 1);
  EXPECT_EQ((MaskSpec{false, 127, -1}.window_span()), -1);  // right unbounded
  EXPECT_EQ((MaskSpec{false, -1, 1}.window_span()), -1);    // left unbounded
  EXPECT_EQ((MaskSpec{true, -1, -1}.window_span()), -1);    // causal, no window
  EXPECT_EQ((MaskSpec{false, 2147483647, 2147483647}.window_span()), 4294967295LL);
}

TEST(Mask, MatchesTheReference) {
  const struct { bool causal; int left, right; } specs[] = {
      {true, -1, -1}, {false, -1, -1}, {true, 0, -1}, {true, 5, -1}, {false, 7, -1},
      {false, -1, 3}, {false, 0, 0},   {false, 9, 2}, {true, 300, -1}, {false, -1, 300}};
  for (const auto& sp : specs)
    for (int sq : {1, 17, 128, 203})
      for (int sk : {1, 64, 113, 257}) {
        flash::reference::Problem rp;
        rp.seqlen_q = sq, rp.seqlen_k = sk, rp.causal = sp.causal;
        rp.window_left = sp.left, rp.window_right = sp.right;
        const Mask mask(MaskSpec{sp.causal, sp.left, sp.right}, sq, sk);
        for (int i = 0; i < sq; ++i)
          for (int j = 0; j < sk; ++j)
            ASSERT_EQ(mask.visible(i, j), flash::reference::visible(rp, i, j))
                << "causal " << sp.causal << " window (" << sp.left << ", " << sp.right << ") sq " << sq << " sk "
                << sk << " i " << i << " j " << j;
      }
}

TEST(Mask, TileRangesHoldExactlyTheVisibleKeys) {
  std::mt19937 rng(20261123);
  std::uniform_int_distribution<int> len(1, 300), side(-1, 140), coin(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const int sq = len(rng), sk = len(rng);
    MaskSpec spec;
    spec.causal = trial % 4 == 0;
    if (trial % 4 >= 2) spec.window_left = side(rng);
    if (trial % 4 == 3 && !spec.causal) spec.window_right = side(rng);
    if (trial % 2 == 1 && coin(rng)) spec.window_right = side(rng);
    if (spec.causal) spec.window_right = -1;
    check_tiles<64, 64>(spec, sq, sk);
    check_tiles<128, 80>(spec, sq, sk);
    check_tiles<80, 128>(spec, sq, sk);  // bwd_03's 80-row steps over 128-key blocks
    check_tiles<16, 32>(spec, sq, sk);
  }
}

// bwd_03's deterministic mode orders the dQ additions to a query tile by key
// block and counts the ones above a block from the query tile's key-tile
// range (kernels/bwd_03_wgmma.cu, Bwd03DqOrder): the key blocks whose
// query-tile range (the tiles a CTA walks) holds tile m must be exactly the
// key tiles of tile m's rows, or a CTA would wait for an addition that never
// comes (or skip one). Every tile, 128-key blocks and the rung's query
// tiles: 64 or 80 rows (hdim 128) and 128 (hdim 64).
template <int kBlockM> void expect_key_blocks_of_query_tiles_are_key_tiles() {
  constexpr int kBlockN = 128;
  std::mt19937 rng(20261125);
  std::uniform_int_distribution<int> len(1, 900), side(-1, 400), coin(0, 1);
  std::vector<std::pair<MaskSpec, std::pair<int, int>>> cases;
  for (const MaskSpec spec : {MaskSpec{true, -1, -1}, MaskSpec{false, -1, -1}, MaskSpec{false, 0, 0},
                              MaskSpec{false, 100, 30}, MaskSpec{true, 100, -1}, MaskSpec{false, -1, 0}})
    for (auto lengths : {std::pair{1000, 1000}, std::pair{129, 1000}, std::pair{1000, 129}, std::pair{65, 257},
                         std::pair{1, 17}, std::pair{17, 1}, std::pair{640, 1024}, std::pair{1024, 640}})
      cases.push_back({spec, lengths});
  for (int trial = 0; trial < 400; ++trial) {
    MaskSpec spec;
    spec.causal = trial % 4 == 0;
    if (trial % 4 >= 2) spec.window_left = side(rng);
    if (trial % 4 != 0 && coin(rng)) spec.window_right = side(rng);
    cases.push_back({spec, {len(rng), len(rng)}});
  }
  for (const auto& [spec, lengths] : cases) {
    const auto [sq, sk] = lengths;
    const Mask mask(spec, sq, sk);
    const int num_m = (sq + kBlockM - 1) / kBlockM, num_n = (sk + kBlockN - 1) / kBlockN;
    for (int m = 0; m < num_m; ++m) {
      const auto keys = mask.key_tiles<kBlockN>(m * kBlockM, kBlockM);
      for (int n = 0; n < num_n; ++n) {
        const auto walk = mask.query_tiles<kBlockM>(n * kBlockN, kBlockN);
        const bool visits = m >= walk.begin && m < walk.end;
        const bool counted = n >= keys.begin && n < keys.end;
        ASSERT_EQ(visits, counted) << "kBlockM " << kBlockM << " sq " << sq << " sk " << sk << " causal "
                                   << spec.causal << " window (" << spec.window_left << ", " << spec.window_right
                                   << ") query tile " << m << " key block " << n;
      }
    }
  }
}

TEST(Mask, KeyBlocksOfAQueryTileAreItsKeyTiles) {
  expect_key_blocks_of_query_tiles_are_key_tiles<64>();
  expect_key_blocks_of_query_tiles_are_key_tiles<80>();  // bwd_03's 80-row steps
  expect_key_blocks_of_query_tiles_are_key_tiles<128>();
}

// walked_rows (bwd_03's choice of step height) against a count of whole
// tiles from the element rule: every tile of kBlockM rows that holds a
// visible (row, key) pair of the key block, kBlockM rows each.
template <int kBlockM> long long walked_rows_by_rule(const MaskSpec& spec, int sq, int sk) {
  long long rows = 0;
  for (int n0 = 0; n0 < sk; n0 += 128)
    for (int m0 = 0; m0 < sq; m0 += kBlockM) {
      bool any = false;
      for (int i = m0; i < std::min(m0 + kBlockM, sq) && !any; ++i)
        for (int j = n0; j < std::min(n0 + 128, sk) && !any; ++j) any = window_rule(spec, sq, sk, i, j);
      rows += any ? kBlockM : 0;
    }
  return rows;
}

TEST(Mask, WalkedRowsCountTheTilesThatSeeEachKeyBlock) {
  std::mt19937 rng(28);
  const MaskSpec specs[] = {{false, -1, -1}, {true, -1, -1}, {false, 128, 0}, {false, 100, 3},
                            {false, 0, 0},   {false, 7, 300}, {true, 50, -1}, {false, -1, 20}};
  for (int trial = 0; trial < 24; ++trial) {
    const int sq = 1 + static_cast<int>(rng() % 700), sk = 1 + static_cast<int>(rng() % 700);
    for (const MaskSpec& spec : specs) {
      const Mask m(spec, sq, sk);
      EXPECT_EQ((m.walked_rows<64, 128>()), walked_rows_by_rule<64>(spec, sq, sk)) << sq << " x " << sk;
      EXPECT_EQ((m.walked_rows<80, 128>()), walked_rows_by_rule<80>(spec, sq, sk)) << sq << " x " << sk;
    }
  }
  // The case the choice is for: a (128, 0) window walks a quarter more rows at 80.
  const Mask narrow(MaskSpec{false, 128, 0}, 16384, 16384);
  EXPECT_EQ((narrow.walked_rows<64, 128>()), 128LL * 4 * 64 - 2 * 64);
  EXPECT_GT((narrow.walked_rows<80, 128>()) * 19, (narrow.walked_rows<64, 128>()) * 20);
}

// The per-element rule on an m16n8 accumulator fragment, every lane: element
// (mt, nt, e) holds row row0 + 16 mt + lane / 4 + 8 (e / 2), key n0 + 8 nt +
// 2 (lane % 4) + e % 2.
TEST(Mask, FragmentApplyMatchesTheRule) {
  for (const MaskSpec spec : {MaskSpec{true, -1, -1}, MaskSpec{false, -1, -1}, MaskSpec{false, 5, 9}, MaskSpec{true, 20, -1}})
    for (auto [sq, sk] : {std::pair{37, 90}, std::pair{90, 37}, std::pair{64, 64}})
      for (int row0 = 0; row0 < sq; row0 += 16)
        for (int n0 = 0; n0 < sk; n0 += 32)
          for (int lane = 0; lane < 32; ++lane) {
            const Mask mask(spec, sq, sk);
            float s[2][4][4] = {};
            mask.apply(s, row0, n0, lane);
            for (int mt = 0; mt < 2; ++mt)
              for (int nt = 0; nt < 4; ++nt)
                for (int e = 0; e < 4; ++e) {
                  const int row = row0 + 16 * mt + lane / 4 + 8 * (e / 2), key = n0 + 8 * nt + 2 * (lane % 4) + e % 2;
                  ASSERT_EQ(s[mt][nt][e] == 0.0f, window_rule(spec, sq, sk, row, key))
                      << "row " << row << " key " << key << " sq " << sq << " sk " << sk;
                }
          }
}

// The transposed fragment (the backward's S^T = K Q^T): element (mt, nt, e)
// holds key key0 + 16 mt + lane / 4 + 8 (e / 2), query m0 + 8 nt + 2 (lane %
// 4) + e % 2; queries past seqlen_q and keys past seqlen_k are hidden.
TEST(Mask, TransposedFragmentApplyMatchesTheRule) {
  for (const MaskSpec spec : {MaskSpec{true, -1, -1}, MaskSpec{false, -1, -1}, MaskSpec{false, 5, 9},
                              MaskSpec{true, 20, -1}, MaskSpec{false, -1, 3}})
    for (auto [sq, sk] : {std::pair{37, 90}, std::pair{90, 37}, std::pair{64, 64}})
      for (int key0 = 0; key0 < sk + 16; key0 += 16)
        for (int m0 = 0; m0 < sq; m0 += 32)
          for (int lane = 0; lane < 32; ++lane) {
            const Mask mask(spec, sq, sk);
            float s[2][4][4] = {};
            mask.apply_transposed(s, key0, m0, lane);
            for (int mt = 0; mt < 2; ++mt)
              for (int nt = 0; nt < 4; ++nt)
                for (int e = 0; e < 4; ++e) {
                  const int key = key0 + 16 * mt + lane / 4 + 8 * (e / 2), row = m0 + 8 * nt + 2 * (lane % 4) + e % 2;
                  ASSERT_EQ(s[mt][nt][e] == 0.0f, row < sq && window_rule(spec, sq, sk, row, key))
                      << "row " << row << " key " << key << " sq " << sq << " sk " << sk;
                }
          }
}

// A negative control: a window that the rule says hides keys must make some
// tile need a mask (otherwise the checks above could pass vacuously).
TEST(Mask, WindowsHideKeys) {
  const Mask mask(MaskSpec{false, 3, 2}, 100, 100);
  EXPECT_FALSE(mask.visible(50, 46));
  EXPECT_TRUE(mask.visible(50, 47));
  EXPECT_TRUE(mask.visible(50, 52));
  EXPECT_FALSE(mask.visible(50, 53));
  EXPECT_TRUE(mask.row_block(0, 64).needs_mask(0, 64));
  const auto tiles = mask.key_tiles<16>(64, 16);  // rows 64..79 see keys 61..81
  EXPECT_EQ(tiles.begin, 3);
  EXPECT_EQ(tiles.end, 6);
}

}  // namespace
