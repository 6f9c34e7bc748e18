#!/usr/bin/env bash
# Session 54, call 9 (carry [".gpu"]). Calls 5-7: fewer CTAs read the cache faster (one split, one
# CTA an SM: +2.5-3.3%). Does that hold past one wave? O (X.txz): HEAD with the whole-tile kernels
# of one-split calls launched with 116 KB of shared memory, so one CTA an SM (64 x 4k: 512 CTAs in
# ~4 waves instead of ~2 of two an SM). N = HEAD. --flush always, two rounds, contiguous and
# page 256 (page 16 is not whole-tile: unchanged).
source benchmarks/device_call.sh
dc_setup N > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N O" 'contiguous|page256' "--batch 64 --cache 4096" "--batch 32 --cache 8192" \
  "--batch 128 --cache 2048" "--batch 64 --cache 4096 --dhead 64" | tee "$O/ab.txt" > /dev/null
dc_summary N O "$O/ab.txt" us | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
