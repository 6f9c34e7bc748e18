#!/usr/bin/env bash
# Session 45, call 3 (FA4 staged by calls 1-2; carry [".anchors/fa4-part2", ".gpu"]). ncu beside
# FA4 4.0.0b36 on the session's tree (session 44's final build): hdim 256 full 512 (b32 x 8, the
# grid kernel, 0.92 of FA4) and hdim 64 full 16k (b1 x 32, the walk, 0.96 of FA4). One report
# each, printed twice: the details page (SOL, launch, occupancy, scheduler, warp states) and the
# source page (SourceCounters) for src_opcodes.py. (It ran fa4_once.py from a copy of session 34's
# here, removed since: the same file.)
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib:${LD_LIBRARY_PATH:-}
S=docs/results/2026-11-29_session45
T0=$SECONDS
prof() {  # name, kernel regex, skip, command...
  local name=$1 k=$2 skip=$3; shift 3
  timeout 170 ncu -k regex:"$k" --launch-skip "$skip" --launch-count 1 --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -o "/tmp/$name" -f "$@" > "$O/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - T0)) s"
  ncu -i "/tmp/$name.ncu-rep" --page details > "$O/$name.details.txt" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page source --print-source sass --csv 2>/dev/null | xz > "$O/$name.csv.xz"
}
prof fa4_f256 ForwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py fwd 256 512 32 8
prof fl_f256 fwd_ 3 .gpu/bin/bench --dhead 256 --seq 512 --batch 32 --heads 8 --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
prof fa4_f64 ForwardSm90 2 python3 docs/results/2026-11-28_session34/next/fa4_once.py fwd 64 16384 1 32
prof fl_f64 fwd_ 3 .gpu/bin/bench --dhead 64 --seq 16384 --batch 1 --heads 32 --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
for p in f256 f64; do python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/fl_$p.csv.xz" "$O/fa4_$p.csv.xz" > "$O/ops_$p.txt" 2>&1; done
tail -2 "$O"/*.log
echo "total $((SECONDS - T0)) s"
