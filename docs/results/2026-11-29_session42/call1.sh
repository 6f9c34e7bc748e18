#!/usr/bin/env bash
# Session 42, call 1. W = this tree's h200 build: causal windows' cut query blocks after every
# head's full-span blocks in the longest-first order (fa3_window_short_blocks), and the new
# Window/ForwardWindowWide test. X = W + dense-query full paged calls on pages < 128 keys at
# hdim 128 on the dynamic schedule (fwd_09's object rebuilt alone). O = session 41's final bench
# (default preset). Checks on W: the forward suites, memcheck / racecheck of the new order's
# branch; A/B O W X.
set -u
source benchmarks/device_call.sh
dc_setup W > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 2 --seq 2300 --seq-k 2400 --dhead 128 --heads 4 --heads-kv 2 --window 2047,0 --causal" \
  "$B/runner --kernel wgmma_persistent --batch 1 --seq 2400 --seq-k 2300 --dhead 256 --heads 2 --heads-kv 1 --window 2100,0 --causal"
DC_BENCH_FLAGS="" dc_abn "O W X" '^fwd' \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 2048,0" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 8192,0" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --softcap 30" \
  "--batch 1 --heads 8 --seq 16384 --dhead 256 --causal --window 4096,0" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 4096,0" \
  "--batch 2 --heads 16 --seq 8192 --dhead 128 --causal --window 4096,0" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal" \
  "--paged 16,256 --batch 4 --heads 16 --seq 4096 --dhead 128" \
  "--paged 16 --batch 4 --heads 16 --seq 4096 --dhead 128 --causal" > "$O/ab.txt" 2>&1
dc_summary O W "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_summary W X "$O/ab.txt" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
