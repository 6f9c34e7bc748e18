#!/usr/bin/env bash
# Session 70, call 6 (a diagnostic): the SM clock and the board's power during each kernel. Call 5's
# B (half the page-16 boxes) ran 720 TFLOPS, above the contiguous call (657) and the board's
# sustained GEMM (~680): the same tensor work faster than a GEMM can run for 0.5 s means a higher
# clock, i.e. the loads' power. Here each row runs alone, five bench runs back to back, while
# nvidia-smi samples clocks.sm and power.draw every 50 ms; the samples at > 300 W are averaged.
# X = HEAD + switch (dev build), B = FLASH_X_HALFBOX=1.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
cell="--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16"
for spec in "X fwd_paged_contig/" "X fwd_paged16/" "B fwd_paged16/" "X fwd_paged_contig/" "X fwd_paged16/"; do
  set -- $spec
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu --format=csv,noheader,nounits -lms 50 > "$O/smi.txt" 2>&1 &
  smi=$!
  for k in 1 2 3 4 5; do
    timeout 60 "$G/$1/bench" $cell --benchmark_filter="$2" 2>&1 | grep -E "^fwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | cut -c1-120
  done > "$O/bench_tmp.txt"
  kill $smi; wait $smi 2>/dev/null
  python3 - "$1 $2" "$O/smi.txt" "$O/bench_tmp.txt" <<'PY' | tee -a "$O/clocks.txt"
import sys
tag, smi, bench = sys.argv[1:4]
rows = []
for line in open(smi):
    p = [x.strip() for x in line.split(',')]
    try: rows.append((float(p[1]), float(p[2]), float(p[3])))
    except Exception: pass
act = [r for r in rows if r[1] > 300]
tf = [l.split('TFLOPS=')[1].split()[0] for l in open(bench) if 'TFLOPS=' in l]
if act:
    n = len(act)
    print(f"{tag:28s} samples {n:4d} sm_clock {sum(r[0] for r in act)/n:7.1f} MHz power {sum(r[1] for r in act)/n:6.1f} W temp {sum(r[2] for r in act)/n:5.1f} C  TFLOPS {' '.join(tf)}")
else:
    print(tag, "no active samples", len(rows))
PY
done
echo "total: $((SECONDS - DC_T0)) s"
