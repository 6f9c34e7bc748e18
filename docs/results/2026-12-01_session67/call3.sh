#!/usr/bin/env bash
# Session 67, call 3: the ideal-overlap bound at hdim 64 (issue 16's softcap cell) in more forms:
# three warpgroups an SM, and 2 / 3 / 4 of every 8 capped scores' exp2 on the FMA pipe; flash's
# uncapped and capped calls beside them. Two rounds. carry [".gpu"].
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
  $I plain 2; $I plain 3; $I cap 2 0; $I cap 3; $I cap 2 2; $I cap 2 3; $I cap 2 4
done
} 2>&1 | tee "$O/cells.txt"
rm -f "$O/ideal_softmax"
echo "total: $((SECONDS - DC_T0)) s"
