#!/usr/bin/env bash
# Session 62, call 2 (carry [".gpu"]). bin/ = HEAD 966321c (F + R2: non-deterministic dense calls with a window
# of left + right <= 256 keys at hdim 128, <= 128 at hdim 256, take the ordered dQ kernels). H/bench = F alone
# (8f-commit before R2). T/{bench,runner,test_gpu} = HEAD + next_T_dkv_tma_store.patch with FLASH_BWD03_TMA_STORE=1
# (bwd_03's dK / dV by stmatrix + TMA tensor stores). Predicted: R vs H at (128, 0) hdim 128 +8-10%, hdim 256
# +4-5%, (256, 0) hdim 128 +2%, else 0; T vs R +0.3-1.5% at hdim 128 / 64 (never run before).
# T is proven in this call (its test_gpu covers R2 too) when its mean change is > +0.4%; else bin/ (R2) is.
set -u
source benchmarks/device_call.sh
dc_setup R > /dev/null
dc_abn "R T" 'bwd/wgmma/|det/' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" "--seq 8192 --dhead 64 --causal --kernel wgmma" > "$O/ab_t.txt" 2>&1
dc_summary R T "$O/ab_t.txt" | tee "$O/ab_t_summary.txt" | cut -c1-110
gain=$(python3 - "$O/ab_t.txt" <<'P'
import re, sys, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"(\S+) (\S+)/.*TFLOPS=([0-9.]+)", l)
    if m: d[(m.group(2), m.group(1))].append(float(m.group(3)))
r = [sum(d[(k, 'T')]) / sum(d[(k, 'R')]) for k, t in d if t == 'R' and d[(k, 'T')]]
print(f"{100 * (sum(r) / len(r) - 1):.2f}" if r else "0")
P
)
echo "T mean change: $gain %"
if python3 -c "import sys; sys.exit(0 if float('$gain') > 0.4 else 1)"; then B=$G/T; echo "proving T (and R2) with T/"; else echo "proving R2 with bin/"; fi
for a in "--seq 700 --heads 2 --dhead 128 --causal --window 128,0" "--seq 1000 --seq-k 1200 --heads 4 --heads-kv 2 --dhead 128 --window 100,60" \
         "--seq 513 --heads 2 --heads-kv 1 --dhead 256 --causal --window 100,0" "--seq 300 --seq-k 517 --heads 4 --heads-kv 1 --dhead 64 --causal" \
         "--seq 333 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" "--batch 2 --seq 160 --seq-k 1000 --heads 2 --dhead 128 --causal"; do
  timeout 60 "$B/runner" --bwd --kernel wgmma $a 2>&1 | grep -E "OK|FAIL|rror" | head -4
done > "$O/runner.txt" 2>&1
echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 270 12 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 1 --seq 700 --seq-k 800 --heads 4 --heads-kv 2 --dhead 128 --causal --window 128,0" \
  "$B/runner --bwd --kernel wgmma --batch 1 --seq 333 --seq-k 517 --heads 2 --heads-kv 1 --dhead 64" | grep -E "rc=|SUMMARY" | cut -c1-100
for w in 128,0 256,0 512,0; do
  dc_abn "H R" 'bwd/wgmma' "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window $w --kernel wgmma" \
    "--batch 2 --heads 8 --seq 8192 --dhead 256 --causal --window $w --kernel wgmma_wide"
done > "$O/windows.txt" 2>&1
dc_summary H R "$O/windows.txt" | tee "$O/windows_summary.txt" | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
