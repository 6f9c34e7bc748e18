// fwd_09_wgmma_persistent: fwd_08 + a persistent tile scheduler.
//
// What changed from fwd_08_wgmma_pingpong (kPersistent in
// kernels/common/fa3_forward.cuh): one CTA per SM loops over the tiles
// (query block fastest, so CTAs running together share a head's K/V in L2).
// The producer runs ahead into the next tile: its Q and first K/V tiles load
// while the consumers still finish and store the current one, so a tile's
// start no longer waits for a CTA launch, a Q load from memory and an empty
// pipeline. Q and O need separate buffers for that; at hdim 256 (64 KB each
// beside 160 KB of K/V) they do not fit, so hdim 256 keeps fwd_08's schedule.
// (Session 19 stored hdim 256's O from registers instead and ran the walk and
// the dynamic schedule: -1 to -4%, its wgmma descriptors pushed off the
// uniform datapath; with the bases shuffled at each GEMM, +3% at 512 keys
// but -1.5% on long tiles. Not kept: docs/NOTES.md.)
// Causal calls run this kernel's code with the single-tile scheduler
// (Fa3SingleTileScheduler, longest query blocks launched first): static
// round-robin gives each CTA a random mix of long and short causal tiles, and
// a static longest-first order (2026-11-23) kept the CTAs balanced but put
// different heads side by side, losing the K/V sharing in L2: 3-8% slower
// than the hardware's block scheduler. A dynamic scheduler (an atomic tile
// counter) is the step that would let causal calls persist too: since
// 2026-11-24 (session 18) causal calls of at most 4096 keys take it
// (Fa3DynamicScheduler: the producer thread fetches the next tile of the
// grid's order once it has issued the current tile's loads and hands it to
// the consumers through shared memory). H200, bf16, 16k tokens, TFLOPS, the
// grid -> dynamic in one call: hdim 128 causal 1k 356 -> 386 (+8%), 2k 458 ->
// 477 (+4%), 4k 535 -> 544 (+2%), 8k 589 -> 582 (-1%), 16k 614 -> 605 (-1%,
// so not taken past 4k); hdim 64 causal 2k 346 -> 355 (+3%), 4k 405 -> 412
// (+2%), 8k 456 -> 459 (+1%).
// The first try was slower (docs/NOTES.md): its stage arithmetic moved the
// wgmma descriptors off the uniform datapath. Here each tile restarts the
// K/V ring at stage 0 and the loop is unrolled by the stage count, so every
// descriptor is a uniform base plus a constant (R2UR 116 -> 17 in the SASS).
// Prediction: +5% at seq 4096, more when tiles are short (ncu on fwd_08: the
// tensor pipe idles at each CTA's start and end; SMs active 96%).
// Measured on the H200 (2026-11-21, bf16, 16k tokens, same run as fwd_08's
// figures), non-causal hdim 128, TFLOPS (fwd_08 -> fwd_09):
//   seq 512: 403 -> 454 (+13%), 1024: 487 -> 524 (+8%), 2048: 558 -> 574
//   (+3%), 4096: 594 -> 607 (+2%), 8192: 610 -> 617 (+1%), 16384: 623 -> 626
// harmonic mean over 512-16k 532.9 -> 559.7 (+5%; 95% of cuDNN's 590.5);
// hdim 64 417.6 -> 432.2 (+3%; 98% of cuDNN). At seq 4096 / harmonic mean
// and the share of cuDNN in the same run:
//   hdim  64: 468.6 / 432.2 (98% / 98%), causal 397.9 / 305.8 (93% / 84%)
//   hdim 128: 607.2 / 559.7 (92% / 95%), causal 513.7 / 421.9 (90% / 89%)
//   hdim 256: 608.0 / 562.1 (85% / 87%), causal 527.2 / 444.2 (90% / 90%)
// So the start and end of a tile cost ~13% at seq 512 and 1-2% past 4096:
// at long sequences the mainloop itself (tensor pipe 71% busy) bounds.
// Causal and hdim 256 run fwd_08's schedule (differences there are run
// noise, +-2%; 2026-11-23, causal hdim 128 at seq 1k / 4k / 16k: 351 / 503 /
// 593 TFLOPS against fwd_08's 347 / 504 / 595, same call).
// Registers (setmaxnreg): producer 24 / consumers 240 (hdim 64: 32 / 160), no
// spills; shared memory 144 / 192 KB (hdim 64 / 128: Q, O and the K/V ring);
// SASS: HGMMA, UTMALDG / UTMASTG, no local memory.
// 2026-11-23: within 2% of e24b379 in the same call except hdim 128 full at
// 4k and 16k (597.6 -> 581.3, 621.2 -> 605.3).
// Variable-length batches and paged KV caches (2026-11-24, issue 17; the
// frame's SeqLayout, kernels/common/fa3_forward.cuh): every Hopper rung takes
// varlen calls; this one also takes paged calls (kPagedKV), so auto picks it
// for them. Both run the single-tile grid (a persistent walk over the real
// query blocks was 0-5% slower). H200, bf16 d128, 16 heads, TFLOPS:
//   varlen, issue 17's 7 sequences (16384 tokens): 529 full / 450 causal,
//   1.00x / 1.03x of the dense 7 x 2341 call (the producer warp zeroes the
//   partial V tile: 0.97-0.98x with one thread); FA4 641 / 549, same call.
//   paged, 4 x 4096: page 256 0.93x / 0.95x of the contiguous cache (full /
//   causal), page 16 0.82x / 0.85x (eight 16-row TMA boxes per tile and
//   operand, one per lane of the producer warp; 0.75x / 0.78x from one
//   thread).
//   Causal varlen calls since session 31 (2026-11-28): a compact grid, one
//   CTA per real tile (Fa3VarlenTileScheduler): causal 450 -> 457-461,
//   hdim 64 +2.6-3.4%, mixed lengths at hdim 256 +6%; full calls keep the
//   grid above (-0.2 to -1.0% in this kernel on either grid). Session 32:
//   only where the longest sequence's K and V over all KV heads fit in 32
//   MiB; long sequences lost 2-5% on it (1 x 16k causal hdim 128 571 ->
//   592 back on the old grid). And the compact grid's order on the dynamic
//   schedule up to 4096 keys (Fa3DynamicScheduler): hdim 64 +4.2%, 22
//   sequences of 200-2300 tokens +2.4%, issue 17's hdim 128 batch 0.0%;
//   unmasked calls too (+4.0% / -0.3%), and causal paged calls with packed
//   queries (page 16 / 256 +1.1% / +4.0%).
// Session 34: at hdim 128 (Q in registers) each consumer warp frees the Q
// buffer right after its ldmatrix of Q instead of after the tile's last
// S = Q K^T, so the producer loads the next tile's Q while this tile runs.
// Predicted +3-8% on the (128, 0) window (two key tiles per query tile);
// measured (H200, one call, two rounds) +0.5% there, causal 4k +0.9%, full
// 2k +0.5%, varlen causal +1.4%, 7 x 2341 +1.1% / +1.5%, 16k +0.3%. ncu on
// that window: DRAM 41% busy, L2 hit 52%, 0.42 issued per scheduler cycle:
//   latency, not bandwidth, bounds it (docs/NOTES.md, session 34).
// Causal grids (2026-11-24, common/fa3_forward.cuh's Fa3SingleTileScheduler):
// longest first within sections of heads whose K/V fit in 16 MiB of L2
// instead of per head, so the last head's longest tiles no longer start at
// the grid's end: causal hdim 128 2k-16k +1-4% (572 -> 593 at 8k), hdim 64
// 8k-16k +2%, hdim 256 8k +6%. And the softmax now runs beside its own
// warpgroup's PV at hdims 128 and 256 (ptxas had hoisted the wait above it;
// wgmma_wait_after): +1-1.6%, nothing at hdim 64 (docs/NOTES.md). At hdim 64
// a warpgroup skips the softmax of a first key tile none of its rows sees
// (causal 2k +1.6%, 4k +1.3%).
// Windows bounded on both sides choose by width (fa3_persistent_walk,
// 2026-11-24): under 2048 keys per row the walk, causal or not ((128, 0) at
// hdim 128 16k: 137 -> 164 TFLOPS); wider ones the one-CTA-per-tile grid
// ((4096, 0) 528 -> 560, (2048, 2048) 550 -> 569), except two-sided windows
// at hdim 64 (-1.5% / -3% on the grid). Session 34: those wider windows
// take the dynamic schedule instead of the grid, whatever seqlen_k (hdim 64
// 8k (4096, 0) +4.6%; hdim 128 16k within +-0.5%).
// Session 35: the softmax's row max of a 128-key tile as four partial maxima
// and a tree (common/online_softmax.cuh kTreeMax; ncu showed one FMNMX chain
// per row before every exp2): hdim 128 full 16k / 8k +1.1% / +0.9%, causal
// +0.4-0.9%, hdim 64 causal 8k +1.3%; hdim 256's 80-key tiles keep the
// chain (-3.4% with the tree).
// Session 36: O is rescaled only when a row's max moved by more than 2^8
// (kLazyRescale, FlashAttention-4's conditional rescaling; OnlineSoftmax::
// probs<kLazy>): otherwise the row keeps its old max as the reference and a
// warp none of whose rows moved skips the multiply of every O accumulator
// between the wait for PV(j-1) and the issue of PV(j) (64 FMUL a thread at
// hdim 128, 128 at 256). Predicted +1-3% at hdim 128, +2-5% at 256, ~0 at 64;
// measured (H200, two rounds of one call): hdim 128 full 16k 641 -> 663
// (+3.4%), 8k +3.1%, causal +2.5-2.7%; hdim 256 full 8k 708 -> 730 (+3.1%),
// causal +1.6%; hdim 64 -0.9% to +0.8%; varlen causal +3.8%; softcap +2%.
// And under a softcap (u = tanh(.) <= 1) a warp whose rows all have a
// reference within 2^64 of the bound stops computing the max (fa3_forward.cuh
// kBounded, OnlineSoftmax::can_freeze / probs_bounded): capped 30 causal
// hdim 128 16k +3.4-4.0%, hdim 256 8k +6.5%; rows that never come near the
// bound (cap 50 on small scores) -0.4 to -1.4%, ALiBi-only calls -1.2% (the
// unused path in their kernels); hdim 64 lost 2.2%, so not there.
// Session 38: every Hopper rung launches by programmatic dependent launch
// (fa3_launch; the kernel waits for the one before it after its barrier
// setup): issue 17's varlen batch +0.9% / +1.2% (full / causal; the metadata
// check's gap), dense calls +-0.5% (bench's back-to-back launches had none).
// And the dynamic schedule's slots carry each packed-query tile with its
// sequence (Fa3SlotTile), resolved by the producer, so the consumers no longer
// load cu_seqlens between tiles: varlen causal hdim 64 +3.3%, hdim 128 +0.5%.
// Paged calls with small pages gathered by cp.async instead of 16-row TMA
// boxes lost 10-21% at hdims 64 / 128; dense-query paged calls on the walk or
// the dynamic schedule lost up to 28% at hdim 64 (docs/NOTES.md).
// Session 39: unmasked packed-query calls number each sequence's tiles with
// the query block fastest (the heads fastest kept every head's K and V of a
// sequence in flight): 4 x 4096 hdim 128 +5.7%, issue 17's batch +3.4%.
// And at hdim 128 the kernels whose producer resolves tiles at run time
// (dynamic, per-sequence, paged) split the registers 32 / 232, not 24 /
// 240, and the paged dynamic ones 40 / 224: their producers spilled (ncu:
// 381K local requests in a paged call): paged +1.1-2.9%, and +1.0-3.3%
// more on the dynamic schedule; causal varlen and dense causal 4k +1.1-1.2%.
// With those producers, dense-query causal paged calls take the dynamic
// schedule too (+1.5-3.9%; it lost 0.3-1.6% in session 38 at 24 registers).
// Session 40: paged kernels at hdims 128 / 256 keep K and V tiles in 8-row
// groups, every 64-column block of a group together (fa3_forward.cuh
// kRowGroups), so that one TMA box (a 5-D map) carries a page's rows at
// every column block: a 128-key tile of 16-key pages is 16 boxes, not 32
// (hdim 64's 16 ran within 4% of its contiguous cache). H200, two rounds of
// one call, 4 x 4096 hdim 128: page 16 505 -> 565 (+11.8%; 0.90x of the
// contiguous cache, 0.81x before), causal +7.3%, page 32 +6.0%, page 256
// +0.8-1.9%; issue 17's varlen batch page 16 +9.6% / +8.3%, page 256 +1.8% /
// +1.0%; hdim 256 (80-key tiles: 16-row boxes at every page size) +14-16%
// (0.96-0.98x of contiguous). And dense-query full paged calls at hdim 128
// walk on pages of >= 128 keys: page 256 +1.3% / +2.4% (4 x 4096 / 8 x 2048).
// SASS: the paged producers have no local memory; the hdim 128 paged
// dynamic kernel's consumers keep 8 epilogue addresses there (stored once a
// CTA, loaded once a tile; 1 word before the row groups).
// Session 42: in the pingpong the last consumer warpgroup let the first one
// take the next tile's first turn only at that tile's start, after its own
// epilogue, so the first warpgroup's first S = Q K^T waited for the other's
// O store. Now, in the persistent kernels (walk and dynamic schedule), its
// final turn of a tile hands the turn on (kernels/common/fa3_forward.cuh,
// Consumer::sched_arrive), and the first warpgroup takes the one arrival
// left after the CTA's last tile at exit. Predicted +3-6% at seq 512, less
// on longer tiles. H200, bf16, 16k tokens, TFLOPS, two rounds of one call
// (session 41's build -> this): hdim 64 full 512 +2.6%, causal 2k +0.3%,
// (4096, 0) 8k +0.6%; hdim 128 full 512 +0.6%, 2k +0.5%, 4 x 4096 +1.4%,
// causal 1k / 4k +0.7% / +0.9%, (4096, 0) 16k +0.8%, varlen causal +0.3%.
// (A first form read the next tile ahead to decide whether to hand on: hdim
// 128's dynamic kernels lost 1.2-3.1% waiting for the slot; hdim 64's gained
// 2.5% more on the window than this form. docs/NOTES.md.)
// Session 43: hdim 64's dynamic kernels (three consumer warpgroups) take
// that wait back: the last warpgroup hands on once the next slot is
// published. H200 (G -> H, two rounds): hdim 64 causal 2k / 4k / 8k +3.8% /
// +3.0% / +0.3%, the (4096, 0) window at 8k +3.3%.
// A clock64 trace of tile boundaries (docs/NOTES.md, session 43) put the
// cost of a tile at ~1.7-1.9 key-tile steps beside its loop at hdim 128:
// the epilogue (~1900 cycles, half of it OnlineSoftmax::finalize's serial
// log and division) and the tile's setup (~400 cycles on the walk, ~960 on
// the dynamic schedule, which decoded the index in every consumer), with
// only the other warpgroup's last P V beside them. Two changes: finalize
// on MUFU without branches (kernels/common/online_softmax.cuh), and the
// dynamic schedule's slot carries the decoded tile. H200, two to four
// rounds (calls 6-7, both against the build before): hdim 128 causal 1k
// +3.0%, 4k +2.1%, full 512 +0.7%, the (4096, 0) window at 16k +0.8% /
// +0.9%, hdim 64 causal 2k +3.3%; full 1k-4k within the calls' +-0.8%. (Fusing the boundary into one turn, the last P V
// beside the next tile's first S with the epilogue after it, lost 2-7%:
// each warpgroup's epilogue then sat between its own turns.)
// Session 44 (hdim 64, FA4 ahead by 5-8% on full calls): session 35's ncu
// source page had our warps waiting for their own P V before the softmax
// (ptxas hoists the plain wait; FA4's warps wait for S, then run the
// softmax beside P V). The wait is now pinned after the softmax at every
// head dim (fa3_forward.cuh), and hdim 64 runs four K / V stages (three on
// the dynamic schedule: Fa3DynamicCfgOf). H200, two rounds (session 44 call
// 4, TFLOPS, the tree before -> both, four stages everywhere): hdim 64 full
// 512 +1.6%, 2k +2.4%, 8k +4.8%, 16k +4.4%, causal 8k +3.7%; causal 2k /
// 4k -2.3% / -0.6%, which the dynamic schedule's three stages avoid. The
// epilogue stages O by stmatrix (two n-tiles an instruction): hdim 128
// causal 1k +1.3-1.7%, full 512 +0.7%, hdim 64 full 512 +0.7%. All three
// (call 5, session 43's build -> this): hdim 64 full 512 / 2k / 8k / 16k
// +2.3% / +4.5% / +3.8% / +3.9%, causal 2k / 4k / 8k +1.6% / +1.4% /
// +3.0%, hdim 128 causal 1k +1.1%; beside FA4 (both 0.5 s) hdim 64 full
// 1.09 ... 0.96 and causal 1.30 ... 0.97 at 512 ... 16k (0.92-0.96 from
// 1k / 2k up before). Five stages: -1.0 to +0.7%.
// Session 45: hdim 128 waits for its own P V after the first of a thread's
// two rows' exponentials, not after both (kPvPin = 0; Fa3PvPin in
// fa3_forward.cuh, OnlineSoftmax::probs's after_row), so that P's conversion
// to bf16 runs beside the second row's MUFU.EX2 instead of after the last
// one (FA4's SASS, read beside ours on ncu's source pages: 8% of our hdim 64
// stall samples sat on those conversions, 1.8% of FA4's). Predicted for hdim
// 64, +2-4%; measured (H200, two rounds): hdim 128 full 8k +2.9-4.0%, 16k
// +1.7%, causal 16k +2.0-2.8%, 512 / causal 1k +1.1-1.9%; hdim 64 -1.4 to
// +0.8% with the wait after row 0 or before both (its softmax is MUFU-bound:
// one EX2 a score takes as long as the score's tensor work), hdim 256 within
// +-0.7%: both keep the wait after both rows, as do the kernels that may
// freeze (kMods at hdims 128 / 256: with a wait in each of their frozen /
// not-frozen branches ptxas serialized every wgmma, -8.6% capped). The
// exponentials on the FMA pipe (2 or 4 of 16 n-tiles a row) at hdim 64:
// -4 to -8%.
// Dropped (docs/NOTES.md): hdim 256 without turns (-0.6 to -3.3%), the
// next grid tile's boxes prefetched into L2 (-0.1 to -4.2%), two stages at
// hdim 64 (-2.3% causal 2k), no turns at a tile's first S and last P V (FA4's
// order: +2-3% at hdim 64 alone, nothing beside the above), and O's TMA
// store and LSE handed to a storer warp (-0.5 to -1.9%).
// Session 49: packed-query calls take their sequences longest first (most
// keys) within each group of 32, in the order the metadata check ranks once
// (AttnParams::seq_order, read by Fa3VarlenTileScheduler::compact_of): issue
// 17's batch full +2.5%, causal +0.7% (H200, call 3; ranking in the
// producer per tile instead cost up to 6% on short tiles). docs/NOTES.md.
// Session 50 (H200, rotated rounds, TFLOPS; docs/NOTES.md): the single-tile
// grid of paged and per-sequence kernels takes that order too
// (Fa3SingleTileScheduler's kPacked; packed full paged calls +1.3-1.5%); paged
// calls on 16-key pages at hdim 128, any mask, run a kernel of their own:
// the grid (the compact one for causal packed calls) on a non-persistent
// Config with three K / V stages (kSmallPageStages; O staged in Q's
// buffer, 224 KB), where the consumers waited for K's eight boxes with two:
// issue 17's batch page 16 full 525 -> 546 (+3.9-4.6%), causal +1.7% over
// the dynamic schedule, 4 x 4096 full +2.0-2.4%, causal +2.6% (three
// stages at page 32: -1.4%, at page 256 -0.8%: they keep theirs); hdim 64's
// 16-key pages the same way with six stages (+1.9-2.7%); and hdim 64's
// packed full calls on pages of >= 128 keys (kPackedPagedDynamic: page 256
// +3.9-4.7%; page 16 -3.8%, hdim 128 -0.5%) and dense-query causal ones
// (kDenseQueryPagedDynamic: page 256 +4.9%) take the dynamic schedule.
// Session 51 (H200, two rotated rounds, TFLOPS; docs/NOTES.md): the paged
// producer at hdims 128 / 256 loads the page table a batch of tiles ahead
// (one entry per lane covers 32 / boxes tiles), where one lookup a tile
// ahead put a round trip between each tile's issue and the next at a CTA's
// start (ncu: the page-16 consumers waited for their second K tile): hdim
// 128 4 x 4096 page 16 / 32 / 256 +1.6% / +1.9% / +0.8%, causal page 16 / 32
// +2.3% / +1.8%, issue 17's batch page 16 +1.8% / +0.9%, hdim 256 page 16
// +1.2%; hdim 64 -0.2 to -1.0% (four cells), so it keeps its lookups. And
// hdim 64's two-sided windows of >= 2048 keys leave the walk unless they
// cover every key (fa3_persistent_walk): (2048, 2048) 4 x 4096 +19.5%
// (the walk had given each CTA one query block of every head). The 16-key
// page kernel persistent with O in Q's buffer lost 4-9% (the next Q waits
// for the O store), with O in the tile's last V stage 3-4%. Dense causal
// calls of 4097-8192 keys take the dynamic schedule (8k: hdim 128 +0.5%,
// hdim 64 +0.9%; 16k lost 0.4-1.1% and keeps the grid).
// Session 52: hdim 128's paged kernels on a persistent schedule (the walk,
// the dynamic one) split the registers 40 / 232 (regs() below): 4 x 4096
// causal page 256 +2.9%, page 64 +2.1%, issue 17's causal page 256 +2.0%,
// full page 256 +1.0%. The 16-key-page kernel persistent (O in the last V
// stage) on that split still lost 2-4%: not its registers. The dense
// dynamic schedule at 24 / 240 (was 32 / 232): causal 1k-8k +1.0-1.3%, the
// (4096, 0) window at 16k +0.9%.
// Session 56: dense-query full paged calls at hdim 128 walk from pages of 32
// keys (were >= 128; pages of 32 / 64 ran the grid): H200, two rounds, 4 x
// 4096 page 32 / 64 +1.2% / +2.0%, 8 x 2048 page 32 +1.9%. Page 16 on the
// walk lost 1.3% (4 x 4096, 1 x 16k) and keeps its 3-stage grid kernel for
// full calls. Narrow windows (the walk's rule, span < 2048) walk on every
// page size: causal (128, 0) at 4 x 4096, pages 16 / 32 / 64: 119.5 /
// 122.8 / 124.4 -> 160.8 / 162.4 / 162.4 TFLOPS (+30-35%), (64, 63) page
// 16 +16.2%, (1000, 0) +1.7-4.0% (they ran one 128 x 128 tile a CTA).
// Session 58 (H200, two rounds, docs/NOTES.md): the 16-key-page kernel on
// the walk with three stages and O stored from registers (no O buffer: 16
// shuffles and 16 8-byte stores a thread, no fence or barrier) lost 2.0-4.1%
// against its grid kernel, and the same Config on contiguous full calls
// 2.7-4.8% against the 2-stage walk: O's staged TMA store is the cheaper
// epilogue; page 16 keeps its grid kernel.
// Session 68 (H200, two rounds, docs/NOTES.md): the overlapped loop's K / V
// waits take their phase from the loop's round (Pipeline::consumer_wait_round),
// where the 16-key-page kernel's three stages had cost a run-time i / 3 (a
// wide multiply and four instructions before each K wait): hdim 128 page 16
// 4 x 4096 full / causal +2.4% / +1.0%, 1 x 16k +2.6%, issue 17's batch
// +2.9% / +1.1%; hdim 64's six stages -0.3%, two- and four-stage kernels
// unchanged. Page 16 is now 0.93-0.97 of the contiguous cache. Neither the
// row-group layout (the plain one lost 4% at page 256, 12% at page 16), the
// table loads, the register split, Q's HBM latency at the grid's CTA starts
// (the next tile's Q fetched into L2: +-0.5%) nor the tensor maps' fetch
// there (fetched before the dependent-launch wait: +-1%) make the rest.
// Session 69 (H200, docs/NOTES.md; no change kept): the rest is per step,
// not the grid's CTA starts (1 x 16k has 4 x 4096's gap), and mostly the
// paged kernels' code: one page a sequence still runs at 0.965-0.970 of the
// contiguous cache, and the dense walk's own two boxes a tile run at 0.91
// inside the paged walk. The 16-key-page kernel on the walk with Q read a
// tile ahead (O in Q's buffer) lost 2.7-3.1%; K loaded a tile ahead of V,
// the producer over two warps or polling from one lane, the mask from the
// constant bank, warp-uniform sequence records and the plain layout from
// one box moved nothing beyond +-2% or lost.
// Session 70 (H200, docs/NOTES.md; no change kept): the rest of page 16's
// gap is its loads. Loading half of each tile's sixteen 4 KB boxes (a
// diagnostic, wrong results) made it 13-16% faster, 2% above the contiguous
// cache per clock (the board holds ~480 W; the clock rose 1.83 -> 1.95
// GHz). Sharing the boxes between two CTAs of a cluster by multicast lost
// 3.4-8.7%: the clusters alone cost 7% in this grid. A tile's sequence in
// one load at a CTA's start, the exponentials' order and the dynamic
// schedule for causal page 16 moved nothing or lost.
// Run it: ./runner --kernel wgmma_persistent ; ./bench --kernel wgmma_persistent --seq 4096 --dhead 128
#include "fwd_08_wgmma_pingpong.h"

