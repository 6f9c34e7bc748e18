#!/usr/bin/env bash
# Session 56, call 11 (carry [".gpu"]): the tree after call 10 + dense-query calls with per-sequence
# key counts (seqused_k) on narrow windows take fwd_10's small walking tiles too, so a paged call and
# its contiguous twin run the same tiles (call 10's bitwise failures: the twin ran fwd_09). The
# paged, varlen-forward and window suites; both sanitizers on the paged and per-sequence kernels.
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests 'PagedPrefill*:*/PagedPrefill*:VarlenForward*:*/VarlenForward*:*/ForwardWindow*:VarlenOrder*' 240 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
grep -E "^\[==========\]|PASSED" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_window --paged 16,64 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 128 --causal --window 128,0" \
  "$B/runner --kernel wgmma_window --paged 16,256 --batch 2 --seq 700 --seq-k 900 --heads 8 --heads-kv 2 --dhead 64 --window 100,27"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" --gtest_filter='Cases/PagedPrefill.MatchesTheContiguousCacheBitwise/bf16_dense_many_tiles_l1*:Cases/PagedPrefill.MatchesTheContiguousCacheBitwise/bf16_dense_many_tiles_l2*' > "$O/memcheck_seq.txt" 2>&1
echo "memcheck per-sequence rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck_seq.txt" | head -5
echo "total: $((SECONDS - DC_T0)) s"
