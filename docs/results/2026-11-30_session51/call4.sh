#!/usr/bin/env bash
# Session 51, call 4 (carry [".gpu"]). V (bundle) = HEAD (L's kernels + the hdim 64 window rule) +
# hdim 128's 16-key-page kernel persistent on the dynamic schedule with O in the tile's last V
# stage. L (L.txz) = call 3's L build (the old walk rule; kernels as HEAD). The paged and window
# suites on V, sanitizers on V's page-16 calls, L / V rotated.
source benchmarks/device_call.sh
dc_setup V > /dev/null
dc_tests '*Paged*:*WindowWide*' 150 16
dc_sanitize "$B/runner --kernel auto --dhead 128 --heads 8 --heads-kv 2 --varlen 0,300,129,600,17,1000 --paged 16 --causal" \
  "$B/runner --kernel auto --batch 2 --seq 900 --seq-k 300 --dhead 128 --heads 4 --heads-kv 4 --paged 16 --causal" \
  "$B/runner --kernel auto --dhead 128 --heads 4 --heads-kv 2 --varlen 1,0,300,129,700,2000 --paged 16" \
  "$B/runner --kernel auto --batch 3 --seq 700 --seq-k 1500 --dhead 128 --heads 4 --heads-kv 2 --paged 16 --window 100,20"
DC_BENCH_FLAGS="" dc_abn "L V" '^fwd' \
  "--varlen --paged 16 --dhead 128 --heads 16 --kernel auto" \
  "--varlen --paged 16 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --heads 32 --window 2048,2048 --kernel auto" \
  "--paged 256 --batch 2 --seq 8192 --dhead 64 --heads 32 --window 2048,2048 --kernel auto" > "$O/lv.txt"
dc_summary L V "$O/lv.txt" | tee "$O/lv_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
