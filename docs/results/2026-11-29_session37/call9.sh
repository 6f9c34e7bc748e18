#!/usr/bin/env bash
# Session 37, call 9: the 100 tests of call 8's shard 11 of 12 that its 230 s limit left unrun
# (BackwardDeterminism.OrderedDqUnderGqaAndMasks took 191 s of it), by name, on the same build.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests "$(cat docs/results/2026-11-29_session37/call9_filter.txt)" 200 4
grep -h -E "^\[  FAILED  \]" "$O/tests.txt" | sort -u | head
echo "total: $((SECONDS - DC_T0)) s"
