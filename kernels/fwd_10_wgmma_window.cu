// fwd_10_wgmma_window: fwd_09 + small tiles for narrow sliding windows.
//
// What changed from fwd_09_wgmma_persistent: an hdim-64 call whose window
// keeps few keys per row (both sides bounded, left + right + 1 <=
// kNarrowSpan; gpt-oss's (128, 0) window, local layers) runs a second Config
// of the same frame (kernels/common/fa3_forward.cuh): one consumer warpgroup
// (64 query rows), 64-key tiles, two stages, and three CTAs per SM
// (kMinBlocks: the launch's register budget, which setmaxnreg splits). Every
// other call runs fwd_09's kernels unchanged (this rung's run() hands it
// on), so auto, which picks the last rung that takes a call, loses nothing.
// Why: at hdim 64 fwd_09's tiles are 192 query rows by 128 keys; a (128, 0)
// window gives each three K/V tiles of which a third of the pairs are
// visible, and the one CTA on the SM waits on each tile's loads and store
// with little to overlap them. A 64-row tile covers the window's band in
// three 64-key tiles (two thirds visible), and the other two CTAs on the SM
// fill the tensor pipe while one waits.
// Prediction (docs/NOTES.md, before the first run): (128, 0), bf16, hdim 64
// 8k x 2 x 32 heads 87 -> ~125 TFLOPS; hdim 128 16k 139 -> ~200 (two CTAs).
// Measured on the H200 (2026-11-24, bf16, TFLOPS of visible work, the same
// call; fwd_09 with its persistent walk -> this rung), hdim 64 8k, window
// (W, 0): W = 128 100 -> 144, 256 168 -> 217, 512 251 -> 285, 1024 331 ->
// 335, 2048 393 -> 371; three CTAs per SM against two: 144 against 116 at
// W = 128. Hdim 128 did not gain: 64 x 64 tiles with two CTAs 163 against
// fwd_09's 166 at (128, 0), 64 x 32 tiles with three CTAs (a producer warp
// instead of a warpgroup, to fit their registers) 155; so hdim 128 keeps
// fwd_09's tiles, and its causal windows now take fwd_09's persistent walk
// (fa3_persistent_walk: 137 -> 164 at (128, 0)). Misaligned windows are where
// small tiles would still pay at hdim 128: (64, 63) 130 -> 160 (not taken).
// Short causal calls (2026-11-24, session 17; issue 19's seq 512 and 1k
// cells): hdim 64 causal calls with at most 1024 keys, and hdim 128 ones
// with at most 512 (a second Config: two CTAs per SM, 24 / 232 registers, 80
// KB), take the small tiles too. There fwd_09's causal grid runs one
// 192- or 128-row CTA per SM over one to eight key tiles, with its prologue
// and epilogue on the critical path. H200, bf16, 16k tokens, TFLOPS, fwd_09
// -> this rung in the same call: hdim 64 causal 512 163 -> 223 (+36%), 1k
// 239 -> 289 (+21%), 2k -2% (not taken), full 512 -6% (not taken); hdim 128
// causal 512 238 -> 259 (+9%), 1k -4%, 2k -14% (not taken). cuDNN in the
// same calls: hdim 64 causal 512 260, 1k 332; hdim 128 causal 512 335.
// Session 18 (2026-11-24): fwd_09 now runs causal calls of at most 4096 keys
// on a dynamic schedule (an atomic tile counter), and at hdim 128 that beats
// the small tiles: causal 512, 32 x 16 heads, this rung 254.8 against
// wgmma_persistent's 273.8 (+7%, two rounds of one call). So hdim 128 calls
// all go to fwd_09 again and this rung's Config is hdim 64 only (four fewer
// kernels to build). At hdim 64 the small tiles keep their calls: causal 512
// 219.8 against 191.1, 1k 285.8 against 255.2.
// Session 34: windows of at most 512 keys walk their tiles persistently,
// three CTAs per SM (kWalkSpan: (128, 0) +8.1%, (64, 63) +9.4%, (256, 0)
// +2.8%; at (1024, 0) the grid stays, the walk measured -2.6%). And hdim 128
// windows of at most 384 keys take the small tiles again, walking, two CTAs
// per SM (kWalkSpan128: (128, 0) +8.9%, (64, 63) +35%, against fwd_09).
// Session 56: dense-query calls on a paged cache, or on a contiguous one
// with per-sequence key counts (seqused_k), take the walking windows too
// (seq_narrow_window; kPagedKV): they ran fwd_09's 128- / 192-row tiles.
// Both layouts take the same tiles, so a paged call matches its contiguous
// twin bit for bit. Their producers stay at 24 registers (two / three CTAs
// an SM fill the register file): 64 / 48 bytes of stack paged, 16
// per-sequence. H200, two rounds, TFLOPS, fwd_09's walk -> this: hdim 64 8k
// x 2 x 32 causal (128, 0) page 16 / 256 78.6 / 81.7 -> 113.4 / 121.2
// (+44% / +48%), (383, 0) page 32 +4.4%; hdim 128 4 x 4096 (64, 63) page 16
// +25.3%, causal (128, 0) page 16 / 256 -2.5% / +1.6%. (Per-sequence calls
// not timed: no bench shape; they follow the dense calls' rule.)
// Session 57: hdim 128's paged producer takes 40 registers (consumers 216;
// stack 64 -> 16 bytes). H200, two rounds, TFLOPS: 4 x 4096 causal (128, 0)
// page 16 / 256 160.9 / 163.0 -> 165.4 / 165.2 (+2.8% / +1.4%), (64, 63)
// page 16 157.0 -> 162.0 (+3.2%), 1 x 16k (128, 0) page 16 +2.6%; the
// contiguous twin's kernel unchanged (-1.2 to -0.3%, noise). And hdim 64's
// (consumers 120; stack 48 -> 0): 2 x 8192 x 32 causal (128, 0) page 16 /
// 256 114.5 / 124.7 -> 116.7 / 127.4 (+1.9% / +2.2%), (383, 0) page 32
// 191.7 -> 203.2 (+6.0%); contiguous twins -0.5% / 0.0%.
// Run it: ./runner --kernel wgmma_window --dhead 64 --window 128,0 ;
//   ./bench --kernel wgmma_window --seq 8192 --batch 2 --heads 32 --dhead 64 --window 128,0
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "fwd_08_wgmma_pingpong.h"

