#!/usr/bin/env bash
# Session 53, call 4 (carry [".gpu"]). X = the session's tree with an environment switch in
# bwd_03's uses_rows80 (FLASH_EXP_ROWS=8 / 6 forces 80- / 64-row steps at hdim 128; not
# committed). FA4 takes 64-row steps for causal calls at hdim 128 (call 3: its causal kernel 4.9%
# ahead at base clocks, 1.09 IPC against flash's 0.97); session 28 measured 80 rows +4.1% over 64
# on flash's causal 8k. Re-measured on today's kernels: R80 (the default) / R64, two rounds.
source benchmarks/device_call.sh
dc_setup B > /dev/null
for t in R80 R64; do
  mkdir -p "$G/$t"
  printf '#!/bin/sh\nFLASH_EXP_ROWS=%s exec %s "$@"\n' "${t#R}" "$G/X/bench" > "$G/$t/bench"; chmod +x "$G/$t/bench"
done
dc_abn "R80 R64" '^bwd' \
  "--seq 8192 --batch 2 --heads 16 --dhead 128 --causal --kernel wgmma" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --kernel wgmma" \
  "--seq 2048 --batch 8 --heads 16 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --batch 2 --heads 16 --dhead 128 --kernel wgmma" \
  "--varlen --dhead 128 --heads 16 --causal --kernel wgmma" | tee "$O/ab.txt"
dc_summary R80 R64 "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
