#!/usr/bin/env bash
# Session 42, call 3. F = the final kernels: the hand-on on the walk (both hdims) and on the
# dynamic schedule at hdim 64 only (hdim 128's dynamic kernels back on the old path). O = session
# 41's final bench. Checks on F: the forward suites; memcheck / racecheck on hdim 64's dynamic
# schedule (causal, empty tiles) and hdim 128's walk; A/B O F; SDPA causal for the short cells.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Concurren*:*Graph*:-*Backward*:*Bwd*' 150 8 | tee "$O/tests_summary.txt"
DC_BENCH_FLAGS="" dc_abn "O F" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" "--seq 1024 --dhead 64 --kernel auto" \
  "--seq 1024 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--seq 512 --dhead 128 --causal --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 4096,0 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary O F "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 64 --causal" \
  "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --dhead 128"
timeout 90 python3 benchmarks/sdpa_bench.py --seq 512 1024 --dhead 128 --causal > "$O/sdpa.txt" 2>&1
grep -q "FAILED" "$O/tests.txt" || rm -f "$O/tests.txt"
rm -f "$O/memcheck.txt" "$O/racecheck.txt" "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
