// The Hopper forward (FlashAttention-3 design), shared by the sm_90a rungs of
// the ladder. Each rung is a Config that switches on its idea; this file is
// the frame, split as CUTLASS's FMHA is: a tile scheduler, a mainloop with a
// producer and consumers, and an epilogue, as plain structs.
//
// A CTA owns kBlockM = 64 * kConsumerWGs query rows of one (batch, head) and
// runs 1 + kConsumerWGs warpgroups:
//   producer (warpgroup 0, one thread)  TMA loads: the Q tile once, then K and
//       V tiles into a ring of kStages shared-memory stages. Each stage has a
//       "full" mbarrier (TMA completes its bytes on it) and an "empty" one
//       (every consumer warp arrives once it is done reading).
//   consumers (warpgroups 1..)  each owns 64 query rows:
//       S = Q K^T   wgmma, Q and K from shared memory
//       mask        ragged tail and causal diagonal (-inf), only on tiles that need it
//       softmax     online, fp32 registers, exp2 with the scale folded in
//       O += P V    wgmma, P from registers (the S accumulators, rounded), V from shared memory
//   epilogue: O / row_sum into this warpgroup's rows of the Q tile, then a
//       TMA store (rows past seqlen_q are clipped); LSE from registers.
// K/V tiles are visited last to first, so the tiles that need a mask come
// first (the ragged tail, the diagonal).
//
// Config (a struct with these members, see the rung files):
//   kHeadDim, kBlockN, kConsumerWGs, kStages      tile shape and pipeline depth
//   kProducerRegs, kConsumerRegs                  setmaxnreg per warpgroup role
//   kIntraWGOverlap   issue S(j) and P(j-1) V(j-1) together, softmax(j) while PV runs
//   kPingpong         named barriers take the consumer warpgroups' GEMMs in
//                     turn, so one warpgroup's softmax overlaps another's GEMMs
//   kHeavyFirst       causal: launch the longest query blocks first
//   kQInRegisters     S = Q K^T with Q as the register operand (ldmatrix once
//                     per tile): shared memory then feeds only K to that GEMM
//   kPersistent       (optional, needs kIntraWGOverlap) one CTA per SM loops
//                     over the tiles; the producer loads the next tile's Q and
//                     K/V while the consumers finish and store the current one.
//                     Causal calls keep one CTA per tile (the hardware's block
//                     scheduler balances their uneven tiles better).
#pragma once

#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/head_dims.h"
#include "common/hopper/sync.cuh"
#include "common/hopper/tma_host.h"
#include "common/hopper/wgmma.cuh"
#include "common/launch_limits.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/params.h"
#include "common/variant.h"
#include "flash/variants.h"

// The kernels exist only in the sm_90a pass; other passes compile empty bodies
// that the host never launches (the variant checks compute capability 9.0).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 900 && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define FLASH_SM90A_DEVICE 1
#else
#define FLASH_SM90A_DEVICE 0
#endif

