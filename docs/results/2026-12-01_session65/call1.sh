#!/usr/bin/env bash
# Session 65, call 1: five changes for issue 16's hdim 64 (128, 0) backward against HEAD (H, 0975d25), six
# rotated tags, two rounds. W: the dQ writer ends on a read-only bulk wait where no count follows
# (session 64's next_W patch); T: dK / dV by TMA stores (session 61's next_T patch); P: the preprocess
# loads four rows a lane group before any sum (P4); E: even key blocks first (session 63's E1 patch,
# FLASH_BWD_PARITY=1); C: W + P (the bundle). carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup C > /dev/null
T6="H W T P E C"
{ dc_abn "$T6" 'bwd/auto/' \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 128,0" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --window 128,0" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" \
    "--kernel auto --dhead 256 --seq 8192 --batch 2 --heads 8"
  dc_abn "$T6" 'det/' "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal"
  dc_abn "$T6" 'bwd_varlen/' "--varlen --dhead 128 --heads 16 --causal"
} > "$O/ab.txt" 2>&1
for t in W T P E C; do dc_summary H $t "$O/ab.txt"; done | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
# Correctness of C (W + P) while the machine is warm: the backward suites, and the sanitizers on a
# narrow window with seq_k != seq_q (the writer's read-only wait) and a varlen call (P's varlen kernel).
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*-*OrderedDq*:*over_order_cap*:*FiftyRuns*' 200 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1000 --heads 4 --heads-kv 2 --dhead 64 --causal --window 128,0" \
  "$B/runner --bwd --kernel wgmma --dhead 128 --heads 4 --varlen 1,128,129,500 --causal"
echo "total: $((SECONDS - DC_T0)) s"
