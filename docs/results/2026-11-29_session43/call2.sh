#!/usr/bin/env bash
# Session 43, call 2. G = session 42's build (bundle). U = this tree's fwd_09 (H's hdim 64 wait
# and the fused tile boundary at hdim 128: a tile's last P V and epilogue in the next tile's
# first turn), relinked into G's library. Checks on U, then A/B G U.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
B=$G/U
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:Concurrency*:*Graph*:-*Backward*:*Bwd*' 200 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 128 --causal" \
  "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --dhead 128"
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 "$B/runner" --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --dhead 128 > "$O/synccheck.txt" 2>&1
echo "synccheck rc=$?"; grep -E "ERROR SUMMARY" "$O/synccheck.txt" | tee -a "$O/sanitizers.txt"
for a in "--seq 1500 --seq-k 700 --causal" "--seq 700 --seq-k 1500 --causal" "--seq 2000 --window 300,0 --causal" "--seq 1111 --seq-k 3333" "--seq 4096 --window 2100,0 --causal"; do
  # shellcheck disable=SC2086
  timeout 60 "$B/runner" --kernel wgmma_persistent --batch 3 --heads 8 --heads-kv 4 --dhead 128 $a 2>&1 | tail -2
done | tee "$O/runner.txt"
B=$G/bin
DC_BENCH_FLAGS="" dc_abn "G U" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" \
  "--seq 4096 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --kernel auto" \
  "--seq 1024 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--seq 16384 --dhead 128 --causal --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--varlen --heads 16 --dhead 128 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary G U "$O/ab.txt" | tee "$O/ab_summary.txt"
grep -q "FAILED" "$O/tests.txt" || rm -f "$O/tests.txt"
rm -f "$O/memcheck.txt" "$O/racecheck.txt" "$O/synccheck.txt" "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
