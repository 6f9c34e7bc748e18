#!/usr/bin/env bash
# Session 48, call 7 (carry [".gpu"]): call 6's one failure, VarlenBwdEdges.AutoAndCallerWorkspace
# (random inputs each run; its caller workspace is now full of NaNs), repeated with its messages.
source benchmarks/device_call.sh
dc_setup F > /dev/null
timeout 200 "$B/test_gpu" --gtest_filter='VarlenBwdEdges.AutoAndCallerWorkspace' --gtest_repeat=40 2>&1 |
  grep -v -E "^\[ (RUN|      OK) |^$|^Repeating|^Note:|^\[----|^\[====" | sort | uniq -c | sort -rn | head -40 | tee "$O/repeat.txt"
echo "total: $((SECONDS - DC_T0)) s"
