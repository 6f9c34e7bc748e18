#!/usr/bin/env bash
# Session 44, call 5 (FA4 4.0.0b36 staged by the two part-1 calls before it; carry
# [".anchors/fa4-part2", ".gpu"]). N = this tree (M: O staged by stmatrix; W: the P V wait pinned
# after the softmax at hdim 64 too; T4: hdim 64 in four K / V stages, three on the dynamic
# schedule), built here for sm_90a; A = session 43's bench; T5 = N with hdim 64 in five stages (fwd_09
# recompiled and relinked against N's library). The runner's every-variant check, the
# forward / decode / varlen / paged / concurrency / graph suites (8 shards), memcheck, racecheck and
# synccheck on the changed hdim 64 paths, A -> N on the changed cells, then hdim 64's row of issue
# 19's table beside FA4 and cuDNN (benchmarks/fa4_fwd_matched.py, FA4_DHEADS=64, seq 512 ... 16k).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
source benchmarks/device_call.sh
dc_setup N > /dev/null
dc_runner "--dhead 64 --heads 6 --batch 2 --seq 1100" "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal" \
          "--dhead 64 --heads 4 --batch 1 --seq 5000 --causal" "--dhead 128 --heads 4 --batch 3 --seq 300 --seq-k 333 --causal"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Decode*:Concurrency*:*Graph*:-*Backward*:*Bwd*' 200 8 |
  tee "$O/tests_summary.txt"
grep -E -B2 -A12 "^\[  FAILED" "$O/tests.txt" | head -80 >> "$O/tests_summary.txt"; rm -f "$O/tests.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 64 --batch 2 --heads 3 --seq 700" \
            "$B/runner --kernel wgmma_persistent --dhead 64 --batch 2 --heads 4 --heads-kv 2 --seq 1000 --seq-k 1300 --causal" \
            "$B/runner --kernel wgmma_persistent --dhead 64 --batch 1 --heads 2 --seq 4500 --causal" > /dev/null
timeout 90 compute-sanitizer --tool synccheck --error-exitcode 9 "$B/runner" --kernel wgmma_persistent --dhead 64 --batch 2 \
  --heads 4 --seq 1000 --seq-k 1300 --causal 2>&1 | grep -E "ERROR SUMMARY" | sed "s/^/synccheck: /" >> "$O/sanitizers.txt"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"; cat "$O/sanitizers.txt"
DC_BENCH_FLAGS="" dc_abn "A N T5" '^fwd' \
  "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" \
  "--seq 16384 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" > "$O/ab.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "A N" '^fwd' "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--seq 4096 --dhead 64 --causal --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" >> "$O/ab.txt" 2>&1
{ dc_summary A N "$O/ab.txt"; dc_summary N T5 "$O/ab.txt"; } | tee "$O/ab_summary.txt"
FA4_DHEADS=64 timeout 240 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" 512,1024,2048,4096,8192,16384 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/fwd_matched.txt"
tail -3 "$O/fwd_matched.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
