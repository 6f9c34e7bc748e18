// bwd_03_wgmma: the backward's first Hopper step: the dK/dV kernel on wgmma,
// with TMA loads and warp specialization (FlashAttention-3's structure).
//
// What changed from bwd_02_mma: the dkv kernel. bwd_02's eight warps each
// load, compute and wait in turn (cp.async, ldmatrix, mma.sync, two
// __syncthreads per query tile); here a CTA of three warpgroups splits the
// roles:
//   producer (warpgroup 0, one thread; 24 registers after setmaxnreg)
//       TMA: K and V of the key block once; then per step Q and dO of one
//       query tile (kBlockM rows: 128 at hdim 64, 64 at hdim 128; 128-byte
//       swizzled boxes, rows past seqlen_q zero-filled: the tensor maps end
//       each head at its seqlen) and its kBlockM LSE * log2(e) and dpsum
//       values (a bulk copy each), into a two-stage ring of full/empty
//       mbarriers (Bwd03Ring).
//   dQ writer (warpgroup 0, thread 32: its own warp, same 24 registers):
//       the bulk reductions of the consumers' staged dQ blocks (below).
//   consumers (warpgroups 1 and 2, 240 registers): warpgroup c owns keys
//       n0 + 64 c .. + 63 of the kBlockN = 128-key block. Keys sit on
//       wgmma's M axis ("swapped" S and dP, as FlashAttention-3 does for dK
//       and dV), so the score tiles come out transposed and feed the dK/dV
//       products from registers:
//         S^T  = K Q^T            wgmma ss, 64 x kBlockM, both K-major
//         dP^T = V dO^T           wgmma ss
//         P^T  = exp2(S^T scale log2e - lse_log2[query])   (Mask::apply_transposed
//                                  first, only on tiles the Mask says need it)
//         dV  += P^T dO           wgmma rs: the P^T accumulators are the A operand
//                                  (hdim 64: issued once dS^T is in shared
//                                  memory; registers, see kDvAfterDs)
//         dS^T = P^T (dP^T - dpsum[query])
//         dK  += dS^T Q           wgmma rs
//         dQ   = dS K             wgmma ss_mn: dS^T goes to shared memory
//                                  ([key][query], queries contiguous: an
//                                  M-major A) and K is an N-major B
//       dK and dV (64 x head_dim fp32 each) stay in registers over all the
//       query tiles of every query head of the GQA group; at the end dK is
//       scaled and both are stored from registers (keys < seqlen_k only).
//   dQ: each consumer warpgroup computes one 64 x 64 fp32 block per step
//       (hdim 128: dims 64 c.. over all 128 keys; hdim 64: query rows 64 c..
//       of the 128-row step over all 128 keys; either way the warpgroups
//       first meet at a barrier once both dS^T halves are in shared memory.
//       With kBlockM = 64 at hdim 64, the rung's first shape: the whole head
//       dim over its own 64 keys, no cross-warpgroup barrier, the two
//       partial blocks add in the accumulator), stages it in shared memory
//       in fragment order and hands it to the dQ writer through two
//       barriers per warpgroup (Bwd03DqHandoff: the consumers wait for
//       "freed", store, fence and only arrive on "staged"; mbarriers and a
//       one-thread writer, or at 128-row steps named barriers and a whole
//       writer warp, FlashAttention-4's protocol: +3.2-4.7% at hdim 64, +2-3%
//       deterministic, H200, session 29); the writer adds
//       it to the fp32 accumulator with one bulk reduction
//       (cp.reduce.async.bulk), as bwd_02 does on sm_90, and frees the
//       block once the copy engine has read it. So a consumer blocks on a
//       reduction only when the writer is a whole step behind (until
//       session 12 thread 0 of each warpgroup issued the reduction after a
//       128-thread barrier and waited for its reads before the next
//       step's dS^T barrier; FlashAttention-3's writer-warp scheme, in
//       both modes now, measured +1.8% / +2.1% at hdim 128 full / causal
//       8k, +0.3% at hdim 64, 2026-11-24). A convert kernel scales and rounds the
//       accumulator. Its unit is a 64-row tile whatever kBlockM is (a
//       128-row step adds two).
// Why it should be faster: wgmma reads K, V, Q and dO straight from shared
// memory (bwd_02 spends ldmatrix issue slots and registers on every
// fragment); P and dS never touch shared memory on the way to dV and dK;
// the producer's TMA ring hides the loads of the next tile behind this
// one's products instead of the warps issuing cp.async themselves.
// Deterministic mode (deterministic = true; the kernel's kDeterministic
// instantiations): the fp32 additions to each dQ tile (one step's query
// rows of one query head) happen in one fixed order, so dQ is bitwise the same from run
// to run (dK and dV never had atomics). FlashAttention-3's scheme: a
// counter per tile in the workspace (zeroed by the preprocess); the key
// blocks add in descending order, the CTA of key block n waiting until the
// counter says every key block above n that sees the tile has added, and
// incrementing it once its own additions completed (BwdDqOrder says why
// descending, and why the CTAs' launch order, descending key blocks of
// interleaved head groups, cannot deadlock). The waiting is done by the dQ writer (the
// same hand-off as the non-deterministic mode; the writer adds the counter
// wait, frees the blocks only once the additions completed, and hands the
// increment to a counter thread, session 61), so the consumers stall only
// when the writer is a whole step behind. Measured
// (2026-11-24): 0.94-1.00x of the non-deterministic speed at seq 8k and
// 16k, hdim 64 and 128 (issue 18's target: >= 0.9x).
// Score modifiers (2026-11-24): softcap and ALiBi in their own kernels
// (kMods, by dispatch_score_mods: calls without them run the kernels they
// ran before, SASS identical), in bwd_02's order on the transposed tiles:
// ScoreMod::apply_transposed on S^T before the Mask, and after dS^T =
// P^T (dP^T - dpsum) ScoreMod::apply_grad_transposed, the cap's derivative
// recovered from P^T and each query's (column's) LSE, reread from the
// stage rather than kept live. The rules are scores.h's; the kernel states
// none. Sinks are free (the preprocess's LSE holds the sink, and it
// computes dsinks). On the H200 (2026-11-24): BackwardScores* pass,
// memcheck and racecheck clean; cost against the same call without them
// (causal, d64 8k / d128 16k): softcap 30 -39% / -26%, ALiBi -6% / -3.5%,
// sinks -0.5% / 0%. Softcap's tanh by tanh.approx since 2026-11-24 (three
// MUFU ops per score instead of four: tanh, the softmax exp2, the log2 that
// recovers tanh from P for its derivative): 321 / 462 TFLOPS, -29% / -18%
// (FlashAttention-4 with softcap 30 in the same call: 195 / 421).
// Variable-length batches (kVarlen, 2026-11-24; cu_seqlens_q / _k,
// seqused_k): the grid covers max_seqlen_k; a CTA takes its sequence's
// lengths, offsets and Mask from SeqRows (common/bwd_seq.cuh, shared with
// bwd_02) and exits when its key block is past the sequence's keys
// (seqused_k[b] when given; the preprocess writes dK = dV = 0 on the keys
// past it). TMA reads the packed tensors through ragged tensor maps
// (make_ragged_tensor_map): a 4-D map (dim, x, head, y) whose element
// (x, y) is packed row y + x - max_seqlen, addressed with y = the
// sequence's end row and x = max_seqlen - seqlen + row, so a row at or
// past the sequence's end is out of bounds and reads as zero, exactly as
// a dense map's rows past seqlen do. The alternative (FlashAttention-3's
// and the forward rungs': the packed tensor as one long sequence, the
// coordinates offset by the sequence's start) reads the next sequence's
// rows, or anything past seqused_k or past the last sequence (NaN in the
// tests): masked keys and padding queries would give P = 0 but 0 x NaN in
// dP^T = V dO^T, dV += P^T dO and dQ = dS K, so every such tile would need
// its rows zeroed in shared memory (a fix the ring would have to order).
// With the ragged maps the steps are a dense call's: query rows past the
// sequence are zeros with LSE +inf and dpsum 0 in the padded row arrays
// (ws_row0 pads each sequence by kBwdRowPad rows, 2 x kBwdRowPad at
// 80-row steps: bwd_ws_seq_pad; a step's kBlockM rows stay inside them,
// so the LSE/dpsum copies and the dQ reductions, exact zeros on the
// padding rows, never touch another sequence's rows), keys
// past it zeros that the Mask hides. Deterministic mode: the counters are
// per 64-row tile of the padded rows (row0 / kBwdDqTileRows) and turn()
// counts the key blocks of the sequence's Mask, which all exist and do not
// exit early. A per-tile convert (bwd_convert_dq_kernel) stores each
// sequence's dQ rows. As a template flag: dense calls run the kernels they
// ran before (SASS identical). On the H200 (2026-11-24): VarlenBwd* (41
// cases, wgmma in both modes, tile-edge lengths 0/1/63-65/127-129 with
// seqused_k) pass, memcheck and racecheck clean on the tile-edge cases;
// issue 17's 7 sequences (16384 tokens, hdim 128, 16 heads): 437 / 369
// TFLOPS full / causal (mma 286 / 246), 1.03x / 1.02x of the same tokens
// as a dense call, deterministic 409 / 377.
// Descriptors (session 12, 2026-11-24): an ncu comparison with
// FlashAttention-4's sm90 backward (hdim 128 full 8k) found 1475M executed
// instructions against its 802M for the same floating-point work: every
// wgmma's descriptors were rebuilt from the address, the A operand's (whose
// base depends on the warpgroup) in vector registers moved over by R2UR.
// Now wgmma_desc_sw128 masks only a tile's base and adds each k-step's
// constant offset to the start-address field, and the warpgroup index comes
// from warpgroup_index() (a lane-0 shuffle the compiler knows is uniform):
// one uniform add per wgmma, 987M instructions, tensor pipe 64% -> 68%;
// +7% at hdim 128 (549.9 / 515.3 TFLOPS full / causal 8k), +3% at hdim 64.
// 80-row steps at hdim 128 (WgmmaBwdConfig80, sessions 23-24; masked
// calls too since session 28): FlashAttention-4's tile for these calls (it issues 57M HGMMAs to
// our 67M for the same FLOPs at hdim 128 full 8k): S^T and dP^T m64n80;
// dQ^T = K^T dS^T (80 is not a wgmma M) with dS stored [query][key] by
// stmatrix .trans; dQ^T staged in its own fragment order (BwdDqTLayout,
// each (batch, head) padded to 640 rows) for the writer, 20 KB per
// warpgroup; dV issued after the dS stores (kDvAfterDs: issued before them,
// ptxas spilled P^T and serialized every wgmma). SASS: R237, no spills,
// four wgmma waits a step as at 64 rows, 34 HGMMAs per 80 rows against 32
// per 64; 226 KB of shared memory. Measured 2026-11-27 on an H100 (the
// lease's card that day; A/B in one call): hdim 128 full 8k 544.7 -> 571.5
// TFLOPS (+4.9%), 16k 573.3 -> 604.0 (+5.4%); with dQ^T by float4
// reductions from registers instead of staged, +7-10% over the 64-row
// kernel with the same reductions but no better than the 64-row kernel
// staged (reductions from registers cost 8-9% there); three Q/dO stages
// (no staging room then, reductions) -3%. Deterministic mode on the 80-row
// steps too (session 25: the dQ counter of a step is the 64-row tile of its
// first row; steps from a multiple of 640 rows never share one): H100,
// 475.9 -> 510.2 TFLOPS at 8k (+7.2%), 506.8 -> 549.4 at 16k (+8.4%).
// Tried and not kept (session 25, results/2026-11-28_session25): a
// persistent grid for calls whose tiles all take the same steps (one CTA
// per SM taking every 132nd tile, the next tile's K and V loading while
// dK and dV are stored): -0.6% / -1.3% at 8k / 16k, 0.0% at 2k (where a
// per-CTA cost would weigh most), deterministic -1% to -11%.
// Session 26 (H100, results/2026-11-28_session26): deterministic calls
// without a mask take head groups of 2 (BwdDqOrder, BwdParams::
// det_head_group): hdim 128 full 8k +1.9%, hdim 64 full 8k +6.9%; causal
// calls keep groups of 1 (16k -1.4% with groups). Every CTA counts itself
// done at its end (BwdKvDone), so that in non-deterministic dense calls the
// dQ convert starts on the SMs the last wave leaves (bwd_tma_run): hdim 64
// full 8k +1.1% / +1.2% in two calls, hdim 128 within +-1%. Tried and not
// kept: the tensor maps prefetched at entry (-1.7% / -1.4% at 8k / 2k).
// Session 27 (H100, results/2026-11-28_session27): dK and dV leave through
// shared memory (BwdRowTile: each warpgroup's rows into its half of the K
// and V tiles, then 16-byte row pieces, 512 contiguous bytes per warp
// instruction) instead of 4-byte stores from the fragments (8 rows x 16
// bytes per warp instruction; session 26's stamps put 9 us between a CTA's
// last step and its stores' issue). Predicted +2% at hdim 128 full 8k,
// +6-8% at 2k. Measured (call 3, two rounds): hdim 128 full 2k +5.4%, 8k
// +1.4%, 16k +0.3%, causal 8k / 16k +1.4% / +0.5%; hdim 64 full 2k +3.7%,
// 8k +0.2%, causal 8k +1.0%; deterministic hdim 128 full 8k +2.4%, causal
// 16k +2.2%. The first build lost 2.2-2.4% at hdim 128 full 8k / 16k:
// ptxas recomputed the step loop's wgmma descriptors every step (26-37
// uniform instructions more) once the store needed the warpgroup and the
// tile base after the loop; store() reads both afresh (opaque), and the
// step loops are as long as before (SASS). Deterministic kernels no longer
// count themselves done (only the early convert waits for it). Tried and
// not kept: two chains of ordered dQ additions (exp_bwd_det_chains2.patch):
// deterministic -9% / -7% at hdim 128 full 8k / 16k, -2.3% at hdim 64.
// Session 28 (H100, results/2026-11-28_session28): causal and window calls
// at hdim 128 take the 80-row steps too (host dispatch only; the kernels
// already took their Mask at run time). Predicted causal +3-5% / +4-6% at
// 8k / 16k, deterministic +5-8%. Measured (two rounds): causal 8k +4.1%
// (524.5 -> 546.3), 16k +4.1% (567.8 -> 591.3), window (4096, 0) 16k
// +3.6%, full unchanged (-0.2%); deterministic causal 8k +6.2%, 16k +9.0%
// (484.6 -> 528.1). Per-CTA stamps (diag_edges.patch) put a CTA's edges at
// ~4 us of 70-500 (entry to K/V landed 2 us, writer done to exit 1.5 us,
// 0.26 us between CTAs on an SM); the SMs are busy 96-97% of the span.
// After that call the choice became a count (uses_rows80, Mask::walked_rows):
// 80-row steps only where their rows, less 5%, are fewer than 64-row steps'
// (a (128, 0) window walks a quarter more rows at 80); measured in session
// 29 ((128, 0) 16k +4.8%, (512, 0) +3.2% against 80 rows for every mask).
// Variable-length calls (session 30): ncu put issue 17's varlen backward on
// the 64-row kernel (2.03 ms, 378 M instructions; FlashAttention-4's 1.85
// ms, 293 M). They now take the 80-row steps too, each sequence padded by
// 256 rows instead of 128 in the row arrays (bwd_ws_seq_pad: a last step
// or 80-row dQ tile ends up to 79 rows past its sequence). H200, two rounds,
// bf16 hdim 128, issue 17's 7 sequences (16 heads): full 500.3 -> 525.0
// TFLOPS (+4.9%), causal 428.6 -> 442.9 (+3.3%); deterministic +5.4% /
// +2.9%; 7 mixed lengths (1-5000, GQA 8 / 2) +9.6%, deterministic +11.4%.
// Dense kernels are SASS-identical.
// Not in this rung: head dim 256 (dK and dV of 64 keys would take 256
// registers per thread; auto takes bwd_04_wgmma_wide for it).
// Shared memory (hdim 64 / 128): 195 / 194 KB (hdim 64 with 64-row steps:
// 130): K, V; two stages of Q, dO, LSE and dpsum; dS^T double-buffered (so
// one barrier per step guards it); two 16 KB dQ staging blocks. A third
// stage does not fit at hdim 64 (228 KB of 227). Registers (setmaxnreg):
// producer 24, consumers 240 (the highest register SASS names, 2026-11-24:
// hdim 128 R234, hdim 64 R237, in both modes; variable-length hdim 64
// without kMods R231; hdim 64 with 64-row steps R177 / R179 (2026-11-24);
// with a softcap or ALiBi, kMods, R237 at both head dims and in both
// modes), and the dQ writer fits the producer's 24 (the code after
// setmaxnreg.dec names at most R21 in SASS, both modes); no spills, no
// local memory, except one 4-byte spill (an STL / LDL pair) in the
// non-deterministic variable-length kMods kernel at hdim 128 (SASS,
// 2026-11-28; the hdim 64 kMods kernels lost theirs with the named dQ
// hand-off, session 29, whose writer warp still names at most R21); ptxas
// keeps the wgmmas unserialized (4 fences, 3 waits per step, kMods too; at
// hdim 64 only with dV issued after the dS^T stores: ptxas serialized every
// wgmma (C7512) with dV issued before dS^T is computed, or just before its
// stores).
// Measured on the H200 (2026-11-24, bf16, heads = 2048 / dhead, TFLOPS =
// 2.5 x the forward's FLOPs / time; `./bench --bwd --seq S --dhead D
// [--causal]`; FlashAttention-4 and cuDNN from the same call, README):
//   first shape (64-row steps at both head dims, dK before dQ), seq 8k:
//     hdim 64: 376 full (bwd_02 286, 1.31x), 355 causal (268, 1.32x)
//     hdim 128: 515 full (326, 1.58x), 473 causal (301, 1.57x)
//   128-row steps at hdim 64 (same call as the 64-row build): 377 -> 457
//     full, 347 -> 418 causal (+21%); hdim 128 unchanged (507.6 / 506.6).
//   dQ's product issued before dK's (two rounds, same call): +1.6% / +0.9%
//     at hdim 128 full / causal, +1.9% at hdim 64 full.
//   Now, seq 8k / 16k: hdim 64 467 / 483 full, 431 / 469 causal; hdim 128
//     510 / 522 full, 469 / 509 causal: 0.77-0.94x of FlashAttention-4
//     (575 / 516, 541 / 517, 664 / 602, 610 / 646), ahead of cuDNN at hdim
//     64 (433 / 443, 427 / 423). Deterministic mode: 0.94-1.00x of these.
// ncu (hdim 128 full 8k, before dQ moved ahead of dK): 19% of the stall samples wait on
// wgmma groups (10% at the wait for dQ's product), 12% on the LSE reads
// from shared memory right after S^T's wait, 11% at barriers; issue slots
// 33% busy. What is left to FlashAttention-4 is latency inside a step, not
// throughput (docs/NOTES.md, session 11).
// Every consumer thread arrives on a stage's empty barrier (racecheck needs
// each reader of the LSE / dpsum rows to release them; one arrival per warp
// or per warpgroup ran at the same speed).
// Session 49: variable-length calls take their sequences longest first (most
// queries) within each group of 32 (bwd_sequence_of, the metadata check's
// order): issue 17's batch full +1.0%, causal +1.3% (H200, call 3).
// Session 52: the dQ convert's early start (BwdKvDone) only where a CTA
// takes >= 8 (hdim 64) / 5 (hdim 128) steps on average
// (kEarlyConvertMinSteps): a narrow window's CTAs paid its count at their
// ends; issue 16's (128, 0) backward +3.7% at hdim 64 8k, +1.0% at hdim 128
// 16k, (256, 0) / (512, 0) at hdim 64 +3.2% / +2.0% (H200).
// Session 58 (H200, one call beside FlashAttention-4 and cuDNN, every peer
// timed over 0.5 s, README): hdim 64 full / causal 8k 531.9 / 499.5, 16k
// 539.8 / 533.3 TFLOPS (0.998-1.015x FA4); hdim 128 595.2 / 548.1, 610.8 /
// 594.2 (0.973-0.980x FA4: issue 18's open cells); 1.11-1.24x cuDNN;
// deterministic / non-deterministic 0.93-0.95 (hdim 64), 0.93-0.98 (128).
// Session 59 (H200, two rotated rounds of one call, docs/NOTES.md): each
// wgmma descriptor by one 64-bit add (DescAdd::kWhole, FlashAttention-4's
// UIADD3.64; ~46 UMOV fewer per kernel): hdim 128 full / causal 8k, 16k
// +0.5% / +0.1%, +0.6% / +0.7%, hdim 64 full 8k +1.3%; deterministic hdim
// 64 +4.8%, hdim 128 -2.0 to +0.3%. The first LSE / dpsum pairs read
// before the waits (session 53's FFMA short-scoreboard samples): +0-0.7%,
// deterministic -2.4 to -4.8%: dropped.
// Session 60 (H200, two calls of two rotated rounds, docs/NOTES.md): the
// deterministic writer's turn spins on relaxed loads and acquires once
// after them (wait_equal_acquire_gpu, common/gpu_counter.cuh): each acquire
// load was also a CCTL.IVALL, an invalidation of the SM's L1, which is the
// consumers' shared memory. Deterministic hdim 128 full 8k / 16k +1.7% /
// +3.1%, causal 8k / 16k 0.0% / +1.2%, hdim 64 -0.2 to 0.0%.
// Session 61 (H200, call 1, two rotated rounds): bwd_04's counter thread
// here too (BwdDqOrder::hand_over / count_steps, thread 64; the release's
// MEMBAR.GPU off the writer's path): deterministic hdim 128 full 16k 579.4
// -> 603.4 (+4.1%), causal 16k 577.1 -> 573.8 (-0.6%, within the rounds'
// spread 574.6-579.5), hdim 64 full 8k +0.1%. Non-deterministic code
// unchanged.
// Session 61 (H200; a helper's reading of FA4's sm90 backward beside
// session 53's ncu pages): the 80-row step body in two copies, the
// mask-free one (every step of a full call, all but the diagonal's of a
// causal one) in FlashAttention-4's order: the LSE pairs read between the
// S^T and dP^T issues, the dpsum pairs before dP^T's wait, and that wait
// after the exponentials of st[0..3] (ptxas then issues 29 of the 40
// before it, 11 after; FA4's SASS has 11 / 29, the masked copy 3 / 37:
// session 63's SASS and ncu pages). Each alone did nothing or lost
// (LSE early -0.6..0%, with dpsum -0.9..-1.4%); the three together, call 9:
// full 8k / 16k +1.4 / +1.7%, causal 8k / 16k +1.1 / +0.7%; call 12 (with
// the 64- and 128-row Configs in the same two-copy loop, which cost hdim 64
// 3%: they keep their own loop here) 0.991-1.008 of FA4 at hdim 128.
// Session 62, this code against the one before it (call 1, two rotated
// rounds): hdim 128 full 8k / 16k +1.3 / +1.1%, causal 8k / 16k +1.5 /
// +0.4%, deterministic +1.3 to +2.7%, hdim 64 +0.3 / -0.1%; beside FA4 in
// call 5 0.983 / 0.993 / 0.981 / 0.997. Dropped in session 62: dK and dV
// by stmatrix and TMA tensor stores (the epilogue FA4 uses), +0.29% mean
// over hdim 64 / 128 cells (-0.2 to +1.2%), not worth its 200 lines.
// Session 63 (H200): per-CTA stamps of issue 18's grids (docs/NOTES.md)
// put 5.1% of the SMs' time idle at the end of hdim 128 causal 8k: the
// grid hands the (KV head, batch) pairs out one after another, each from
// its longest key block, so the last pair's longest CTAs ran alone. Masked
// non-deterministic dense calls now take the pairs two at a time where a
// host replay of the grid says it ends >= 3% sooner (bwd_head_group,
// common/hopper/bwd_tma.cuh): hdim 128 causal 8k +1.9 / +3.3 / +2.5% (three
// calls), 1.018x FA4 in call 7 (0.981 before); GQA 4 causal 8k +10.3%. Full calls' tail (15.5 waves, 3%
// of the stamped time idle) stays: the last units in pieces with a fix-up
// lost 1.6-3.9% at 2k-4k and gained 0.9% at 16k (the dQ convert's early
// CTAs already fill those SMs; exp_P_last_wave_in_pieces.patch).
// Session 64 (H200): the 80-row loop asked the Mask at every step whether
// the key block needs it (25 dependent instructions ahead of the S^T
// issue); now Mask::mask_free_tiles finds the run of mask-free query tiles
// once per CTA (the tiles that need the Mask are a head and a tail of the
// walk) and the step compares its tile with it. Call 1, two rotated
// rounds: hdim 128 full 8k / 16k +1.0 / +0.7%, causal 8k / 16k +0.9 /
// +0.4%, deterministic causal 16k +0.9% (the helper's reading of the ncu
// pages had said 0 to 0.3%). Beside FA4 in call 4 (every head dim, both
// modes, README): hdim 128 1.006-1.024, hdim 64 1.011-1.029 (its 128-row
// kernels unchanged). Dropped: the dQ writer counting the CTA done alone,
// without waiting for the consumers' dK / dV stores (-0.7 to +0.6%,
// exp_L2_writer_counts_alone.patch); the same run in the 64- / 128-row
// loop and bwd_04, whose Mask question sits among the S issues already
// (hdim 64 full 8k -1.4%, exp_M_mask_free_run_other_loops.patch).
// Session 65 (H200): the dQ writer of a CTA that nothing counts (narrow
// windows, varlen: no early convert) ends on a read-only bulk wait, as
// FlashAttention-4's writer does; the additions complete before the convert
// launched after the grid. (128, 0) windows hdim 64 / 128 +0.4 / +1.1% in
// call 1, -0.0 / +0.3% in call 5 (varlen causal +0.2 / +0.8%): 0 to +1%,
// about the rounds' spread. Dropped again: dK / dV by TMA stores (+0.5 /
// -0.1% on the windows), even key blocks first (-2.6% at hdim 128 causal
// 16k, 0 on the windows); and a walk for few-step calls (min(units, SMs)
// CTAs taking key block after key block, K / V of the next loaded during
// the copy-out): -4 to -8% on the windows, the hardware's CTA relaunch
// being cheaper than the walk's bookkeeping (exp_K_backward_walk.patch).
// Run it: ./runner --bwd --kernel wgmma [--softcap 30 --alibi] ;
//   ./bench --bwd --kernel wgmma --seq 8192 --dhead 128 [--softcap 30]
#include <cuda.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>

