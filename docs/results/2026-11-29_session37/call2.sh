#!/usr/bin/env bash
# Session 37, call 2 (no build change; the tree at a399617): where paged prefill's time goes.
# (1) Page-size sweep: bench --paged 16..256 (dense queries, b4 x 4096, hdim 128, 16 heads), full
#     and causal, two rounds; the varlen call with pages of 16 and 256. Question: does the cost grow
#     with TMA boxes per tile (16: 8 per 64-column block and operand, 32: 4, 64: 2, >= 128: 1)?
# (2) ncu (SpeedOfLight, WarpStateStats, memory) of the forward kernel: contiguous / page 256 /
#     page 16, full.
# (3) ncu durations of every kernel of one decode call at 16 x 8k and 64 x 4k (contiguous).
set -u
source benchmarks/device_call.sh
dc_setup A > /dev/null
for r in 1 2; do
  for c in "" "--causal"; do
    "$B/bench" --paged 16,32,64,128,256 --batch 4 --seq 4096 --dhead 128 --heads 16 $c --kernel auto 2>&1 | grep -E "^fwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  done
  "$B/bench" --varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto 2>&1 | grep -E "^fwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
done > "$O/paged_sweep.txt" 2>&1
echo "sweep: $((SECONDS - DC_T0)) s"
nc() {  # name, filter
  timeout 120 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --section SpeedOfLight --section WarpStateStats \
    --section MemoryWorkloadAnalysis --section Occupancy \
    "$B/bench" --paged 16,256 --batch 4 --seq 4096 --dhead 128 --heads 16 --kernel auto --min-time 0.02 --benchmark_filter="$2" > "$O/ncu_$1.txt" 2>&1
  echo "$1 rc=$? $((SECONDS - DC_T0)) s"
}
nc contig 'fwd_paged_contig/'
nc p256 'fwd_paged256/'
nc p16 'fwd_paged16/'
for sh in "16 8192" "64 4096"; do
  set -- $sh
  timeout 120 ncu --launch-skip 40 --launch-count 12 --metrics gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size \
    "$B/bench" --decode --batch $1 --cache $2 --min-time 0.02 > "$O/ncu_decode_b$1.txt" 2>&1
  echo "decode b$1 rc=$? $((SECONDS - DC_T0)) s"
done
python3 - "$O" <<'P' > "$O/summary.txt"
import re, sys, glob, os
o = sys.argv[1]
for f in sorted(glob.glob(o + "/ncu_*.txt")):
    print("==", os.path.basename(f))
    for line in open(f):
        if re.search(r"Duration|Throughput|Issue Slots Busy|Stall|Hit Rate|Warp Cycles|Achieved|gpu__time|dram__|grid_size|^  \S+.*\(\d+, \d+, \d+\)", line):
            print(line.rstrip()[:160])
P
head -c 6000 "$O/summary.txt"
cat "$O/paged_sweep.txt" | awk '{print $1, $NF, $(NF-1)}' | head -40
echo "total: $((SECONDS - DC_T0)) s"
