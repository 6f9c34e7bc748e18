#!/usr/bin/env bash
# Session 43, call 7: call 6's binaries again (F, E, S), on the cells where call 6 read against the
# prediction (hdim 128 full 2k: E -1.3% in both rounds; the (4096, 0) window: S -0.5%) and their
# neighbours. Three rounds.
set -u
source benchmarks/device_call.sh
dc_setup E > /dev/null
cells=("--seq 1024 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --kernel auto" "--seq 4096 --dhead 128 --kernel auto"
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" "--seq 512 --dhead 64 --kernel auto")
{ DC_BENCH_FLAGS="" dc_abn "F E S" '^fwd' "${cells[@]}"; DC_BENCH_FLAGS="" dc_abn "S E F" '^fwd' "${cells[1]}" "${cells[3]}"; } > "$O/ab.txt" 2>&1
{ dc_summary F E "$O/ab.txt"; echo; dc_summary E S "$O/ab.txt"; } | tee "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