#include "common/backward.h"
#include "common/bwd_params.h"
#include "common/bwd_seq.cuh"
#include "common/head_dims.h"
#include "common/hopper/bwd_tma.cuh"
#include "common/hopper/sync.cuh"
#include "common/hopper/tma_host.h"
#include "common/hopper/wgmma.cuh"
#include "common/launch_limits.h"
#include "common/mask.h"
#include "common/mma.cuh"
#include "common/numeric.cuh"
#include "common/online_softmax.cuh"
#include "common/scores.h"

namespace flash::detail {

#if FLASH_HAS_SM90A
namespace {

template <int kHeadDim_, int kBlockM_> struct WgmmaBwdConfigT {
  static constexpr int kHeadDim = kHeadDim_;
  // Query rows per step: the N of S^T and dP^T, the k of dV and dK. hdim 64
  // takes 128 (FlashAttention-3's 128 x 128 tile; 64 there is the rung's
  // first shape, kept for the A/B); hdim 128 has no registers for 128 (S^T,
  // dP^T, dK and dV would be 64 floats each): 80 (WgmmaBwdConfig80), or 64
  // with score modifiers, and where 64-row steps walk fewer rows
  // (uses_rows80: narrow windows, short calls).
  static constexpr int kBlockM = kBlockM_;
  // 80-row steps: 80 is not a wgmma M, so dQ is computed transposed, dQ^T =
  // K^T dS^T (the head dim on M: warpgroup c takes dims 64 c..), with dS
  // stored [query][key] (stmatrix .trans) as its K-major B; the accumulator
  // takes dQ^T's fragment order (BwdDqTLayout), each dense (batch, head)
  // padded to kRowPad rows (whole steps and whole kBwdRowPad tiles); dQ^T
  // staged for the writer's bulk reductions as dQ is (20 KB per warpgroup).
  // Variable-length calls pad each sequence by 256 rows instead of 128
  // (bwd_ws_seq_pad), since a last step may end 79 rows past the sequence.
  // Only calls without score modifiers (kPlainOnly);
  // deterministic mode counts each step on the 64-row tile of its first row
  // (BwdDqOrder).
  static constexpr bool kDqTransposed = kBlockM == 80;
  static constexpr bool kPlainOnly = kDqTransposed;
  static constexpr int kRowPad = kDqTransposed ? 5 * kBwdRowPad : kBwdRowPad;
  static constexpr int kBlockN = 128;  // keys per CTA, 64 per consumer warpgroup (wgmma's M)
  static constexpr int kConsumerWGs = 2;
  static constexpr int kStages = 2;
  // The forward's proven split (fa3_forward.cuh: 32 / 240 hung).
  static constexpr int kProducerRegs = 24, kConsumerRegs = 240;
  // dQ = dS K: each warpgroup a 64 x 64 block per step (see the header),
  // split between the warpgroups by one of: keys (hdim 64 with 64-row
  // steps: both blocks add to the same floats), dims (hdim 128) or query
  // rows (128-row steps). The last two sum over all the block's keys, so
  // both warpgroups' dS^T must be in shared memory first.
  static constexpr bool kDqSplitQueries = kBlockM == 128;
  static constexpr bool kDqSplitKeys = kHeadDim == 64 && !kDqSplitQueries;
  static constexpr int kDqKeys = kDqSplitKeys ? kBlockN / kConsumerWGs : kBlockN;
  // Registers at 128-row steps: S^T and dP^T are 64 floats each per thread,
  // dK and dV 32. Issuing dV's product before dS^T is computed (its A
  // operand, 32 registers of P^T, live beside the fp32 S^T and dP^T)
  // spilled and serialized every wgmma; issuing it after dS^T is computed
  // but before its stores still serialized them. So dS^T is computed,
  // rounded and stored first, and then P^T rounded and dV issued
  // (FlashAttention-3's order at hdim 64).
  static constexpr bool kDvAfterDs = kBlockM == 128 || kDqTransposed;
  // The dQ hand-off (Bwd03DqHandoff): named barriers and a whole writer warp
  // at 128-row steps (hdim 64: +4.9% full 8k, +2.2% deterministic, H200,
  // session 29); mbarriers and one spinning writer thread otherwise (the
  // named protocol at hdim 128's 80-row steps: +-0.2% non-deterministic,
  // -1.6% / -4.3% deterministic full 8k / causal 16k).
  static constexpr bool kDqNamedHandoff = kBlockM == 128;
  // The dQ convert's early start (BwdKvDone) only where the CTAs take at
  // least this many steps on average (common/hopper/bwd_tma.cuh). Session
  // 52, H200, without the early start: 128-row steps (hdim 64, the named
  // hand-off) +3.7% / +3.2% / +2.0% at ~2 / 3 / 4.8 steps a CTA ((128, 0) /
  // (256, 0) / (512, 0) windows); 64- and 80-row steps (hdim 128) +1.0% at
  // ~4, -0.9% / -1.7% / -2.2% at ~6 / 9 / 10.
  static constexpr int kEarlyConvertMinSteps = kBlockM == 128 ? 8 : 5;
  static_assert(kBlockM == 64 || (kBlockM == 128 && kHeadDim == 64) || (kBlockM == 80 && kHeadDim == 128),
                "a step is one or (hdim 64) two dQ row tiles, or (hdim 128) 80 rows of dQ^T");
  static_assert(kRowPad % kBlockM == 0 && kRowPad % kBwdRowPad == 0, "steps tile the padded rows");
  static_assert(kHeadDim == 64 || kHeadDim == 128, "dQ blocks are 64 x 64: one per warpgroup");
  static_assert(kDqKeys % 16 == 0, "dQ's k-steps are 16 keys");
  // This warpgroup's dQ block within the step: its first query row and its
  // 64-dim block.
  __device__ static int dq_row(int c) { return kDqSplitQueries ? 64 * c : 0; }
  __device__ static int dq_dims_block(int c) { return kDqSplitKeys || kDqSplitQueries ? 0 : c; }
  __device__ static int dq_key(int c) { return kDqSplitKeys ? 64 * c : 0; }
  // The block's floats (64 x 64, or 64 dims x kBlockM queries of dQ^T) and
  // where they start in the accumulator, from the step's first row.
  static constexpr int kDqFloats = kDqTransposed ? kDqBlock * kBlockM : kDqBlockFloats;
  __device__ static int dq_offset(int c) {
    return kDqTransposed ? c * kDqFloats : dq_row(c) * kHeadDim + dq_dims_block(c) * kDqBlockFloats;
  }
};

template <int kHeadDim> using WgmmaBwdConfig = WgmmaBwdConfigT<kHeadDim, kHeadDim == 64 ? 128 : 64>;
// The step shapes' choices at a glance (and members that only sm_90a device
// code reads, which the sm_80 pass compiles out: nvcc's #177 sees them here).
static_assert(WgmmaBwdConfigT<64, 128>::kDvAfterDs && WgmmaBwdConfigT<128, 80>::kDvAfterDs &&
                  !WgmmaBwdConfigT<128, 64>::kDvAfterDs,
              "dV's product after dS^T at 128- and 80-row steps");
static_assert(WgmmaBwdConfigT<64, 128>::kDqNamedHandoff && !WgmmaBwdConfigT<128, 80>::kDqNamedHandoff &&
                  !WgmmaBwdConfigT<128, 64>::kDqNamedHandoff,
              "the named dQ hand-off at 128-row steps only");
template <int kHeadDim> using WgmmaBwdConfig80 = WgmmaBwdConfigT<kHeadDim, 80>;

template <class F> bool dispatch_bwd03_head_dim(int d, F&& f) {
  return dispatch_head_dim_of<64, 128>(d, static_cast<F&&>(f));
}
using Bwd03HeadDims = BuiltHeadDims<64, 128>;

// Shared memory, as byte offsets from a 1024-byte-aligned base (the 128-byte
// swizzle repeats every 1024 bytes; TMA and wgmma both assume tiles start
// there). Tiles of 16-bit values are rows of 64-column (128-byte) blocks,
// as TMA writes them.
template <class Cfg> struct Bwd03Smem {
  static constexpr int kKVBytes = Cfg::kBlockN * Cfg::kHeadDim * 2;  // K or V
  static constexpr int kQBytes = Cfg::kBlockM * Cfg::kHeadDim * 2;   // one stage of Q or dO
  // dS^T: [key][query], kBlockM / 64 column blocks; kDqTransposed: dS,
  // [query][key], one 64-key column block per warpgroup.
  static constexpr int kDsBytes = Cfg::kBlockN * Cfg::kBlockM * 2;
  static constexpr int kDqBytes = Cfg::kDqFloats * 4;  // one warpgroup's dQ staging block
  static constexpr int kRowBytes = Cfg::kBlockM * 4;                  // one stage of LSE or dpsum
  static constexpr int kK = 0;
  static constexpr int kV = kK + kKVBytes;
  static constexpr int kQ = kV + kKVBytes;
  static constexpr int kDo = kQ + Cfg::kStages * kQBytes;
  static constexpr int kDs = kDo + Cfg::kStages * kQBytes;
  static constexpr int kDq = kDs + 2 * kDsBytes;
  static constexpr int kLse = kDq + Cfg::kConsumerWGs * kDqBytes;
  static constexpr int kDpsum = kLse + Cfg::kStages * kRowBytes;
  static constexpr int kBars = kDpsum + Cfg::kStages * kRowBytes;
  // kv_full, then per stage full, empty (Bwd03Ring); then per consumer
  // warpgroup staged, then freed (Bwd03DqHandoff).
  static constexpr int kRingBars = bwd_ring_bars<Cfg>(false);
  static constexpr int kNumBars = kRingBars + 2 * Cfg::kConsumerWGs + 2;  // + completed, counted
  static constexpr std::size_t kBytes = kBars + kNumBars * 8 + 1024;  // + slack to align the base
  static_assert(kKVBytes % 1024 == 0 && kQBytes % 1024 == 0 && kDsBytes % 1024 == 0 && kDq % 1024 == 0,
                "tiles must keep 1024-byte alignment");
  static_assert(kBytes <= 227 * 1024, "more shared memory than a CTA may have");
  // The producer's LSE and dpsum copies read whole steps of the padded row
  // arrays; a step holds whole dQ counter tiles (BwdDqOrder), or (80 rows)
  // starts in a counter tile of its own.
  static_assert(Cfg::kRowPad % Cfg::kBlockM == 0 &&
                    (Cfg::kDqTransposed ? Cfg::kBlockM >= kBwdDqTileRows : Cfg::kBlockM % kBwdDqTileRows == 0),
                "steps tile the row arrays; distinct steps have distinct counter tiles");
  // setmaxnreg moves registers within what the CTA got at launch (see Fa3Smem).
  static constexpr int kThreads = kWarpgroupThreads * (1 + Cfg::kConsumerWGs);
  static_assert(setmaxnreg_fits(Cfg::kProducerRegs, Cfg::kConsumerRegs, Cfg::kConsumerWGs),
                "setmaxnreg: more registers than the CTA was launched with");
};

// The shared Hopper backward parts (common/hopper/bwd_tma.cuh) with this
// rung's tiles.
template <class Cfg> using Bwd03Ring = BwdRing<Cfg, Bwd03Smem<Cfg>>;

// Named barriers (bar.sync ids; 0 is __syncthreads).
enum Bwd03Barrier : int {
  kBwd03DsReady = 1,  // hdim 128: both warpgroups' dS^T are in shared memory (256 threads);
                      // hdim 64: + 1 + warpgroup, its own dS^T (128 threads)
  kBwd03StoreReady = 4,  // both warpgroups' last products are done (256 threads);
                         // + 1 + warpgroup, its dK and dV rows are in shared memory (128 threads)
  // (8 is kBwdDoneBarrier.) The named dQ hand-off (Cfg::kDqNamedHandoff), per
  // consumer warpgroup c, between its 128 threads and the writer's warp:
  kBwd03DqFull = 9,    // + c: warpgroup c's block is staged (160 threads)
  kBwd03DqEmpty = 11,  // + c: the writer has read warpgroup c's previous block (160 threads)
};

// Each consumer warpgroup hands its staged dQ block to the dQ writer (in the
// producer warpgroup, Bwd03DqWriter), which issues the bulk reduction that
// adds it to the accumulator (deterministic mode: in the fixed order,
// BwdDqOrder), so that the consumers never wait for a reduction (or that
// order) themselves. One use per step. Two protocols (Cfg::kDqNamedHandoff):
// - mbarriers, one writer thread that spins on them; the parities come from
//   the step index, as in the ring:
//     staged(c)  every thread of warpgroup c stored its part of the block;
//     freed(c)   the writer's reduction from block c has read it (it may be
//                overwritten; deterministic mode: the addition completed).
// - named barriers (FlashAttention-4's), a whole writer warp that blocks in
//   bar.sync: full(c) as staged(c); empty(c) as freed(c), but the writer
//   arrives on it at the start of each of its steps, step 0 included, so
//   arrivals and waits pair up one to one without parities.
template <class Cfg> struct Bwd03DqHandoff {
  static constexpr bool kNamed = Cfg::kDqNamedHandoff;
  static constexpr int kWriterThreads = kNamed ? 32 : 1;
  static constexpr int kNamedThreads = kWarpgroupThreads + 32;  // a consumer warpgroup and the writer's warp
  static_assert(kNamedThreads % 32 == 0, "bar.sync counts whole warps");
  std::uint64_t* bars;

  __device__ std::uint64_t* staged(int c) const { return bars + c; }
  __device__ std::uint64_t* freed(int c) const { return bars + Cfg::kConsumerWGs + c; }
  // Deterministic mode: the writer's step completed (its reductions' writes
  // done) / the counter thread counted it.
  __device__ std::uint64_t* completed() const { return bars + 2 * Cfg::kConsumerWGs; }
  __device__ std::uint64_t* counted() const { return bars + 2 * Cfg::kConsumerWGs + 1; }
  __device__ static std::uint32_t parity(int i) { return i & 1; }

  // One thread, before Bwd03Ring::init (whose fence publishes these too).
  template <bool kDeterministic> __device__ void init() const {
    if constexpr (!kNamed)
      for (int c = 0; c < Cfg::kConsumerWGs; ++c) {
        mbar_init(staged(c), kWarpgroupThreads);
        mbar_init(freed(c), 1);
      }
    if constexpr (kDeterministic) {
      mbar_init(completed(), 1);
      mbar_init(counted(), 1);
    }
  }
  // Consumers, every thread: step i may overwrite the block (the reduction of
  // step i - 1 read it; mbarriers: step 0 passes at once), then announce it
  // staged. Every thread arrives, so that each one's stores are ordered
  // before the writer's bulk reduction reads them.
  __device__ void consumer_acquire(int c, int i) const {
    if constexpr (kNamed) named_barrier_sync(kBwd03DqEmpty + c, kNamedThreads);
    else mbar_wait(freed(c), parity(i) ^ 1);
  }
  __device__ void consumer_commit(int c) const {
    if constexpr (kNamed) named_barrier_arrive(kBwd03DqFull + c, kNamedThreads);
    else mbar_arrive(staged(c));
  }
  // The writer: every one of its threads.
  __device__ void writer_wait(int c, int i) const {
    if constexpr (kNamed) named_barrier_sync(kBwd03DqFull + c, kNamedThreads);
    else mbar_wait(staged(c), parity(i));
  }
  __device__ void writer_release(int c) const {
    if constexpr (kNamed) named_barrier_arrive(kBwd03DqEmpty + c, kNamedThreads);
    else mbar_arrive(freed(c));
  }
};


// The dQ writer (one thread, or a warp whose lane 0 issues the reductions,
// since bulk groups are per thread, and takes the deterministic turns): per
// step, each consumer warpgroup's staged block added to the accumulator by
// one bulk reduction, in both modes. Non-deterministic: both reductions in
// flight, each block freed as soon as the copy engine has read it (the
// consumers then wait for the writer only when it is a whole step behind).
// Deterministic: first its turn on the tile's counter, then the reductions
// (at the tile's first turn, stores: BwdDqOrder),
// then, once the additions completed, the blocks freed (named: at the next
// step's start) and the counter incremented.
template <class Cfg, bool kDeterministic, bool kVarlen> struct Bwd03DqWriter {
  using Smem = Bwd03Smem<Cfg>;
  static constexpr bool kNamed = Cfg::kDqNamedHandoff;
  static_assert(Cfg::kConsumerWGs == 2, "the non-deterministic releases below name two bulk groups");

  __device__ static void run(const BwdParams& p, std::uint8_t* smem, const Bwd03DqHandoff<Cfg>& handoff, int n_block,
                             int h_kv, int b, const SeqRows<kVarlen>& seq, const TileRange& tiles, int steps) {
    const Mask& mask = seq.mask();  // deterministic, variable-length: the sequence's (its key blocks are the ones turn() counts)
    const bool leader = !kNamed || threadIdx.x % 32 == 0;
    typename Bwd03Ring<Cfg>::Step step{h_kv * p.group_size, tiles.begin};
    for (int i = 0; i < steps; ++i) {
      const int m0 = step.m_block * Cfg::kBlockM;
      const std::int64_t row0 = bwd_ws_row0(p, seq, b, step.h) + m0;
      bool first = false;  // deterministic: the tile's first adder (BwdDqOrder), which stores
      if constexpr (kDeterministic) {
        if constexpr (kNamed)  // the previous step's additions completed (below): both blocks are free
#pragma unroll
          for (int c = 0; c < Cfg::kConsumerWGs; ++c) handoff.writer_release(c);
        if (leader) BwdDqOrder<Cfg>::wait_turn(p, mask, row0, m0, n_block, first);
        if constexpr (kNamed) __syncwarp();
      }
      float* gdq = p.dq_accum + row0 * Cfg::kHeadDim;
#pragma unroll
      for (int c = 0; c < Cfg::kConsumerWGs; ++c) {
        if constexpr (kNamed && !kDeterministic) {
          // The groups read their sources in commit order: the previous
          // step's block c has been read once at most one group is left.
          if (leader) bulk_wait_read<1>();
          __syncwarp();
          handoff.writer_release(c);
        }
        handoff.writer_wait(c, i);
        if (leader) {
          // Deterministic, split keys: both blocks add to the same floats;
          // the first addition completes before the second is issued (two
          // reductions in flight would add in either order).
          if (kDeterministic && Cfg::kDqSplitKeys && c > 0) bulk_wait_all();
          const float* sdq = reinterpret_cast<const float*>(smem + Smem::kDq + c * Smem::kDqBytes);
          if constexpr (kDeterministic)  // the first adder's split-keys second block adds to its first
            BwdDqOrder<Cfg>::put(gdq + Cfg::dq_offset(c), sdq, Smem::kDqBytes,
                                 first && !(Cfg::kDqSplitKeys && c > 0));
          else
            bulk_reduce_add_f32(gdq + Cfg::dq_offset(c), sdq, Smem::kDqBytes);
          tma_store_commit();
        }
      }
      if constexpr (kDeterministic) {
        if (leader) bulk_wait_all();  // the additions' global writes are done (not only their shared-memory reads)
        if constexpr (!kNamed)
#pragma unroll
          for (int c = 0; c < Cfg::kConsumerWGs; ++c) handoff.writer_release(c);
        if (leader) BwdDqOrder<Cfg>::hand_over(handoff.completed(), handoff.counted(), i);  // to the counter thread
      } else if constexpr (!kNamed) {
        // Block 0's source is read once at most one group is left, block 1's
        // once none is.
        bulk_wait_read<1>();
        handoff.writer_release(0);
        bulk_wait_read<0>();
        handoff.writer_release(1);
      }
      step.advance(tiles);
    }
    // Shared memory outlives the last reductions' reads; where the CTA counts
    // itself done for the early convert (BwdKvDone), every addition is
    // complete before the count. Elsewhere the reads are enough: the
    // additions complete with the grid, before the convert launched after it
    // reads them (as a TMA-store epilogue ends).
    if constexpr (!kDeterministic)
      if (leader) {
        if (p.kv_done_target > 0) bulk_wait_all();
        else bulk_wait_read<0>();
      }
    if constexpr (kNamed) __syncwarp();
  }
};

// kMods: the call has a softcap or ALiBi (dispatch_score_mods); kVarlen: a
// variable-length batch (SeqRows<true>); template flags, so that calls
// without them keep their code.
template <class T, class Cfg, bool kDeterministic, bool kMods, bool kVarlen> struct Bwd03Consumer {
  using Smem = Bwd03Smem<Cfg>;
  static constexpr int kHeadDim = Cfg::kHeadDim, kBlockM = Cfg::kBlockM, kBlockN = Cfg::kBlockN;
  static constexpr int kNTilesS = kBlockM / 8;  // n-tiles of S^T and dP^T (queries)
  // dQ's accumulator fragment: a 64 x 64 block, or (kDqTransposed) 64 dims
  // x kBlockM queries of dQ^T.
  static constexpr int kDqN = Cfg::kDqTransposed ? kBlockM : kDqBlock;
  // Each k-step's offset added to the whole 64-bit descriptor (session 59,
  // common/hopper/wgmma.cuh's DescAdd).
  static constexpr DescAdd kDescAdd = DescAdd::kWhole;

  const BwdParams& p;
  std::uint32_t base;   // shared address of the tiles
  std::uint8_t* smem;   // the same, generic
  int c, tid, warp, lane;
  int key0;             // this warpgroup's first key

  // S^T = K Q^T (or dP^T = V dO^T): A = this warpgroup's 64 rows of K (V),
  // B = the stage's Q (dO) tile, both K-major.
  __device__ void gemm_sdp(std::uint32_t kv_tile, std::uint32_t q_tile, float (&acc)[kBlockM / 2]) const {
#pragma unroll
    for (int ks = 0; ks < kHeadDim / 16; ++ks) {
      const std::uint64_t da = wgmma_desc_sw128<kDescAdd>(kv_tile + 64 * c * 128, (ks / 4) * kBlockN * 128 + (ks % 4) * 32, 16, 1024);
      const std::uint64_t db = wgmma_desc_sw128<kDescAdd>(q_tile, (ks / 4) * kBlockM * 128 + (ks % 4) * 32, 16, 1024);
      WgmmaOp<kBlockM>::template ss<T>(acc, da, db, ks > 0);
    }
  }
  // dV += P^T dO (or dK += dS^T Q): A from registers, B = the stage's dO
  // (Q) tile, N-major (head_dim contiguous), as V in the forward's PV.
  __device__ static void gemm_kv(const std::uint32_t (&a)[kBlockM / 16][4], std::uint32_t q_tile,
                                 float (&acc)[kHeadDim / 2]) {
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk)
      WgmmaOp<kHeadDim>::template rs<T>(acc, a[kk], wgmma_desc_sw128<kDescAdd>(q_tile, kk * 16 * 128, kBlockM * 128, 1024), 1);
  }
  // This warpgroup's dQ block: dS (A, M-major: dS^T [key][query] in shared
  // memory; the block's 64 queries are one column block of it) times K (B,
  // N-major), over kDqKeys keys from dq_key.
  __device__ void gemm_dq(std::uint32_t ds_tile, float (&acc)[kDqBlock / 2]) const {
    const std::uint32_t ds_cols = ds_tile + Cfg::dq_row(c) / 64 * kBlockN * 128;
    const std::uint32_t k_cols = base + Smem::kK + Cfg::dq_dims_block(c) * kBlockN * 128;
#pragma unroll
    for (int kk = 0; kk < Cfg::kDqKeys / 16; ++kk) {
      const std::uint64_t da = wgmma_desc_sw128<kDescAdd>(ds_cols + Cfg::dq_key(c) * 128, 16 * kk * 128, kBlockN * 128, 1024);
      const std::uint64_t db = wgmma_desc_sw128<kDescAdd>(k_cols + Cfg::dq_key(c) * 128, 16 * kk * 128, kBlockN * 128, 1024);
      WgmmaOp<kDqBlock>::template ss_mn<T>(acc, da, db, kk > 0);
    }
  }

