#!/usr/bin/env bash
# Session 55, call 5 (carry [".gpu"]). Call 2: page 16 trails the contiguous cache by 7-10% even when
# the pool's pages lie in order (FLASH_BENCH_PAGE_ORDER=sequential: the same bytes at the same
# addresses as the contiguous cache), so the gap is the kernel's page-16 path, not where pages lie.
# Which part? Decode-only benches (Y.txz), every run on the sequential pool:
#   N = HEAD (4 page-table lookups a tile, kSegKeys 16);
#   I = N with the lookups replaced by the page they would return (b * stride + page; no table load);
#   S = N with FLASH_PROBE_SEG64=1: page 16 on the whole-tile path (one lookup a tile, rows from one
#       base), which the sequential pool makes valid.
# Predictions: if the lookups' latency is the gap, I ~ S ~ contiguous; if the 4 bases' address work
# is, I ~ N and S ~ contiguous; if the two CTAs an SM (splits 2) is, forced one split closes it.
# (FLASH_BENCH_PAGE_ORDER was this session's probe in bench.cpp; the kept bench spells it `--page-order sequential`.)
source benchmarks/device_call.sh
dc_setup H > /dev/null
export FLASH_BENCH_PAGE_ORDER=sequential  # FLASH_PROBE_SEG64 is read by S's build alone
for r in 1 2; do
  for c in "--batch 16 --cache 8192" "--batch 16 --cache 8192 --splits 1" "--batch 1 --cache 131072 --splits 15" \
           "--batch 64 --cache 4096 --splits 1"; do
    for t in N I S; do
      FLASH_PROBE_SEG64=1 timeout 60 "$G/$t/bench" --decode --flush always $c \
        --benchmark_filter='page16|contiguous' 2>&1 | grep -E "^decode" | awk -v t="r$r $t [$c]" '{print t, $0}'
    done
  done
done > "$O/seg.txt"
echo "total: $((SECONDS - DC_T0)) s"
