#!/usr/bin/env bash
# Session 57, call 5 (carry [".gpu"]): F = the final tree (bundle); R64 = F with hdim 64's paged
# small-tile producer at 40 registers (consumers 120; stack 48 -> 0 bytes), bench + runner in X.txz.
# A / B on hdim 64 paged narrow windows with a contiguous control, R64's runner and sanitizers.
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "F R64" '^fwd_paged' \
  "--paged 16,256 --batch 2 --seq 8192 --heads 32 --dhead 64 --causal --window 128,0 --kernel auto" \
  "--paged 32 --batch 2 --seq 8192 --heads 32 --dhead 64 --causal --window 383,0 --kernel auto" > "$O/ab.txt"
dc_summary F R64 "$O/ab.txt" | tee "$O/ab_summary.txt"
timeout 90 "$G/R64/runner" --kernel wgmma_window --paged 16,64,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 64 --causal --window 128,0 2>&1 | grep -E "OK|FAIL|rror" | tail -4
B=$G/R64 dc_sanitize "$G/R64/runner --kernel wgmma_window --paged 16,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 64 --window 100,20"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
