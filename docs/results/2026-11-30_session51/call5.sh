#!/usr/bin/env bash
# Session 51, call 5 (carry [".gpu"]). X (bundle) = HEAD + the status word loaded before the barrier
# and tested by the grid producer just before its first load + FLASH_EXP_SP (the 16-key-page
# kernel's largest page; X16 = 16 as HEAD, X32 = 32). L (L.txz) = call 3's L (HEAD's kernels).
# The varlen and paged forward suites on X (bad-metadata cases included), sanitizers, L / X16 / X32.
source benchmarks/device_call.sh
dc_setup X > /dev/null
for t in 16 32; do
  mkdir -p "$G/X$t"
  printf '#!/bin/sh\nFLASH_EXP_SP=%s exec %s "$@"\n' "$t" "$B/bench" > "$G/X$t/bench"
  chmod +x "$G/X$t/bench"
done
dc_tests '*Paged*:*Varlen*:-*Bwd*:*Backward*' 200 16
dc_sanitize "$B/runner --kernel auto --dhead 128 --heads 8 --heads-kv 2 --varlen 0,300,129,600,17,1000 --paged 16 --causal" \
  "$B/runner --kernel auto --dhead 64 --heads 4 --heads-kv 2 --varlen 1,0,300,129,700 --paged 32"
DC_BENCH_FLAGS="" dc_abn "L X16 X32" '^fwd' \
  "--paged 16,32 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--varlen --paged 16,32 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,32 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,32 --batch 4 --seq 4096 --dhead 64 --heads 32 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 256 --heads 8 --kernel auto" > "$O/x.txt"
{ dc_summary L X16 "$O/x.txt"; dc_summary X16 X32 "$O/x.txt"; } | tee "$O/x_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
