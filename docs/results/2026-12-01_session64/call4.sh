#!/usr/bin/env bash
# Session 64, call 4 (FA4 staged by call2.sh / call3.sh; carry [".anchors/fa4-part2", ".gpu"]): issue 18's table,
# every head dim, flash (bundle = this session's final kernels: L3, the mask-free run once per key block) beside FA4
# and cuDNN, both modes.
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup F > /dev/null
timeout 575 python3 benchmarks/fa4_bwd_matched.py "$B/bench" "$O/bwd_matched.json" 64,128,256 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/bwd_matched.txt"
python3 - "$O/bwd_matched.txt" <<'P'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): print(l.rstrip()[:200]); continue
    r = json.loads(l)
    print(f"d{r['dhead']} {'causal' if r['causal'] else 'full  '} {r['seq']:5d}  flash {r['flash']} det {r['flash_det']} ({r['det_ratio']})  "
          f"fa4 {r['fa4_matched']} det {r['fa4_det_matched']}  cudnn {r['cudnn_matched']}  flash/fa4 {r['ratio_matched']}  flash/cudnn {r['ratio_cudnn_matched']}")
P
echo "total: $((SECONDS - DC_T0)) s"
