#!/usr/bin/env bash
# Session 50, call 7 (carry [".gpu"]). hdim 64's paged calls: K (bundle, the final build) against
# P (hdim 64's 16-key pages on the non-persistent grid kernel with six stages, kSmallPageStages = 6)
# and Q (hdim 64 dense-query paged calls on the dense schedules: causal dynamic, full at >= 128-key
# pages the walk; kDenseQueryPagedSchedules), rotated, two rounds; P's paged d64 tests.
source benchmarks/device_call.sh
dc_setup K > /dev/null
timeout 100 "$G/P/test_gpu" --gtest_filter='*Paged*d64*' 2>&1 | grep -E "^\[  (PASSED|FAILED)|FAILED  \]" | head -5
DC_BENCH_FLAGS="" dc_abn "K P Q" '^fwd' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --kernel auto" \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --causal --kernel auto" > "$O/kpq.txt"
{ dc_summary K P "$O/kpq.txt"; dc_summary K Q "$O/kpq.txt"; } | tee "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
