#!/usr/bin/env bash
# Session 52, call 1 (carry [".gpu"]). MUFU throughput per operation and precision (mufu_rate.cu,
# built here for sm_90a), and the softcap's cost on the session's starting tree (bench, two rounds):
# hdim 64 8k (b2 x 32) and hdim 128 16k (b1 x 16), causal with and without softcap 30.
source benchmarks/device_call.sh
dc_setup B > /dev/null
.gpu/mufu_rate | tee "$O/mufu_rate.txt"
.gpu/mufu_rate >> "$O/mufu_rate.txt"
for r in 1 2; do
  for c in "--seq 8192 --batch 2 --heads 32 --dhead 64 --causal" "--seq 8192 --batch 2 --heads 32 --dhead 64 --causal --softcap 30" \
           "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal" "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --softcap 30"; do
    timeout 60 "$B/bench" $c --kernel auto --benchmark_filter='^fwd/' 2>&1 | grep -E "^fwd|rror" | sed "s/^/r$r $c | /"
  done
done | tee "$O/softcap.txt"
echo "total: $((SECONDS - DC_T0)) s"
