#!/usr/bin/env bash
# Session 67, call 8 (FA4 staged by calls 6-7): (1) issue 17's varlen calls kernel by kernel, flash
# (flash_ladder over libflash_c.so) and FA4, torch.profiler medians (b0_kernel_times.py), forward and
# backward, causal and full; (2) fa4_varlen_matched.py on the same tree; (3) issue 16's causal and
# causal + softcap 30 rows forward beside FA4 (fa4_features_matched.py), for the softcap's cost in
# both libraries in one call. carry [".anchors/fa4-part2", ".gpu"].
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=docs/results/2026-12-01_session67
for m in "fwd causal" "fwd full" "bwd causal" "bwd full"; do
  FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python:$PYTHONPATH timeout 120 python3 $R/b0_kernel_times.py $m 2>&1 |
    grep -v -E "Warning|warn|exe_args"
done | tee "$O/b0.txt"
echo "b0: $((SECONDS - DC_T0)) s"
timeout 200 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 | grep -v -E "Warning|warn|exe_args" | tail -8 > "$O/varlen.txt"
python3 - "$O/varlen_matched.json" <<'P'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["mode"], "causal" if r["causal"] else "full  ", {k: r.get(k) for k in ("flash", "flash_burst", "fa4_short", "fa4_matched", "vs_fa4_matched", "burst_vs_fa4_short")})
P
echo "varlen: $((SECONDS - DC_T0)) s"
FA4_MODES=fwd FA4_CASES=causal,causal_softcap30 timeout 150 python3 benchmarks/fa4_features_matched.py "$B/bench" "$O/features_fwd.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" | tail -6 > "$O/features.txt"
python3 - "$O/features_fwd.json" <<'P'
import json, sys
for r in json.load(open(sys.argv[1])):
    print({k: v for k, v in r.items() if k in ("case", "dhead", "mode", "flash", "fa4_short", "fa4_matched", "vs_fa4_matched")})
P
echo "total: $((SECONDS - DC_T0)) s"
