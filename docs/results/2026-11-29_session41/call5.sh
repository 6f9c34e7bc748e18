#!/usr/bin/env bash
# Session 41, call 5: the gpu suites calls 1-2 left out, on call 2's build P (the final kernels;
# bwd_02's host line aside): concurrency, CUDA graphs and decode (dense, paged, varlen).
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
dc_tests '*Concurren*:*Graph*:*Decode*' 300 12 | tee "$O/tests_summary.txt"
grep -c '^\[       OK' "$O/tests.txt"
gzip -9 "$O/tests.txt"
echo "total: $((SECONDS - DC_T0)) s"
