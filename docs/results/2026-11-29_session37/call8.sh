#!/usr/bin/env bash
# Session 37, call 8: the final build (decode changed; the forward and backward kernels as at
# a399617) through every GPU test suite in twelve shards, and the C API's GPU test.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
timeout 60 "$B/test_c_api_gpu" > "$O/c_api.txt" 2>&1; echo "test_c_api_gpu rc=$?"
dc_tests '*' 230 12
grep -h -E "^\[  FAILED  \]" "$O/tests.txt" | sort -u | head
echo "total: $((SECONDS - DC_T0)) s"
