#!/usr/bin/env bash
# Session 67, call 2: the ideal-overlap bound (ideal_softmax.cu) beside the real calls. For issue 16's
# two causal cells (hdim 64 8k x 2 x 32, hdim 128 16k x 1 x 16): the synthetic kernel capped and
# uncapped, and flash's ./bench capped (30) and uncapped in the same call, clock sampled. Then the
# SASS check that the MUFU work sits between the wgmma issue and its wait. carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=docs/results/2026-12-01_session67
nvcc -O3 -std=c++20 -arch=sm_90a -Ikernels -o "$O/ideal_softmax" $R/ideal_softmax.cu
cuobjdump -sass "$O/ideal_softmax" > "$O/ideal.sass"
python3 - "$O/ideal.sass" <<'P'
import re, sys
txt = open(sys.argv[1]).read()
for fn in re.split(r"\n\s+Function : ", txt)[1:]:
    name = fn.split("\n")[0].strip()
    ops = re.findall(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]+)", fn)
    # the loop body: from the first HGMMA to the WARPGROUP.DEPBAR (wait) after it
    try:
        i = next(j for j, o in enumerate(ops) if o.startswith("HGMMA"))
        w = next(j for j in range(i, len(ops)) if ops[j].startswith("WARPGROUP.DEPBAR"))
        body = ops[i:w]
        print(name[:60], "HGMMA", sum(o.startswith("HGMMA") for o in body), "MUFU between issue and wait",
              sum(o.startswith("MUFU") for o in body), "MUFU in all", sum(o.startswith("MUFU") for o in ops))
    except StopIteration:
        print(name[:60], "no HGMMA / wait found")
P
cell() {  # name, flags
  local name=$1
  shift
  nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader,nounits -lms 20 > "$O/smi.csv" &
  local p=$!
  sleep 0.3
  "$@" 2>&1 | grep -E "^fwd|^ideal|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$name /"
  kill $p; wait $p 2>/dev/null
  python3 - "$O/smi.csv" "$name" <<'P'
import sys, statistics
rows = [l.split(",") for l in open(sys.argv[1]) if l.strip()]
busy = [(float(c), float(p)) for c, p in rows if float(p) > 300]
if busy:
    print(f"{sys.argv[2]} clock {statistics.median([c for c, _ in busy]):.0f} MHz, power {statistics.median([p for _, p in busy]):.0f} W")
P
}
{
for r in 1 2; do
  cell d64_flash "$B/bench" --kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal
  cell d64_flash_cap30 "$B/bench" --kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --softcap 30
  cell d64_ideal "$O/ideal_softmax" 64 2 32 8192 plain
  cell d64_ideal_cap "$O/ideal_softmax" 64 2 32 8192 cap
  cell d128_flash "$B/bench" --kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal
  cell d128_flash_cap30 "$B/bench" --kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --softcap 30
  cell d128_ideal "$O/ideal_softmax" 128 1 16 16384 plain
  cell d128_ideal_cap "$O/ideal_softmax" 128 1 16 16384 cap
done
} 2>&1 | tee "$O/cells.txt"
rm -f "$O/smi.csv" "$O/ideal_softmax"
echo "total: $((SECONDS - DC_T0)) s"
