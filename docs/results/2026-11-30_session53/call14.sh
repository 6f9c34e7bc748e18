#!/usr/bin/env bash
# Session 53, call 14 (carry [".gpu"]). Call 13: one decode CTA per SM streams ~24 GB/s whatever the
# ring depth (3 or 5 tiles ahead: 170 / 182 us at 16 x 8k), two per SM ~29 GB/s each; cuDNN's one
# 128-thread CTA per SM ~31.5. ncu source page and warp states of the split-KV kernel (A, 16 x 8k
# contiguous, two CTAs per SM) and of S4 (one CTA per SM), to see what a CTA waits on per tile.
source benchmarks/device_call.sh
dc_setup A > /dev/null
mkdir -p "$O/r"
for t in A S4; do
  timeout 150 ncu -k regex:"dec_01" --launch-skip 20 --launch-count 1 --section SourceCounters --section WarpStateStats \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables \
    -o "$O/r/$t" "$G/$t/bench" --decode --batch 16 --cache 8192 --kernel auto --min-time 0.05 \
    --benchmark_filter=contiguous > "$O/r/$t.log" 2>&1
  ncu -i "$O/r/$t.ncu-rep" --page source --print-source sass --csv 2>/dev/null | xz > "$O/r/$t.csv.xz"
  ncu -i "$O/r/$t.ncu-rep" --page details --csv > "$O/r/$t.details.csv" 2>/dev/null
  ncu -i "$O/r/$t.ncu-rep" --page raw --csv 2>/dev/null | xz > "$O/r/$t.raw.csv.xz"
  rm -f "$O/r/$t.ncu-rep"
  echo "$t $((SECONDS - DC_T0)) s"
done
python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/A.csv.xz" "$O/r/S4.csv.xz" > "$O/opcodes.txt" 2>&1
head -30 "$O/opcodes.txt"
tar -C "$O" -cJf "$O/ncu.tar.xz" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