namespace flash::detail {

struct Fa3Params {
  FwdParams p;
  CUtensorMap q, k, v, o;  // 64-byte aligned; passed as one __grid_constant__ parameter
};

// Shared memory, as byte offsets from a 1024-byte-aligned base (the 128-byte
// swizzle repeats every 1024 bytes; wgmma and TMA both assume it starts there).
// Whether a Config asked for the persistent schedule (absent: no).
template <class Cfg, class = void> struct Fa3IsPersistent : std::false_type {};
template <class Cfg> struct Fa3IsPersistent<Cfg, std::void_t<decltype(Cfg::kPersistent)>>
    : std::integral_constant<bool, Cfg::kPersistent> {};
template <class Cfg> inline constexpr bool kFa3Persistent = Fa3IsPersistent<Cfg>::value;

// The same Config with one CTA per tile (persistent rungs under a causal mask).
template <class Cfg> struct Fa3NonPersistent : Cfg {
  static constexpr bool kPersistent = false;
};

template <class Cfg> struct Fa3Smem {
  static constexpr int kBlockM = 64 * Cfg::kConsumerWGs;
  static constexpr int kQBytes = kBlockM * Cfg::kHeadDim * 2;
  static constexpr int kKVBytes = Cfg::kBlockN * Cfg::kHeadDim * 2;  // one stage of K or V
  static constexpr int kQ = 0;
  static constexpr int kK = kQ + kQBytes;
  static constexpr int kV = kK + Cfg::kStages * kKVBytes;
  // Persistent: O gets its own buffer, since the next tile's Q may already be
  // landing in the Q tile while this one's O is stored.
  static constexpr int kOwnO = kFa3Persistent<Cfg> ? kV + Cfg::kStages * kKVBytes : 0;
  static constexpr int kO = kFa3Persistent<Cfg> ? kOwnO : kQ;
  static constexpr int kBars = kFa3Persistent<Cfg> ? kOwnO + kQBytes : kV + Cfg::kStages * kKVBytes;
  // q_full, then per stage: k_full, k_empty, v_full, v_empty; persistent: q_empty
  static constexpr int kNumBars = 1 + 4 * Cfg::kStages + (kFa3Persistent<Cfg> ? 1 : 0);
  static constexpr std::size_t kBytes = kBars + kNumBars * 8 + 1024;  // + slack to align the base
  static_assert(kKVBytes % 1024 == 0 && kQBytes % 1024 == 0, "tiles must keep 1024-byte alignment");
  static_assert(!Cfg::kPingpong || Cfg::kConsumerWGs >= 2, "pingpong needs two consumer warpgroups");
  static_assert(128 * (Cfg::kProducerRegs + Cfg::kConsumerWGs * Cfg::kConsumerRegs) <= 65536, "register file");
  static_assert(!kFa3Persistent<Cfg> || Cfg::kIntraWGOverlap, "the persistent loop is the overlapped one");
};

// Tile scheduler: one CTA per (query block, head, batch); under a causal mask
// the blocks with the most keys are launched first so short ones fill the tail.
template <class Cfg> struct Fa3TileScheduler {
  static constexpr int kBlockM = 64 * Cfg::kConsumerWGs;
  static dim3 grid(const FwdParams& p) { return dim3((p.seqlen_q + kBlockM - 1) / kBlockM, p.heads_q, p.batch); }
  struct Tile {
    int m_block, head, batch;
  };
  __device__ static Tile get(const FwdParams& p) {
    const int m_block = Cfg::kHeavyFirst && p.causal ? gridDim.x - 1 - blockIdx.x : blockIdx.x;
    return {m_block, static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.z)};
  }
  // Persistent: min(tiles, SMs) CTAs; CTA i takes tiles i, i + grid, ...,
  // numbered with the query block fastest so CTAs running together share a
  // head's K/V in L2.
  __host__ __device__ static int num_m_blocks(const FwdParams& p) { return (p.seqlen_q + kBlockM - 1) / kBlockM; }
  static std::int64_t num_tiles(const FwdParams& p) { return std::int64_t{num_m_blocks(p)} * p.heads_q * p.batch; }
  static dim3 persistent_grid(const FwdParams& p, int sm_count) {
    return dim3(static_cast<unsigned>(std::min<std::int64_t>(num_tiles(p), sm_count)));
  }
  __device__ static Tile get(const FwdParams& p, int idx) {
    const int num_m = num_m_blocks(p);
    return {idx % num_m, (idx / num_m) % p.heads_q, idx / num_m / p.heads_q};
  }

  // K/V tiles the block at m0 sees: all, or under the bottom-right causal
  // mask up to its last row + seqlen_k - seqlen_q.
  __device__ static int n_blocks(const FwdParams& p, int m0) {
    int n_end = p.seqlen_k;
    if (p.causal) n_end = max(0, min(n_end, min(m0 + kBlockM, p.seqlen_q) + p.seqlen_k - p.seqlen_q));
    return (n_end + Cfg::kBlockN - 1) / Cfg::kBlockN;
  }
};

