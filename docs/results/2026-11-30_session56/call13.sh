#!/usr/bin/env bash
# Session 56, call 13 (carry [".gpu"]): F = the kept tree (call 11's bundle); R = F with hdim 128's
# paged small-tile producer at 40 registers (consumers 216; stack 64 -> 16 bytes). A / B on hdim 128
# paged narrow windows, then R's runner on them (reference check) and both sanitizers.
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "F R" '^fwd_paged' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --causal --window 128,0 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --window 64,63 --kernel auto" \
  "--paged 16 --batch 1 --seq 16384 --heads 16 --dhead 128 --causal --window 128,0 --kernel auto" > "$O/ab.txt"
dc_summary F R "$O/ab.txt" | tee "$O/ab_summary.txt"
timeout 90 "$G/R/runner" --kernel wgmma_window --paged 16,64,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --causal --window 128,0 2>&1 | grep -E "OK|FAIL|rror" | tail -5
B=$G/R dc_sanitize "$G/R/runner --kernel wgmma_window --paged 16,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --window 100,20"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
