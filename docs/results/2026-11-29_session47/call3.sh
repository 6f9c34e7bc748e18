#!/usr/bin/env bash
# Session 47, call 3 (carry [".gpu"]). A = session 46's bench (A.txz); P2 / P8 = its library with
# every dQ bulk reduction of bwd_03 / bwd_04 issued as 2 / 8 pieces (P.txz, bench and runner each;
# bundle.txz only supplies the shared libraries). Runner on P2 and P8 (both modes), then A / P2 /
# P8 rotated, two rounds.
source benchmarks/device_call.sh
dc_setup X > /dev/null
for t in P2 P8; do
  for a in "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal" \
           "--dhead 256 --heads 2 --heads-kv 1 --batch 2 --seq 900 --seq-k 700" "--dhead 128 --heads 4 --varlen 1,128,129,500 --causal"; do
    for k in wgmma wgmma_wide; do
      timeout 90 "$G/$t/runner" --bwd --kernel $k $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | sed "s/^/$t $k: /"
    done
  done
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
{ dc_abn "A P2 P8" '^bwd/' \
  "--seq 8192 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide"; } > "$O/ab.txt" 2>&1
dc_summary A P2 "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_summary A P8 "$O/ab.txt" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
