#!/usr/bin/env bash
# Session 40, call 4: call 3's build F (the final tree's kernels; later commits changed comments
# only) on the suites call 3 did not run: backward and decode (their kernels did not change,
# SASS-identical; the host's tensor-map code did: encode_4d's data type now from map_type()).
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*Backward*:*Bwd*:*Decode*' 280 12 | tee "$O/tests_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
