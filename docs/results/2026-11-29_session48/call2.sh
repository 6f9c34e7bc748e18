#!/usr/bin/env bash
# Session 48, call 2 (carry [".gpu"]). Where call 1's prediction went wrong: the backward's three
# kernels timed alone (ncu, clocks not locked) for A (session 46) and Z (call 1's build), hdim 256
# and 128 at 8k, both modes: the preprocess's time and DRAM bytes with and without the zeros.
# Then the variable-length edge tests Z's call 1 did not run.
source benchmarks/device_call.sh
dc_setup Z > /dev/null
NCU="ncu --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum -c 9"
for t in A Z; do
  for cell in "--dhead 256 --kernel wgmma_wide" "--dhead 128 --kernel wgmma"; do
    for f in det '^bwd/wgmma[a-z_]*/'; do
      echo "=== $t $cell $f"
      # shellcheck disable=SC2086
      timeout 120 $NCU "$G/$t/bench" --bwd --seq 8192 $cell --min-time 0.01 --benchmark_filter="$f" 2>&1 |
        grep -E "^  [a-z].*\(|gpu__time_duration|dram__bytes" | cut -c1-160
    done
  done
done > "$O/ncu.txt" 2>&1
python3 - "$O/ncu.txt" <<'P' | tee "$O/ncu_summary.txt"
import re, sys, collections
cur = None; name = None; d = collections.defaultdict(list); k = None
for line in open(sys.argv[1]):
    if line.startswith("==="): cur = line[4:].strip(); continue
    if "(" in line and "gpu__" not in line and "dram__" not in line:
        names = re.findall(r"(\w+)(?=<|\()", line)
        pick = [x for x in names if "kernel" in x or x.startswith("bwd")]
        name = (pick or names or ["?"])[0]; continue
    m = re.search(r"(gpu__time_duration.sum|dram__bytes_read.sum|dram__bytes_write.sum)\s+(\S+)\s+([\d.,]+)", line)
    if m and name:
        d[(cur, name, m[1] + " " + m[2])].append(float(m[3].replace(",", "")))
for key, v in d.items():
    v = sorted(v); print(f"{key[0]:55s} {key[1]:32s} {key[2]:32s} median {v[len(v)//2]:10.2f} n={len(v)}")
P
dc_tests 'VarlenBwdEdges.*:VarlenBwdErrors.*:BackwardEdges.*' 200 4 | tail -6
echo "total: $((SECONDS - DC_T0)) s"