namespace flash::detail {
namespace {

// The change: the persistent schedule (hdim 256: Q, O and two stages exceed 227 KB).
// Also the Hopper rung that takes a paged KV cache (kPagedKV: the rung auto
// picks; the other rungs refuse paged calls, which saves their kernels).
template <int kHeadDim_> struct WgmmaPersistentConfig : WgmmaPingpongConfig<kHeadDim_> {
  static constexpr bool kPersistent = kHeadDim_ <= 128;
  static constexpr bool kPagedKV = true;
  static constexpr bool kLazyRescale = true;
  // hdim 64: four K / V stages (three before session 44: +2.2-4.8% on full
  // 2k-16k and causal 8k), three on the dynamic schedule (Fa3DynamicCfgOf:
  // four lost 1-2.3% on its short causal tiles).
  static constexpr int kStages = kHeadDim_ == 64 ? 4 : 2;
  static constexpr int kDynamicStages = kHeadDim_ == 64 ? 3 : 2;
  // The kernel for 16-key pages: not persistent, three stages at hdim 128
  // (Fa3SmallPageCfgOf; session 50: +2-4.6%), six at hdim 64 (+1.9-2.7%).
  static constexpr int kSmallPageStages = kHeadDim_ == 128 ? 3 : kHeadDim_ == 64 ? 6 : kStages;
  // The wait for a warpgroup's own P V after the first row's exponentials
  // at hdim 128 (Fa3PvPin; after both rows elsewhere): session 45, +1-4%.
  static constexpr int kPvPin = kHeadDim_ == 128 ? 0 : 1;
  // Dense-query paged calls on the dense calls' schedules: causal on the
  // dynamic one (hdim 128 +1.5-3.9%, session 39; hdim 64 page 256 +4.9%,
  // session 50, where session 38's 24-register producers lost 5.3%), full on
  // the walk at hdim 128, full calls on pages of >= 32 keys (page 256
  // +1.3-2.4%, session 40; pages 32 / 64 +1.2-2.0%, session 56) and narrow
  // windows on any (+16-35%, session 56); hdim 64's full calls lost 18%
  // walking (session 50).
  static constexpr bool kDenseQueryPagedDynamic = kHeadDim_ <= 128;
  static constexpr bool kDenseQueryPagedWalk = kHeadDim_ == 128;
  // Packed-query full paged calls on pages of >= 128 keys on the dynamic
  // schedule at hdim 64 (+3.9-4.7%; hdim 128 -0.4 to -0.7%: session 50).
  static constexpr bool kPackedPagedDynamic = kHeadDim_ == 64;
  // hdim 128: 32 / 232 registers where the producer resolves tiles at run
  // time (per-sequence and paged kernels), 40 / 232 where it also looks up
  // pages on a persistent schedule (the dynamic one or the walk); 24 / 240
  // elsewhere. Those producers spilled at 24 (ncu: 381K
  // local requests in a paged call) and the paged persistent ones still at
  // 32; consumers at 224 cost the per-sequence kernels 2% and the paged
  // single-tile one 1.3%, at 232 the walk 1.0% (H200, session 39:
  // docs/NOTES.md). Session 52: the paged persistent kernels had 40 / 224
  // (dynamic) and 32 / 232 (walk, 36 spill instructions in its producer);
  // 40 / 232 fills the 504 registers setmaxnreg has (3 x 168): 4 x 4096
  // causal page 256 / 64 +2.9% / +2.1%, issue 17's causal page 256 +2.0%,
  // full page 256 (the walk) +1.0%. And the dense dynamic schedule went back
  // to 24 / 240 (its producer, 32 since session 39, now keeps one spill at
  // 24): causal 1k / 4k / 8k +1.0% / +1.3% / +1.2%, (4096, 0) 16k +0.9%;
  // the packed compact grid (0.0%) and the 16-key-page kernel (-0.4 to
  // -0.9%) did not gain at 24 / 240 and keep 32 / 232.
  static constexpr Fa3RegSplit regs(Fa3ProducerLoad load) {
    if (kHeadDim_ != 128 || load == Fa3ProducerLoad::fixed)
      return {WgmmaPingpongConfig<kHeadDim_>::kProducerRegs, WgmmaPingpongConfig<kHeadDim_>::kConsumerRegs};
    return load == Fa3ProducerLoad::paged_persistent ? Fa3RegSplit{40, 232} : Fa3RegSplit{32, 232};
  }
};

// (kLazyRescale and kPvPin are read through traits in fa3_forward.cuh, which
// nvcc's unused-member check, #177, does not see in the passes without sm_90a.)
static_assert(WgmmaPersistentConfig<64>::kLazyRescale && WgmmaPersistentConfig<128>::kLazyRescale &&
                  WgmmaPersistentConfig<256>::kLazyRescale,
              "O is rescaled only when a row's max moves");
static_assert(WgmmaPersistentConfig<128>::kPvPin == 0 && WgmmaPersistentConfig<64>::kPvPin == 1 &&
                  WgmmaPersistentConfig<256>::kPvPin == 1,
              "the P V wait after row 0 at hdim 128 only (session 45; read through Fa3PvPin)");
static_assert(WgmmaPersistentConfig<256>::kDynamicStages == WgmmaPersistentConfig<256>::kStages,
              "hdim 256 has no dynamic schedule (not persistent): one stage count");

FLASH_FA3_RUNG_KERNEL(fwd_09_wgmma_persistent);

}  // namespace

#if FLASH_HAS_SM90A
const FwdVariant* variant_wgmma_persistent() { return fa3_variant<WgmmaPersistentConfig, fwd_09_wgmma_persistent_rung>(); }
#else
const FwdVariant* variant_wgmma_persistent() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
