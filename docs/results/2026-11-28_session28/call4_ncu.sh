#!/usr/bin/env bash
# Session 28, call 4: ncu of the backward's main kernel, flash (bwd_03 dkv, tree bf59966) against
# FlashAttention-4 (FlashAttentionBackwardSm90), hdim 64 and 128, full 8k (b2 x 8192, 2048 / d
# heads), ncu's default clock control (base clock) for both. FA4 staged by calls 3a / 3b first.
# carry [".gpu", ".anchors/fa4-part2"].
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh || exit 3
[ -d .gpu/bin ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
S="long_scoreboard wait gmma barrier mio_throttle short_scoreboard math_pipe_throttle membar lg_throttle branch_resolving no_instruction sleeping dispatch_stall not_selected selected misc"
M="gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,l1tex__throughput.avg.pct_of_peak_sustained_active,lts__t_sector_hit_rate.pct,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__cycles_elapsed.avg.per_second,launch__registers_per_thread,launch__shared_mem_per_block,sass__inst_executed_per_opcode"
for s in $S; do M="$M,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
T0=$SECONDS
for d in 64 128; do
  timeout 120 ncu -k regex:BackwardSm90 --launch-skip 2 --launch-count 1 --metrics "$M" --print-metric-instances values \
    python3 docs/results/2026-11-28_session28/fa4_bwd_once.py $d 8192 > "$O/ncu_fa4_d$d.txt" 2>&1
  echo "fa4 d$d rc=$? $((SECONDS - T0)) s"
  timeout 120 ncu -k regex:dkv --launch-skip 3 --launch-count 1 --metrics "$M" --print-metric-instances values \
    .gpu/bin/bench --bwd --dhead $d --seq 8192 --kernel wgmma --min-time 0.02 --benchmark_filter='bwd/wgmma/' > "$O/ncu_flash_d$d.txt" 2>&1
  echo "flash d$d rc=$? $((SECONDS - T0)) s"
done
for f in "$O"/ncu_*.txt; do echo "== $f"; grep -vE "UserWarning|exe_args" "$f" | grep -E "^ +[a-z_]+__" | cut -c1-220; done | tail -80