template <class T, class Cfg> struct Fa3Mainloop {
  using Smem = Fa3Smem<Cfg>;
  static constexpr int kHeadDim = Cfg::kHeadDim, kBlockN = Cfg::kBlockN, kStages = Cfg::kStages;
  static constexpr int kBlockM = Smem::kBlockM;
  static constexpr int kColBlocks = kHeadDim / 64;  // 64-column (128-byte) blocks per row
  static constexpr int kNTilesS = kBlockN / 8, kNTilesO = kHeadDim / 8;
  static constexpr int kConsumerWarps = 4 * Cfg::kConsumerWGs;

  struct Barriers {
    std::uint64_t* base;
    __device__ std::uint64_t* q_full() const { return base; }
    __device__ std::uint64_t* k_full(int s) const { return base + 1 + 4 * s; }
    __device__ std::uint64_t* k_empty(int s) const { return base + 2 + 4 * s; }
    __device__ std::uint64_t* v_full(int s) const { return base + 3 + 4 * s; }
    __device__ std::uint64_t* v_empty(int s) const { return base + 4 + 4 * s; }
    __device__ std::uint64_t* q_empty() const { return base + 1 + 4 * kStages; }  // persistent only
    __device__ void init() const {
      if constexpr (kFa3Persistent<Cfg>) mbar_init(q_empty(), kConsumerWarps);
      mbar_init(q_full(), 1);
      for (int s = 0; s < kStages; ++s) {
        mbar_init(k_full(s), 1);
        mbar_init(v_full(s), 1);
        mbar_init(k_empty(s), kConsumerWarps);
        mbar_init(v_empty(s), kConsumerWarps);
      }
      mbar_init_fence();
    }
  };

  // The K/V ring restarts at stage 0 with every tile, so the consumers'
  // stage is a compile-time constant in their unrolled loop (the wgmma
  // descriptors then stay on the uniform datapath, which a persistent CTA's
  // run-time tile arithmetic would otherwise push them off) and only the
  // mbarrier parities are run-time: uses[s] counts the times stage s was
  // filled before this tile.
  struct RingState {
    std::uint32_t uses[kStages] = {};
    std::uint32_t q_parity = 0;
    // Parity of the i-th K/V tile of this tile (stage i % kStages). The
    // select keeps uses[] in registers for a run-time stage.
    __device__ std::uint32_t parity(int i, int stage) const {
      std::uint32_t u = 0;
#pragma unroll
      for (int s = 0; s < kStages; ++s)
        if (s == stage) u = uses[s];
      return (u + i / kStages) & 1;
    }
    __device__ void advance(int n_blocks) {
#pragma unroll
      for (int s = 0; s < kStages; ++s) uses[s] += n_blocks > s ? (n_blocks - 1 - s) / kStages + 1 : 0;
      q_parity ^= 1;
    }
  };

  // ---- producer: one thread of warpgroup 0 ---------------------------------
  __device__ static void produce(const Fa3Params& prm, std::uint8_t* smem, const Barriers& bars, int m0, int h, int b,
                                 int n_blocks, RingState& ring) {
    if (n_blocks == 0) return;  // the consumers will not wait for anything
    const int h_kv = h / prm.p.group_size;
    if constexpr (kFa3Persistent<Cfg>) mbar_wait(bars.q_empty(), ring.q_parity ^ 1);  // the last tile's S are done
    mbar_arrive_expect_tx(bars.q_full(), Smem::kQBytes);
#pragma unroll
    for (int cb = 0; cb < kColBlocks; ++cb)
      tma_load_4d(smem + Smem::kQ + cb * kBlockM * 128, &prm.q, cb * 64, m0, h, b, bars.q_full());
    for (int i = 0; i < n_blocks; ++i) {
      const int n_block = n_blocks - 1 - i, stage = i % kStages;
      const std::uint32_t parity = ring.parity(i, stage);
      mbar_wait(bars.k_empty(stage), parity ^ 1);
      mbar_arrive_expect_tx(bars.k_full(stage), Smem::kKVBytes);
#pragma unroll
      for (int cb = 0; cb < kColBlocks; ++cb)
        tma_load_4d(smem + Smem::kK + stage * Smem::kKVBytes + cb * kBlockN * 128, &prm.k, cb * 64, n_block * kBlockN,
                    h_kv, b, bars.k_full(stage));
      mbar_wait(bars.v_empty(stage), parity ^ 1);
      mbar_arrive_expect_tx(bars.v_full(stage), Smem::kKVBytes);
#pragma unroll
      for (int cb = 0; cb < kColBlocks; ++cb)
        tma_load_4d(smem + Smem::kV + stage * Smem::kKVBytes + cb * kBlockN * 128, &prm.v, cb * 64, n_block * kBlockN,
                    h_kv, b, bars.v_full(stage));
    }
    ring.advance(n_blocks);
  }

  // ---- consumer: one warpgroup, 64 query rows -------------------------------
  struct Consumer {
    const FwdParams& p;
    const Barriers& bars;
    std::uint32_t q_addr, k_addr, v_addr;  // shared addresses: this warpgroup's Q rows, K and V stage 0
    int wg, warp, lane;                    // consumer warpgroup index, warp within it, lane
    int m0, row0;                          // first row of the CTA / of this warp (global query index)
    int n_blocks;

    // Pingpong: warpgroup wg issues its GEMMs after the previous one has.
    __device__ void sched_sync() const {
      if constexpr (Cfg::kPingpong) named_barrier_sync(1 + wg, 256);
    }
    __device__ void sched_arrive(bool last) const {
      if constexpr (Cfg::kPingpong) {
        // The last warpgroup's final turn has no one after it: skipping it
        // leaves every barrier with as many arrivals as waits.
        if (!(last && wg == Cfg::kConsumerWGs - 1)) named_barrier_arrive(1 + (wg + 1) % Cfg::kConsumerWGs, 256);
      }
    }

    // Q fragments (kQInRegisters): the A operand of every k-step, by
    // ldmatrix from the swizzled Q tile (lane l addresses row l % 16 and
    // column 8 * (l / 16) of the warp's 16 x 16 block, as in mma.cuh).
    using QFrags = std::uint32_t[Cfg::kQInRegisters ? kHeadDim / 16 : 1][4];
    __device__ void load_q(QFrags& q) const {
      if constexpr (Cfg::kQInRegisters) {
        const int r = 64 * wg + 16 * warp + lane % 16;  // row within the CTA tile
#pragma unroll
        for (int ks = 0; ks < kHeadDim / 16; ++ks) {
          const int col = 16 * ks + 8 * (lane / 16);
          const int byte = (col / 64) * kBlockM * 128 + r * 128 + ((((col % 64) / 8) ^ (r % 8)) * 16);
          ldmatrix_x4(q[ks], q_addr - 64 * wg * 128 + byte);
        }
      }
    }

    __device__ void gemm_qk(int stage, const QFrags& q, float (&s)[1][kNTilesS][4]) const {
      auto& d = *reinterpret_cast<float(*)[kBlockN / 2]>(&s);
      const std::uint32_t k_stage = k_addr + stage * Smem::kKVBytes;
      wgmma_fence();
#pragma unroll
      for (int ks = 0; ks < kHeadDim / 16; ++ks) {
        const std::uint64_t db = wgmma_desc_sw128(k_stage + (ks / 4) * kBlockN * 128 + (ks % 4) * 32, 16, 1024);
        if constexpr (Cfg::kQInRegisters) {
          WgmmaOp<kBlockN>::template rs_kmajor<T>(d, q[ks], db, ks > 0);
        } else {
          const std::uint64_t da = wgmma_desc_sw128(q_addr + (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16, 1024);
          WgmmaOp<kBlockN>::template ss<T>(d, da, db, ks > 0);
        }
      }
      wgmma_commit();
    }

    __device__ void gemm_pv(int stage, const std::uint32_t (&pr)[kBlockN / 16][4], float (&o)[1][kNTilesO][4]) const {
      auto& d = *reinterpret_cast<float(*)[kHeadDim / 2]>(&o);
      const std::uint32_t v_stage = v_addr + stage * Smem::kKVBytes;
      wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        const std::uint64_t db = wgmma_desc_sw128(v_stage + kk * 16 * 128, kBlockN * 128, 1024);
        WgmmaOp<kHeadDim>::template rs<T>(d, pr[kk], db, 1);
      }
      wgmma_commit();
    }

    // -inf for keys past seqlen_k or right of the causal diagonal; only tiles
    // that can hold such keys for some row of this warpgroup pay for it.
    __device__ void mask(int n_block, float (&s)[1][kNTilesS][4]) const {
      const int n0 = n_block * kBlockN, diag = p.seqlen_k - p.seqlen_q;
      const int wg_row0 = m0 + 64 * wg;
      const bool needed = n0 + kBlockN > p.seqlen_k || (p.causal && n0 + kBlockN - 1 > wg_row0 + diag);
      if (!needed) return;
      const int g = lane / 4, t = lane % 4;
#pragma unroll
      for (int nt = 0; nt < kNTilesS; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int row = row0 + g + 8 * (e / 2);
          const int key = n0 + nt * 8 + 2 * t + (e % 2);
          if (key >= p.seqlen_k || (p.causal && key > row + diag)) s[0][nt][e] = -INFINITY;
        }
    }

    __device__ static void to_p(const float (&s)[1][kNTilesS][4], std::uint32_t (&pr)[kBlockN / 16][4]) {
#pragma unroll
      for (int kk = 0; kk < kBlockN / 16; ++kk) {
        pr[kk][0] = pack2<T>(s[0][2 * kk][0], s[0][2 * kk][1]);
        pr[kk][1] = pack2<T>(s[0][2 * kk][2], s[0][2 * kk][3]);
        pr[kk][2] = pack2<T>(s[0][2 * kk + 1][0], s[0][2 * kk + 1][1]);
        pr[kk][3] = pack2<T>(s[0][2 * kk + 1][2], s[0][2 * kk + 1][3]);
      }
    }

    __device__ void release(std::uint64_t* bar) const {
      __syncwarp();
      if (lane == 0) mbar_arrive(bar);
    }

    // The whole K/V loop; O (unnormalised) and the softmax state come back.
    __device__ void run(float (&o)[1][kNTilesO][4], OnlineSoftmax<1>& softmax, RingState& ring) const {
      if (n_blocks == 0) return;
      mbar_wait(bars.q_full(), ring.q_parity);
      QFrags q;
      load_q(q);
      float s[1][kNTilesS][4];
      std::uint32_t pr[kBlockN / 16][4];
      if constexpr (!Cfg::kIntraWGOverlap) {
        for (int i = 0; i < n_blocks; ++i) {
          const int n_block = n_blocks - 1 - i, stage = i % kStages;
          const std::uint32_t parity = ring.parity(i, stage);
          mbar_wait(bars.k_full(stage), parity);
          sched_sync();
          gemm_qk(stage, q, s);
          sched_arrive(false);
          wgmma_wait<0>();
          fence_registers(*reinterpret_cast<float(*)[kBlockN / 2]>(&s));
          release(bars.k_empty(stage));
          mask(n_block, s);
          softmax.update(s, o, p.scale_log2);
          to_p(s, pr);
          mbar_wait(bars.v_full(stage), parity);
          sched_sync();
          gemm_pv(stage, pr, o);
          sched_arrive(i == n_blocks - 1);
          wgmma_wait<0>();
          fence_registers(*reinterpret_cast<float(*)[kHeadDim / 2]>(&o));
          release(bars.v_empty(stage));
        }
      } else {
        // Tile 0: S alone.
        mbar_wait(bars.k_full(0), ring.parity(0, 0));
        sched_sync();
        gemm_qk(0, q, s);
        sched_arrive(false);
        wgmma_wait<0>();
        fence_registers(*reinterpret_cast<float(*)[kBlockN / 2]>(&s));
        release(bars.k_empty(0));
        mask(n_blocks - 1, s);
        softmax.update(s, o, p.scale_log2);  // O is still zero: rescaling it is harmless
        to_p(s, pr);
        // Tile i: S(i) and O += P(i-1) V(i-1) in flight together; softmax(i)
        // runs while PV finishes; O is rescaled once PV is done. Unrolled by
        // kStages so that each stage is a constant.
        for (int i0 = 1; i0 < n_blocks; i0 += kStages) {
#pragma unroll
          for (int u = 0; u < kStages; ++u) {
            const int i = i0 + u;
            if (i < n_blocks) {
              const int stage = (1 + u) % kStages, prev = u % kStages;
              mbar_wait(bars.k_full(stage), ring.parity(i, stage));
              sched_sync();
              gemm_qk(stage, q, s);
              mbar_wait(bars.v_full(prev), ring.parity(i - 1, prev));
              gemm_pv(prev, pr, o);
              sched_arrive(false);
              wgmma_wait<1>();
              fence_registers(*reinterpret_cast<float(*)[kBlockN / 2]>(&s));
              release(bars.k_empty(stage));
              mask(n_blocks - 1 - i, s);
              float rescale[2];
              softmax.probs(s, p.scale_log2, rescale);
              wgmma_wait<0>();
              fence_registers(*reinterpret_cast<float(*)[kHeadDim / 2]>(&o));
              release(bars.v_empty(prev));
              softmax.rescale_o(o, rescale);
              to_p(s, pr);
            }
          }
        }
        // Every S = Q K^T of this tile is done: the producer may load the next Q.
        if constexpr (kFa3Persistent<Cfg>) release(bars.q_empty());
        const int last = (n_blocks - 1) % kStages;
        mbar_wait(bars.v_full(last), ring.parity(n_blocks - 1, last));
        sched_sync();
        gemm_pv_any_stage(last, pr, o);
        sched_arrive(true);
        wgmma_wait<0>();
        fence_registers(*reinterpret_cast<float(*)[kHeadDim / 2]>(&o));
        release(bars.v_empty(last));
      }
      ring.advance(n_blocks);
    }

    // gemm_pv with a run-time stage, unrolled into one call per stage so each
    // keeps its descriptors uniform.
    __device__ void gemm_pv_any_stage(int stage, const std::uint32_t (&pr)[kBlockN / 16][4],
                                      float (&o)[1][kNTilesO][4]) const {
#pragma unroll
      for (int st = 0; st < kStages; ++st)
        if (st == stage) gemm_pv(st, pr, o);
    }
  };
};

