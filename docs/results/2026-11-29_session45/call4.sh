#!/usr/bin/env bash
# Session 45, call 4 (carry [".gpu"]). A = session 44's final build (bundle.txz); I = A's library
# with fwd_09 recompiled from this tree: OnlineSoftmax::probs takes both rows' references first,
# then each row's exponentials, and the steady loop's wait for its own P V is pinned after the
# first row's (kMidPin, 128-key tiles: hdims 64 / 128), so P's conversion runs beside the second
# row's exponentials (FA4's SASS, call 3's ncu pages); I2 = the pin before any exponential.
# The runner on fwd_09 (every changed path: walk, dynamic, grid, softcap, varlen, paged) for I
# and I2, then A / I / I2 on issue 19's cells, rotated, two rounds.
source benchmarks/device_call.sh
dc_setup A > /dev/null
for t in I I2; do
  for a in "--dhead 64 --heads 6 --batch 2 --seq 1100" "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal" \
           "--dhead 128 --heads 4 --batch 3 --seq 3000" "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" \
           "--dhead 128 --heads 2 --batch 1 --seq 5000 --causal" "--dhead 64 --heads 4 --batch 2 --seq 900 --causal --softcap 15" \
           "--dhead 128 --heads 4 --batch 2 --seq 700 --causal --softcap 30 --alibi" "--dhead 128 --heads 4 --varlen 1,128,129,500 --causal" \
           "--dhead 64 --heads 4 --batch 2 --seq 1000 --window 100,20" "--dhead 256 --heads 2 --batch 2 --seq 600 --causal"; do
    timeout 60 "$G/$t/runner" --kernel wgmma_persistent $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | sed "s/^/$t: /"
  done
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
DC_BENCH_FLAGS="" dc_abn "A I I2" '^fwd' \
  "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" \
  "--seq 16384 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --dhead 64 --causal --softcap 30 --kernel auto" \
  "--seq 512 --dhead 128 --kernel auto" "--seq 8192 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --kernel auto" \
  "--seq 1024 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--seq 16384 --dhead 128 --causal --kernel auto" "--seq 2048 --dhead 256 --kernel auto" > "$O/ab.txt" 2>&1
{ dc_summary A I "$O/ab.txt"; dc_summary A I2 "$O/ab.txt"; } | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
