#!/usr/bin/env bash
# Session 36, call 8 (no build change): decode's split count by hand (bench --splits) on issue
# 19's decode shapes, beside the heuristic's choice and SDPA (cuDNN / flash) in the same call.
# Question: is any other split count faster than choose_splits' at 16 x 8k and 64 x 4k (contiguous
# and page 16)? Prediction: 16 x 8k (2 splits chosen, 256 CTAs) 3-4 splits within +-1%; 64 x 4k
# (1 split) 2 splits -1 to +2%.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
for r in 1 2; do
  "$B/bench" --decode 2>&1 | grep -E "ms=|GB" | sed "s/^/auto /"
  for s in 1 2 3 4 6 8; do
    "$B/bench" --decode --batch 16 --cache 8192 --splits $s 2>&1 | grep -E "ms=|GB" | sed "s/^/split$s /"
    "$B/bench" --decode --batch 64 --cache 4096 --splits $s 2>&1 | grep -E "ms=|GB" | sed "s/^/split$s /"
  done
done > "$O/decode_splits.txt" 2>&1
python3 benchmarks/sdpa_decode.py --json "$O/sdpa_decode.json" > "$O/sdpa_decode.txt" 2>&1
tail -5 "$O/sdpa_decode.txt"
grep -c . "$O/decode_splits.txt"; head -3 "$O/decode_splits.txt"
echo "total: $((SECONDS - DC_T0)) s"