  // kDqTransposed: this warpgroup's dQ^T block, dims 64 c.. x the step's
  // kBlockM queries: K^T (A, M-major: K's dims block c, [key][dim]) times
  // dS^T (B, K-major: dS stored [query][key], one 64-key column block per
  // warpgroup), over all kBlockN keys.
  __device__ void gemm_dqt(std::uint32_t ds_tile, float (&acc)[kDqN / 2]) const {
    const std::uint32_t k_cols = base + Smem::kK + c * kBlockN * 128;
#pragma unroll
    for (int kk = 0; kk < kBlockN / 16; ++kk) {
      const std::uint64_t da = wgmma_desc_sw128<kDescAdd>(k_cols, 16 * kk * 128, kBlockN * 128, 1024);
      const std::uint64_t db = wgmma_desc_sw128<kDescAdd>(ds_tile + (kk / 4) * kBlockM * 128, (kk % 4) * 32, 16, 1024);
      WgmmaOp<kDqN>::template ss_a_mmajor<T>(acc, da, db, kk > 0);
    }
  }
  // kDqTransposed: dS (this warpgroup's keys) into shared memory as [query]
  // [key], keys contiguous, in column block c (the 128-byte swizzle: 16-byte
  // chunk (key % 64) / 8 ^ (query % 8) of the query's row). The lane's A
  // fragment dsa[kk][r] is the 8 x 8 matrix of keys 16 w + 8 (r % 2).. and
  // queries 16 kk + 8 (r / 2)..; stmatrix .trans writes each transposed, so
  // lane 8 m + j names the row of query 16 kk + 8 (m / 2) + j, chunk
  // 2 w + m % 2 (five stmatrix per thread and step).
  __device__ void store_ds_rows(std::uint32_t ds_tile, const std::uint32_t (&ds)[kBlockM / 16][4]) const {
    const int m = lane / 8, j = lane % 8;
    const std::uint32_t row0 = ds_tile + c * kBlockM * 128 + (8 * (m / 2) + j) * 128 + (((2 * warp + m % 2) ^ j) * 16);
#pragma unroll
    for (int kk = 0; kk < kBlockM / 16; ++kk) stmatrix_x4_trans(row0 + 16 * kk * 128, ds[kk]);
  }