template <class T, class Cfg> struct Fa3Epilogue {
  using Smem = Fa3Smem<Cfg>;
  static constexpr int kHeadDim = Cfg::kHeadDim, kBlockM = Smem::kBlockM, kNTilesO = kHeadDim / 8;

  // O (normalised here) through this warpgroup's own rows of the Q tile,
  // which its last S = Q K^T has finished reading, then one TMA store per
  // 64-column block; LSE straight from registers.
  __device__ static void store(const Fa3Params& prm, std::uint8_t* smem, float (&o)[1][kNTilesO][4],
                               OnlineSoftmax<1>& softmax, int wg, int tid, int m0, int h, int b) {
    const FwdParams& p = prm.p;
    float lse[2];
    softmax.finalize(o, p.scale, lse);
    const int warp = tid / 32, lane = tid % 32, g = lane / 4, t = lane % 4;
    if constexpr (kFa3Persistent<Cfg>) {
      if (tid == 0) tma_store_wait_read();  // the previous tile's store has read the O buffer
      named_barrier_sync(8 + wg, 128);
    }
#pragma unroll
    for (int nt = 0; nt < kNTilesO; ++nt)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = 64 * wg + 16 * warp + g + 8 * half;  // row within the CTA tile
        const int byte = (nt / 8) * kBlockM * 128 + r * 128 + (((nt % 8) ^ (r % 8)) * 16) + 4 * t;
        *reinterpret_cast<std::uint32_t*>(smem + Smem::kO + byte) = pack2<T>(o[0][nt][2 * half], o[0][nt][2 * half + 1]);
      }
    fence_async_shared();                          // the stores above, before the TMA engine reads them
    named_barrier_sync(8 + wg, 128);               // the whole warpgroup's rows are in place
    if (tid == 0 && m0 + 64 * wg < p.seqlen_q) {
#pragma unroll
      for (int cb = 0; cb < kHeadDim / 64; ++cb)
        tma_store_4d(&prm.o, smem + Smem::kO + cb * kBlockM * 128 + 64 * wg * 128, cb * 64, m0 + 64 * wg, h, b);
      tma_store_commit();
      // Shared memory must outlive the reads: wait now, or (persistent) before
      // the next tile writes the O buffer, and at exit.
      if constexpr (!kFa3Persistent<Cfg>) tma_store_wait_read();
    }
    if (p.lse != nullptr && t == 0) {
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = m0 + 64 * wg + 16 * warp + g + 8 * half;
        if (row < p.seqlen_q) p.lse[b * p.lse_batch_stride + h * p.lse_head_stride + row * p.lse_row_stride] = lse[half];
      }
    }
  }
};

