#!/usr/bin/env bash
# Session 33, call 3: fwd_10's small-tile Config (hdim 64 narrow windows, short causal calls):
# W3 = three CTAs per SM, two stages (the tree, rebuilt the same way), W4 = four CTAs (24 / 104
# registers; ptxas keeps 32 bytes of stack), W3S3 / W4S3 = the same with three stages. Four
# binaries rotated, two rounds. Then the backward of the (128, 0) window split into its kernels.
set -u
source benchmarks/device_call.sh
dc_setup T > /dev/null
TAGS="W3 W4 W3S3 W4S3"
W="--seq 8192 --dhead 64 --batch 2 --heads 32"
CELLS=("$W --causal --window 128,0" "$W --causal --window 256,0" "$W --causal --window 512,0" "$W --causal --window 1024,0"
       "--seq 512 --batch 32 --heads 32 --dhead 64 --causal" "--seq 1024 --batch 16 --heads 32 --dhead 64 --causal")
rot() { local r=$1; set -- $TAGS; local n=$#; local i; for i in $(seq 0 $((n - 1))); do local k=$(( (i + r) % n + 1 )); echo -n "${!k} "; done; }
for r in 0 1; do
  for c in "${CELLS[@]}"; do
    for t in $(rot $r); do
      timeout 60 "$G/$t/bench" $c --kernel auto --benchmark_filter=fwd 2>&1 | grep -E "^fwd|rror" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done
done > "$O/ab.txt" 2>&1
echo "bench: $((SECONDS - DC_T0)) s"
for t in W4 W3S3 W4S3; do dc_summary W3 $t "$O/ab.txt"; done | tee "$O/ab_summary.txt"
timeout 120 ncu --clock-control none --metrics gpu__time_duration.sum --launch-skip 20 --launch-count 12 \
  "$B/bench" --bwd $W --causal --window 128,0 --kernel auto --benchmark_filter=bwd/auto/ --min-time 0.05 > "$O/ncu_bwd_w128.txt" 2>&1
grep -E "^\s+[a-z_0-9]+.*\(|gpu__time_duration" "$O/ncu_bwd_w128.txt" | head -40
echo "total: $((SECONDS - DC_T0)) s"
