#!/usr/bin/env bash
# Session 49, call 1 (carry [".gpu"]; diagnostic, no build change: A = session 48's final tree).
# 1. Issue 17: does the order of the sequences in a packed call matter? Issue 17's 7 lengths as
#    given (V), longest first (D) and shortest first (S), forward and backward, full and causal,
#    hdim 128, 16 heads, `--kernel auto`, two rounds.
# 2. Issue 16: the (W, 0) window at hdim 128 16k (batch 1, 16 heads) for W = 2048, 4096, 8192
#    beside causal and full, two rounds: time against the key tiles computed (a per-tile fit).
source benchmarks/device_call.sh
dc_setup A > /dev/null
V=1374,3778,2225,3022,3204,498,2283; D=3778,3204,3022,2283,2225,1374,498; S=498,1374,2225,2283,3022,3204,3778
for r in 0 1; do
  for m in "" "--causal"; do
    for o in V D S; do
      timeout 60 "$B/bench" --varlen "${!o}" --dhead 128 --heads 16 $m --kernel auto --benchmark_filter='^fwd_varlen/' 2>&1 |
        grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$o /"
      timeout 90 "$B/bench" --varlen "${!o}" --dhead 128 --heads 16 $m --bwd --kernel auto --benchmark_filter='^bwd_varlen/' 2>&1 |
        grep -E "^bwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$o /"
    done
  done
done > "$O/varlen_order.txt"
dc_summary V D "$O/varlen_order.txt" | tee "$O/varlen_summary.txt"
dc_summary V S "$O/varlen_order.txt" | tee -a "$O/varlen_summary.txt"
for r in 0 1; do
  for w in "--causal" "--causal --window 2048,0" "--causal --window 4096,0" "--causal --window 8192,0" ""; do
    timeout 60 "$B/bench" --seq 16384 --batch 1 --heads 16 --dhead 128 $w --kernel auto 2>&1 | grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9]+//'
    timeout 60 "$B/bench" --seq 8192 --batch 2 --heads 32 --dhead 64 $w --kernel auto 2>&1 | grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9]+//'
  done
done > "$O/window_sweep.txt"
cat "$O/window_sweep.txt"
echo "total: $((SECONDS - DC_T0)) s"
