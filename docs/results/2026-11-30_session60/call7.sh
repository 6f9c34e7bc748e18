#!/usr/bin/env bash
# Session 60, call 7 (FA4 staged by calls 5-6; carry [".anchors/fa4-part2", ".gpu"]; HEAD e280827, bench only, tag H).
# Issue 18's table from one call: benchmarks/fa4_bwd_matched.py at hdims 64 / 128 / 256, 8k and 16k,
# full and causal: flash auto in both modes, FA4 in both modes and cuDNN (SDPA) at matched timing.
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
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
