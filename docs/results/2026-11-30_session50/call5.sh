#!/usr/bin/env bash
# Session 50, call 5 (carry [".gpu"]). The final build (commit "paged: 16-key pages at hdim 128 on a
# three-stage grid kernel ..."): every forward suite in 16 shards (the three new paged cases among
# them), memcheck and racecheck on the new cases (bf16).
source benchmarks/device_call.sh
dc_setup K > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 300 16
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gpu" \
    --gtest_filter='*/bf16_packed_full_gqa2_p16_d128:*/bf16_packed_spread_causal_l100_gqa4_p16_d128:*/bf16_packed_spread_full_gqa2_p256_d64' > "$O/$tool.txt" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$O/$tool.txt" | head -3 | tr '\n' ' ')"
done | tee "$O/sanitizers.txt"
timeout 60 "$B/test_c_api_gpu" 2>&1 | tail -2
echo "total: $((SECONDS - DC_T0)) s"
