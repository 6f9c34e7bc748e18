#!/usr/bin/env bash
# Session 53, call 7 (FA4 4.0.0b36 staged again by calls 5-6; carry [".anchors/fa4-part2", ".gpu"]).
# Issue 19's forward cells furthest from FA4 (session 44-45 tables, 0.5 s): hdim 64 full 16k
# (0.96) and hdim 256 causal 1k (0.94). ncu reports (base clocks) of flash's forward kernel
# (auto) and FA4's ForwardSm90 on each: source pages, warp states, launch statistics.
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
source benchmarks/device_call.sh  # dc_ncu (its sections: a superset of what this call first ran with)
DC_T0=$SECONDS
mkdir -p "$O/r"
dc_ncu fa4_f64 ForwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py fwd 64 16384 1 32
dc_ncu fl_f64 fwd_ 3 .gpu/bin/bench --dhead 64 --seq 16384 --batch 1 --heads 32 --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
dc_ncu fa4_c256 ForwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py fwd 256 1024 16 8 causal
dc_ncu fl_c256 fwd_ 3 .gpu/bin/bench --dhead 256 --seq 1024 --batch 16 --heads 8 --causal --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
{ python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_f64.csv.xz" "$O/r/fa4_f64.csv.xz"; echo
  python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_c256.csv.xz" "$O/r/fa4_c256.csv.xz"; } > "$O/opcodes.txt" 2>&1
head -4 "$O/opcodes.txt"
grep -h -E '"(Duration|Grid Size|Registers Per Thread|Dynamic Shared Memory Per Block|Executed Ipc Active)"' "$O"/r/*.details.csv | cut -c1-200
tar -C "$O" -cJf "$O/ncu.tar.xz" r && rm -rf "$O/r"
echo "total: $((SECONDS - DC_T0)) s"
