#!/usr/bin/env bash
# Session 38, call 6 (diagnostic, final build): paged against contiguous keys on the same
# schedule at hdims 64 and 128 (4 sequences of 4096 as a varlen call: both per-sequence kernels),
# where dense-query paged calls were 0.90x of contiguous at hdim 128 and 1.00x at hdim 64 (call 3).
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
for d in 128 64; do
  for r in 1 2; do
    timeout 60 "$B/bench" --varlen 4096,4096,4096,4096 --paged 16,256 --dhead $d --heads $((2048 / d)) --kernel auto \
      --benchmark_filter='^fwd' 2>&1 | grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
    timeout 60 "$B/bench" --paged 16,256 --batch 4 --seq 4096 --dhead $d --heads $((2048 / d)) --kernel auto \
      --benchmark_filter='^fwd' 2>&1 | grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  done
done | tee "$O/diag.txt"
echo "total: $((SECONDS - DC_T0)) s"
