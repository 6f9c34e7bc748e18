#!/usr/bin/env bash
# Session 70, call 7: P, the 16-key-page kernel in clusters of two CTAs (query blocks 2j and 2j + 1
# of one sequence and head), each CTA loading half of every K / V tile's boxes multicast into both
# (full calls only; `exp_P_cluster_pairs.patch`). Call 5: half the boxes per SM made page 16 run
# 9% more per clock and 15% faster (its clock rose too: less power in the loads). Multicast halves
# the boxes each SM's TMA unit issues and the L2 reads, not the bytes each SM receives.
# X = HEAD + switch (dev build), P = X with FLASH_X_PAIRS=1.
# Predicted: page 16 full +3-8% (4 x 4096, issue 17's full batch); correct against the fp64
# reference; memcheck / racecheck clean.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=$G/P/runner
{
for a in "--paged 16 --batch 2 --seq 1000 --seq-k 3001 --heads 8 --heads-kv 2" "--paged 16 --batch 3 --seq 777 --heads 4" \
         "--paged 16 --varlen 1,128,129,500,0,3000 --heads 4" "--paged 16 --varlen 7,300,1000,33 --heads 4 --heads-kv 2" \
         "--paged 16 --batch 1 --seq 4096 --heads 2"; do
  timeout 40 "$R" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
  echo "rc=$? : $a"
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
if [ "$(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")" = 0 ]; then
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 "$R" --kernel auto --paged 16 --varlen 1,128,129,500 --heads 2 --dhead 128 --rows 16 > "$O/$tool.txt" 2>&1
    echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/$tool.txt" | head -2
  done
  DC_BENCH_FLAGS="" dc_abn "X P" 'fwd' \
    "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
    "--paged 16 --dhead 128 --kernel auto --varlen --heads 16" \
    "--paged 16 --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" > "$O/ab.txt" 2>&1
  dc_summary X P "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
fi
echo "total: $((SECONDS - DC_T0)) s"
