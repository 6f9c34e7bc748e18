#!/usr/bin/env bash
# Session 67, call 4: the ideal-overlap bound with the roles apart (one warpgroup issues every
# product, two do all the arithmetic: the most generous form), at hdim 64, beside the interleaved
# forms and flash's calls. Two rounds. carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=docs/results/2026-12-01_session67
nvcc -O3 -std=c++20 -arch=sm_90a -Ikernels -o "$O/ideal_softmax" $R/ideal_softmax.cu
I="$O/ideal_softmax 64 2 32 8192"
{
for r in 1 2; do
  "$B/bench" --kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal 2>&1 | grep -E "^fwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  "$B/bench" --kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --softcap 30 2>&1 | grep -E "^fwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  $I plain 2; $I plain 4; $I cap 2 0; $I cap 2 3; $I cap 4; $I cap 5
done
} 2>&1 | tee "$O/cells.txt"
rm -f "$O/ideal_softmax"
echo "total: $((SECONDS - DC_T0)) s"
