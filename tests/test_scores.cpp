// The score component (kernels/common/scores.h, host-compilable) on the
// CPU: ScoreMod::apply and apply_transposed on accumulator fragments against
// ScoreMod::score, one element at a time, and apply_grad /
// apply_grad_transposed against the softcap's derivative that score gives,
// with each P made from its score and a made-up LSE so that the tanh they
// recover is known. Softcap on and off, ALiBi on and off, diagonals of both
// signs, every lane.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "common/params.h"
#include "common/scores.h"

namespace {

using flash::detail::AttnProblem;
using flash::detail::ScoreMod;

constexpr int kMT = 2, kNT = 4;  // fragment tiles: 32 rows x 32 columns
using Frag = float[kMT][kNT][4];

// The lane's element e of n-tile nt in m-tile mt: fragment row and column
// offsets from the fragment's first row and column (mma.sync's and wgmma's
// accumulator layout).
int frag_row(int lane, int mt, int e) { return 16 * mt + lane / 4 + 8 * (e / 2); }
int frag_col(int lane, int nt, int e) { return 8 * nt + 2 * (lane % 4) + e % 2; }

struct Case {
  float softcap;
  bool alibi;
  int diag;
  std::string name() const {
    return "softcap " + std::to_string(softcap) + " alibi " + std::to_string(alibi) + " diag " + std::to_string(diag);
  }
};
constexpr Case kCases[] = {{0.0f, true, 0},   {15.0f, false, 0}, {15.0f, true, 45},
                           {50.0f, true, -37}, {30.0f, true, 0},  {0.0f, false, 7}};

// A call with the case's modifiers: scale 1/8, slopes per (b, h) in
// natural-log units, as the API takes them; small enough that exp2 of a
// score neither overflows nor underflows in the gradient test (distances
// stay below 300).
struct Call {
  AttnProblem p;
  float slopes[2 * 3] = {0.05f, 0.025f, 0.0125f, 0.00625f, 0.04f, 0.003125f};
  explicit Call(const Case& c) {
    p.scale = 0.125f;
    p.scores.softcap = c.softcap;
    if (c.alibi) {
      p.scores.alibi = slopes;
      p.scores.alibi_batch_stride = 3;
      p.scores.alibi_head_stride = 1;
    }
    p.derive_scores();
  }
};

void fill_random(Frag& s, std::mt19937& rng) {
  std::uniform_real_distribution<float> raw(-400.0f, 400.0f);  // scale q.k up to 50: saturates cap 15, bends cap 50
  for (auto& mt : s)
    for (auto& nt : mt)
      for (float& x : nt) x = raw(rng);
}

// apply (rows = queries) and apply_transposed (rows = keys) give each element
// score(raw, query, key).
TEST(ScoreMod, FragmentsMatchTheElementRule) {
  std::mt19937 rng(1234);
  for (const Case& c : kCases) {
    const Call call(c);
    const ScoreMod mod(call.p, 1, 2, c.diag);
    for (int trial = 0; trial < 8; ++trial) {
      const int row0 = static_cast<int>(rng() % 200), col0 = static_cast<int>(rng() % 200);
      for (int lane = 0; lane < 32; ++lane) {
        Frag raw, s, st;
        fill_random(raw, rng);
        std::memcpy(s, raw, sizeof(raw));
        std::memcpy(st, raw, sizeof(raw));
        mod.apply(s, row0, col0, lane);             // rows are queries row0.., columns keys col0..
        mod.apply_transposed(st, row0, col0, lane);  // rows are keys row0.., columns queries col0..
        for (int mt = 0; mt < kMT; ++mt)
          for (int nt = 0; nt < kNT; ++nt)
            for (int e = 0; e < 4; ++e) {
              const int r = row0 + frag_row(lane, mt, e), col = col0 + frag_col(lane, nt, e);
              const float x = raw[mt][nt][e];
              ASSERT_FLOAT_EQ(s[mt][nt][e], mod.score(x, r, col)) << c.name() << " query " << r << " key " << col;
              ASSERT_FLOAT_EQ(st[mt][nt][e], mod.score(x, col, r)) << c.name() << " key " << r << " query " << col;
            }
      }
    }
  }
}

// apply_grad and apply_grad_transposed multiply dS by the derivative
// 1 - tanh^2 of the element's raw score, recovered from P = exp2(u
// exp2_scale - lse2) (u = score(), ALiBi included) and the query's lse2:
// per fragment row, or per column when transposed. Without a softcap they
// leave dS alone; P = 0 (masked: -inf scores) gives 0.
TEST(ScoreMod, GradientsRecoverTheSoftcapDerivative) {
  std::mt19937 rng(5678);
  std::uniform_real_distribution<float> lse_dist(-30.0f, 30.0f);
  for (const Case& c : kCases) {
    const Call call(c);
    const ScoreMod mod(call.p, 0, 1, c.diag);
    const float e2 = mod.exp2_scale();
    for (int trial = 0; trial < 8; ++trial) {
      const int row0 = static_cast<int>(rng() % 200), col0 = static_cast<int>(rng() % 200);
      // lse2 per query: indexed by fragment row (apply_grad) or column (transposed).
      float lse2_row[kMT][2], lse2_col[kNT][2];
      for (auto& a : lse2_row)
        for (float& x : a) x = lse_dist(rng);
      for (auto& a : lse2_col)
        for (float& x : a) x = lse_dist(rng);
      for (int lane = 0; lane < 32; ++lane) {
        Frag raw, p, pt, ds, dst;
        fill_random(raw, rng);
        float dcap[kMT][kNT][4], dcap_t[kMT][kNT][4];
        for (int mt = 0; mt < kMT; ++mt)
          for (int nt = 0; nt < kNT; ++nt)
            for (int e = 0; e < 4; ++e) {
              const int r = row0 + frag_row(lane, mt, e), col = col0 + frag_col(lane, nt, e);
              const float u = mod.score(raw[mt][nt][e], r, col, &dcap[mt][nt][e]);
              const float ut = mod.score(raw[mt][nt][e], col, r, &dcap_t[mt][nt][e]);
              // Every fourth element masked (P = 0).
              const bool masked = (mt + nt + e + lane) % 4 == 0;
              p[mt][nt][e] = masked ? 0.0f : std::exp2(u * e2 - lse2_row[mt][e / 2]);
              pt[mt][nt][e] = masked ? 0.0f : std::exp2(ut * e2 - lse2_col[nt][e % 2]);
              if (masked) dcap[mt][nt][e] = dcap_t[mt][nt][e] = 0.0f;
              ds[mt][nt][e] = dst[mt][nt][e] = 1.0f;
            }
        if (!mod.capped())
          for (auto* d : {&dcap, &dcap_t})
            for (auto& mt : *d)
              for (auto& nt : mt)
                for (float& x : nt) x = 1.0f;
        mod.apply_grad(ds, p, row0, col0, lane, [&](int mt, int half) { return lse2_row[mt][half]; });
        mod.apply_grad_transposed(dst, pt, row0, col0, lane, [&](int nt, int e) { return lse2_col[nt][e]; });
        for (int mt = 0; mt < kMT; ++mt)
          for (int nt = 0; nt < kNT; ++nt)
            for (int e = 0; e < 4; ++e) {
              const int r = row0 + frag_row(lane, mt, e), col = col0 + frag_col(lane, nt, e);
              // The recovered tanh carries log2's rounding times lse2 / exp2_scale.
              ASSERT_NEAR(ds[mt][nt][e], dcap[mt][nt][e], 2e-4f) << c.name() << " query " << r << " key " << col;
              ASSERT_NEAR(dst[mt][nt][e], dcap_t[mt][nt][e], 2e-4f) << c.name() << " key " << r << " query " << col;
            }
      }
    }
  }
}

// A negative control: with a softcap the derivative is not 1 everywhere
// (the checks above would pass vacuously on a no-op).
TEST(ScoreMod, SoftcapDerivativeBites) {
  const Call call(Case{15.0f, false, 0});
  const ScoreMod mod(call.p);
  float dcap = 1.0f;
  mod.score(200.0f, 0, 0, &dcap);  // tanh(25 / 15)
  EXPECT_LT(dcap, 0.9f);
}

}  // namespace