template <class T, class Cfg>
__global__ void __launch_bounds__(128 * (1 + Cfg::kConsumerWGs), 1) fa3_forward_kernel(const __grid_constant__ Fa3Params prm) {
#if FLASH_SM90A_DEVICE
  using Mainloop = Fa3Mainloop<T, Cfg>;
  using Smem = Fa3Smem<Cfg>;
  using Scheduler = Fa3TileScheduler<Cfg>;
  extern __shared__ std::uint8_t smem_raw[];
  // Align the base to 1024 bytes in the shared window.
  const std::uint32_t raw_addr = smem_addr(smem_raw);
  std::uint8_t* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  const typename Mainloop::Barriers bars{reinterpret_cast<std::uint64_t*>(smem + Smem::kBars)};

  const FwdParams& p = prm.p;
  if (threadIdx.x == 0) bars.init();
  __syncthreads();

  // Tiles of this CTA: one (blockIdx), or persistent: blockIdx.x, + gridDim.x, ...
  constexpr bool kPersistent = kFa3Persistent<Cfg>;
  const int num_tiles = kPersistent ? Scheduler::num_m_blocks(p) * p.heads_q * p.batch : 1;
  const int first = kPersistent ? static_cast<int>(blockIdx.x) : 0;
  const int stride = kPersistent ? static_cast<int>(gridDim.x) : 1;
  const auto tile_of = [&](int idx) { return kPersistent ? Scheduler::get(p, idx) : Scheduler::get(p); };

  const int wg = threadIdx.x / 128;
  typename Mainloop::RingState ring;
  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      for (int idx = first; idx < num_tiles; idx += stride) {
        const auto tile = tile_of(idx);
        const int m0 = tile.m_block * Smem::kBlockM;
        Mainloop::produce(prm, smem, bars, m0, tile.head, tile.batch, Scheduler::n_blocks(p, m0), ring);
      }
    }
  } else {
    setmaxnreg_inc<Cfg::kConsumerRegs>();
    const int c = wg - 1, tid = threadIdx.x - 128 * wg;
    const std::uint32_t base = smem_addr(smem);
    for (int idx = first; idx < num_tiles; idx += stride) {
      const auto tile = tile_of(idx);
      const int m0 = tile.m_block * Smem::kBlockM;
      const int n_blocks = Scheduler::n_blocks(p, m0);
      const typename Mainloop::Consumer consumer{p,
                                                 bars,
                                                 base + Smem::kQ + 64 * c * 128,
                                                 base + Smem::kK,
                                                 base + Smem::kV,
                                                 c,
                                                 tid / 32,
                                                 tid % 32,
                                                 m0,
                                                 m0 + 64 * c + 16 * (tid / 32),
                                                 n_blocks};
      // Pingpong: the last warpgroup lets the first one go first.
      if constexpr (Cfg::kPingpong) {
        if (c == Cfg::kConsumerWGs - 1 && n_blocks > 0) named_barrier_arrive(1, 256);
      }
      float o[1][Mainloop::kNTilesO][4];
#pragma unroll
      for (int nt = 0; nt < Mainloop::kNTilesO; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) o[0][nt][e] = 0.0f;
      OnlineSoftmax<1> softmax;
      consumer.run(o, softmax, ring);
      Fa3Epilogue<T, Cfg>::store(prm, smem, o, softmax, c, tid, m0, tile.head, tile.batch);
    }
    if constexpr (kPersistent) {
      if (tid == 0) tma_store_wait_read();  // the last store has read shared memory
    }
  }
