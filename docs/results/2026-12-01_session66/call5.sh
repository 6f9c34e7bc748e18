#!/usr/bin/env bash
# Session 66, call 5 (FA4 staged by calls 3-4, session 64's call2.sh / call3.sh): issue 19's hdim 128
# cells at 8k and 16k (full, causal) with flash (HEAD), FA4 and cuDNN as fa4_fwd_matched.py times
# them, between two timings of the board's sustained bf16 GEMM (torch.matmul 8192^3, 0.5 s).
# carry [".anchors/fa4-part2", ".gpu"].
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
python3 docs/results/2026-12-01_session66/gemm_ceiling.py 2>&1 | tee "$O/gemm_before.txt"
FA4_DHEADS=128 timeout 400 python3 benchmarks/fa4_fwd_matched.py "$B/bench" "$O/fwd_matched.json" 8192,16384 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$O/fwd.txt"
python3 docs/results/2026-12-01_session66/gemm_ceiling.py 2>&1 | tee "$O/gemm_after.txt"
python3 - "$O/fwd.txt" <<'P'
import json, sys
for l in open(sys.argv[1]):
    if not l.startswith("{"): print(l.rstrip()[:200]); continue
    r = json.loads(l)
    print({k: r.get(k) for k in ("dhead", "causal", "seq", "flash", "flash_flush", "fa4_matched", "fa4_short",
                                 "cudnn_short", "vs_fa4_matched", "flush_vs_fa4_matched")})
P
echo "total: $((SECONDS - DC_T0)) s"
