#!/usr/bin/env bash
# Prepared in session 34 for the next one (not run): the tree's window suites, which gained a
# causal (700, 0) window at the end of session 34 (fwd_10's one-CTA-per-tile grid at hdim 64 for
# spans of 513 to 1025 keys; fwd_09's walk at hdim 128; the backward's walked rows) and never ran
# on the device; plus a memcheck / racecheck of that forward path. Bundle: benchmarks/pack_gpu.sh.
set -u
source benchmarks/device_call.sh
dc_setup T > /dev/null
dc_tests '*Window*' 220 8
dc_sanitize "$B/runner --kernel wgmma_window --dhead 64 --heads 4 --heads-kv 2 --seq 1500 --window 700,0 --causal"
echo "total: $((SECONDS - DC_T0)) s"
