#!/usr/bin/env bash
# Session 43, call 6. E = this tree's h200 build (bundle): OnlineSoftmax::finalize's two rows side
# by side on MUFU (lg2.approx, rcp.approx), no branches; every forward kernel's epilogue (fa2 and
# fa3 rungs, decode's). F = the tree before (call 4's fwd_09 in session 42's library). Checks on
# E (the forward, decode, varlen / paged, concurrency and graph suites; memcheck on the walk),
# then A/B F E.
set -u
source benchmarks/device_call.sh
dc_setup E > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Decode*:Concurrency*:*Graph*:-*Backward*:*Bwd*' 200 8 | tee "$O/tests_summary.txt"
timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/runner" --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128 --causal > "$O/memcheck.txt" 2>&1
echo "memcheck rc=$?"; grep -E "ERROR SUMMARY" "$O/memcheck.txt" | tee "$O/sanitizers.txt"
timeout 60 "$B/runner" --batch 2 --heads 4 --seq 300 --seq-k 333 --dhead 128 --causal 2>&1 | tail -3 | tee "$O/runner.txt"
DC_BENCH_FLAGS="" dc_abn "F E" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" "--seq 4096 --dhead 128 --kernel auto" \
  "--seq 1024 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--seq 1024 --dhead 256 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary F E "$O/ab.txt" | tee "$O/ab_summary.txt"
grep -q "FAILED" "$O/tests.txt" || rm -f "$O/tests.txt"
rm -f "$O/memcheck.txt" "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
