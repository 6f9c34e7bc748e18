#!/usr/bin/env bash
# Session 47, call 4 (carry [".gpu"]): no build change. Session 46's bench (A.txz), decode at
# issue 19's three shapes with the split count forced (--splits N; 0 = the heuristic), contiguous
# cache, three rounds rotated; cuDNN (sdpa_decode.py) before and after.
source benchmarks/device_call.sh
dc_setup X > /dev/null
python3 benchmarks/sdpa_decode.py --json "$O/sdpa_before.json" > "$O/sdpa_before.txt" 2>&1; grep -i cudnn "$O/sdpa_before.txt" | head -4
for r in 1 2 3; do
  for cfg in "16 8192 0" "16 8192 1" "16 8192 3" "1 131072 0" "1 131072 16" "1 131072 24" "1 131072 48" "64 4096 0" "64 4096 2"; do
    set -- $cfg
    us=$(timeout 60 "$G/A/bench" --decode --batch $1 --cache $2 --splits $3 --page-size 0 --heads 32 --heads-kv 8 --dhead 128 \
         --kernel splitkv 2>&1 | grep -E "^decode" | grep -oE "us=[0-9.]+" | head -1)
    echo "round $r b$1 cache$2 splits$3 $us"
  done
done > "$O/splits.txt" 2>&1
python3 - "$O/splits.txt" <<'P' | tee "$O/splits_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'round \d+ (\S+) (\S+) (\S+) us=([\d.]+)', line)
    if m: d[(m[1], m[2], m[3])].append(float(m[4]))
for k in sorted(d): print(" ".join(k), f"mean {sum(d[k]) / len(d[k]):7.1f} us", d[k])
P
python3 benchmarks/sdpa_decode.py --json "$O/sdpa_after.json" > "$O/sdpa_after.txt" 2>&1; grep -i cudnn "$O/sdpa_after.txt" | head -4
"$G/A/bench" --decode --batch 16 --cache 8192 --heads 32 --heads-kv 8 --dhead 128 --kernel splitkv --page-size 0 2>&1 | grep -E "^decode" | head -3
echo "total: $((SECONDS - DC_T0)) s"
