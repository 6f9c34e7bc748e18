#!/usr/bin/env bash
# Session 41, call 1 (build time). N = the default preset's build (sm_80 + sm_90a) of the tree
# where the portable rungs (fwd_01..06, bwd_01) are compiled to compute_80 PTX once and ptxas
# makes sm_80 and sm_90 machine code from it (sm_90 for the H200: they used sm_90a's PTX
# before), and fwd_02_tiled reads the page table behind a run-time branch (one kernel per dtype
# and head dim instead of two). O = the same preset's build of session 40's tree. Checks: the
# forward suites (every rung runs every case), the runner on the backward rungs and on paged
# calls, memcheck / racecheck on fwd_02's two paths; A/B of the changed rungs.
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel tiled --batch 2 --seq 300 --seq-k 517 --dhead 96 --heads 4 --heads-kv 2 --paged 16 --causal" \
  "$B/runner --kernel tiled --batch 2 --seq 300 --seq-k 517 --dhead 96 --heads 4 --heads-kv 2 --window 50,20"
dc_runner "" "--bwd" "--bwd --batch 2 --seq 333 --seq-k 517 --dhead 64 --heads 4 --heads-kv 1 --causal" \
  "--batch 2 --seq 500 --dhead 64 --heads 4 --heads-kv 2 --paged 16,64" \
  "--dhead 32 --heads 4 --varlen 1,128,129,500 --paged 16,256 --causal --dtype all"
DC_BENCH_FLAGS="" dc_abn "O N" '^fwd' \
  "--seq 4096 --dhead 128 --kernel tiled" "--seq 4096 --dhead 128 --causal --kernel tiled" \
  "--seq 4096 --dhead 128 --kernel wmma" "--seq 4096 --dhead 128 --kernel mma" \
  "--seq 4096 --dhead 128 --kernel mma_swizzle" "--seq 4096 --dhead 128 --kernel mma_pipeline" \
  "--seq 4096 --dhead 128 --causal --kernel mma_pipeline" "--seq 4096 --dhead 64 --kernel mma_pipeline" \
  "--paged 16 --batch 4 --seq 2048 --dhead 128 --kernel tiled" > "$O/ab.txt" 2>&1
dc_abn "O N" '^bwd' "--seq 2048 --dhead 128 --kernel tiled" >> "$O/ab.txt" 2>&1
dc_summary O N "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
