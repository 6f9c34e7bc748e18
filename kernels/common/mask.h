// The one answer to "which keys does this query row see", for every kernel:
// the tile ranges a kernel iterates, which tiles need per-element masking,
// and the per-element rule on an accumulator fragment. Kernels never restate
// the rule; a new mask is an edit here (and in the fp64 reference, which
// states it independently: src/reference.cpp).
//
// The rule, with diag = seqlen_k - seqlen_q (the bottom-right alignment of
// FlashAttention >= 2.1): query row i sees key j iff
//   0 <= j < seqlen_k,
//   j <= i + diag + right   (when the window has a right side; causal: right = 0),
//   j >= i + diag - left    (when it has a left side).
// A side of -1 is unbounded. Host-compilable (the tile ranges are tested on
// the CPU against the rule, tests/test_mask.cpp).
#pragma once

#include <cmath>

#include "common/constants.h"

namespace flash::detail {

// What the caller asked for; part of the params core (common/params.h).
struct MaskSpec {
  bool causal = false;
  // Sliding window sides in keys; -1: unbounded. causal means right = 0.
  int window_left = -1;
  int window_right = -1;
  // Keys a row sees at most when the window is bounded on both sides:
  // left + right + 1 (right = 0 when causal); -1 when a side is unbounded.
  // Kernels pick their tiles and schedule by it.
  FLASH_HOST_DEVICE long long window_span() const {
    const int right = causal ? 0 : window_right;
    return window_left < 0 || right < 0 ? -1 : static_cast<long long>(window_left) + right + 1;
  }
};

// A half-open range of tiles [begin, end); empty when end <= begin.
struct TileRange {
  int begin = 0, end = 0;
  FLASH_HOST_DEVICE int count() const { return end > begin ? end - begin : 0; }
};

// True when keys [n0, n0 + cols) hold one outside [all_begin, all_end), the
// keys that every row of a block sees: the tile needs the per-element mask.
FLASH_HOST_DEVICE bool tile_needs_mask(int n0, int cols, int all_begin, int all_end) {
  return n0 < all_begin || n0 + cols > all_end;
}

// The keys a block of query rows sees, in keys: any of them (for the tile
// range to load) and all of them (tiles inside need no per-element mask).
struct RowBlockKeys {
  int any_begin, any_end;    // union over the rows
  int all_begin, all_end;    // intersection over the rows

  template <int kBlockN> FLASH_HOST_DEVICE TileRange key_tiles() const {
    if (any_end <= any_begin) return {any_begin / kBlockN, any_begin / kBlockN};
    return {any_begin / kBlockN, (any_end + kBlockN - 1) / kBlockN};
  }
  // True when keys [n0, n0 + cols) hold a key that some row must not see.
  FLASH_HOST_DEVICE bool needs_mask(int n0, int cols) const { return tile_needs_mask(n0, cols, all_begin, all_end); }
};

struct Mask {
  int seqlen_q = 0, seqlen_k = 0;
  int diag = 0;                  // seqlen_k - seqlen_q
  bool has_left = false, has_right = false;
  int left = 0, right = 0;
  // key_begin(i) = clamp(i + begin_off), key_end(i) = clamp(i + end_off)
  // to [0, seqlen_k], and query_begin / query_end the same by key: a side
  // that does not bind gets an offset that clamps to the start or the end
  // for every row (key) a kernel asks about, up to kMaxPad past the last one
  // (its tile's padding), so a range is two adds and two clamps, without a
  // branch on the sides.
  int begin_off = 0, end_off = 0;    // by query row
  int qbegin_off = 0, qend_off = 0;  // by key
  static constexpr int kMaxPad = 1024;

  Mask() = default;
  // seqlen_q and seqlen_k of one sequence (decode and variable-length calls
  // build one per sequence). A side wide enough to never bind is dropped, so
  // the arithmetic below stays within int (seqlen_q + seqlen_k < 2^31).
  FLASH_HOST_DEVICE Mask(const MaskSpec& spec, int seqlen_q_, int seqlen_k_)
      : seqlen_q(seqlen_q_), seqlen_k(seqlen_k_), diag(seqlen_k_ - seqlen_q_) {
    const int r = spec.causal ? 0 : spec.window_right;
    has_right = r >= 0 && r < seqlen_q;   // i + diag + r >= seqlen_k - 1 for every row i >= 0 otherwise
    has_left = spec.window_left >= 0 && spec.window_left < seqlen_k;
    right = has_right ? r : 0;
    left = has_left ? spec.window_left : 0;
    begin_off = has_left ? diag - left : -padded(seqlen_q_);
    end_off = has_right ? diag + right + 1 : seqlen_k_;
    qbegin_off = has_right ? -diag - right : -padded(seqlen_k_);
    qend_off = has_left ? left + 1 - diag : seqlen_q_;
  }

