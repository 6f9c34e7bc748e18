#!/usr/bin/env bash
# Session 57, call 2 (carry [".gpu"]): the dynamic schedule without its memset. One bundle; M = the
# default (cudaMemsetAsync of the tile counter before every dynamic launch, as HEAD), N = the same
# bench with FLASH_EXP_NOMEMSET=1 (the counter, reset by the launch's last CTA, zeroed only the
# first time a workspace is seen). Dynamic cells (causal up to 4096 keys, wide windows, packed
# causal), and a walk cell as the control. Two rounds, rotated.
source benchmarks/device_call.sh
dc_setup M > /dev/null
mkdir -p "$G/N" && printf '#!/bin/sh\nFLASH_EXP_NOMEMSET=1 exec %s/bin/bench "$@"\n' "$G" > "$G/N/bench" && chmod +x "$G/N/bench"
DC_BENCH_FLAGS="" dc_abn "M N" '^fwd' \
  "--seq 512 --dhead 128 --causal --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 2048 --dhead 128 --causal --kernel auto" "--seq 4096 --dhead 128 --causal --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen --heads 16 --dhead 128 --causal --kernel auto" \
  "--seq 16384 --batch 1 --heads 16 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--seq 8192 --batch 2 --heads 32 --dhead 64 --window 2048,2048 --kernel auto" \
  "--seq 4096 --dhead 128 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary M N "$O/ab.txt" | tee "$O/ab_summary.txt"
# The counter's reset under the tests that run dynamic calls back to back, in threads and graphs
# (with N's switch: a caller workspace reused after other writes would break it, by design).
FLASH_EXP_NOMEMSET=1 dc_tests 'Concurrency*:ForwardEdges.*:ForwardWindow*' 200 8 | tail -12
grep -E "^\[  FAILED" "$O/tests.txt" | head
echo "total: $((SECONDS - DC_T0)) s"
