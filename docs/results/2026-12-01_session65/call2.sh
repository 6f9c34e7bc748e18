#!/usr/bin/env bash
# Session 65, call 2: X, the forward's exponentials two at a time (ex2.approx.f16x2: the argument
# rounded to f16, P back to fp32 before its sum and its bf16 rounding; OnlineSoftmax::exp_row under
# FLASH_EXP_F16X2) against H (HEAD's forward), two rotated rounds; then the forward / decode suites on
# X (do the errors stay within FlashAttention's rule?) and the MUFU count of fwd_09's kernels.
# carry [".gpu"] (bundle = X, H/bench inside it).
set -u
source benchmarks/device_call.sh
dc_setup X > /dev/null
DC_BENCH_FLAGS="" dc_abn "H X" '^fwd/auto/' \
  "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32" \
  "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal" \
  "--kernel auto --dhead 64 --seq 2048 --batch 8 --heads 32" \
  "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 4096,0" \
  "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16" \
  "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" \
  "--kernel auto --dhead 256 --seq 8192 --batch 2 --heads 8" > "$O/ab.txt" 2>&1
dc_summary H X "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
dc_tests '*Forward*:*PagedPrefill*:*Decode*:FuzzForward*:FuzzDecode*' 200 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED|rror|max err" "$O/tests.txt" | head -20
echo "total: $((SECONDS - DC_T0)) s"
