#!/usr/bin/env bash
# Session 62, call 5 (FA4 staged by calls 3-4; carry [".anchors/fa4-part2", ".gpu"]). bin/ = HEAD 966321c (F + R2).
# Issue 18's hdim 128 rows beside FA4 and cuDNN (fa4_bwd_matched.py; session 61 as N: 0.991-1.008), and issue 16's
# backward rows that R2 and F move: causal, the (128, 0) window, sinks, at hdim 64 and 128 (session 61: (128, 0)
# 0.96 / 0.95, hdim 128 causal / sinks 0.98). Predicted: hdim 128 0.99-1.01; (128, 0) window hdim 128 ~1.03.
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup R > /dev/null
timeout 300 python3 benchmarks/fa4_bwd_matched.py "$B/bench" "$O/bwd_matched.json" 128 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/bwd_matched.txt"
python3 - "$O/bwd_matched.txt" <<'P'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): print(l.rstrip()[:200]); continue
    r = json.loads(l)
    print(f"d{r['dhead']} {'causal' if r['causal'] else 'full  '} {r['seq']:5d}  flash {r['flash']} det {r['flash_det']} ({r['det_ratio']})  "
          f"fa4 {r['fa4_matched']} det {r['fa4_det_matched']}  cudnn {r['cudnn_matched']}  flash/fa4 {r['ratio_matched']}  flash/cudnn {r['ratio_cudnn_matched']}")
P
echo "bwd_matched: $((SECONDS - DC_T0)) s"
FA4_MODES=bwd FA4_CASES=causal,window128_causal,causal_sinks timeout 200 python3 benchmarks/fa4_features_matched.py "$B/bench" \
  "$O/features_bwd.json" 2>&1 | grep -v -E "Warning|warn|exe_args" > "$O/features_bwd.txt"
python3 - "$O/features_bwd.txt" <<'P'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): print(l.rstrip()[:200]); continue
    print({k: v for k, v in json.loads(l).items() if k not in ("lens",)})
P
echo "total: $((SECONDS - DC_T0)) s"
