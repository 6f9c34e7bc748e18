#!/usr/bin/env bash
# Session 53, call 3 (FA4 4.0.0b36 staged by calls 1-2, the halves of part 1; carry
# [".anchors/fa4-part2", ".gpu"]). Issue 18's hdim 128 backward (0.97-0.98 of FA4 in session 43's
# call; last ncu side by side: session 12, before the 80-row steps): ncu reports (base clocks) of
# the main backward kernels, flash's bwd_03 dkv kernel against FA4's BackwardSm90, hdim 128 full 8k
# and causal 8k (b2 x 16 heads); then fa4_bwd_matched.py at hdim 128 (both timings).
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
source benchmarks/device_call.sh  # dc_ncu (its sections: a superset of what this call first ran with)
DC_T0=$SECONDS
mkdir -p "$O/r"
dc_ncu fa4_full BackwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py bwd 128 8192 2 16
dc_ncu fl_full dkv 3 .gpu/bin/bench --bwd --dhead 128 --seq 8192 --batch 2 --heads 16 --kernel auto --min-time 0.02 --benchmark_filter=bwd/auto/
dc_ncu fa4_causal BackwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py bwd 128 8192 2 16 causal
dc_ncu fl_causal dkv 3 .gpu/bin/bench --bwd --dhead 128 --seq 8192 --batch 2 --heads 16 --causal --kernel auto --min-time 0.02 --benchmark_filter=bwd/auto/
{ python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_full.csv.xz" "$O/r/fa4_full.csv.xz"; echo
  python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_causal.csv.xz" "$O/r/fa4_causal.csv.xz"; } > "$O/opcodes.txt" 2>&1
head -4 "$O/opcodes.txt"
timeout 200 python3 benchmarks/fa4_bwd_matched.py .gpu/bin/bench "$O/bwd_matched.json" 128 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/bwd_matched.txt"
tail -5 "$O/bwd_matched.txt"
tar -C "$O" -cJf "$O/ncu.tar.xz" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