#endif
}

// The head dims of the Hopper kernels: multiples of 64 (TMA's 128-byte boxes).
template <class F> bool dispatch_fa3_head_dim(int d, F&& f) {
  return dispatch_head_dim_of<64, 128, 256>(d, static_cast<F&&>(f));
}
using Fa3HeadDims = BuiltHeadDims<64, 128, 256>;

// Host side: tensor maps, limits and the launch for one Config family.
template <template <int> class ConfigFor> struct Fa3Launcher {
  static std::string make_params(const FwdParams& p, Fa3Params& prm, int block_m, int block_n) {
    prm.p = p;
    std::string err = make_bshd_tensor_map(&prm.q, p.q, p.dtype, p.batch, p.seqlen_q, p.heads_q, p.head_dim,
                                           p.q_batch_stride, p.q_row_stride, p.q_head_stride, block_m);
    if (err.empty())
      err = make_bshd_tensor_map(&prm.k, p.k, p.dtype, p.batch, p.seqlen_k, p.heads_kv, p.head_dim, p.k_batch_stride,
                                 p.k_row_stride, p.k_head_stride, block_n);
    if (err.empty())
      err = make_bshd_tensor_map(&prm.v, p.v, p.dtype, p.batch, p.seqlen_k, p.heads_kv, p.head_dim, p.v_batch_stride,
                                 p.v_row_stride, p.v_head_stride, block_n);
    if (err.empty())
      err = make_bshd_tensor_map(&prm.o, p.o, p.dtype, p.batch, p.seqlen_q, p.heads_q, p.head_dim, p.o_batch_stride,
                                 p.o_row_stride, p.o_head_stride, 64);
    return err.empty() ? err : "TMA tensor map: " + err;
  }

  static std::string check(const FwdParams& p, const DeviceInfo& dev) {
    std::string err;
    dispatch_fa3_head_dim(p.head_dim, [&](auto hd) {
      using Cfg = ConfigFor<decltype(hd)::value>;
      err = check_head_batch_grid(p, dev, Fa3Smem<Cfg>::kBytes);
      if (err.empty() && Fa3TileScheduler<Cfg>::num_tiles(p) > INT32_MAX)
        err = "too many query tiles for one launch (" + std::to_string(Fa3TileScheduler<Cfg>::num_tiles(p)) + ")";
      if (err.empty() && p.batch > 0 && p.seqlen_q > 0 && p.seqlen_k > 0) {
        Fa3Params prm;
        err = make_params(p, prm, Fa3Smem<Cfg>::kBlockM, Cfg::kBlockN);
      }
    });
    return err;
  }

  static cudaError_t run(const FwdParams& p, cudaStream_t stream) {
    cudaError_t err = cudaErrorInvalidValue;
    const auto launch_cfg = [&](auto tag, auto cfg) {
      using T = typename decltype(tag)::type;
      using Cfg = typename decltype(cfg)::type;
      Fa3Params prm;
      if (!make_params(p, prm, Fa3Smem<Cfg>::kBlockM, Cfg::kBlockN).empty()) return;
      auto kernel = fa3_forward_kernel<T, Cfg>;
      constexpr std::size_t smem = Fa3Smem<Cfg>::kBytes;
      err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem));
      if (err != cudaSuccess) return;
      dim3 grid = Fa3TileScheduler<Cfg>::grid(p);
      if constexpr (kFa3Persistent<Cfg>) {
        int device = 0, sms = 0;
        if ((err = cudaGetDevice(&device)) != cudaSuccess) return;
        if ((err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device)) != cudaSuccess) return;
        grid = Fa3TileScheduler<Cfg>::persistent_grid(p, sms);
      }
      kernel<<<grid, 128 * (1 + Cfg::kConsumerWGs), smem, stream>>>(prm);
      err = cudaGetLastError();
    };
    const auto launch = [&](auto tag, auto hd) {
      using Cfg = ConfigFor<decltype(hd)::value>;
      if constexpr (kFa3Persistent<Cfg>) {
        if (p.causal) return launch_cfg(tag, TypeTag<Fa3NonPersistent<Cfg>>{});
      }
      launch_cfg(tag, TypeTag<Cfg>{});
    };
    if (p.dtype == DType::f16) dispatch_fa3_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__half>{}, hd); });
    else dispatch_fa3_head_dim(p.head_dim, [&](auto hd) { launch(TypeTag<__nv_bfloat16>{}, hd); });
    return err;
  }
};

// The registry entry of a Hopper variant: f16/bf16, head dims 64/128/256,
// every forward feature, compute capability 9.0 only.
template <template <int> class ConfigFor> const FwdVariant* fa3_variant() {
  static const FwdVariant v = [] {
    FwdVariant r;
    r.min_compute_capability = 90;
    r.max_compute_capability = 90;  // sm_90a machine code runs on 9.0 only
    r.dtype_mask = dtype_bit(DType::f16) | dtype_bit(DType::bf16);
    r.head_dims = Fa3HeadDims::data();
    r.num_head_dims = Fa3HeadDims::size();
    r.max_head_dim = 256;
    r.alignment = 16;  // TMA: base address and strides in multiples of 16 bytes
    r.features = kAllFeatures;
    r.max_offset = (std::int64_t{1} << 39) - 1;  // TMA strides are below 2^40 bytes
    r.check = Fa3Launcher<ConfigFor>::check;
    r.run = Fa3Launcher<ConfigFor>::run;
    return r;
  }();
  return &v;
}

}  // namespace flash::detail
