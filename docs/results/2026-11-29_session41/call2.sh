#!/usr/bin/env bash
# Session 41, call 2 (build time, the final tree). P = the default preset's build (sm_80 + sm_90a)
# of the final tree: call 1's N, and mma / mma_swizzle take dense calls only (kEveryCall = false:
# 6 kernels per TU instead of 36; varlen, paged, softcap and ALiBi calls refused with a
# flash::Error), test files at -O0. O = session 40's build (as in call 1). Checks: the forward
# suites (the refusals included), the backward suites (bwd_01 is now built from compute_80 PTX),
# the runner on dense / scored / varlen / paged calls; A/B of the three mma rungs.
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 200 8 | tee "$O/tests_summary.txt"
dc_tests '*Backward*:*Bwd*' 300 12 > "$O/tests_bwd_summary.txt"
cat "$O/tests_bwd_summary.txt"
mv "$O/tests.txt" "$O/tests_bwd.txt"
dc_runner "" "--softcap 30 --batch 2 --seq 333 --dhead 128 --heads 4 --heads-kv 2 --causal --alibi" \
  "--dhead 64 --heads 4 --varlen 1,128,129,500 --causal" \
  "--batch 2 --seq 500 --dhead 128 --heads 4 --heads-kv 2 --paged 16,64"
DC_BENCH_FLAGS="" dc_abn "O P" '^fwd' \
  "--seq 4096 --dhead 128 --kernel mma" "--seq 4096 --dhead 128 --kernel mma_swizzle" \
  "--seq 4096 --dhead 128 --causal --kernel mma_pipeline" > "$O/ab.txt" 2>&1
dc_summary O P "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
