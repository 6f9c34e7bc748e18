#!/usr/bin/env bash
# Session 43, call 6. F = the tree before E (call 4's fwd_09 in session 42's library). E = this
# tree's h200 build (bundle): OnlineSoftmax::finalize's two rows side by side on MUFU (lg2.approx,
# rcp.approx), no branches; every forward kernel's epilogue. S = E + the dynamic schedule's slot
# carrying the decoded tile (fwd_09 relinked into E's library). Checks on S (the forward, decode,
# varlen / paged, concurrency and graph suites; memcheck / racecheck / synccheck on the dynamic
# schedule), then A/B F E S.
set -u
source benchmarks/device_call.sh
dc_setup E > /dev/null
B=$G/S
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Decode*:Concurrency*:*Graph*:-*Backward*:*Bwd*' 200 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128 --causal"
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 "$B/runner" --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 64 --causal > "$O/synccheck.txt" 2>&1
echo "synccheck rc=$?"; grep -E "ERROR SUMMARY" "$O/synccheck.txt" | tee -a "$O/sanitizers.txt"
timeout 60 "$G/bin/runner" --batch 2 --heads 4 --seq 300 --seq-k 333 --dhead 128 --causal 2>&1 | tail -2 | tee "$O/runner.txt"
B=$G/bin
DC_BENCH_FLAGS="" dc_abn "F E S" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" \
  "--seq 1024 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--seq 1024 --dhead 256 --kernel auto" > "$O/ab.txt" 2>&1
{ dc_summary F E "$O/ab.txt"; echo; dc_summary E S "$O/ab.txt"; } | tee "$O/ab_summary.txt"
grep -q "FAILED" "$O/tests.txt" || rm -f "$O/tests.txt"
rm -f "$O/memcheck.txt" "$O/racecheck.txt" "$O/synccheck.txt" "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