  // dS^T (this warpgroup's keys) into shared memory: [key][query], queries
  // contiguous, the 128-byte swizzle, a 64-query column block after another
  // (as TMA lays out a wider tile); the lane's 4-byte pair of (key r,
  // queries 8 j + 2 t, + 1) lands in block j / 8 at chunk j % 8 ^ (r % 8),
  // conflict-free.
  __device__ void store_ds(std::uint8_t* ds_tile, const std::uint32_t (&ds)[kBlockM / 16][4]) const {
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int j = 0; j < kNTilesS; ++j)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int r = 64 * c + 16 * warp + g + 8 * half;  // r % 8 == g
        *reinterpret_cast<std::uint32_t*>(ds_tile + j / 8 * kBlockN * 128 + r * 128 + (((j % 8) ^ g) * 16) + 4 * t) =
            ds[j / 2][2 * (j % 2) + half];
      }
  }

  // Every step's products; dK and dV come back unscaled. Each step's dQ
  // block goes to the writer (handoff), which adds it.
  __device__ void run(const Bwd03Ring<Cfg>& ring, const Bwd03DqHandoff<Cfg>& handoff, int b, int h_kv,
                      const SeqRows<kVarlen>& seq, const TileRange& tiles, int steps, float (&dk)[kHeadDim / 2],
                      float (&dv)[kHeadDim / 2]) const {
    if (steps == 0) return;
    const Mask& mask = seq.mask();
    const float* s_lse = reinterpret_cast<const float*>(smem + Smem::kLse);
    const float* s_dpsum = reinterpret_cast<const float*>(smem + Smem::kDpsum);
    const int t = lane % 4;
    // 80-row steps: the run of query tiles whose steps need no Mask on this
    // key block (both warpgroups' 128 keys), found while K and V land.
    const TileRange free_run = Cfg::kDqTransposed ? mask.template mask_free_tiles<kBlockM>(tiles, key0 - 64 * c, kBlockN)
                                                  : TileRange{};
    mbar_wait(ring.kv_full(), 0);
    typename Bwd03Ring<Cfg>::Step step{h_kv * p.group_size, tiles.begin};
    if constexpr (Cfg::kDqTransposed) {  // 80-row steps
      static_assert(Cfg::kDvAfterDs && !Cfg::kDqSplitKeys, "the 80-row body issues dV after the dS stores, one dS barrier");
      for (int i = 0; i < steps; ++i) {
        // The step's body, in two copies: kMF (mask-free: no tile of the
        // 128-key block needs the Mask; 80-row steps only, below) reads the LSE
        // pairs between the S^T and dP^T issues and the dpsum pairs before dP^T's
        // wait, and waits for dP^T once the first exponentials are issued
        // (session 61, FlashAttention-4's order: the exponentials start as S^T
        // lands and more of them overlap dP^T). The other copy is the step as
        // before, for every Config.
        const auto body = [&](auto mask_free) {
          constexpr bool kMF = decltype(mask_free)::value;
          const int s = Bwd03Ring<Cfg>::stage(i), m0 = step.m_block * kBlockM;
          const std::uint32_t q_tile = base + Smem::kQ + s * Smem::kQBytes, do_tile = base + Smem::kDo + s * Smem::kQBytes;
          ring.consumer_wait(i);

          // S^T and dP^T in flight together.
          float st[kBlockM / 2], dpt[kBlockM / 2];
          wgmma_fence();
          gemm_sdp(base + Smem::kK, q_tile, st);
          wgmma_commit();
          const float* lse = s_lse + s * kBlockM;
          float2 lsev[kNTilesS];  // kMF: the LSE pairs, read while S^T runs (20 registers at 80 rows)
          if constexpr (kMF)
#pragma unroll
            for (int j = 0; j < kNTilesS; ++j) lsev[j] = *reinterpret_cast<const float2*>(lse + 8 * j + 2 * t);
          gemm_sdp(base + Smem::kV, do_tile, dpt);
          wgmma_commit();
          wgmma_wait<1>();
          fence_registers(st);

          // P^T: the softcap and ALiBi (kMods: common/scores.h, in the order
          // bwd_02 and the forward take), the Mask (-inf) on tiles that need
          // it, then exp2 against each query's LSE. Query rows past seqlen_q
          // (the sequence's, variable-length) have LSE +inf (P = 0) and zero Q
          // and dO rows; keys past seqlen_k zero K and V rows (masked).
          auto& st_frag = *reinterpret_cast<float(*)[1][kNTilesS][4]>(&st);
          const ScoreMod scores = kMods ? ScoreMod(p, b, step.h, mask.diag) : ScoreMod(p);
          if constexpr (kMods) scores.apply_transposed(st_frag, key0 + 16 * warp, m0, lane);
          if constexpr (!kMF)
            if (mask.row_block(m0, kBlockM).needs_mask(key0, 64)) mask.apply_transposed(st_frag, key0 + 16 * warp, m0, lane);
#pragma unroll
          for (int j = 0; j < kNTilesS; ++j) {
            const float2 l = kMF ? lsev[j] : *reinterpret_cast<const float2*>(lse + 8 * j + 2 * t);
            const float scale2 = ScoreMod(p).exp2_scale();
            st[4 * j + 0] = fast_exp2(st[4 * j + 0] * scale2 - l.x);
            st[4 * j + 1] = fast_exp2(st[4 * j + 1] * scale2 - l.y);
            st[4 * j + 2] = fast_exp2(st[4 * j + 2] * scale2 - l.x);
            st[4 * j + 3] = fast_exp2(st[4 * j + 3] * scale2 - l.y);
          }
          const float* dpsum = s_dpsum + s * kBlockM;
          float2 dpsv[kNTilesS];  // kMF: the dpsum pairs, read before dP^T's wait
          if constexpr (kMF)
#pragma unroll
            for (int j = 0; j < kNTilesS; ++j) dpsv[j] = *reinterpret_cast<const float2*>(dpsum + 8 * j + 2 * t);
          // dP^T; kMF: after the exponentials of
          // st[0..3] (ptxas then issues 29 of the 40 before it; FA4's SASS 11;
          // none pinned: 3, all 40: -2%, session 46).
          if constexpr (kMF) wgmma_wait_after_all<0>(*reinterpret_cast<const float(*)[4]>(&st[0]));
          else wgmma_wait<0>();
          fence_registers(dpt);

          // dS^T = P^T (dP^T - dpsum).
#pragma unroll
          for (int j = 0; j < kNTilesS; ++j) {
            const float2 d = kMF ? dpsv[j] : *reinterpret_cast<const float2*>(dpsum + 8 * j + 2 * t);
            dpt[4 * j + 0] = st[4 * j + 0] * (dpt[4 * j + 0] - d.x);
            dpt[4 * j + 1] = st[4 * j + 1] * (dpt[4 * j + 1] - d.y);
            dpt[4 * j + 2] = st[4 * j + 2] * (dpt[4 * j + 2] - d.x);
            dpt[4 * j + 3] = st[4 * j + 3] * (dpt[4 * j + 3] - d.y);
          }
          // kMods: times the softcap's derivative, recovered from P^T and each
          // query's (column's) LSE, reread from the stage (not kept live).
          if constexpr (kMods)
            scores.apply_grad_transposed(*reinterpret_cast<float(*)[1][kNTilesS][4]>(&dpt), st_frag, key0 + 16 * warp, m0,
                                         lane, [&](int j, int e) {
                                           const float2 l = *reinterpret_cast<const float2*>(lse + 8 * j + 2 * t);
                                           return e == 0 ? l.x : l.y;
                                         });
          std::uint32_t dsa[kBlockM / 16][4];
          to_a_operand<T, kBlockM>(dpt, dsa);
          // dS^T double-buffered: the other warpgroup may still be reading the
          // previous step's buffer in its dQ product (it passed this step's
          // barrier only after finishing the step before, so buffer i % 2 is free).
          const int ds_off = Smem::kDs + (i % 2) * Smem::kDsBytes;
          store_ds_rows(base + ds_off, dsa);
          // dV's product, once dS is in shared memory (Cfg::kDvAfterDs).
          std::uint32_t pa[kBlockM / 16][4];
          to_a_operand<T, kBlockM>(st, pa);
          wgmma_fence();  // P^T's registers, before the product reads them
          gemm_kv(pa, do_tile, dv);
          wgmma_commit();
          fence_async_shared();  // the dS stores, before wgmma (the async proxy) reads them
          named_barrier_sync(kBwd03DsReady, Cfg::kConsumerWGs * kWarpgroupThreads);

          // dQ first, then dK (dS^T Q, from registers): dQ is waited for alone
          // and staged while dK runs. (dK issued before the barrier instead, so
          // that it overlapped the wait for the other warpgroup, left dQ queued
          // behind it: 1-2% slower, docs/NOTES.md.)
          float dq[kDqN / 2];
          wgmma_fence();
          gemm_dqt(base + ds_off, dq);
          wgmma_commit();
          gemm_kv(dsa, q_tile, dk);
          wgmma_commit();
          handoff.consumer_acquire(c, i);  // the staging block is free (while dQ runs)
          wgmma_wait<1>();  // dQ (dK may still run)
          fence_registers(dq);

          // The dQ block staged in the accumulator's fragment order (lane l's
          // float4 of n-tile j of warp w at ((w * kDqN / 8 + j) * 32 + l) * 4,
          // 512 contiguous bytes per warp and n-tile) and handed to the writer,
          // which adds it with one bulk reduction. (Float4 reductions from
          // registers instead, no staging or hand-off: 8-9% slower at hdim 128,
          // session 24.)
          float* sdq = reinterpret_cast<float*>(smem + Smem::kDq + c * Smem::kDqBytes);
#pragma unroll
          for (int j = 0; j < kDqN / 8; ++j)
            *reinterpret_cast<float4*>(sdq + ((warp * (kDqN / 8) + j) * 32 + lane) * 4) =
                make_float4(dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]);
          fence_async_shared();  // the staging stores, before the copy engine reads them
          handoff.consumer_commit(c);  // an arrival: no wait
          wgmma_wait<0>();  // dK (and dV)
          fence_registers(dk);
          fence_registers(dv);
          ring.consumer_release(i);
        };
        // The mask-free copy on 80-row steps where the whole key block (both
        // warpgroups' 64 keys: the same choice in both, which meet at barriers)
        // needs no Mask: every step of a full call, all but the diagonal's of a
        // causal one. (Its LSE pairs stay live across dP^T's issue: 20 registers
        // at 80 rows, which the 64- and 128-row Configs do not have to spare.)
        // The choice is two compares with the run found above (the Mask's
        // question per step was 25 dependent instructions at the loop's top).
        if (step.m_block >= free_run.begin && step.m_block < free_run.end) body(std::true_type{});
        else body(std::false_type{});
        step.advance(tiles);
      }
    } else {
      // The other Configs' step (as the masked copy above; a loop of its own:
      // the two-copy form of it changed these kernels' SASS, and hdim 64 lost
      // 2.9-3.5% in session 61's call 12; the two loops' common second half
      // as shared helpers rescheduled the 64-row hdim 128 kernels, every
      // softcap / ALiBi call there: -1.3% at causal 16k with softcap 30,
      // session 62, exp_bwd03_step_helpers.patch).
      for (int i = 0; i < steps; ++i) {
        const int s = Bwd03Ring<Cfg>::stage(i), m0 = step.m_block * kBlockM;
        const std::uint32_t q_tile = base + Smem::kQ + s * Smem::kQBytes, do_tile = base + Smem::kDo + s * Smem::kQBytes;
        ring.consumer_wait(i);

        // S^T and dP^T in flight together.
        float st[kBlockM / 2], dpt[kBlockM / 2];
        wgmma_fence();
        gemm_sdp(base + Smem::kK, q_tile, st);
        wgmma_commit();
        gemm_sdp(base + Smem::kV, do_tile, dpt);
        wgmma_commit();
        wgmma_wait<1>();
        fence_registers(st);

        // P^T: the softcap and ALiBi (kMods: common/scores.h, in the order
        // bwd_02 and the forward take), the Mask (-inf) on tiles that need
        // it, then exp2 against each query's LSE. Query rows past seqlen_q
        // (the sequence's, variable-length) have LSE +inf (P = 0) and zero Q
        // and dO rows; keys past seqlen_k zero K and V rows (masked).
        auto& st_frag = *reinterpret_cast<float(*)[1][kNTilesS][4]>(&st);
        const ScoreMod scores = kMods ? ScoreMod(p, b, step.h, mask.diag) : ScoreMod(p);
        if constexpr (kMods) scores.apply_transposed(st_frag, key0 + 16 * warp, m0, lane);
        if (mask.row_block(m0, kBlockM).needs_mask(key0, 64)) mask.apply_transposed(st_frag, key0 + 16 * warp, m0, lane);
        const float* lse = s_lse + s * kBlockM;
#pragma unroll
        for (int j = 0; j < kNTilesS; ++j) {
          const float2 l = *reinterpret_cast<const float2*>(lse + 8 * j + 2 * t);
          const float scale2 = ScoreMod(p).exp2_scale();
          st[4 * j + 0] = fast_exp2(st[4 * j + 0] * scale2 - l.x);
          st[4 * j + 1] = fast_exp2(st[4 * j + 1] * scale2 - l.y);
          st[4 * j + 2] = fast_exp2(st[4 * j + 2] * scale2 - l.x);
          st[4 * j + 3] = fast_exp2(st[4 * j + 3] * scale2 - l.y);
        }
        // dV's product is issued here (it runs while dS^T is computed), or,
        // with 128-row steps, once dS^T is in shared memory (Cfg::kDvAfterDs).
        std::uint32_t pa[kBlockM / 16][4];
        const auto issue_dv = [&] {
          to_a_operand<T, kBlockM>(st, pa);
          wgmma_fence();  // P^T's registers, before the product reads them
          gemm_kv(pa, do_tile, dv);
          wgmma_commit();
        };
        if constexpr (!Cfg::kDvAfterDs) issue_dv();
        wgmma_wait<Cfg::kDvAfterDs ? 0 : 1>();  // dP^T (dV, if issued, may still run)
        fence_registers(dpt);

        // dS^T = P^T (dP^T - dpsum).
        const float* dpsum = s_dpsum + s * kBlockM;
#pragma unroll
        for (int j = 0; j < kNTilesS; ++j) {
          const float2 d = *reinterpret_cast<const float2*>(dpsum + 8 * j + 2 * t);
          dpt[4 * j + 0] = st[4 * j + 0] * (dpt[4 * j + 0] - d.x);
          dpt[4 * j + 1] = st[4 * j + 1] * (dpt[4 * j + 1] - d.y);
          dpt[4 * j + 2] = st[4 * j + 2] * (dpt[4 * j + 2] - d.x);
          dpt[4 * j + 3] = st[4 * j + 3] * (dpt[4 * j + 3] - d.y);
        }
        // kMods: times the softcap's derivative, recovered from P^T and each
        // query's (column's) LSE, reread from the stage (not kept live).
        if constexpr (kMods)
          scores.apply_grad_transposed(*reinterpret_cast<float(*)[1][kNTilesS][4]>(&dpt), st_frag, key0 + 16 * warp, m0,
                                       lane, [&](int j, int e) {
                                         const float2 l = *reinterpret_cast<const float2*>(lse + 8 * j + 2 * t);
                                         return e == 0 ? l.x : l.y;
                                       });
        std::uint32_t dsa[kBlockM / 16][4];
        to_a_operand<T, kBlockM>(dpt, dsa);
        // dS^T double-buffered: the other warpgroup may still be reading the
        // previous step's buffer in its dQ product (it passed this step's
        // barrier only after finishing the step before, so buffer i % 2 is free).
        const int ds_off = Smem::kDs + (i % 2) * Smem::kDsBytes;
        if constexpr (Cfg::kDqTransposed) store_ds_rows(base + ds_off, dsa);
        else store_ds(smem + ds_off, dsa);
        if constexpr (Cfg::kDvAfterDs) issue_dv();
        fence_async_shared();  // the dS^T stores, before wgmma (the async proxy) reads them
        if constexpr (Cfg::kDqSplitKeys) named_barrier_sync(kBwd03DsReady + 1 + c, kWarpgroupThreads);
        else named_barrier_sync(kBwd03DsReady, Cfg::kConsumerWGs * kWarpgroupThreads);

        // dQ first, then dK (dS^T Q, from registers): dQ is waited for alone
        // and staged while dK runs. (dK issued before the barrier instead, so
        // that it overlapped the wait for the other warpgroup, left dQ queued
        // behind it: 1-2% slower, docs/NOTES.md.)
        float dq[kDqN / 2];
        wgmma_fence();
        if constexpr (Cfg::kDqTransposed) gemm_dqt(base + ds_off, dq);
        else gemm_dq(base + ds_off, dq);
        wgmma_commit();
        gemm_kv(dsa, q_tile, dk);
        wgmma_commit();
        handoff.consumer_acquire(c, i);  // the staging block is free (while dQ runs)
        wgmma_wait<1>();  // dQ (dK may still run)
        fence_registers(dq);

        // The dQ block staged in the accumulator's fragment order (lane l's
        // float4 of n-tile j of warp w at ((w * kDqN / 8 + j) * 32 + l) * 4,
        // 512 contiguous bytes per warp and n-tile) and handed to the writer,
        // which adds it with one bulk reduction. (Float4 reductions from
        // registers instead, no staging or hand-off: 8-9% slower at hdim 128,
        // session 24.)
        float* sdq = reinterpret_cast<float*>(smem + Smem::kDq + c * Smem::kDqBytes);
#pragma unroll
        for (int j = 0; j < kDqN / 8; ++j)
          *reinterpret_cast<float4*>(sdq + ((warp * (kDqN / 8) + j) * 32 + lane) * 4) =
              make_float4(dq[4 * j], dq[4 * j + 1], dq[4 * j + 2], dq[4 * j + 3]);
        fence_async_shared();  // the staging stores, before the copy engine reads them
        handoff.consumer_commit(c);  // an arrival: no wait
        wgmma_wait<0>();  // dK (and dV)
        fence_registers(dk);
        fence_registers(dv);
        ring.consumer_release(i);  // every product of this stage's Q, dO, LSE and dpsum is done
        step.advance(tiles);
      }
    }
  }

  // dK = scale * dS^T Q and dV, rounded, through shared memory (BwdRowTile:
  // warpgroup c's 64 keys into its half of the K and V tiles, once both
  // warpgroups' last products, which read all of K, are done), then copied
  // out in 16-byte row pieces; keys past seqlen_k (the sequence's attended
  // keys, variable-length) are not stored.
  __device__ void store(const SeqRows<kVarlen>& seq, int h_kv, const float (&dk)[kHeadDim / 2],
                        const float (&dv)[kHeadDim / 2]) const {
    using Tile = BwdRowTile<64, kHeadDim>;
    static_assert(2 * Tile::kBytes == Smem::kKVBytes, "a warpgroup's half of K (V) holds its dK (dV)");
    named_barrier_sync(kBwd03StoreReady, Cfg::kConsumerWGs * kWarpgroupThreads);
    // The warpgroup and the tile base are read afresh here (opaque to the
    // compiler) rather than kept from before the step loop: kept, ptxas
    // recomputed the loop's wgmma descriptors every step (26-37 uniform
    // instructions more a step; -2.2% at hdim 128 full 8k, session 27).
    // Each thread's own lane and warp stay (read afresh too, the hdim 64
    // kernels serialized their wgmmas, C7512). With this, the step loops are
    // as long as before the store went through shared memory.
    const int wc = static_cast<int>(opaque(threadIdx.x)) / kWarpgroupThreads - 1;
    const std::uint32_t tbase = opaque(base);
    const std::uint32_t tk = tbase + Smem::kK + wc * Tile::kBytes, tv = tbase + Smem::kV + wc * Tile::kBytes;
    const int g = lane / 4, t = lane % 4;
#pragma unroll
    for (int half = 0; half < 2; ++half)
#pragma unroll
      for (int j = 0; j < kHeadDim / 8; ++j) {
        const int r = 16 * warp + g + 8 * half;
        Tile::put(tk, r, 4 * j + t, pack2<T>(dk[4 * j + 2 * half] * p.scale, dk[4 * j + 2 * half + 1] * p.scale));
        Tile::put(tv, r, 4 * j + t, pack2<T>(dv[4 * j + 2 * half], dv[4 * j + 2 * half + 1]));
      }
    named_barrier_sync(kBwd03StoreReady + 1 + wc, kWarpgroupThreads);
    const int rows = seq.seqlen_k() - key0;
    T* gdk = static_cast<T*>(p.dk) + seq.dk() + h_kv * p.dk_head_stride + std::int64_t{key0} * p.dk_row_stride;
    T* gdv = static_cast<T*>(p.dv) + seq.dv() + h_kv * p.dv_head_stride + std::int64_t{key0} * p.dv_row_stride;
    Tile::template copy_out<kWarpgroupThreads>(tk, gdk, p.dk_row_stride, rows, tid);
    Tile::template copy_out<kWarpgroupThreads>(tv, gdv, p.dv_row_stride, rows, tid);
  }
};

