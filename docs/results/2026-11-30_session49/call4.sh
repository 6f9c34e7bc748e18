#!/usr/bin/env bash
# Session 49, call 4 (carry [".gpu"]; diagnostic). Does the longest-first order itself cost the paged
# calls? A = session 48's final tree (A.txz), issue 17's 7 sequences as given (V) and longest first
# (D) on pages of 16 and 256, causal and full, two rounds; O (bundle) beside it on V.
source benchmarks/device_call.sh
dc_setup O > /dev/null
V=1374,3778,2225,3022,3204,498,2283; D=3778,3204,3022,2283,2225,1374,498
for r in 0 1; do
  for m in "--causal" ""; do
    for o in V D; do
      timeout 60 "$G/A/bench" --varlen "${!o}" --paged 16,256 --dhead 128 --heads 16 $m --kernel auto 2>&1 |
        grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$o /"
    done
    timeout 60 "$G/O/bench" --varlen "$V" --paged 16,256 --dhead 128 --heads 16 $m --kernel auto 2>&1 |
      grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/O /"
  done
done > "$O/paged_order.txt"
dc_summary V D "$O/paged_order.txt" | tee "$O/summary.txt"
dc_summary V O "$O/paged_order.txt" | tee -a "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
