#!/usr/bin/env bash
# Session 57, call 4 (carry [".gpu"]): the final tree (HEAD's kernels with fwd_10's paged producer
# registers; the fuzz suites; FlashAttention's rule in src/testing as output_bound / gradient_bound,
# gradients with two roundings of max|ref|). The fuzz suites, the case that failed the old gradient
# bound (f16 d128 GQA 9 / 3, one query row), a soak at ten times the cases, memcheck over the fuzz
# suites, and the backward and variable-length suites whose checks now call the shared bounds.
source benchmarks/device_call.sh
dc_setup F > /dev/null
timeout 120 "$B/test_gpu" --gtest_filter='Fuzz*' > "$O/fuzz.txt" 2>&1; echo "fuzz rc=$?"
grep -E "^\[  (PASSED|FAILED)|Failure" "$O/fuzz.txt" | head -10
FLASH_TEST_SEED=4157807979 FLASH_FUZZ_CASE=32 FLASH_FUZZ_VERBOSE=1 timeout 60 "$B/test_gpu" --gtest_filter='FuzzBackward.Dense' > "$O/fuzz_case32.txt" 2>&1
echo "case 32 rc=$?"; grep -E "dk|dq|dv|PASSED|FAILED" "$O/fuzz_case32.txt" | head -12
FLASH_FUZZ_SCALE=10 timeout 200 "$B/test_gpu" --gtest_filter='Fuzz*' > "$O/fuzz_soak.txt" 2>&1; echo "soak rc=$?"
grep -E "^\[  (PASSED|FAILED)|FLASH_FUZZ_CASE|OK \]" "$O/fuzz_soak.txt" | head -20
echo "fuzz: $((SECONDS - DC_T0)) s"
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" --gtest_filter='Fuzz*:-FuzzThreads.*' > "$O/memcheck_fuzz.txt" 2>&1
echo "memcheck fuzz rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck_fuzz.txt" | head -4
rm -f "$O/memcheck_fuzz.txt"
echo "memcheck: $((SECONDS - DC_T0)) s"
dc_tests 'Cases/VarlenBwd*:VarlenBwd*:Cases/VarlenForward*:Cases/PagedPrefill*:*/DecodeVarlen*:BackwardEdges.*:Grid/BackwardGrid.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"; grep -E "^\[  FAILED" "$O/tests.txt" | head; rm -f "$O/tests.txt"
echo "total: $((SECONDS - DC_T0)) s"
