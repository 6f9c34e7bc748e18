#!/usr/bin/env bash
# Session 52, call 2 (carry [".gpu"]). R (bundle) = HEAD + hdim 128's persistent paged kernels (the
# paged walk and the paged dynamic schedule) at 40 / 232 registers (were 32 / 232 and 40 / 224: both
# producers spilled). A (ARV.txz) = HEAD (session 51's final build). RV = R + session 51's V (the
# 16-key-page kernel persistent on the dynamic schedule, O in the tile's last V stage), now on the
# 40 / 232 split. The paged suites on R; A / R / RV rotated, two rounds.
source benchmarks/device_call.sh
dc_setup R > /dev/null
dc_tests '*Paged*' 150 16 | tail -3
DC_BENCH_FLAGS="" dc_abn "A R RV" '^fwd' \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16,256 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,64,256 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" > "$O/arv.txt"
dc_summary A R "$O/arv.txt" | tee "$O/ar_summary.txt"
dc_summary R RV "$O/arv.txt" | tee "$O/rrv_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
