#!/usr/bin/env bash
# Before/after on the GPU in one call: two bench binaries (bundles made by
# pack_gpu.sh, or subset builds) timed on the same shapes, their order
# rotated every round so that neither always runs second (the H200 warms up
# within a call). Prints one line per binary, shape and kernel:
#   <tag> <benchmark name> ... TFLOPS=<x>
#   OLD=/tmp/b/bin/bench NEW=.gpu/bin/bench ROUNDS=2 \
#   CELLS="--seq 2048 --dhead 64 --causal;--bwd --seq 8192 --dhead 128" \
#   FILTER="mma_pipeline|wgmma|bwd/mma/" benchmarks/ab_bench.sh > ab.txt
# A subset build (-DFLASH_VARIANTS=... -DFLASH_HEAD_DIMS=...) of each tree
# builds in about a minute on 2 cores and is enough for one kernel's cells.
set -u
OLD=${OLD:?OLD=path to the before bench}
NEW=${NEW:?NEW=path to the after bench}
ROUNDS=${ROUNDS:-2}
FILTER=${FILTER:-.}
IFS=';' read -r -a cells <<< "${CELLS:---seq 4096 --dhead 128;--seq 4096 --dhead 128 --causal}"
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
# Preflight: each binary once on the first cell, briefly; a benchmark that
# reports an error (a variant not built, a subset build without a forward
# rung for the backward's inputs) stops the script here instead of after
# every round has printed errors in place of timings.
for bin in "$OLD" "$NEW"; do
  # shellcheck disable=SC2086  # a cell is several flags
  if "$bin" ${cells[0]} --benchmark_filter="$FILTER" --min-time 0.01 2>&1 | grep -A3 "ERROR OCCURRED"; then
    echo "ab_bench.sh: $bin fails on '${cells[0]}' (above); stopping" >&2
    exit 2
  fi
done
for ((r = 0; r < ROUNDS; ++r)); do
  order="old new"; [ $((r % 2)) = 1 ] && order="new old"
  for cell in "${cells[@]}"; do
    for tag in $order; do
      bin=$OLD; [ $tag = new ] && bin=$NEW
      # shellcheck disable=SC2086  # a cell is several flags
      "$bin" $cell --benchmark_filter="$FILTER" 2>&1 | grep -E "^(fwd|bwd|decode)" |
        sed -e "s/^/$tag /" -e "s/min_time:0.[0-9]*.manual_time//"
    done
  done
done
