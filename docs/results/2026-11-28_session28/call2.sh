#!/usr/bin/env bash
# Session 28, call 2: deterministic head groups G = 1, 2, 4, 8 (FLASH_EXP_DET_GROUP, an
# experiment-only override in bwd_03's and bwd_04's run(); exp_detgroup_env.patch) on the
# deterministic cells, two rounds with the tag order rotated; then each cell's non-deterministic
# figure once.
source benchmarks/device_call.sh
dc_setup B
for g in 1 2 4 8; do
  mkdir -p "$G/g$g"
  printf '#!/bin/sh\nFLASH_EXP_DET_GROUP=%s exec %s "$@"\n' $g "$B/bench" > "$G/g$g/bench"
  chmod +x "$G/g$g/bench"
done
cells=("--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma"
       "--seq 8192 --dhead 64 --causal --kernel wgmma" "--seq 16384 --dhead 64 --causal --kernel wgmma"
       "--seq 8192 --dhead 64 --kernel wgmma"
       "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 8192 --dhead 256 --kernel wgmma_wide")
{
  for r in 0 1; do
    for c in "${cells[@]}"; do
      case $r in 0) order="g1 g2 g4 g8";; 1) order="g8 g4 g2 g1";; 2) order="g2 g8 g1 g4";; 3) order="g4 g1 g8 g2";; esac
      for t in $order; do
        timeout 60 "$G/$t/bench" --bwd $c --benchmark_filter='det/' 2>&1 |
          grep -E "^bwd|ERROR|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
      done
    done
    [ $SECONDS -gt 300 ] && break
  done
  for c in "${cells[@]}"; do
    timeout 60 "$B/bench" --bwd $c --benchmark_filter='-det/' 2>&1 | grep -E "^bwd|ERROR|rror" |
      sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/nd /"
  done
} | tee "$O/groups.txt"
python3 - "$O/groups.txt" <<'P' | tee "$O/groups_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'(\S+) bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', line)
    if m: d[(m[3], m[1])].append(float(m[4]))
for shape in sorted(set(s for s, _ in d)):
    nd = d.get((shape, 'nd'), [0])[0]
    row = [f"{shape:44s} nd {nd:6.1f}"]
    for t in ('g1', 'g2', 'g4', 'g8'):
        v = d.get((shape, t), [])
        if v:
            m = sum(v) / len(v)
            row.append(f"{t} {m:6.1f} ({m / nd if nd else 0:.3f}, n={len(v)})")
    print("  ".join(row))
P
