#!/usr/bin/env bash
# Session 69, call 1: QA, hdim 128's 16-key-page kernel for dense-query full calls on the walk with three
# stages and Q read one tile ahead (O staged in Q's buffer; the consumers read the next tile's Q into
# their registers at a tile's last step, before O goes there; the producer loads the tile after
# next once that O's store has read the buffer). X = the experiment's dev build (hdim 128 only);
# OFF = the same binary with FLASH_EXP_OFF set (the 3-stage grid kernel, HEAD's path).
# Predicted: 4 x 4096 / 8 x 2048 / 1 x 16k full page 16 +1-3% (the grid's CTA starts and pingpong
# ramps gone, ncu call 6 of session 68: ~4.5% of consumer samples); causal and page 256 unchanged
# (same kernels). Correctness first: runner against the fp64 reference, then memcheck / racecheck.
# carry [".gpu"] (X.txz: X/bench, X/runner, lib/).
set -u
source benchmarks/device_call.sh
dc_setup Y > /dev/null
mkdir -p "$G/OFF" && printf '#!/bin/sh\nFLASH_EXP_OFF=1 exec %s "$@"\n' "$G/X/bench" > "$G/OFF/bench" && chmod +x "$G/OFF/bench"
B=$G/X
{
for a in "--batch 2 --seq 1000 --seq-k 3001 --heads 8 --heads-kv 2" "--batch 3 --seq 777 --heads 4" \
         "--batch 2 --seq 2048 --heads 8 --rows 128" "--batch 1 --seq 129 --seq-k 17 --heads 2" \
         "--batch 2 --seq 4096 --seq-k 5000 --heads 8 --heads-kv 1 --dtype f16"; do
  timeout 90 "$B/runner" --kernel auto --paged 16,32 --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception|picked|variant" | head -8
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
dc_sanitize "$B/runner --kernel auto --paged 16 --batch 2 --seq 1100 --seq-k 1500 --heads 8 --heads-kv 2 --dhead 128 --rows 16"
DC_BENCH_FLAGS="" dc_abn "OFF X" 'fwd' \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --seq 2048 --batch 8 --heads 16" \
  "--paged 16 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" > "$O/ab.txt" 2>&1
dc_summary OFF X "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
