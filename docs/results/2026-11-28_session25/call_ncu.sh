#!/usr/bin/env bash
# Session 25: bwd_03's dkv kernel (hdim 128 full, 80-row steps) at 2k x 8 and 16k x 1 (16k
# tokens, 16 heads): ncu's speed-of-light, memory, warp-state and scheduler sections, to see
# which stall grows where the per-step time is 5% higher (2k, 4k, 8k against 16k).
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
for s in 2048 8192 16384; do
  timeout 150 ncu -k regex:dkv --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section WarpStateStats --section SchedulerStats --section LaunchStats --section Occupancy \
    "$B/bench" --bwd --dhead 128 --seq $s --kernel wgmma --min-time 0.02 --benchmark_filter='bwd/wgmma/' > "$O/ncu_$s.txt" 2>&1
  echo "seq $s rc=$?"
done
for s in 2048 8192 16384; do echo "== $s"; grep -E "Duration|Throughput|Hit Rate|Stall|Issued Warp|No Eligible|Active Warps|Eligible Warps|Warp Cycles Per Issued|DRAM|Registers" "$O/ncu_$s.txt" | head -40; done
