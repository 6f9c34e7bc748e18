#!/usr/bin/env bash
# Session 55, call 2 (carry [".gpu", ".anchors/fa4-p1a"]): the first half of FA4's staging (copied to
# /tmp for call 3), and a probe: is page 16's gap to the contiguous cache the pool's shuffle? Y.txz:
# N = HEAD's decode-only bench plus a probe env var, FLASH_BENCH_PAGE_ORDER=sequential (page i of the
# pool is table entry i: each sequence's pages in order in memory). Prediction: if the gap is where
# the pages lie (DRAM / TLB locality) and not the kernel's per-page work, sequential page 16 runs
# within ~1% of the contiguous cache, at one CTA an SM (--splits 1) too.
# (FLASH_BENCH_PAGE_ORDER was this session's probe in bench.cpp; the kept bench spells it `--page-order sequential`.)
[ -d .anchors/fa4-p1a ] && cp .anchors/fa4-p1a/cu13.xz.0 /tmp/cu13.xz.0
source benchmarks/device_call.sh
dc_setup H > /dev/null
for r in 1 2; do
  for c in "" "--batch 16 --cache 8192 --splits 1" "--batch 1 --cache 131072 --splits 15"; do
    for ord in shuffle sequential; do
      FLASH_BENCH_PAGE_ORDER=$ord timeout 90 "$G/N/bench" --decode --flush always $c 2>&1 | grep -E "^decode" |
        awk -v t="r$r $ord [$c]" '{print t, $0}'
    done
  done
done > "$O/order.txt"
echo "total: $((SECONDS - DC_T0)) s"
