#!/usr/bin/env bash
# Session 51, call 8 (carry [".gpu"]). The final tree + FLASH_EXP_DMAX (bench only rebuilt): G = 4096
# (as the tree: causal calls past 4096 keys on the single-tile grid), D = 16384 (on the dynamic
# schedule). Dense causal cells at 8k and 16k, hdims 64 and 128, three rounds.
source benchmarks/device_call.sh
dc_setup B > /dev/null
for t in G:4096 D:16384; do
  mkdir -p "$G/${t%%:*}"
  printf '#!/bin/sh\nFLASH_EXP_DMAX=%s exec %s "$@"\n' "${t##*:}" "$B/bench" > "$G/${t%%:*}/bench"
  chmod +x "$G/${t%%:*}/bench"
done
cells=("--seq 8192 --batch 2 --heads 16 --dhead 128 --causal --kernel auto"
       "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --kernel auto"
       "--seq 8192 --batch 2 --heads 32 --dhead 64 --causal --kernel auto"
       "--seq 16384 --batch 1 --heads 32 --dhead 64 --causal --kernel auto")
DC_BENCH_FLAGS="" dc_abn "G D" '^fwd/' "${cells[@]}" > "$O/gd.txt"
DC_BENCH_FLAGS="" dc_abn "D G" '^fwd/' "${cells[@]:0:4}" >> "$O/gd.txt"
dc_summary G D "$O/gd.txt" | tee "$O/gd_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
