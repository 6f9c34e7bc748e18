#!/usr/bin/env bash
# Prepared in session 62 for the next session (not run): FA4 staged first (this folder's call3.sh with carry
# [".anchors/fa4-p1a"], then call4.sh with [".anchors/fa4-p1b"], within 30 s of each other); then this, carry
# [".anchors/fa4-part2", ".gpu"], ~250 s. .gpu/bundle.txz: benchmarks/pack_gpu.sh of HEAD (session 62's stop).
# Issue 18's hdim 128 cells (0.981-0.997 of FA4 in call 5) beside FA4 under ncu (base clocks) on F's kernel:
# the first side-by-side source pages since session 53's (before F). The helper's phase table
# (session 61, helper_bwd128_fa4_diff.md) put flash's "dQ^T / dK issue -> step end" phase at 156 K samples
# against FA4's 141 K, the largest difference left after F's front half; re-read it here, phase by phase
# (src_opcodes.py writes each listing, *.lst, with executed instructions and stall samples per line).
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_ncu fa4_full BackwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py bwd 128 8192 2 16
dc_ncu fl_full dkv 3 "$B/bench" --bwd --dhead 128 --seq 8192 --batch 2 --heads 16 --kernel auto --min-time 0.02 --benchmark_filter=bwd/auto/
dc_ncu fa4_causal BackwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py bwd 128 8192 2 16 causal
dc_ncu fl_causal dkv 3 "$B/bench" --bwd --dhead 128 --seq 8192 --batch 2 --heads 16 --causal --kernel auto --min-time 0.02 --benchmark_filter=bwd/auto/
{ python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_full.csv.xz" "$O/r/fa4_full.csv.xz"; echo
  python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_causal.csv.xz" "$O/r/fa4_causal.csv.xz"; } > "$O/opcodes.txt" 2>&1
head -40 "$O/opcodes.txt" | cut -c1-150
grep -h -E "Duration|Elapsed Cycles|Executed Ipc A" "$O"/r/*.details.csv | cut -c1-160
tar -C "$O" -cJf "$O/ncu.tar.xz" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
