#!/usr/bin/env bash
# Session 67, call 5: the roles-apart bound with S (fp32) and P (bf16) through shared memory, as a
# kernel with the softmax apart from the products' warpgroup would need (ideal_softmax.cu modes 6 /
# 7), beside roles apart in registers (4 / 5, the most generous form) and flash's calls. Two rounds.
# carry [".gpu"].
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
  $I plain 4; $I plain 6; $I cap 4; $I cap 5; $I cap 6; $I cap 7
done
} 2>&1 | tee "$O/cells.txt"
rm -f "$O/ideal_softmax"
echo "total: $((SECONDS - DC_T0)) s"
