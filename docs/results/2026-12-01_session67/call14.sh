#!/usr/bin/env bash
# Session 67, call 14 (FA4 staged by calls 12-13; call 11's FA4 part found the machine cold, and its
# sanitizer lines gave runner --bwd --varlen, which runner refuses): memcheck / racecheck of Z's
# variable-length backward on test cases, then issue 17's table with the timed-alike columns
# (fa4_varlen_matched.py). carry [".anchors/fa4-part2", ".gpu"].
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
source benchmarks/device_call.sh
dc_setup Z > /dev/null
export FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python:${PYTHONPATH:-}
timeout 300 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 | grep -v -E "Warning|warn|exe_args" | tail -3 > "$O/varlen.txt"
python3 - "$O/varlen_matched.json" <<'P'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["mode"], "causal" if r["causal"] else "full  ", {k: v for k, v in r.items() if k not in ("mode", "causal", "lens")})
P
echo "varlen: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/test_gpu --gtest_filter=*VarlenBwd.*bf16_tile_edges_80*:*VarlenBwd.*bf16_tile_edges_causal_l100*" \
  "$B/test_gpu --gtest_filter=VarlenBwdEdges.AutoAndCallerWorkspace"
echo "total: $((SECONDS - DC_T0)) s"
