#!/usr/bin/env bash
# Session 62, call 6 (carry [".gpu"]). bin/ = HEAD (F + R2) + S: V loaded after the first stage on its own
# barrier (v_full; the first S product waits for K and the first stage only), in bwd_03 (every Config) and
# bwd_04. H/{bench,runner,test_gpu} = HEAD. Session 61's call 9 measured S at hdim 64 (128, 0) +1.5%,
# hdim 256 full +1.2%, hdim 128 -0.3..+0.2%; N (S + a two-copy loop) lost 2.9-3.5% at hdim 64 full /
# causal, which S alone was never timed on. Predicted: hdim 64 (128, 0) +1-2%, hdim 256 +0.5-1.5%,
# hdim 64 / 128 full and causal 0 +-0.5%.
# Kept if the mean change is >= +0.3% and no row loses more than 1%: then S's suites are run; else HEAD's
# non-backward suites (the backward ones ran in call 2).
set -u
source benchmarks/device_call.sh
dc_setup S > /dev/null
dc_abn "H S" 'bwd/' "--seq 8192 --dhead 64 --kernel wgmma" "--seq 8192 --dhead 64 --causal --kernel wgmma" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 128,0 --kernel wgmma" \
  "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 128,0 --kernel wgmma" \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--batch 2 --heads 8 --seq 8192 --dhead 256 --causal --window 128,0 --kernel wgmma_wide" \
  > "$O/ab.txt" 2>&1
dc_summary H S "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-100
keep=$(python3 - "$O/ab_summary.txt" <<'P'
import re, sys
ch = [float(m.group(1)) for l in open(sys.argv[1]) for m in [re.search(r" ([+-][0-9.]+)%", l)] if m]
print("yes" if ch and sum(ch) / len(ch) >= 0.3 and min(ch) > -1.0 else "no", f"mean {sum(ch) / max(1, len(ch)):+.2f}% min {min(ch or [0]):+.1f}%")
P
)
echo "keep S: $keep"
if [ "${keep%% *}" = yes ]; then
  for a in "--seq 700 --heads 2 --dhead 128 --causal --window 128,0" "--seq 333 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" \
           "--seq 300 --seq-k 517 --heads 4 --heads-kv 1 --dhead 64 --causal" "--seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal" \
           "--seq 513 --heads 2 --heads-kv 1 --dhead 256 --causal --window 100,0" "--batch 2 --seq 1 --seq-k 1000 --heads 2 --dhead 64"; do
    timeout 60 "$B/runner" --bwd --kernel auto $a 2>&1 | grep -E "OK|FAIL|rror" | head -4
  done > "$O/runner.txt" 2>&1
  echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
  dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 240 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
  dc_sanitize "$B/runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 64 --causal" \
    "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal" \
    "$B/runner --bwd --kernel wgmma --batch 1 --seq 333 --seq-k 333 --heads 2 --heads-kv 1 --dhead 128 --window 60,0" | grep -E "rc=|SUMMARY" | cut -c1-100
else
  B=$G/H
  dc_tests '-*Backward*:*Bwd*' 240 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
fi
echo "total: $((SECONDS - DC_T0)) s"
