#!/usr/bin/env bash
# Session 67, call 11 (FA4 staged by calls 9-10): Z, the variable-length backward's dQ accumulator
# zeroed by its preprocess instead of a 134 MB memset (the bundle; A = HEAD's bench), against A in
# two rotated rounds; the varlen and backward suites (the new NaN-workspace test at every head dim
# among them); memcheck / racecheck on varlen backward calls; then issue 17's table with the
# timed-alike columns (fa4_varlen_matched.py: bench --flush always, and flash_ladder by FA4's
# do_bench on the same tensors), and the host time per varlen call (host_us.py).
# carry [".anchors/fa4-part2", ".gpu"].
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || echo "fa4 not staged"
source benchmarks/device_call.sh
dc_setup Z > /dev/null
R=docs/results/2026-12-01_session67
{ dc_abn "A Z" 'bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 128 --heads 16" \
    "--varlen 100,1500,700,1200,300,900,1100,200,1300,400,1000,600,800,1400,500,250 --dhead 64 --heads 16 --heads-kv 4 --causal"
} > "$O/ab.txt" 2>&1
dc_summary A Z "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
dc_tests '*Varlen*:*Backward*:*Bwd*:Concurrency*:Fuzz*' 300 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
grep -h -E "^\[       OK \].*NanWorkspace" "$O/tests.txt" | head -2
rm -f "$O/tests.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --dhead 128 --heads 4 --heads-kv 2 --varlen 1,300,77,1000,0,513 --causal" \
  "$B/runner --bwd --kernel wgmma --dhead 64 --heads 4 --heads-kv 1 --varlen 200,81,0,129"
export FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python:benchmarks:${PYTHONPATH:-}
timeout 60 python3 $R/host_us.py 2>&1 | grep -v -E "Warning|warn" | tee "$O/host_us.txt"
timeout 300 python3 benchmarks/fa4_varlen_matched.py "$B/bench" "$O/varlen_matched.json" 2>&1 | grep -v -E "Warning|warn|exe_args" | tail -3 > "$O/varlen.txt"
python3 - "$O/varlen_matched.json" <<'P'
import json, sys
for r in json.load(open(sys.argv[1])):
    print(r["mode"], "causal" if r["causal"] else "full  ", {k: v for k, v in r.items() if k not in ("mode", "causal", "lens")})
P
echo "total: $((SECONDS - DC_T0)) s"
