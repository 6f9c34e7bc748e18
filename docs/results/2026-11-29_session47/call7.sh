#!/usr/bin/env bash
# Session 47, call 7 (carry [".gpu"]): no build change. Session 46's bench (A.txz: the library as
# landed) against cuDNN on issue 19's decode shapes, alternating five times: `./bench --decode`
# (contiguous, page 16, page 256), then `sdpa_decode.py`; medians of the five.
source benchmarks/device_call.sh
dc_setup X > /dev/null
for r in 1 2 3 4 5; do
  timeout 90 "$G/A/bench" --decode 2>&1 | grep -E "^decode" | sed -E 's/ +[0-9.]+ us +[0-9.]+ us +[0-9]+//' | sed "s/^/round $r /"
  python3 benchmarks/sdpa_decode.py 2>&1 | grep "sdpa/" | sed "s/^/round $r /"
done > "$O/decode_vs_cudnn.txt" 2>&1
python3 - "$O/decode_vs_cudnn.txt" <<'P' | tee "$O/decode_vs_cudnn_summary.txt"
import collections, re, statistics, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'round \d+ decode/splitkv/b(\d+)_cache(\d+)_(\w+?)_hq.*us=([\d.]+)', line)
    if m: d[(m[1], m[2], "flash " + m[3])].append(float(m[4])); continue
    m = re.match(r'round \d+ sdpa/(\w+)\s+b(\d+)\s+cache (\d+)\s+([\d.]+) us', line)
    if m: d[(m[2], m[3], "sdpa " + m[1])].append(float(m[4]))
for k in sorted(d, key=lambda k: (int(k[0]), k[2])):
    print(f"b{k[0]} x {k[1]:>6} {k[2]:20s} median {statistics.median(d[k]):7.1f} us  {d[k]}")
for b, c in sorted(set((k[0], k[1]) for k in d), key=lambda x: int(x[0])):
    f, s = d.get((b, c, "flash contiguous")), d.get((b, c, "sdpa cudnn"))
    if f and s: print(f"b{b} x {c}: cuDNN / flash (medians) {statistics.median(s) / statistics.median(f):.3f}")
P
echo "total: $((SECONDS - DC_T0)) s"
