#!/usr/bin/env bash
# Session 44, call 4: M = session 43's build + stmatrix O staging; C = M + W + F (three-warpgroup
# kernels only: kEdgeTurns) + T4 (hdim 64 in four stages); WT = M + W + T4 (C without F);
# D = C + the O hand-off to a storer warp (dense persistent kernels: the consumer warpgroups stage
# O and the LSE and go on; the producer warpgroup's second warp issues the TMA store and the LSE).
# fwd_09 recompiled and relinked. Runner checks of C and D, D's forward suites (its test_gpu),
# memcheck / racecheck of D, then the A/Bs.
set -u
source benchmarks/device_call.sh
dc_setup A > /dev/null
{
  for t in C D; do
    for c in "--dhead 128 --batch 2 --heads 4 --seq 100" "--dhead 128 --batch 2 --heads 4 --seq 300 --seq-k 129 --causal" \
             "--dhead 64 --batch 2 --heads 6 --seq 1100" "--dhead 64 --batch 2 --heads 4 --seq 1000 --seq-k 1300 --causal" \
             "--dhead 128 --batch 2 --heads 4 --seq 1500 --seq-k 700 --causal" "--dhead 64 --batch 1 --heads 4 --seq 5000 --causal" \
             "--dhead 128 --batch 1 --heads 4 --seq 130 --seq-k 5000" "--dhead 128 --batch 2 --heads 8 --heads-kv 2 --seq 777 --causal --softcap 30"; do
      timeout 30 "$G/$t/runner" --kernel wgmma_persistent $c 2>&1 | grep -E "OK|FAIL|rror" | sed "s/^/$t /" || echo "$t TIMEOUT $c"
    done
  done
} > "$O/runner.txt" 2>&1
grep -c OK "$O/runner.txt"; grep -E "FAIL|rror|TIMEOUT" "$O/runner.txt" | head
B=$G/D dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:Concurrency*:*Graph*:-*Backward*:*Bwd*:*Decode*' 200 8 | tee "$O/tests_summary.txt"
grep -E "^\[  FAILED" "$O/tests.txt" | head -20 >> "$O/tests_summary.txt"; rm -f "$O/tests.txt"
dc_sanitize "$G/D/runner --kernel wgmma_persistent --dhead 128 --batch 2 --heads 4 --seq 1500 --seq-k 700 --causal" \
            "$G/D/runner --kernel wgmma_persistent --dhead 64 --batch 2 --heads 3 --seq 700" > /dev/null
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
DC_BENCH_FLAGS="" dc_abn "M C WT" '^fwd' \
  "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" "--seq 4096 --dhead 64 --causal --kernel auto" > "$O/ab.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "C D" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 4096 --dhead 128 --causal --kernel auto" "--seq 8192 --dhead 128 --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --kernel auto" >> "$O/ab.txt" 2>&1
{ dc_summary M C "$O/ab.txt"; dc_summary M WT "$O/ab.txt"; dc_summary C D "$O/ab.txt"; } | tee "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
