#!/usr/bin/env bash
# Session 39, call 12: the paged prefill suites with the new hdim 128 window case (test_gpu of
# the final tree in z.txz, unpacked over the bundle's), memcheck / racecheck on a dense-query
# paged call with a window wide enough for the dynamic schedule.
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests 'PagedPrefill*:*Paged*:-*Backward*:*Bwd*' 120 4
dc_sanitize "$B/runner --kernel wgmma_persistent --paged 64 --batch 2 --seq 700 --seq-k 3000 --dhead 128 --heads 4 --heads-kv 2 --causal --window 2500,0"
echo "total: $((SECONDS - DC_T0)) s"