  // Keys [key_begin(i), key_end(i)) are the ones row i sees.
  FLASH_HOST_DEVICE int key_begin(int row) const { return clamp_k(row + begin_off); }
  FLASH_HOST_DEVICE int key_end(int row) const { return clamp_k(row + end_off); }

  // Rows [query_begin(j), query_end(j)) are the ones that see key j (the
  // rule read by key, for the backward's transposed tiles): empty past
  // seqlen_k, and never past seqlen_q.
  FLASH_HOST_DEVICE int query_begin(int key) const { return clamp_q(key + qbegin_off); }
  FLASH_HOST_DEVICE int query_end(int key) const { return key < seqlen_k ? clamp_q(key + qend_off) : 0; }

  // The rule itself.
  FLASH_HOST_DEVICE bool visible(int row, int key) const {
    return key < seqlen_k && (!has_right || key <= row + diag + right) && (!has_left || key >= row + diag - left);
  }

  // Rows [m0, m0 + rows) (rows past seqlen_q are padding: ignored).
  FLASH_HOST_DEVICE RowBlockKeys row_block(int m0, int rows) const {
    int last = m0 + rows < seqlen_q ? m0 + rows - 1 : seqlen_q - 1;
    if (last < m0) last = m0;
    RowBlockKeys r;
    r.any_begin = key_begin(m0);
    r.any_end = key_end(last);
    r.all_begin = key_begin(last);
    r.all_end = key_end(m0);
    return r;
  }
  template <int kBlockN> FLASH_HOST_DEVICE TileRange key_tiles(int m0, int rows) const {
    return row_block(m0, rows).template key_tiles<kBlockN>();
  }

  // Query tiles of kBlockM rows that see some key of [n0, n0 + cols): the
  // backward's loop over queries for one key block.
  template <int kBlockM> FLASH_HOST_DEVICE TileRange query_tiles(int n0, int cols) const {
    const int num = (seqlen_q + kBlockM - 1) / kBlockM;
    const int last_key = (n0 + cols < seqlen_k ? n0 + cols : seqlen_k) - 1;
    if (last_key < n0) return {num, num};
    int m_begin = 0, m_end = seqlen_q;
    if (has_right) m_begin = clamp_q(n0 - diag - right);          // first row whose right edge reaches n0
    if (has_left) m_end = clamp_q(last_key - diag + left + 1);      // past the last row whose left edge is <= last_key
    if (m_end <= m_begin) return {num, num};
    return {m_begin / kBlockM, (m_end + kBlockM - 1) / kBlockM};
  }
  // The query tiles of `tiles` (kBlockM rows each) whose rows see every key
  // of [n0, n0 + cols), so that no element needs the mask: one run [begin,
  // end), empty when none. row_block's all_end and all_begin grow with the
  // rows, so the tiles that need the mask are a head (rows whose right edge
  // stops short of n0 + cols) and a tail (rows whose left edge passed n0) of
  // the walk: two binary searches, once per key block, instead of the
  // question per tile (the backward's step loops, kernels/bwd_03_wgmma.cu).
  template <int kBlockM> FLASH_HOST_DEVICE TileRange mask_free_tiles(TileRange tiles, int n0, int cols) const {
    const auto first = [&](int lo, int hi, auto&& pred) {  // the first tile in [lo, hi) where pred holds, or hi
      while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (pred(mid)) hi = mid;
        else lo = mid + 1;
      }
      return lo;
    };
    const int begin = first(tiles.begin, tiles.end, [&](int m) { return n0 + cols <= row_block(m * kBlockM, kBlockM).all_end; });
    const int end = first(begin, tiles.end, [&](int m) { return n0 < row_block(m * kBlockM, kBlockM).all_begin; });
    return {begin, end};
  }
  // The query rows a backward walks over all key blocks of kBlockN keys at
  // kBlockM-row steps (whole tiles of query_tiles, padding included): what a
  // step height costs a call before the per-row speed of each (bwd_03's 64-
  // or 80-row steps; host code, one pass over the key blocks).
  template <int kBlockM, int kBlockN> long long walked_rows() const {
    long long rows = 0;
    for (int n0 = 0; n0 < seqlen_k; n0 += kBlockN)
      rows += static_cast<long long>(query_tiles<kBlockM>(n0, kBlockN).count()) * kBlockM;
    return rows;
  }

