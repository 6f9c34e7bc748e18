#!/usr/bin/env bash
# Session 30, call 4. B = the tree (c9fde3a, .gpu/bundle.txz); .gpu/A.txz holds:
#  L1 = 160-key tiles at hdim 128 (fwd_08/09/10's Config; Q in registers; ptxas spills 32 bytes
#       of stack in fwd_09's loop), L2 = 160-key tiles with Q from shared memory (no spills),
#  M  = the forward's TMA loads with L2 eviction hints (K/V evict_last, Q evict_first).
# Predicted (NOTES, session 30): L hdim 128 full 8k / 16k +1-2%, 2k -1..-2%; causal +-1%.
# M +0-1% at hdim 128 / 256 16k, 0 at hdim 64.
source benchmarks/device_call.sh
dc_setup B
c128="--dhead 128 --kernel auto"
{ DC_BENCH_FLAGS="" dc_ab B L1 'fwd/auto' "--seq 2048 $c128" "--seq 8192 $c128" "--seq 16384 $c128" \
    "--seq 4096 --causal $c128" "--seq 16384 --causal $c128"
  DC_BENCH_FLAGS="" dc_ab B L2 'fwd/auto' "--seq 2048 $c128" "--seq 4096 $c128" "--seq 8192 $c128" "--seq 16384 $c128" \
    "--seq 4096 --causal $c128" "--seq 16384 --causal $c128"
  DC_BENCH_FLAGS="" dc_ab B M 'fwd/auto' "--seq 16384 $c128" "--seq 8192 --causal $c128" \
    "--seq 8192 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 256 --kernel auto" "--seq 8192 --dhead 64 --kernel auto"
} > "$O/ab.txt"
{ dc_summary B L1 "$O/ab.txt"; dc_summary B L2 "$O/ab.txt"; dc_summary B M "$O/ab.txt"; } | tee "$O/ab_summary.txt"
# L2's correctness at 160-key tiles (runner of the L2 build): odd lengths, GQA, causal, window, varlen, paged.
R="$G/L2/runner --kernel wgmma_persistent --dhead 128"
for a in "--batch 2 --heads 4 --seq 1000 --seq-k 1777" "--batch 2 --heads 4 --heads-kv 2 --seq 777 --causal" \
         "--batch 1 --heads 2 --seq 333 --seq-k 2049 --causal" "--batch 1 --heads 2 --seq 1500 --window 200,37" \
         "--batch 1 --heads 2 --seq 900 --softcap 20 --sinks --alibi"; do
  timeout 60 $R $a 2>&1 | tail -2
done > "$O/runner_l2.txt" 2>&1
timeout 60 $G/L2/runner --kernel auto --dhead 128 --heads 4 --varlen 1,160,161,500,1333 >> "$O/runner_l2.txt" 2>&1
timeout 60 $G/L2/runner --kernel auto --dhead 128 --heads 4 --paged 16 --batch 2 --seq 300 --seq-k 1000 >> "$O/runner_l2.txt" 2>&1
timeout 60 $G/L2/runner --kernel auto --dhead 128 --heads 4 --paged 256 --causal --batch 2 --seq 300 --seq-k 1000 >> "$O/runner_l2.txt" 2>&1
grep -c "OK\]" "$O/runner_l2.txt"; grep -E "FAIL|rror" "$O/runner_l2.txt" | head
echo "total: $((SECONDS - DC_T0)) s"
