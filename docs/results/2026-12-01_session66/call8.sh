#!/usr/bin/env bash
# Session 66, calls 8 and 9 (FA4 staged by calls 6-7, as calls 3-4): issue 19's table on HEAD (the forward
# unchanged since session 58), seq 512-16k, full and causal, flash / FA4 / cuDNN by fa4_fwd_matched.py;
# FA4_DHEADS=64,256 in call 8, 128 in call 9 (then the GEMM ceiling again). carry [".anchors/fa4-part2", ".gpu"].
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
DH=${1:-64,256}
FA4_DHEADS=$DH timeout 560 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" 512,1024,2048,4096,8192,16384 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/fwd_matched.txt"
[ "$DH" = 128 ] && python3 docs/results/2026-12-01_session66/gemm_ceiling.py 2>&1 | tee "$O/gemm.txt"
python3 - "$O/fwd_matched.txt" <<'P'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): print(l.rstrip()[:200]); continue
    r = json.loads(l)
    print(f"d{r['dhead']} {'causal' if r['causal'] else 'full  '} {r['seq']:5d} flash {r['flash']} flush {r['flash_flush']} fa4 {r['fa4_matched']} "
          f"cudnn {r['cudnn_short']}  vs_fa4 {r.get('vs_fa4_matched')} flush_vs_fa4 {r.get('flush_vs_fa4_matched')} burst_vs_cudnn {r.get('burst_vs_cudnn_short')}")
P
echo "total: $((SECONDS - DC_T0)) s"
