#!/usr/bin/env bash
# Session 37, call 6 (F's build; no build change in the forward since a399617): ncu source pages
# (SourceCounters, WarpStateStats) of the varlen causal forward (issue 17's 7 sequences, hdim 128,
# 16 heads; the dynamic schedule in all three) with a contiguous cache and pages of 256 and 16,
# for the next session: where do the paged calls' 5% (256) and 18% (16) go? src_opcodes.py
# (session 35) puts the opcodes side by side.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
src() {  # name, filter
  timeout 150 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --section SourceCounters --section WarpStateStats \
    --page source --print-source sass --csv "$B/bench" --varlen --paged 16,256 --dhead 128 --heads 16 --causal \
    --kernel auto --min-time 0.02 --benchmark_filter="$2" 2> "$O/$1.err" | xz > "$O/$1.csv.xz"
  echo "$1 rc=$? $((SECONDS - DC_T0)) s"
}
src contig '^fwd_varlen/'
src p256 '^fwd_varlen_paged256/'
src p16 '^fwd_varlen_paged16/'
python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/contig.csv.xz" "$O/p256.csv.xz" "$O/p16.csv.xz" > "$O/summary.txt" 2>&1
head -45 "$O/summary.txt"
rm -f "$O"/*.lst "$O"/*.err
echo "total: $((SECONDS - DC_T0)) s"
