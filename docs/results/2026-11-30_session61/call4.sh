#!/usr/bin/env bash
# Session 61, call 4 (FA4 staged by calls 2-3; carry [".anchors/fa4-part2", ".gpu"]; HEAD 6b2c9fd + docs,
# bench only, tag H). Issue 16's backward rows beside FA4 (not measured since session 34) and
# issue 17's varlen rows (since session 49), on today's kernels (the counter thread of call 1 included).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
FA4_MODES=bwd timeout 300 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_bwd.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/features_bwd.txt"
echo "features: $((SECONDS - DC_T0)) s"
timeout 250 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 |
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
