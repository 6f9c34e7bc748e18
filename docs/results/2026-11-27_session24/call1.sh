#!/usr/bin/env bash
# Session 24, call 1: session 23's four backward patches (A = the tree,
# N0 = + dQ convert by tiles + preprocess by 16-byte loads, N1 = + bwd_03's
# non-deterministic dQ by RED.128, N2 = + 80-row steps at hdim 128 without a
# mask, N3 = N2 with three Q/dO stages for the 80-row Config), built locally
# by session 23's recipe (next_call.sh there) and carried as .gpu/bundle.tgz.
# Each cell runs only the binaries that differ there. STEPS: "pre ncu ab".
set -u
cd "$(dirname "$0")"
[ -d A ] || tar -xzf bundle.tgz
export LD_LIBRARY_PATH=$PWD/lib
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
STEPS=${STEPS:-"pre ncu ab"}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
for step in $STEPS; do case $step in
pre)
  for t in A N0 N1 N2 N3; do
    if timeout 60 $t/bench --bwd --seq 1024 --dhead 128 --kernel wgmma --min-time 0.01 2>&1 | grep -A3 "ERROR OCCURRED"; then
      echo "$t fails; stopping"; exit 2
    fi
  done; echo pre ok ;;
ncu)
  for t in A N0; do
    timeout 90 ncu --metrics gpu__time_duration.sum -k regex:'convert|preprocess' -c 4 \
      $t/bench --bwd --seq 16384 --dhead 128 --kernel wgmma --min-time 0.01 --benchmark_filter='bwd/wgmma/' > "$O/ncu_$t.txt" 2>&1
    echo "$t:"; grep -E '^  [a-z_].*\(|gpu__time_duration' "$O/ncu_$t.txt" | head -8
  done ;;
ab)
  # cell|binaries that differ there
  cells=("--seq 8192 --dhead 128|A N0 N1 N2 N3" "--seq 16384 --dhead 128|A N0 N1 N2 N3"
         "--seq 8192 --dhead 128 --causal|A N0 N1" "--seq 8192 --dhead 64|A N0 N1"
         "--seq 8192 --dhead 64 --causal|A N0 N1" "--seq 16384 --dhead 64 --causal|A N0 N1"
         "--seq 8192 --dhead 256|A N0")
  for r in 0 1; do
    for c in "${cells[@]}"; do
      cell=${c%%|*}; order=${c#*|}
      [ $r = 1 ] && order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
      for t in $order; do
        k=wgmma; case "$cell" in *256*) k=wgmma_wide;; esac
        # shellcheck disable=SC2086
        timeout 60 $t/bench --bwd $cell --kernel $k 2>&1 | grep -E '^bwd' | sed "s/^/$t /"
      done
    done
  done > "$O/ab.txt"
  python3 - "$O/ab.txt" <<'PY' | tee "$O/ab_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.search(r"TFLOPS=([0-9.]+)", line)
    if m:
        tag, name = line.split()[:2]
        d[(name.split("/min_time")[0], tag)].append(float(m.group(1)))
for n in sorted({n for n, _ in d}):
    if (n, "A") not in d: continue
    a = sum(d[(n, "A")]) / len(d[(n, "A")]); s = f"{n:58s} A {a:6.1f}"
    for t in ("N0", "N1", "N2", "N3"):
        if (n, t) in d:
            v = sum(d[(n, t)]) / len(d[(n, t)]); s += f"  {t} {v:6.1f} ({100 * (v / a - 1):+5.1f}%)"
    print(s)
PY
  ;;
esac; done
