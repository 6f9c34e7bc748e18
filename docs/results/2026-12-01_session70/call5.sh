#!/usr/bin/env bash
# Session 70, call 5 (a diagnostic): half of each tile's boxes. X = HEAD + a run-time switch (dev
# build); B = X with FLASH_X_HALFBOX=1: the paged producers load only the first half of each K / V
# tile's boxes (the other rows keep whatever an earlier tile left: wrong results, the same work for
# the consumers). Call 4b: the 16-key pages' loads run at ~49 bytes a clock an SM (sixteen 4 KB
# boxes a step through the SM's one TMA unit) and the page-16 kernels lose 2-6% more than the
# page-256 ones. If that rate is what page 16 pays, B's page 16 moves toward page 256 (+2-4%); a
# 2-CTA cluster multicasting each half would then be the way to it. If B gains < 1%, it is not.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "X B" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" > "$O/ab.txt" 2>&1
dc_summary X B "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
