#!/usr/bin/env bash
# Session 69, call 6: M0, the paged consumers' mask from the call's constant bank (p.mask_for()) instead
# of the per-sequence Mask held in the consumer (11 ints live through the K/V loop). Call 5's ncu pages
# (pages of 4096 keys, the contiguous cache's memory) had the paged walk's consumers issue the same
# instructions as the contiguous walk's per step but stall more (MUFU.EX2 'wait' +1457, barrier +924):
# a different, tighter schedule. M0's paged walk's main loop is 1383 instructions, the dense walk's 1385
# (HEAD's paged walk: 1345). M0 is a measurement only: right for dense-query calls whose sequences
# all have seqlen_k keys (these cells), wrong elsewhere.
# H = HEAD (session 68's bundle). Predicted: paged 4096 / 256 +1-3% toward contiguous; page 16 +0-2%.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "H M0" 'fwd' \
  "--paged 16,256,4096 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256,4096 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" > "$O/ab.txt" 2>&1
dc_summary H M0 "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
