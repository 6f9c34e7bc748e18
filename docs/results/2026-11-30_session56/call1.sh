#!/usr/bin/env bash
# Session 56, call 1 (carry [".gpu"]): session 55's prepared work. H = HEAD's full bundle; N = HEAD's
# decode-only bench; P = N + next_decode_staged_hdim64.patch; D = N + next_decode_paged_deferred.patch
# (each a decode-only build, FLASH_VARIANTS=splitkv, lineinfo on as N).
# (1) P against N on hdim 64's small pages (predictions: session 55's next_call.sh header).
# (2) D against N on the nine decode cells (prediction: NOTES session 55, paged +1-2%).
# (3) session 55's call10: each decode kernel's time under ncu, three layouts.
# (4) issue 17's paged prefill at page 16 with the pool unshuffled (--page-order sequential) beside
#     the shuffled pool and the contiguous cache, hdim 128 4 x 4096 full / causal.
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N P" 'page' \
  "--batch 16 --cache 8192 --page-size 16 --dhead 64 --splits 1" "--batch 16 --cache 8192 --page-size 16 --dhead 64 --splits 2" \
  "--batch 16 --cache 8192 --page-size 32 --dhead 64 --splits 1" "--batch 16 --cache 8192 --page-size 32 --dhead 64 --splits 2" \
  "--batch 1 --cache 131072 --page-size 32 --dhead 64 --splits 15" "--batch 1 --cache 131072 --page-size 16 --dhead 64 --splits 15" \
  "--batch 1 --cache 131072 --page-size 16 --dhead 64" > "$O/ab_P.txt"
dc_summary N P "$O/ab_P.txt" us > "$O/ab_P_summary.txt"
DC_BENCH_FLAGS="--flush always" dc_abn "N D" '^decode' "--decode" > "$O/ab_D.txt"
dc_summary N D "$O/ab_D.txt" us > "$O/ab_D_summary.txt"
cat "$O/ab_P_summary.txt" "$O/ab_D_summary.txt"
for c in "--batch 1 --cache 131072" "--batch 16 --cache 8192"; do
  for pg in contiguous page256 page16; do
    timeout 60 ncu --metrics gpu__time_duration.sum -k regex:"check_metadata|dec_01|combine" --launch-skip 20 \
      --launch-count 9 --csv "$B/bench" --decode $c --flush always --min-time 0.01 --benchmark_filter=$pg 2>/dev/null |
      grep gpu__time_duration | awk -F'","' -v t="$c $pg" '{n=($5 ~ /check/) ? "check" : ($5 ~ /combine/) ? "combine" : "attention"; print t, n, "grid", $9, $NF}' | tr -d '"'
  done
done > "$O/ncu_times.txt"
cat "$O/ncu_times.txt"
DC_BENCH_FLAGS="" dc_abn "H" '^fwd' \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto --page-order sequential" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --causal --kernel auto --page-order sequential" > "$O/paged_probe.txt"
cat "$O/paged_probe.txt"
echo "total: $((SECONDS - DC_T0)) s"