// One CTA per (key block, KV head, batch); deterministic mode takes the key
// blocks in descending order, (KV head, batch) pairs interleaved in groups
// (BwdDqOrder::cta), and adds dQ through the writer.
// kVarlen: the grid covers max_seqlen_k, and a CTA past its sequence's keys
// exits (its keys past seqused_k got their zeros from the preprocess).
template <class T, class Cfg, bool kDeterministic, bool kMods, bool kVarlen>
__global__ void __launch_bounds__(Bwd03Smem<Cfg>::kThreads, 1)
    bwd_03_wgmma_dkv_kernel(const __grid_constant__ BwdTmaParams prm) {
#if FLASH_SM90A_DEVICE
  using Smem = Bwd03Smem<Cfg>;
  extern __shared__ std::uint8_t smem_raw[];
  // Align the base to 1024 bytes in the shared window.
  const std::uint32_t raw_addr = smem_addr(smem_raw);
  std::uint8_t* smem = smem_raw + ((1024 - (raw_addr & 1023)) & 1023);
  const Bwd03Ring<Cfg> ring{reinterpret_cast<std::uint64_t*>(smem + Smem::kBars)};
  const Bwd03DqHandoff<Cfg> handoff{reinterpret_cast<std::uint64_t*>(smem + Smem::kBars) + Smem::kRingBars};
  const BwdParams& p = prm.p;
  const BwdCta cta = BwdDqOrder<Cfg>::cta(p, kDeterministic);
  const int n_block = cta.n_block, h_kv = cta.h_kv, b = kVarlen ? bwd_sequence_of(p, cta.b) : cta.b;
  const int n0 = n_block * Cfg::kBlockN;
  if constexpr (kVarlen)
    if (p.status[0] != 0) return;  // bad metadata (check_varlen_metadata): nothing is written
  const SeqRows<kVarlen> seq(p, b);
  if constexpr (kVarlen)
    if (n0 >= seq.seqlen_k()) return;  // past this sequence's keys (the whole CTA, before any barrier)
  // The query tiles that see some key of this block (common/mask.h); the
  // steps walk them for each query head of the group.
  const TileRange tiles = seq.mask().template query_tiles<Cfg::kBlockM>(n0, Cfg::kBlockN);
  const int steps = tiles.count() * p.group_size;
  let_next_kernel_start();  // the dQ convert's CTAs may take the SMs this grid leaves (bwd_tma_run)
  using Done = BwdKvDone<Cfg::kConsumerWGs * kWarpgroupThreads>;

  if (threadIdx.x == 0) {
    handoff.template init<kDeterministic>();
    ring.init();
  }
  __syncthreads();  // the barriers are initialised before any role uses them
  // Launched by programmatic dependent launch (bwd_tma_run): everything
  // above overlapped the preprocess; from here on every thread may read its
  // row arrays and add into the dQ accumulator it zeroed.
  wait_for_previous_kernel();

  const int wg = warpgroup_index();
  if (wg == 0) {
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0 && steps > 0) BwdProducer<Cfg, Smem, kVarlen>::run(prm, smem, ring, n0, h_kv, b, seq, tiles, steps);
    // The dQ writer is the first thread of the second warp (its own warp,
    // so the producer's loop never waits on its spins), or that whole warp
    // (the named hand-off).
    constexpr int kWriterThread = 32;
    if (threadIdx.x >= kWriterThread && threadIdx.x < kWriterThread + Bwd03DqHandoff<Cfg>::kWriterThreads && steps > 0)
      Bwd03DqWriter<Cfg, kDeterministic, kVarlen>::run(p, smem, handoff, n_block, h_kv, b, seq, tiles, steps);
    if constexpr (kDeterministic)
      if (threadIdx.x == BwdDqOrder<Cfg>::kCounterThread && steps > 0)
        BwdDqOrder<Cfg>::template count_steps<typename Bwd03Ring<Cfg>::Step>(p, handoff.completed(), handoff.counted(),
                                                                            h_kv, b, seq, tiles, steps);
    if constexpr (kBwdEarlyConvert<kDeterministic, kVarlen>)
      if (threadIdx.x / 32 == kWriterThread / 32) Done::count(p, h_kv, b);
    return;
  }
  setmaxnreg_inc<Cfg::kConsumerRegs>();
  const int c = wg - 1, tid = threadIdx.x - kWarpgroupThreads * wg;
  const Bwd03Consumer<T, Cfg, kDeterministic, kMods, kVarlen> consumer{p, smem_addr(smem), smem, c, tid, tid / 32, tid % 32, n0 + 64 * c};
  float dk[Cfg::kHeadDim / 2], dv[Cfg::kHeadDim / 2];
