#!/usr/bin/env bash
# Session 63, call 7 (FA4 staged by calls 5-6, session 62's call3.sh / call4.sh; carry [".anchors/fa4-part2", ".gpu"]).
# bin/ = this session's final kernels (G: masked non-deterministic dense calls' pairs two at a time where the replay
# gains >= 3%). The backward suites but the slow deterministic / varlen ones (their kernels are SASS-identical to call
# 4's, which passed them), the sanitizers on a grouped causal case, then issue 18's hdim 128 rows beside FA4 and cuDNN.
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup G > /dev/null
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*-*OrderedDq*:*over_order_cap*:*FiftyRuns*' 200 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED|CausalPairsInGroups" "$O/tests.txt" | head -5
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 4 --seq 1500 --heads 6 --heads-kv 3 --dhead 128 --causal"
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
echo "total: $((SECONDS - DC_T0)) s"
