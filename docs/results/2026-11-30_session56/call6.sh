#!/usr/bin/env bash
# Session 56, call 6 (carry [".gpu"], the kept tree's bundle): issue 17's paged prefill at page 16
# (0.92-0.94 of the contiguous cache; call 1: the pool's scatter is not the gap). ncu --set full
# and the SASS source page of one launch each: hdim 128, 4 x 4096 full, page 16 and contiguous
# (bench --paged 16 runs both: fwd_paged16 and fwd_paged_contig), to see whether the consumers
# wait on K / V (the producer's 16 boxes a tile fall behind) or run longer.
source benchmarks/device_call.sh
dc_setup H > /dev/null
S="--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto --min-time 0.01"
for f in paged16 paged_contig; do
  timeout 200 ncu --set full -k regex:"fwd_" --launch-skip 5 --launch-count 1 -o "$O/p_$f" \
    "$B/bench" $S --benchmark_filter="fwd_$f/" > "$O/log_$f.txt" 2>&1
  ncu -i "$O/p_$f.ncu-rep" --page details --print-details all > "$O/details_$f.txt" 2>&1
  ncu -i "$O/p_$f.ncu-rep" --page source --csv --print-source sass > "$O/source_$f.csv" 2>&1
  grep -E "^  [a-z_0-9]+<|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Issue Slots Busy|No Eligible|Registers Per|Grid Size|Dynamic Shared|Achieved Occupancy" "$O/details_$f.txt" | head -14
  grep -m1 "Kernel Name" -A0 "$O/source_$f.csv" | cut -c1-250
  xz -9 "$O/details_$f.txt" "$O/source_$f.csv"; rm -f "$O/p_$f.ncu-rep"
done
echo "total: $((SECONDS - DC_T0)) s"
