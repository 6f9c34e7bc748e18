#!/usr/bin/env bash
# Session 30, call 9: call 8's build plus the new VarlenBwd case (tile_edges_80_full_gqa2_d128_seqused):
# the variable-length backward suite, then memcheck and racecheck on the two hdim 128 varlen cases
# that take bwd_03's 80-row steps (every varlen backward variant, both modes).
source benchmarks/device_call.sh
dc_setup V
dc_tests '*VarlenBwd*' 150
F='*bf16_tile_edges_80_full_gqa2_d128_seqused:*bf16_mixed_causal_mqa_d128_seqused'
for tool in memcheck racecheck; do
  timeout 170 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gpu" --gtest_filter="$F" > "$O/$tool.txt" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED" "$O/$tool.txt" | head -4
done
echo "total: $((SECONDS - DC_T0)) s"