#pragma unroll
  for (int e = 0; e < Cfg::kHeadDim / 2; ++e) dk[e] = dv[e] = 0.0f;
  consumer.run(ring, handoff, b, h_kv, seq, tiles, steps, dk, dv);
  consumer.store(seq, h_kv, dk, dv);
  if constexpr (kBwdEarlyConvert<kDeterministic, kVarlen>) Done::consumer_done(p);  // only the early convert waits
#endif
}

// The shared host side (common/hopper/bwd_tma.cuh) with this rung's tiles
// and kernel.
const auto dispatch_head_dim = [](int d, auto&& f) { return dispatch_bwd03_head_dim(d, f); };

std::string check(const BwdParams& p, const DeviceInfo& dev) {
  return bwd_tma_check<WgmmaBwdConfig, Bwd03Smem>(p, dev, dispatch_head_dim);
}

// Calls that take 80-row steps (WgmmaBwdConfig80): hdim 128 without score
// modifiers (sinks need nothing per element, so they may), dense or
// variable-length (session 30: ncu put issue 17's varlen backward on the
// 64-row kernel), in either mode, with or without a mask (the Mask's query
// tiles, its transposed rule and BwdDqOrder's turn take any kBlockM;
// test_mask checks the key blocks of 80-row tiles against their walks),
// where they walk fewer rows, weighted by speed (variable-length calls: by
// the longest sequence's Mask): an 80-row step costs ~5% less per row
// (sessions 24-28: +4.9-5.4% full, +4.1% causal), but every key block walks
// whole tiles, so a narrow window can walk a quarter more rows at 80 (a
// (128, 0) window: each key block's 256 rows in four tiles either way);
// docs/NOTES.md, session 28, has the table.
bool uses_rows80(const BwdParams& p) {
  if (p.head_dim != 128 || p.has_score_mods()) return false;
  const Mask& m = p.call_mask;
  constexpr int kN = WgmmaBwdConfig80<128>::kBlockN;
  return m.walked_rows<80, kN>() * 19 < m.walked_rows<64, kN>() * 20;
}

