#!/usr/bin/env bash
# Session 58, call 9 (FA4 staged by calls 6-7; right after call 8; carry [".anchors/fa4-part2", ".gpu"]; HEAD's bundle, tag H).
# Issue 19's forward cells at hdims 64 and 256 (the two with cells under FA4 when last measured: sessions
# 53 and 45), seq 512-16k, full and causal: benchmarks/fa4_fwd_matched.py (flash 0.5 s, bursts and
# --flush always; FA4 short and matched; cuDNN short).
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
FA4_DHEADS=128 timeout 580 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" 512,1024,2048,4096,8192,16384 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/fwd_matched.txt"
python3 - "$O/fwd_matched.txt" <<'P'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): print(l.rstrip()[:200]); continue
    r = json.loads(l)
    print(f"d{r['dhead']} {'causal' if r['causal'] else 'full  '} {r['seq']:5d} flash {r['flash']} flush {r['flash_flush']} fa4 {r['fa4_matched']} "
          f"cudnn {r['cudnn_short']}  vs_fa4_matched {r['vs_fa4_matched']} flush_vs_fa4_matched {r['flush_vs_fa4_matched']} burst_vs_cudnn {r['burst_vs_cudnn_short']}")
P
echo "total: $((SECONDS - DC_T0)) s"
