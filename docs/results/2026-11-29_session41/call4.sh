#!/usr/bin/env bash
# Session 41, call 4 (diagnostic, issue 17): call 3's page-16 and contiguous kernels (hdim 128,
# 4 x 4096, full) with ncu's source page (SASS lines with their stall samples), gzipped CSV, for
# the per-instruction comparison in docs/NOTES.md.
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
C="--dhead 128 --seq 4096 --batch 4 --heads 16 --kernel auto --min-time 0.02"
for x in p16:fwd_paged16 contig:fwd_paged_contig; do
  timeout 240 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --section SourceCounters --page source --print-source sass --csv \
    "$B/bench" $C --paged 16 --benchmark_filter="^${x#*:}/" > "$O/src_${x%%:*}.csv" 2> "$O/src_${x%%:*}.err"
  gzip -9 "$O/src_${x%%:*}.csv"
  tail -2 "$O/src_${x%%:*}.err"
done
ls -la "$O"
echo "total: $((SECONDS - DC_T0)) s"
