#!/usr/bin/env bash
# Session 39, call 11: the hdim 64 paged dynamic kernel's producer now chooses its tile order at
# run time (call 9's change; its dense-query path is taken at hdim 128 only): F (call 6's build)
# against H (the final build) on packed causal paged calls at hdim 64, hdim 128 beside them.
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "F H" '^fwd' \
  "--varlen --paged 16,256 --dhead 64 --heads 32 --causal --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary F H "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
