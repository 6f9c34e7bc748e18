#!/usr/bin/env bash
# Session 53, call 12 (carry [".gpu"]). Call 10 put flash's decode 2-7% behind cuDNN (and FA4 at
# 16 x 8k) when all are timed alike (a 256 MB clear before each call). ncu (base clocks) of every
# kernel of one contiguous decode call, flash (check, split-KV kernel, combine) against cuDNN's
# SDPA, on the three shapes: durations, grids, shared memory, DRAM throughput.
set -u
source benchmarks/device_call.sh
dc_setup B > /dev/null
S=docs/results/2026-11-30_session53
mkdir -p "$O/r"
for sh in "1 131072" "16 8192" "64 4096"; do
  set -- $sh
  timeout 120 ncu -k regex:"dec_01|combine|check_metadata" --launch-skip 30 --launch-count 3 \
    --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --section Occupancy --csv --page details \
    "$B/bench" --decode --batch $1 --cache $2 --kernel auto --min-time 0.05 --benchmark_filter=contiguous > "$O/r/fl_b$1.csv" 2> "$O/r/fl_b$1.err"
  timeout 120 ncu --launch-skip 8 --launch-count 6 \
    --section SpeedOfLight --section LaunchStats --section MemoryWorkloadAnalysis --section Occupancy --csv --page details \
    python3 $S/sdpa_decode_once.py $1 $2 > "$O/r/cudnn_b$1.csv" 2> "$O/r/cudnn_b$1.err"
  echo "b$1 done $((SECONDS - DC_T0)) s"
done
python3 - "$O"/r/*.csv <<'P' | tee "$O/summary.txt"
import csv, sys
want = ["Duration", "DRAM Throughput", "Grid Size", "Block Size", "Dynamic Shared Memory Per Block",
        "Registers Per Thread", "Achieved Occupancy", "Memory Throughput"]
for path in sys.argv[1:]:
    txt = open(path).read()
    if '"ID"' not in txt: print(path, "no data"); continue
    rows = list(csv.DictReader(txt[txt.index('"ID"'):].splitlines()))
    print("==", path.split("/")[-1])
    seen = {}
    for r in rows:
        key = (r["ID"], r["Kernel Name"][:60])
        seen.setdefault(key, {})
        if r["Metric Name"] in want and r["Section Name"] != "Memory Workload Analysis" or r["Metric Name"] == "Memory Throughput" and r["Metric Unit"] != "%":
            seen[key][r["Metric Name"]] = r["Metric Value"] + " " + r["Metric Unit"]
    for (i, name), m in seen.items():
        print(f"  {i} {name}")
        print("     " + "; ".join(f"{k}={v}" for k, v in m.items()))
P
tar -C "$O" -cJf "$O/ncu.tar.xz" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
