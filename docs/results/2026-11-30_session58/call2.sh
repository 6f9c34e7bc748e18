#!/usr/bin/env bash
# Session 58, call 2 (carry [".gpu"]): DO, one binary (the tree with kODirect and two switches).
# F = no switch; SP = FLASH_X_SPWALK (dense-query full calls on 16-key pages, hdim 128: the walk,
# three stages, O from registers); D3 = FLASH_X_DENSE3 (contiguous full hdim 128 calls on that Config).
source benchmarks/device_call.sh
dc_setup F > /dev/null
for t in SP:FLASH_X_SPWALK D3:FLASH_X_DENSE3; do
  mkdir -p "$G/${t%%:*}"
  printf '#!/bin/sh\nexport %s=1\nexec %s "$@"\n' "${t#*:}" "$G/bin/bench" > "$G/${t%%:*}/bench"
  chmod +x "$G/${t%%:*}/bench"
done
# Correctness first: the paged suites under SP (bitwise against the contiguous cache included),
# hdim 128 full forward grid under D3, runner checks with odd lengths, sanitizers.
FLASH_X_SPWALK=1 timeout 150 "$B/test_gpu" --gtest_filter='*PagedPrefill*:FuzzForward*' > "$O/tests_sp.txt" 2>&1
echo "SP suites rc=$?: $(grep -c '^\[       OK' "$O/tests_sp.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/tests_sp.txt" | head -8
FLASH_X_DENSE3=1 timeout 150 "$B/test_gpu" --gtest_filter='*ForwardGrid*d128_full*:*ForwardScores*d128*:FuzzForward*' > "$O/tests_d3.txt" 2>&1
echo "D3 suites rc=$?: $(grep -c '^\[       OK' "$O/tests_d3.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/tests_d3.txt" | head -8
for a in "--paged 16 --batch 3 --seq 1000 --seq-k 1777 --heads 4 --heads-kv 2 --dhead 128" "--paged 16 --batch 2 --seq 333 --heads 2 --dhead 128"; do
  FLASH_X_SPWALK=1 timeout 90 "$B/runner" --kernel auto $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | head -4
done
for a in "--batch 3 --seq 1000 --seq-k 1777 --heads 4 --heads-kv 2 --dhead 128" "--batch 2 --seq 333 --heads 2 --dhead 128 --kernel wgmma_persistent"; do
  FLASH_X_DENSE3=1 timeout 90 "$B/runner" --kernel auto $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | head -4
done
echo "checks: $((SECONDS - DC_T0)) s"
DC_BENCH_FLAGS="" dc_abn "F SP D3" '^fwd' \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16 --batch 1 --seq 16384 --dhead 128 --kernel auto" \
  "--paged 16 --batch 8 --seq 2048 --dhead 128 --kernel auto" > "$O/ab.txt"
{ dc_summary F SP "$O/ab.txt"; dc_summary F D3 "$O/ab.txt"; } | tee "$O/ab_summary.txt"
FLASH_X_SPWALK=1 dc_sanitize "$B/runner --kernel auto --paged 16 --batch 2 --seq 300 --seq-k 500 --heads 2 --dhead 128"
FLASH_X_DENSE3=1 dc_sanitize "$B/runner --kernel auto --batch 2 --seq 300 --seq-k 500 --heads 2 --dhead 128"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
