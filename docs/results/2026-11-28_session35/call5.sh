#!/usr/bin/env bash
# Session 35, call 5: A = the tree (b19e44e); H = producers' stage waits through mbar_wait_idle
# (try_wait with a suspend-time hint: the producer sleeps instead of spinning; forward dense,
# paged and varlen producers, the backward's Q/dO producer). Call 4's ncu: flash's producer retried
# its V-empty wait 49 M times (98 M of the hdim 128 forward's 1103 M instructions; FA4 sleeps).
# Predictions: forward hdim 128 full 16k +0.5-2%, causal 16k +0.5-1.5%, hdim 64 causal 8k +0-1%,
# hdim 256 +0-1%, short calls (2k) 0 to +1%; backward 0 +-0.5% (session 12's hint: no effect).
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "A H" '^fwd' "--seq 16384 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --causal --kernel auto" \
  "--seq 8192 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --dhead 64 --kernel auto" "--seq 8192 --dhead 256 --kernel auto" "--seq 8192 --dhead 256 --causal --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--varlen --dhead 128 --heads 16 --causal --kernel wgmma_persistent" \
  "--paged 16 --seq 4096 --dhead 128 --kernel wgmma_persistent" > "$O/ab_fwd.txt" 2>&1
dc_summary A H "$O/ab_fwd.txt" | tee "$O/ab_summary.txt"
dc_abn "A H" '^bwd/auto/' "--seq 8192 --dhead 128 --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --dhead 64 --batch 2 --heads 32 --causal --window 128,0 --kernel auto" "--seq 8192 --dhead 256 --kernel auto" > "$O/ab_bwd.txt" 2>&1
dc_summary A H "$O/ab_bwd.txt" | tee -a "$O/ab_summary.txt"
timeout 60 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --metrics gpu__time_duration.sum,smsp__inst_executed.sum,smsp__issue_active.avg.pct_of_peak_sustained_active \
  "$B/bench" --seq 16384 --dhead 128 --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/ 2>&1 | grep -E "duration|inst_exec|issue_active" | tee "$O/ncu_h.txt"
echo "total: $((SECONDS - DC_T0)) s"