std::size_t workspace_bytes(const BwdParams& p) {
  return uses_rows80(p) ? bwd_tma_workspace_bytes(p, WgmmaBwdConfig80<128>::kRowPad) : bwd_tma_workspace_bytes(p);
}

cudaError_t run(const BwdParams& call, void* workspace, cudaStream_t stream) {
  BwdParams params = call;
  // Deterministic head groups (BwdDqOrder) where they were measured faster.
  params.det_head_group = !params.call_mask.has_left && !params.call_mask.has_right ? 2 : 1;
  if (uses_rows80(params)) {
    const auto kernel_of80 = [](auto tag, auto hd, auto det, auto mods, auto varlen) {
      return bwd_03_wgmma_dkv_kernel<typename decltype(tag)::type, WgmmaBwdConfig80<decltype(hd)::value>,
                                    decltype(det)::value, decltype(mods)::value, decltype(varlen)::value>;
    };
    const auto only_128 = [](int d, auto&& f) { return dispatch_head_dim_of<128>(d, f); };
    return bwd_tma_run<WgmmaBwdConfig80, Bwd03Smem>(params, workspace, stream, only_128, kernel_of80,
                                                     WgmmaBwdConfig80<128>::kRowPad);
  }
  const auto kernel_of = [](auto tag, auto hd, auto det, auto mods, auto varlen) {
    return bwd_03_wgmma_dkv_kernel<typename decltype(tag)::type, WgmmaBwdConfig<decltype(hd)::value>,
                                  decltype(det)::value, decltype(mods)::value, decltype(varlen)::value>;
  };
  return bwd_tma_run<WgmmaBwdConfig, Bwd03Smem>(params, workspace, stream, dispatch_head_dim, kernel_of);
}

}  // namespace

// sm_90a only; causal, windows, GQA/MQA, unequal lengths, softcap, ALiBi,
// sinks, variable-length batches and deterministic mode (hdim 256:
// bwd_04_wgmma_wide).
const BwdVariant* variant_bwd_wgmma() {
  static const BwdVariant v = bwd_tma_variant<Bwd03HeadDims>(check, workspace_bytes, run);
  return &v;
}
#else
const BwdVariant* variant_bwd_wgmma() { return nullptr; }  // no sm_90a in CMAKE_CUDA_ARCHITECTURES
#endif

}  // namespace flash::detail
