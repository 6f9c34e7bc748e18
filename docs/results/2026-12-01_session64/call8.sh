#!/usr/bin/env bash
# Session 64, call 8 (FA4 staged again by calls 6-7 = call2.sh / call3.sh; carry [".anchors/fa4-part2", ".gpu"];
# bundle = call 4's kernels). Issue 16's backward rows (every case but the softcap, whose kernels L3 did not
# change) and issue 17's varlen rows beside FA4, after L3 (the mask-free run once per key block).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup F > /dev/null
FA4_MODES=bwd FA4_CASES=causal,window4096_causal,window128_causal,window2048_2048,causal_sinks \
  timeout 300 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_bwd.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/features_bwd.txt"
echo "features: $((SECONDS - DC_T0)) s"
timeout 240 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/varlen.txt"
python3 - "$O/features_bwd.txt" "$O/varlen.txt" <<'P'
import json, sys
for f in sys.argv[1:]:
    for l in open(f):
        if not l.startswith("{"): print(l.rstrip()[:200]); continue
        r = json.loads(l)
        print({k: v for k, v in r.items() if k not in ("lens",)})
P
echo "total: $((SECONDS - DC_T0)) s"
