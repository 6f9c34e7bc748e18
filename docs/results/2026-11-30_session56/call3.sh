#!/usr/bin/env bash
# Session 56, call 3 (carry [".gpu"], the kept tree = call 2's bundle): what bounds issue 16's (128, 0)
# window at hdim 128 (1.23x FA4 against the 1.5x asked: 184 TFLOPS = ~94 us for 268 MB of Q, K, V
# and O, whose DRAM floor is ~67 us). ncu --set full on one launch of the window kernel, hdim 128 16k x
# 1 x 16 heads and hdim 64 8k x 2 x 32 (same bytes, 152 TFLOPS), plus the bench rows.
source benchmarks/device_call.sh
dc_setup H > /dev/null
for d in 128 64; do
  if [ $d = 128 ]; then s="--seq 16384 --batch 1 --heads 16"; else s="--seq 8192 --batch 2 --heads 32"; fi
  "$B/bench" $s --dhead $d --causal --window 128,0 --kernel auto 2>&1 | grep -E "^fwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  timeout 200 ncu --set full -k regex:"fwd_" --launch-skip 5 --launch-count 1 -o "$O/w128_d$d" \
    "$B/bench" $s --dhead $d --causal --window 128,0 --kernel auto --min-time 0.01 > "$O/ncu_log_d$d.txt" 2>&1
  ncu -i "$O/w128_d$d.ncu-rep" --page details --print-details all > "$O/details_d$d.txt" 2>&1
  grep -E "Duration|Memory Throughput|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Block Size|Grid Size|Shared Memory Config|Dynamic Shared|Issue Slots Busy|Executed Ipc|No Eligible|One or More|Warp Cycles Per Issued|L2 Hit Rate|Mem Busy|Max Bandwidth|Waves" "$O/details_d$d.txt" | head -40
done
echo "total: $((SECONDS - DC_T0)) s"
