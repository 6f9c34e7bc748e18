#!/usr/bin/env bash
# Session 61, call 12 (FA4 staged by calls 10-11; carry [".anchors/fa4-part2", ".gpu"]). bin/ = N: the tree with S
# (V after the first stage) and D (bwd_03's mask-free 80-row step body: LSE pairs between the S^T and dP^T
# issues, dpsum pairs before dP^T's wait, the wait after st[0..3]'s exponentials); H/bench = 6b2c9fd.
# The proof (every backward suite, threads, fuzz; memcheck and racecheck), then H / N on the cells call 9
# did not time (hdim 64, deterministic, the 64-row hdim 128 kernel of a (128, 0) window), then issue 18's
# hdim 128 rows beside FA4 and cuDNN (fa4_bwd_matched.py).
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
for a in "--seq 333 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" "--seq 300 --seq-k 200 --heads 2 --dhead 128 --causal" \
         "--seq 700 --heads 2 --dhead 128 --causal --window 128,0" "--batch 2 --seq 160 --seq-k 1000 --heads 2 --dhead 128 --causal" \
         "--seq 300 --seq-k 517 --heads 4 --heads-kv 1 --dhead 64 --causal" "--seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal"; do
  timeout 60 "$B/runner" --bwd --kernel auto $a 2>&1 | grep -E "OK|FAIL|rror" | head -4
done > "$O/runner.txt" 2>&1
echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
dc_tests '*Backward*:*Bwd*:VarlenForwardErrors.*:Concurrency*:Fuzz*' 240 8 | tail -9
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" \
  "$B/runner --bwd --kernel wgmma --batch 1 --seq 333 --seq-k 333 --heads 2 --heads-kv 1 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal" | grep -E "rc=|SUMMARY" | cut -c1-120
dc_abn "H N" 'bwd/wgmma/|det/' "--seq 16384 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --causal --kernel wgmma" "--seq 8192 --dhead 64 --kernel wgmma" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 128,0 --kernel wgmma" > "$O/ab.txt" 2>&1
dc_summary H N "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "before fa4: $((SECONDS - DC_T0)) s"
if source .anchors/fa4-part2/install.sh > /dev/null 2>&1; then
  timeout $((540 - SECONDS + DC_T0)) python3 benchmarks/fa4_bwd_matched.py "$B/bench" "$O/bwd_matched.json" 128 2>&1 |
    grep -v -E "Warning|warn|exe_args" > "$O/bwd_matched.txt"
  python3 - "$O/bwd_matched.txt" <<'P'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): print(l.rstrip()[:200]); continue
    r = json.loads(l)
    print(f"d{r['dhead']} {'causal' if r['causal'] else 'full  '} {r['seq']:5d}  flash {r['flash']} det {r['flash_det']} ({r['det_ratio']})  "
          f"fa4 {r['fa4_matched']} det {r['fa4_det_matched']}  cudnn {r['cudnn_matched']}  flash/fa4 {r['ratio_matched']}  flash/cudnn {r['ratio_cudnn_matched']}")
P
else echo "fa4 not staged"; fi
echo "total: $((SECONDS - DC_T0)) s"
