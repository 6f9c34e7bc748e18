#!/usr/bin/env bash
# Session 57, call 3 (carry [".gpu"]): Q = the Q ring (two Q buffers, O staged in the tile's own Q
# buffer, released after the next tile's first S; persistent Configs with Q in shared memory:
# fwd_09 at hdim 64, fwd_10), bundle; A = HEAD's bench and runner (X.txz). A / Q rotated, two
# rounds, on the cells the ring touches and controls; then the sanitizers on Q's ring kernels and
# the forward suites on Q (and a first run of the new Fuzz* suites).
source benchmarks/device_call.sh
dc_setup Q > /dev/null
DC_BENCH_FLAGS="" dc_abn "A Q" '^fwd' \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --window 128,0 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --window 64,63 --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --window 256,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --causal --window 128,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --causal --window 4096,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --causal --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 4096 --dhead 64 --kernel auto" \
  "--seq 16384 --dhead 64 --kernel auto" "--seq 512 --dhead 64 --causal --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" \
  "--varlen --heads 32 --dhead 64 --causal --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --window 128,0 --kernel auto" \
  "--seq 4096 --dhead 128 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary A Q "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "bench: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/runner --kernel wgmma_window --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --window 128,0" \
  "$B/runner --kernel wgmma_window --batch 2 --seq 900 --seq-k 600 --heads 4 --heads-kv 2 --dhead 64 --causal --window 100,0" \
  "$B/runner --kernel wgmma_persistent --batch 2 --seq 1000 --seq-k 1300 --heads 6 --heads-kv 2 --dhead 64 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 64 --heads 4 --varlen 1,128,129,500,0,77 --causal" \
  "$B/runner --kernel wgmma_window --paged 16 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --window 100,20"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "sanitizers: $((SECONDS - DC_T0)) s"
dc_tests 'Forward*:*/Forward*:*/VarlenForward*:VarlenForward*:VarlenOrder*:*/PagedPrefill*:PagedPrefill*:Concurrency*' 240 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
mv "$O/tests.txt" "$O/tests_fwd.txt"; xz -T4 "$O/tests_fwd.txt"
timeout 150 "$B/test_gpu" --gtest_filter='Fuzz*' > "$O/fuzz.txt" 2>&1; echo "fuzz rc=$?"
grep -E "^\[  (PASSED|FAILED)|Failure|OK \]" "$O/fuzz.txt" | head -30
echo "total: $((SECONDS - DC_T0)) s"
