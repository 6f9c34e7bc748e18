#!/usr/bin/env bash
# Session 30, call 7 (after FA4 staging, calls 6a / 6b). Diagnostics, no build change:
#  1. Where the variable-length backward's time goes, flash against FA4 (issue 17: flash 500.6
#     against FA4 582.4 TFLOPS in call 3): ncu (base clocks, each kernel serialized) durations of
#     every kernel of one backward call, issue 17's 7 sequences, hdim 128, full: FA4's
#     preprocess / main / postprocess against flash's preprocess / dkv / convert.
#  2. session 29's prepared source page of FA4's hdim 128 backward kernel (ncu_fa4_src.sh):
#     does its HGMMA issue carry the uniform descriptor moves ours does?
# carry [".gpu", ".anchors/fa4-part2"].
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || exit 3
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
T0=$SECONDS
M="gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__inst_executed.sum,dram__bytes.sum,launch__grid_size"
timeout 150 ncu --metrics "$M" python3 docs/results/2026-11-28_session30/fa4_varlen_bwd_once.py > "$O/ncu_varlen.txt" 2>&1
echo "fa4 rc=$? $((SECONDS - T0)) s"
timeout 150 ncu --metrics "$M" -k regex:"bwd|dkv|convert|preprocess|zero" --launch-skip 10 --launch-count 12 \
  .gpu/bin/bench --varlen --bwd --dhead 128 --heads 16 --kernel wgmma --min-time 0.02 --benchmark_filter='bwd_varlen/wgmma/' \
  >> "$O/ncu_varlen.txt" 2>&1
echo "flash rc=$? $((SECONDS - T0)) s"
grep -vE "UserWarning|exe_args" "$O/ncu_varlen.txt" | grep -E "^  [A-Za-z_].*\(|duration|inst_executed|dram__bytes|grid_size" | cut -c1-160 | tail -120 > "$O/ncu_varlen_summary.txt"
bash docs/results/2026-11-28_session29/next/ncu_fa4_src.sh
echo "total $((SECONDS - T0)) s"
