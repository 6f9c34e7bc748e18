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
S=docs/results/2026-11-30_session53
T0=$SECONDS
mkdir -p "$O/r"
rep() {  # name, kernel regex, skip, command...
  local name=$1 k=$2 skip=$3; shift 3
  timeout 170 ncu -k regex:"$k" --launch-skip "$skip" --launch-count 1 --section SourceCounters --section WarpStateStats \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section LaunchStats --section Occupancy \
    -o "$O/r/$name" "$@" > "$O/r/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - T0)) s"
  ncu -i "$O/r/$name.ncu-rep" --page source --print-source sass --csv 2>/dev/null | xz > "$O/r/$name.csv.xz"
  ncu -i "$O/r/$name.ncu-rep" --page details --csv > "$O/r/$name.details.csv" 2>/dev/null
  rm -f "$O/r/$name.ncu-rep"
}
rep fa4_f64 ForwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py fwd 64 16384 1 32
rep fl_f64 fwd_ 3 .gpu/bin/bench --dhead 64 --seq 16384 --batch 1 --heads 32 --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
rep fa4_c256 ForwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py fwd 256 1024 16 8 causal
rep fl_c256 fwd_ 3 .gpu/bin/bench --dhead 256 --seq 1024 --batch 16 --heads 8 --causal --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
{ python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_f64.csv.xz" "$O/r/fa4_f64.csv.xz"; echo
  python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/r/fl_c256.csv.xz" "$O/r/fa4_c256.csv.xz"; } > "$O/opcodes.txt" 2>&1
head -4 "$O/opcodes.txt"
grep -h -E '"(Duration|Grid Size|Registers Per Thread|Dynamic Shared Memory Per Block|Executed Ipc Active)"' "$O"/r/*.details.csv | cut -c1-200
tar -C "$O" -cJf "$O/ncu.tar.xz" r && rm -rf "$O/r"
echo "total: $((SECONDS - T0)) s"
