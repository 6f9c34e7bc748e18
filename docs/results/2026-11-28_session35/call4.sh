#!/usr/bin/env bash
# Session 35, call 4 (FA4 staged in calls 2-3; carry [".gpu", ".anchors/fa4-part2"]). ncu source
# pages (SourceCounters, WarpStateStats; base clocks) of the main kernels, flash against FA4:
#   f128: forward, hdim 128 full 16k (b1 x 16 heads): flash fwd_09 persistent 3.90 ms vs FA4 3.61
#         (call 3: flash +3.9% instructions, "wait" stalls 2.11 vs 1.56 per issue);
#   c64:  forward, hdim 64 causal 8k (b2 x 32): 1.47 vs 1.34 ms (+3.6% instructions);
#   w64:  backward main kernel, hdim 64 (128, 0) window 8k (b2 x 32): bwd_03 367 us vs FA4 324 us.
# src_opcodes.py puts the per-opcode instruction counts side by side.
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || exit 3
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
N=docs/results/2026-11-28_session34/next
S=docs/results/2026-11-28_session35
T0=$SECONDS
src() {  # name, kernel regex, skip, command...
  local name=$1 k=$2 skip=$3; shift 3
  timeout 150 ncu -k regex:"$k" --launch-skip "$skip" --launch-count 1 --section SourceCounters --section WarpStateStats \
    --page source --print-source sass --csv "$@" 2> "$O/$name.err" | xz > "$O/$name.csv.xz"
  echo "$name rc=$? $((SECONDS - T0)) s"
}
src fa4_f128 ForwardSm90 2 python3 $N/fa4_once.py fwd 128 16384 1 16
src fl_f128 fwd_ 3 .gpu/bin/bench --dhead 128 --seq 16384 --batch 1 --heads 16 --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
src fa4_c64 ForwardSm90 2 python3 $N/fa4_once.py fwd 64 8192 2 32 causal
src fl_c64 fwd_ 3 .gpu/bin/bench --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --kernel auto --min-time 0.02 --benchmark_filter=fwd/auto/
src fa4_w64 BackwardSm90 2 python3 $N/fa4_once.py bwd 64 8192 2 32 window 128,0
src fl_w64 dkv 3 .gpu/bin/bench --bwd --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --window 128,0 --kernel auto --min-time 0.02 --benchmark_filter=bwd/auto/
{ for p in f128 c64 w64; do python3 $S/src_opcodes.py "$O/fl_$p.csv.xz" "$O/fa4_$p.csv.xz"; echo; done; tail -3 "$O"/*.err; } > "$O/summary.txt" 2>&1
rm -f "$O"/*.err "$O"/*.lst
echo "total $((SECONDS - T0)) s"
