#!/usr/bin/env bash
# Session 53, call 17 (carry [".gpu"]; the session's last ~2 minutes of device time). W = the
# committed tree (bundle.txz), W2 = W + the whole-tile path's shared destinations as the thread's
# first row's offset plus row steps (one base register and immediates: hdim 128 bf16 kernel 3064 ->
# 2872 instructions, 159 registers). Predicted: contiguous 16 x 8k / 1 x 128k -1 to -3% time.
# Timing only (no tests: W2 is not committed; docs/results/2026-11-30_session53/next_decode_w2.patch).
source benchmarks/device_call.sh
dc_setup W > /dev/null
for r in 1 2; do
  for c in "--batch 16 --cache 8192" "--batch 1 --cache 131072"; do
    if [ $r = 1 ]; then tags="W W2"; else tags="W2 W"; fi
    for t in $tags; do
      timeout 20 "$G/$t/bench" --decode --flush always $c --benchmark_filter=contiguous 2>&1 | grep -E "^decode" |
        sed -E 's/ +[0-9.]+ us +[0-9.]+ us +[0-9]+//' | sed "s/^/$t /" | tee -a "$O/ab.txt"
    done
  done
done
dc_summary W W2 "$O/ab.txt" us
echo "total: $((SECONDS - DC_T0)) s"