  // -inf for the hidden elements of an m16n8 accumulator fragment (the
  // layout of mma.sync and of wgmma's register accumulators): element e of
  // n-tile nt in m-tile mt holds row row_of(mt, e / 2), key n0 + 8 nt + 2 t +
  // e % 2 (t = lane % 4). row_of maps a fragment row to its query row. Each
  // row's key range [key_begin, key_end) is taken once, relative to the
  // lane's first key, so each element costs two compares with constants.
  template <int kMTiles, int kNTiles, class RowOf>
  FLASH_HOST_DEVICE void apply(float (&s)[kMTiles][kNTiles][4], int n0, int lane, RowOf&& row_of) const {
    hide_outside(s, n0, lane, [&](int mt, int half, int& begin, int& end) {
      const int row = row_of(mt, half);
      begin = key_begin(row), end = key_end(row);
    });
  }
  // The common case: a warp's rows start at row0, 16 per m-tile, and the
  // lane holds rows g and g + 8 of each (g = lane / 4).
  template <int kMTiles, int kNTiles>
  FLASH_HOST_DEVICE void apply(float (&s)[kMTiles][kNTiles][4], int row0, int n0, int lane) const {
    const int g = lane / 4;
    apply(s, n0, lane, [&](int mt, int half) { return row0 + mt * 16 + g + 8 * half; });
  }

  // The same rule on a transposed fragment, S^T = K Q^T (the backward with
  // keys on the M axis): fragment rows are keys, columns queries. Element e
  // of n-tile nt in m-tile mt holds key key_of(mt, e / 2) and query m0 + 8 nt
  // + 2 t + e % 2; each key's query range is taken once, as in apply.
  template <int kMTiles, int kNTiles, class KeyOf>
  FLASH_HOST_DEVICE void apply_transposed(float (&s)[kMTiles][kNTiles][4], int m0, int lane, KeyOf&& key_of) const {
    hide_outside(s, m0, lane, [&](int mt, int half, int& begin, int& end) {
      const int key = key_of(mt, half);
      begin = query_begin(key), end = query_end(key);
    });
  }
  // A warp's keys start at key0, 16 per m-tile (lane: keys g and g + 8).
  template <int kMTiles, int kNTiles>
  FLASH_HOST_DEVICE void apply_transposed(float (&s)[kMTiles][kNTiles][4], int key0, int m0, int lane) const {
    const int g = lane / 4;
    apply_transposed(s, m0, lane, [&](int mt, int half) { return key0 + mt * 16 + g + 8 * half; });
  }

 private:
  // -inf for every element of fragment row (mt, half) whose column, from
  // col0 (the fragment's first column; the lane's are col0 + 8 nt + 2 t + e),
  // lies outside the range range_of(mt, half, begin, end) gives it.
  template <int kMTiles, int kNTiles, class RangeOf>
  FLASH_HOST_DEVICE static void hide_outside(float (&s)[kMTiles][kNTiles][4], int col0, int lane, RangeOf&& range_of) {
    const int base = col0 + 2 * (lane % 4);
FLASH_UNROLL
    for (int mt = 0; mt < kMTiles; ++mt)
FLASH_UNROLL
      for (int half = 0; half < 2; ++half) {
        int begin, end;
        range_of(mt, half, begin, end);
        const int lo = begin - base, hi = end - base;
FLASH_UNROLL
        for (int nt = 0; nt < kNTiles; ++nt)
FLASH_UNROLL
          for (int e = 0; e < 2; ++e)
            if (nt * 8 + e < lo || nt * 8 + e >= hi) s[mt][nt][2 * half + e] = -INFINITY;
      }
  }
  // n + kMaxPad, saturated at INT_MAX (no row or key is that far).
  FLASH_HOST_DEVICE static int padded(int n) { return n < 2147483647 - kMaxPad ? n + kMaxPad : 2147483647; }
  FLASH_HOST_DEVICE int clamp_k(int x) const { return x < 0 ? 0 : (x > seqlen_k ? seqlen_k : x); }
  FLASH_HOST_DEVICE int clamp_q(int x) const { return x < 0 ? 0 : (x > seqlen_q ? seqlen_q : x); }
};

}  // namespace flash::detail
