#!/usr/bin/env bash
# Session 43, call 8 (the device time's last ~4 minutes): S = the kept code (call 6's binary), P =
# S + next_lse_first.patch (the epilogue's LSE stores first, beside finalize, instead of after the
# TMA store). A/B only: P is not tested and not kept this session.
set -u
source benchmarks/device_call.sh
dc_setup E > /dev/null
DC_BENCH_FLAGS="" dc_abn "S P" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 512 --dhead 64 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary S P "$O/ab.txt" | tee "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
