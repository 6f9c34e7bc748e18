#!/usr/bin/env bash
# Session 50, call 10 (carry [".gpu"]). The final build (S): the single-tile grid's order moved from
# Fa3SingleTileScheduler::of into grid_tile of the kPacked grids (paged and per-sequence kernels),
# so that dense kernels and the dynamic ones are SASS-identical to session 49's (30 of fwd_09's 54;
# paged grid kernels as R's). The varlen and paged forward suites, memcheck / racecheck on a packed
# full paged call on the grid (page 64) and a per-sequence full call with ALiBi (the grid).
source benchmarks/device_call.sh
dc_setup S > /dev/null
dc_tests '*Paged*:*Varlen*:-*Bwd*:*Backward*' 200 16
dc_sanitize "$B/runner --kernel auto --dhead 128 --heads 8 --heads-kv 2 --varlen 40,300,129,600,17 --paged 64" \
  "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --varlen 200,3,129,500 --alibi"
echo "total: $((SECONDS - DC_T0)) s"
