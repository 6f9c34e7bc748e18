#!/usr/bin/env bash
# Session 54, call 6 (carry [".gpu"]). Call 5: W at 16 x 8k with one split (128 CTAs, one an SM)
# ran 134.6 us against the heuristic's two (256 CTAs, two an SM) 139.9 us, and the copies alone
# (Z) were only 1-2.5% faster than W: fewer concurrent streams read the cache faster now that
# W's whole-tile loads let one CTA an SM keep up (session 53's call 13, before W: one split 169.7).
# Splits forced, W only, contiguous / page 16 / page 256 (--flush always), two rounds: the
# heuristic's choice (two CTAs an SM) against one CTA an SM, on shapes with fewer CTAs than slots.
source benchmarks/device_call.sh
dc_setup W > /dev/null
for r in 1 2; do
  for c in "--batch 16 --cache 8192 --splits 1" "--batch 16 --cache 8192 --splits 2" \
           "--batch 1 --cache 131072 --splits 16" "--batch 1 --cache 131072 --splits 32" \
           "--batch 4 --cache 32768 --splits 4" "--batch 4 --cache 32768 --splits 8" \
           "--batch 8 --cache 16384 --splits 2" "--batch 8 --cache 16384 --splits 4" \
           "--batch 2 --cache 65536 --splits 8" "--batch 2 --cache 65536 --splits 16" \
           "--batch 24 --cache 8192 --splits 1" "--batch 24 --cache 8192 --splits 2" "--batch 24 --cache 8192 --splits 0" \
           "--batch 16 --cache 8192 --dhead 64 --splits 1" "--batch 16 --cache 8192 --dhead 64 --splits 2" \
           "--batch 4 --cache 32768 --dhead 64 --splits 4" "--batch 4 --cache 32768 --dhead 64 --splits 8"; do
    timeout 60 "$G/W/bench" --decode --flush always $c 2>&1 | grep -E "^decode" |
      sed -E 's/ +[0-9.]+ us +[0-9.]+ us +[0-9]+//' | sed "s/^/r$r $c | /"
  done
done > "$O/splits.txt"
python3 - "$O/splits.txt" <<'P'
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'r\d (.*?) --splits \d+ \| decode/\w+/b\d+_cache\d+_(\w+?)_hq\S+_(d\d+)_\w+/.* splits=(\d+) us=([\d.]+)', line)
    if m: d[(m[1] + " " + m[3], m[2], int(m[4]))].append(float(m[5]))
for k in sorted(d): print(f"{k[0]:40s} {k[1]:11s} splits {k[2]:3d} {sum(d[k])/len(d[k]):8.1f} us {d[k]}")
P
echo "total: $((SECONDS - DC_T0)) s"
