// The decode variant's split heuristic (kernels/dec_01_splitkv.cu,
// choose_splits) on an H200's numbers, no GPU needed: whole-tile calls
// (contiguous caches, pages of >= 64 keys) take one wave of one CTA an SM
// where a split count makes one (session 54: fewer CTAs read the cache
// faster), and so do pages of 16 / 32 keys at hdim 128 (session 55: their
// page-table entries staged ahead); hdim 64's keep filling two CTAs an SM.
#include <gtest/gtest.h>

#include <cstdint>

#include "common/decode_params.h"
#include "common/head_dims.h"
#include "common/variant.h"

namespace flash::detail {
const DecodeVariant* variant_splitkv();
}

namespace {

using flash::detail::DecodeParams;
using flash::detail::DeviceInfo;

DeviceInfo h200() {
  DeviceInfo d;
  d.compute_capability = 90;
  d.sm_count = 132;
  d.smem_per_block_optin = 232448;
  d.smem_per_sm = 233472;
  d.l2_bytes = 60 << 20;
  return d;
}

// heads 32 / 8, one new token: one 16-row tile of the four query heads a KV head.
DecodeParams decode(int batch, int cache, int head_dim, int page_size) {
  DecodeParams p;
  p.batch = batch;
  p.seqlen_q = 1;
  p.seqlen_k = cache;
  p.heads_q = 32;
  p.heads_kv = 8;
  p.group_size = 4;
  p.head_dim = head_dim;
  static const int table[1] = {0};
  if (page_size > 0) {
    p.page_table = table;  // (never read: the heuristic looks at the page size only)
    p.page_size = page_size;
    for (p.page_shift = 0; (1 << p.page_shift) < page_size; ++p.page_shift) {
    }
  }
  return p;
}

int splits(const DecodeParams& p) { return flash::detail::variant_splitkv()->choose_splits(p, h200()); }

// (A build without the variant, FLASH_VARIANTS, links a stub that returns null;
// a test whose head dims a FLASH_HEAD_DIMS subset leaves out skips.)
#define SKIP_UNLESS_BUILT(d) \
  if (!flash::detail::head_dim_built(d)) GTEST_SKIP() << "head dim " << (d) << " is not built (FLASH_HEAD_DIMS)"
class DecodeSplits : public ::testing::Test {
 protected:
  void SetUp() override {
    if (flash::detail::variant_splitkv() == nullptr) GTEST_SKIP() << "splitkv is not built (FLASH_VARIANTS)";
  }
};

TEST_F(DecodeSplits, WholeTileCallsTakeOneWaveOfOneCtaAnSm) {
  SKIP_UNLESS_BUILT(128);
  SKIP_UNLESS_BUILT(64);
  for (int page : {0, 64, 256}) {
    SCOPED_TRACE(page);
    EXPECT_EQ(splits(decode(16, 8192, 128, page)), 1);   // 128 CTAs: one wave already
    EXPECT_EQ(splits(decode(1, 131072, 128, page)), 15);  // 8 CTAs x 15 = 120 >= 90% of 132
    EXPECT_EQ(splits(decode(8, 16384, 128, page)), 2);   // 64 x 2 = 128
    EXPECT_EQ(splits(decode(16, 8192, 64, page)), 1);
    EXPECT_EQ(splits(decode(64, 4096, 128, page)), 1);   // more CTAs than slots: no split
  }
}

TEST_F(DecodeSplits, SmallPagesAtHdim128TakeOneWave) {
  SKIP_UNLESS_BUILT(128);
  for (int page : {16, 32}) {
    SCOPED_TRACE(page);
    EXPECT_EQ(splits(decode(16, 8192, 128, page)), 1);  // 128 CTAs
    EXPECT_EQ(splits(decode(1, 131072, 128, page)), 15);
  }
}

TEST_F(DecodeSplits, SmallPagesAtHdim64FillTwoCtasAnSm) {
  SKIP_UNLESS_BUILT(64);
  for (int page : {16, 32}) {
    SCOPED_TRACE(page);
    EXPECT_EQ(splits(decode(16, 8192, 64, page)), 2);  // 256 CTAs of 264 slots
    EXPECT_EQ(splits(decode(1, 131072, 64, page)), 32);
  }
}

TEST_F(DecodeSplits, OneWaveWheneverOneExists) {
  // Every batch from 1 to 16 at hdims 64 / 128 / 256, contiguous: where a
  // split count puts 90-100% of the SMs to work with one CTA each, the choice
  // is such a count; otherwise the slots rule, which never leaves a split
  // under four tiles.
  for (int head_dim : {64, 128, 256}) {
    if (!flash::detail::head_dim_built(head_dim)) continue;
    for (int batch = 1; batch <= 16; ++batch) {
      const DecodeParams p = decode(batch, 32768, head_dim, 0);
      const std::int64_t ctas = std::int64_t(batch) * p.heads_kv;
      bool one_wave = false;
      for (std::int64_t s = 1; s <= 128 && ctas * s <= 132; ++s) one_wave |= ctas * s * 10 >= 132 * 9;
      const int s = splits(p);
      SCOPED_TRACE(testing::Message() << "hdim " << head_dim << " batch " << batch << " splits " << s);
      EXPECT_GE(s, 1);
      EXPECT_LE(s, 32768 / 64 / 4);
      if (one_wave) {
        EXPECT_LE(ctas * s, 132);
        EXPECT_GE(ctas * s * 10, 132 * 9);
      }
    }
  }
}

}  // namespace
