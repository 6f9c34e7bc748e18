#!/usr/bin/env bash
# Session 57, call 1 (carry [".gpu"]): F = HEAD (session 56's last tree, bundle); R = F with hdim
# 128's paged small-tile producer at 40 registers (session 56's next_fwd10_paged_producer_regs.patch,
# bench + runner in X.txz). First the decode suites and memcheck over DecodeErrors on F (the
# no-pages guard and DecodeErrors.NoPagesWritesNothing, not yet run on the H200), then session
# 56's call 13: F / R on hdim 128 paged narrow windows, R's runner, both sanitizers on R. Then
# D1 (exp_D1_det_wg0_dv_first.patch, bench + runner in X.txz) against F on hdim 256's backward.
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
grep -E "NoPagesWritesNothing" "$O/tests.txt" | head -4
rm -f "$O/tests.txt"
timeout 240 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" --gtest_filter='DecodeErrors.*' > "$O/memcheck_errors.txt" 2>&1
echo "memcheck DecodeErrors rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck_errors.txt" | head -5
rm -f "$O/memcheck_errors.txt"
echo "tests: $((SECONDS - DC_T0)) s"
DC_BENCH_FLAGS="" dc_abn "F R" '^fwd_paged' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --causal --window 128,0 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --window 64,63 --kernel auto" \
  "--paged 16 --batch 1 --seq 16384 --heads 16 --dhead 128 --causal --window 128,0 --kernel auto" > "$O/ab.txt"
dc_summary F R "$O/ab.txt" | tee "$O/ab_summary.txt"
timeout 90 "$G/R/runner" --kernel wgmma_window --paged 16,64,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --causal --window 128,0 2>&1 | grep -E "OK|FAIL|rror" | tail -5
B=$G/R dc_sanitize "$G/R/runner --kernel wgmma_window --paged 16,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --window 100,20"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "paged: $((SECONDS - DC_T0)) s"
# D1: bwd_04's deterministic warpgroup 0 issues dV first and releases dO before staging its dQ.
dc_abn "F D1" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab_bwd.txt" 2>&1
dc_summary F D1 "$O/ab_bwd.txt" | tee "$O/ab_bwd_summary.txt"
for a in "--dhead 256 --heads 2 --batch 2 --seq 600 --seq-k 300 --causal" "--dhead 256 --heads 4 --heads-kv 2 --batch 2 --seq 333 --seq-k 517 --window 100,20"; do
  timeout 90 "$G/D1/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done
B=$G/D1 dc_sanitize "$G/D1/runner --bwd --kernel wgmma_wide --batch 1 --seq 300 --seq-k 200 --heads 2 --dhead 256 --causal"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
