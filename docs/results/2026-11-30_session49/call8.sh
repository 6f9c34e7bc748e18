#!/usr/bin/env bash
# Session 49, call 8 (carry [".gpu"]). On the kept build (O): every GPU suite call 7 did not run
# (forward, decode, concurrency, the rest) in 16 shards, and test_c_api_gpu.
source benchmarks/device_call.sh
dc_setup O > /dev/null
dc_tests '*:-Backward*:*/Backward*:*Bwd*:*Varlen*:*PagedPrefill*' 280 16
timeout 60 "$B/test_c_api_gpu" 2>&1 | tail -2
rm -f "$O/tests.txt"
echo "total: $((SECONDS - DC_T0)) s"
