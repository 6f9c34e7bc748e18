#!/usr/bin/env bash
# Session 48, call 4 (carry [".gpu"]). Decode page 16 at 64 x 4k (3.6% behind contiguous in
# session 47's call 7; page 256, whose metadata check has 1024 table entries against page 16's
# 16384, level with it). Z = call 1's build (decode code as session 46); K = Z with the one-CTA
# metadata check holding 16 entries per thread in flight (one round for 16384 entries) instead of 8.
# ncu: each kernel's time at 64 x 4k (contiguous, page 16, page 256; serialized, so no overlap),
# then runner --decode on K, then Z / K rotated, four rounds of `./bench --decode`.
source benchmarks/device_call.sh
dc_setup Z > /dev/null
for f in contiguous page16 page256; do
  echo "=== $f"
  timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -c 20 "$G/Z/bench" --decode --batch 64 --cache 4096 \
    --min-time 0.01 --benchmark_filter="$f" 2>&1 | grep -E "^  [a-z].*\(|gpu__time_duration" | cut -c1-150
done > "$O/ncu.txt"
python3 - "$O/ncu.txt" <<'P' | tee "$O/ncu_summary.txt"
import re, sys, collections, statistics
d = collections.defaultdict(list); name = None; cur = "?"
for line in open(sys.argv[1]):
    if line.startswith("==="): cur = line[4:].strip(); continue
    if "(" in line and "gpu__" not in line:
        names = re.findall(r"(\w+)(?=<|\()", line); pick = [x for x in names if "kernel" in x]
        name = (pick or names or ["?"])[0]; continue
    m = re.search(r"gpu__time_duration.sum\s+(\S+)\s+([\d.,]+)", line)
    if m and name: d[(cur, name, m[1])].append(float(m[2].replace(",", "")))
for k, v in d.items(): print(f"{k[0]:12s} {k[1]:40s} {k[2]:8s} median {statistics.median(v):9.2f} n={len(v)} min {min(v):.2f} max {max(v):.2f}")
P
timeout 120 "$G/K/runner" --decode 2>&1 | grep -E "\[OK|FAIL|rror:|xception" > "$O/runner.txt"
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
DC_BENCH_FLAGS="" dc_abn "Z K" '^decode/' "--decode" "--decode" > "$O/ab.txt" 2>&1
dc_summary Z K "$O/ab.txt" us | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
