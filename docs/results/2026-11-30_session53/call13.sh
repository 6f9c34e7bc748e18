#!/usr/bin/env bash
# Session 53, call 13 (carry [".gpu"]). Decode (issue 19): call 10 put flash 2-7% behind cuDNN timed
# alike; call 12's ncu has cuDNN's one kernel at 86-90% of DRAM bandwidth with one 128-thread CTA
# per (sequence, KV head) and no split at 16 x 8k (128 CTAs), flash's split-KV kernel at 73-76%
# (256 CTAs of 100 KB, two per SM). Ring depth at hdim 128: A = 3 stages (two tiles ahead, two CTAs
# per SM), S2 = 2 (three CTAs per SM, one ahead), S4 = 4 (one CTA per SM, three ahead), S6 = 6
# (one CTA, five ahead); the split heuristic follows the CTAs per SM. Then A's splits forced.
# Every row with --flush always (do_bench's clear), two rounds rotated.
source benchmarks/device_call.sh
dc_setup A > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "A S2 S4 S6" '^decode' "" | tee "$O/stages.txt" > /dev/null
dc_summary A S2 "$O/stages.txt" us | tee "$O/stages_summary.txt"
dc_summary A S4 "$O/stages.txt" us | tee -a "$O/stages_summary.txt"
dc_summary A S6 "$O/stages.txt" us | tee -a "$O/stages_summary.txt"
for r in 1 2; do
  for c in "--batch 16 --cache 8192 --splits 1" "--batch 16 --cache 8192 --splits 2" "--batch 16 --cache 8192 --splits 4" \
           "--batch 1 --cache 131072 --splits 16" "--batch 1 --cache 131072 --splits 32" "--batch 1 --cache 131072 --splits 64" \
           "--batch 64 --cache 4096 --splits 2"; do
    for t in A S4; do
      timeout 60 "$G/$t/bench" --decode --flush always $c --benchmark_filter=contiguous 2>&1 | grep -E "^decode" |
        sed -E 's/ +[0-9.]+ us +[0-9.]+ us +[0-9]+//' | sed "s/^/r$r $t $c | /"
    done
  done
done | tee "$O/splits.txt"
echo "total: $((SECONDS - DC_T0)) s"
