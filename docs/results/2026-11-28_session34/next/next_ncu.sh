#!/usr/bin/env bash
# Prepared in session 34 for the next one (not run). Two diagnostics beside FlashAttention-4, both
# at ncu's base clocks (carry [".gpu", ".anchors/fa4-part2"] after the two staging calls; the
# bundle is the tree's, benchmarks/pack_gpu.sh):
# (1) issue 19: the forward's main kernel, flash (fwd_09) against FA4 (FlashAttentionForwardSm90),
#     hdim 64 causal 8k (b2 x 32 heads) and hdim 128 full 16k (b1 x 16 heads): time, instructions,
#     issue activity, stall reasons per issue, tensor-pipe activity (as session 28 did for the
#     backward: NOTES "ncu against FA4's kernel"). Question: is the forward's 4-7% the same
#     signature (FA4 waits on gmma, flash on fixed latency / MIO / short scoreboards)?
# (2) issue 16: the (128, 0) window backward at hdim 64 (8k x 2 x 32): every kernel's time, flash
#     (memset? preprocess, bwd_03, convert) against FA4's three (preprocess, main, postprocess).
#     Question: is flash's ~0.92 in the main kernel or in the side kernels?
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || exit 3
[ -d .gpu/bin ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
N=docs/results/2026-11-28_session34/next
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
S="long_scoreboard wait gmma barrier mio_throttle short_scoreboard math_pipe_throttle membar lg_throttle branch_resolving no_instruction sleeping dispatch_stall not_selected selected misc"
M="gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size"
for s in $S; do M="$M,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
T0=$SECONDS
timeout 120 ncu -k regex:[Ff]orward --launch-skip 2 --launch-count 1 --metrics "$M" python3 $N/fa4_once.py fwd 64 8192 2 32 causal > "$O/ncu_fwd_fa4_d64.txt" 2>&1
timeout 120 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --metrics "$M" .gpu/bin/bench --dhead 64 --seq 8192 --batch 2 --heads 32 --causal \
  --kernel auto --min-time 0.02 --benchmark_filter='fwd/auto/' > "$O/ncu_fwd_flash_d64.txt" 2>&1
timeout 120 ncu -k regex:[Ff]orward --launch-skip 2 --launch-count 1 --metrics "$M" python3 $N/fa4_once.py fwd 128 16384 1 16 > "$O/ncu_fwd_fa4_d128.txt" 2>&1
timeout 120 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --metrics "$M" .gpu/bin/bench --dhead 128 --seq 16384 --batch 1 --heads 16 \
  --kernel auto --min-time 0.02 --benchmark_filter='fwd/auto/' > "$O/ncu_fwd_flash_d128.txt" 2>&1
echo "forward: $((SECONDS - T0)) s"
timeout 120 ncu --launch-skip 6 --launch-count 8 --metrics gpu__time_duration.sum python3 $N/fa4_once.py bwd 64 8192 2 32 window 128,0 \
  > "$O/ncu_bwd_fa4_w128.txt" 2>&1
timeout 120 ncu --launch-skip 20 --launch-count 8 --metrics gpu__time_duration.sum .gpu/bin/bench --bwd --dhead 64 --seq 8192 --batch 2 --heads 32 \
  --causal --window 128,0 --kernel auto --min-time 0.02 --benchmark_filter='bwd/auto/' > "$O/ncu_bwd_flash_w128.txt" 2>&1
for f in "$O"/ncu_*.txt; do echo "== $f"; grep -vE "UserWarning|exe_args" "$f" | grep -E "^  [a-zA-Z_ ]|^ +[a-z_]+__" | cut -c1-160; done > "$O/summary.txt"
echo "total: $((SECONDS - T0)) s"