namespace flash::detail {

const FwdVariant* variant_wgmma_persistent();  // fwd_09: every call that is not a narrow window

namespace {

// The change: 64 query rows, 64-key tiles, three CTAs per SM at hdim 64
// (the launch gives each thread 80 registers, 65536 / (256 * 3); setmaxnreg
// moves the producer's to the consumers, 24 / 136). At hdim 128 two CTAs per
// SM, 24 / 232 registers, 98 KB each (on the single-tile grid until session
// 18; walking only, since session 34).
template <int kHeadDim_> struct WgmmaWindowConfig {
  static_assert(kHeadDim_ == 64 || kHeadDim_ == 128, "the small tiles are for hdims 64 and 128");
  static constexpr int kHeadDim = kHeadDim_;
  static constexpr int kConsumerWGs = 1;
  static constexpr int kBlockN = 64;
  static constexpr int kStages = 2;
  static constexpr int kMinBlocks = kHeadDim_ == 64 ? 3 : 2;
  static constexpr int kProducerRegs = 24, kConsumerRegs = kHeadDim_ == 64 ? 136 : 232;
  static constexpr bool kIntraWGOverlap = true;
  static constexpr bool kPingpong = false;  // one consumer warpgroup
  static constexpr bool kHeavyFirst = false;
  static constexpr bool kQInRegisters = false;
  // Separate Q and O buffers (49 KB a CTA), so that the narrowest windows can
  // walk their tiles (kWalkSpan).
  static constexpr bool kPersistent = true;
  static constexpr bool kLazyRescale = true;  // as fwd_09 (session 36: (128, 0) window +0.6%)
  // Dense queries on a paged KV cache take the walking windows too
  // (seq_narrow_window).
  static constexpr bool kPagedKV = true;
  // The paged producers at 40 registers (their page lookups spilled 64 /
  // 48 bytes of stack at 24), the consumers at 216 / 120, within the same
  // budget (session 57: +1.4-3.2% at hdim 128, +1.9-6.0% at hdim 64).
  static constexpr Fa3RegSplit regs(Fa3ProducerLoad load) {
    if (load == Fa3ProducerLoad::paged_persistent) return {40, kHeadDim_ == 128 ? 216 : 120};
    return {kProducerRegs, kConsumerRegs};
  }
};
// (Read in fa3_forward.cuh only under if constexpr, which nvcc's unused-member
// check, #177, does not see.)
static_assert(!WgmmaWindowConfig<64>::kQInRegisters && !WgmmaWindowConfig<128>::kQInRegisters,
              "the small tiles read Q from shared memory");
static_assert(WgmmaWindowConfig<64>::kLazyRescale && WgmmaWindowConfig<128>::kLazyRescale, "as fwd_09");
static_assert(WgmmaWindowConfig<64>::kPagedKV && WgmmaWindowConfig<128>::kPagedKV, "paged windows walk too");

FLASH_FA3_RUNG_KERNEL(fwd_10_wgmma_window);

#if FLASH_HAS_SM90A
// Windows of at most this many keys per row (left + right + 1) take the
// small tiles: hdim 64 8k, (W, 0) against fwd_09's walk, +43% / +29% / +14% /
// +1% / -5% at W = 128 / 256 / 512 / 1024 / 2048 (2026-11-24).
constexpr int kNarrowSpan = 1025;

// Short causal calls take them too: seqlen_k at most kShortCausalKeys.
// There a 192-row CTA of fwd_09's single-tile causal grid runs one to eight
// key tiles, and its prologue and epilogue sit on the SM's critical path
// with nothing beside them; three small CTAs per SM overlap one's setup with
// the others' tiles. Hdim 64, bf16, 16k tokens, 32 heads, against fwd_09 in
// the same call (2026-11-24): causal 512 +36%, 1k +21%, 2k -2%; full 512
// -6%, 1k -6%, 2k -14% (fwd_09's persistent walk already overlaps them).
// Longest-first launch order cost 9% at 512 (kHeavyFirst). (fwd_09's static
// walk for these calls instead: hdim 64 2k -30%; its dynamic schedule, since
// session 18: 512 -13%, 1k -11%.)
constexpr int kShortCausalKeys = 1024;

// Windows of at most this many keys per row walk their tiles: 3 x 132 CTAs
// (Fa3PersistentScheduler, statically) instead of one CTA per 64-row tile, of
// which ncu found 1.7 of 3 resident on average at (128, 0) (launch and exit
// gaps between tiles of two or three K/V tiles). Session 34, H200, hdim 64 8k
// x 2 x 32, grid -> walk: (128, 0) +8.1% (135.8 -> 146.7), (64, 63) +9.4%,
// (256, 0) +2.8%, (1024, 0) -2.6%; 512 is the log-midpoint of the last two
// (call 4: +0.9% there).
constexpr int kWalkSpan = 512;

// Hdim 128 windows of at most this many keys per row run these tiles too,
// walking with two CTAs per SM, instead of fwd_09's 128 x 128 walk with one
// (on the single-tile grid they had lost 1-4%: session 17). Session 34,
// H200, 16k x 16 heads, fwd_09 -> this: (128, 0) +8.9% (164.1 -> 178.6),
// (64, 63) +35.1% (129.0 -> 174.3: a misaligned band touches three 128-key
// tiles per 128-row tile, two 64-key tiles per 64-row tile), (256, 0)
// +1.2%, (512, 0) -0.5%; 384 lies between the last two.
constexpr int kWalkSpan128 = 384;

// Dense queries on a paged cache, or on a contiguous one with per-sequence
// key counts (seqused_k): the windows that walk (kWalkSpan, kWalkSpan128),
// on every page size. Both layouts take the same tiles, so a paged call and
// its contiguous twin agree to the bit (tests/test_paged_prefill_gpu.cpp).
bool seq_narrow_window(const FwdParams& p) {
  const SeqLayout seq = p.seq_layout();
  if ((p.head_dim != 64 && p.head_dim != 128) || seq == SeqLayout::dense || p.cu_seqlens_q != nullptr ||
      p.has_score_mods())
    return false;
  const long long span = p.mask.window_span();
  return span >= 0 && span <= (p.head_dim == 128 ? kWalkSpan128 : kWalkSpan);
}

// The calls this rung runs: those above, and dense calls without a softcap
// or ALiBi: at hdim 64 a window bounded on both sides and at most
// kNarrowSpan keys wide, or a short causal call; at hdim 128 a window of at
// most kWalkSpan128 keys (its short causal calls take
// fwd_09's dynamic schedule; three CTAs of 64 x 32 tiles had measured 5-9%
// slower than two of 64 x 64; docs/NOTES.md).
bool narrow_window(const FwdParams& p) {
  if (seq_narrow_window(p)) return true;
  if ((p.head_dim != 64 && p.head_dim != 128) || p.seq_layout() != SeqLayout::dense || p.has_score_mods()) return false;
  const long long span = p.mask.window_span();
  if (p.head_dim == 128) return span >= 0 && span <= kWalkSpan128;
  const bool causal = p.mask.causal || p.mask.window_right == 0;  // (L, 0) windows are causal too
  return (span >= 0 && span <= kNarrowSpan) || (causal && p.seqlen_k <= kShortCausalKeys);
}

std::string check(const FwdParams& p, const DeviceInfo& dev) {
  std::string err;
  if (narrow_window(p) &&
      dispatch_head_dim_of<64, 128>(p.head_dim, [&](auto hd) { err = fa3_check<WgmmaWindowConfig<decltype(hd)::value>>(p, dev); }))
    return err;
  const FwdVariant* base = variant_wgmma_persistent();
  if (base == nullptr) return "only narrow windows: its other calls run wgmma_persistent, which this build left out";
  return base->check(p, dev);
}

std::size_t workspace_bytes(const FwdParams& p) {
  if (narrow_window(p)) return 0;
  const FwdVariant* base = variant_wgmma_persistent();
  return base != nullptr && base->workspace_bytes != nullptr ? base->workspace_bytes(p) : 0;
}

cudaError_t run(const FwdParams& p, void* workspace, cudaStream_t stream) {
  cudaError_t err = cudaErrorInvalidValue;
  if (narrow_window(p) && dispatch_head_dim_of<64, 128>(p.head_dim, [&](auto hd) {
        using Cfg = WgmmaWindowConfig<decltype(hd)::value>;
        using Single = Fa3SingleTileScheduler<Cfg>;
        using Walk = Fa3PersistentScheduler<Cfg>;
        using Rung = fwd_10_wgmma_window_rung;
        // One launch: a schedule and a sequence layout (dense calls; dense
        // queries on pages or with seqused_k: seq_narrow_window).
        const auto go = [&](auto sched, auto seq) {
          using S = typename decltype(sched)::type;
          constexpr SeqLayout kSeq = decltype(seq)::value;
          err = p.dtype == DType::f16 ? fa3_launch<Rung, __half, Cfg, S, false, kSeq>(p, stream)
                                      : fa3_launch<Rung, __nv_bfloat16, Cfg, S, false, kSeq>(p, stream);
        };
        using Dense = std::integral_constant<SeqLayout, SeqLayout::dense>;
        using Paged = std::integral_constant<SeqLayout, SeqLayout::paged>;
        using PerSeq = std::integral_constant<SeqLayout, SeqLayout::per_sequence>;
        const long long span = p.mask.window_span();
        if (seq_narrow_window(p)) {
          if (p.seq_layout() == SeqLayout::paged) go(TypeTag<Walk>{}, Paged{});
          else go(TypeTag<Walk>{}, PerSeq{});
        } else if constexpr (decltype(hd)::value == 128) {
          go(TypeTag<Walk>{}, Dense{});  // windows only (narrow_window)
        } else if (span >= 0 && span <= kWalkSpan) {
          go(TypeTag<Walk>{}, Dense{});
        } else {
          go(TypeTag<Single>{}, Dense{});
        }
      }))
    return err;
  return variant_wgmma_persistent()->run(p, workspace, stream);
}
#endif

}  // namespace

#if FLASH_HAS_SM90A
const FwdVariant* variant_wgmma_window() {
  static const FwdVariant v = [] {
    // Paged calls: narrow windows here (seq_narrow_window), the rest in fwd_09.
    FwdVariant r = fa3_variant_info(/*paged=*/true);
    r.check = check;
    r.workspace_bytes = workspace_bytes;
    r.run = run;
    return r;
  }();
  return &v;
}
#else
const FwdVariant* variant_wgmma_window() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
