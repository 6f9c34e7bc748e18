#!/usr/bin/env bash
# Session 55, call 10 (prepared, not run: refused, too little device time left to start a machine; carry [".gpu"], the kept tree): where 1 x 128k's paged calls lose against the
# contiguous cache (page 16 5.1%, page 256 1.6%; 16 x 8k 4.0% / 0.5%): each kernel's time under ncu
# (base clocks, L2 flushed before each launch, kernels serialized: no PDL overlap) for the check,
# the attention kernel and the combine, three launches each, contiguous / page 256 / page 16.
source benchmarks/device_call.sh
dc_setup H > /dev/null
for c in "--batch 1 --cache 131072" "--batch 16 --cache 8192"; do
  for pg in contiguous page256 page16; do
    timeout 60 ncu --metrics gpu__time_duration.sum -k regex:"check_metadata|dec_01|combine" --launch-skip 20 \
      --launch-count 9 --csv "$B/bench" --decode $c --flush always --min-time 0.01 --benchmark_filter=$pg 2>/dev/null |
      grep gpu__time_duration | awk -F'","' -v t="$c $pg" '{n=($5 ~ /check/) ? "check" : ($5 ~ /combine/) ? "combine" : "attention"; print t, n, "grid", $9, $NF}' | tr -d '"'
  done
done > "$O/ncu_times.txt"
echo "total: $((SECONDS - DC_T0)) s"
