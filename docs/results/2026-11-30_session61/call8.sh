#!/usr/bin/env bash
# Session 61, call 8 (FA4 staged by calls 6-7; carry [".anchors/fa4-part2", ".gpu"]; bench of 6b2c9fd).
# Where the (128, 0) window's backward goes (issue 16: 0.96 / 0.95 of FA4): ncu's duration and DRAM
# bytes of each kernel of one flash call (preprocess, dkv, convert) and of FA4's, beside causal.
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
M=gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,launch__grid_size,launch__registers_per_thread,sm__throughput.avg.pct_of_peak_sustained_elapsed
for c in "1 16384 16 128 --window 128,0" "2 8192 32 64 --window 128,0" "1 16384 16 128" ; do
  set -- $c
  echo "== flash b$1 s$2 h$3 d$4 causal ${5:-} ${6:-}"
  timeout 120 ncu --metrics $M -k regex:"bwd|Bwd|dkv" -c 6 --csv "$B/bench" --bwd --kernel wgmma --batch $1 --seq $2 --heads $3 \
    --dhead $4 --causal ${5:-} ${6:-} --min-time 0.05 --benchmark_filter='^bwd/wgmma/' 2>/dev/null |
    python3 -c '
import csv, sys, collections
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
h = rows[0]; d = collections.OrderedDict()
for r in rows[1:]:
    k = (r[h.index("ID")], r[h.index("Kernel Name")][:60]); d.setdefault(k, {})[r[h.index("Metric Name")]] = r[h.index("Metric Value")]
for (i, n), m in d.items(): print(i, n, " ".join(a.split("__")[1].split(".")[0] + "=" + b for a, b in m.items()))'
  W=""; [ "${5:-}" = "--window" ] && W=window
  echo "== fa4 $W"
  timeout 150 ncu --metrics $M -c 40 --csv python3 docs/results/2026-11-30_session61/fa4_window_bwd_once.py $4 $2 $1 $3 $W 2>/dev/null |
    python3 -c '
import csv, sys, collections
rows = [r for r in csv.reader(l for l in sys.stdin if l.startswith("\""))]
h = rows[0]; d = collections.OrderedDict()
for r in rows[1:]:
    k = (r[h.index("ID")], r[h.index("Kernel Name")][:60]); d.setdefault(k, {})[r[h.index("Metric Name")]] = r[h.index("Metric Value")]
for (i, n), m in d.items():
    print(i, n, " ".join(a.split("__")[1].split(".")[0] + "=" + b for a, b in m.items()))'
done 2>&1 | tee "$O/ncu.txt"
echo "total: $((SECONDS - DC_T0)) s"
