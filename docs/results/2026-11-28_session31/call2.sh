#!/usr/bin/env bash
# Session 31, call 2 (H200). B = the tree (024d7b2); Y = call 1's compact varlen forward grid (a
# serial loop over cu_seqlens_q per CTA: full -1.4%, causal +2.2%, hdim 64 causal +3.1%);
# V = Y with the tile lookup warp-collective (lane j reads sequence j's length, a warp prefix sum
# and a ballot find the CTA's sequence: one load latency instead of one per sequence before it).
# Predicted V: full +0-1% (Y's loss was the serial lookup, ~2 us of dependent loads per CTA),
# causal +2.5-4%. Three tags rotated, two rounds. Then V's correctness: the runner's varlen forward
# (every variant), the varlen / paged forward suites, racecheck and memcheck on a runner case.
source benchmarks/device_call.sh
dc_setup B
cells=("--varlen --dhead 128 --heads 16" "--varlen --dhead 128 --heads 16 --causal"
       "--varlen --dhead 64 --heads 32 --causal" "--varlen --dhead 64 --heads 32"
       "--varlen 100,3000,700,2048,5000,1,333 --dhead 128 --heads 8 --heads-kv 2"
       "--varlen 100,3000,700,2048,5000,1,333 --dhead 256 --heads 8 --heads-kv 2 --causal")
for r in 0 1; do
  for c in "${cells[@]}"; do
    order="B Y V"; [ $r = 1 ] && order="V Y B"
    for t in $order; do
      timeout 60 "$G/$t/bench" $c --benchmark_filter='fwd_varlen/wgmma_persistent' 2>&1 |
        grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done
done > "$O/ab.txt"
echo "bench: $((SECONDS - DC_T0)) s"
{ dc_summary B V "$O/ab.txt"; dc_summary Y V "$O/ab.txt"; } | tee "$O/ab_summary.txt"
for a in "--dhead 128 --heads 4 --varlen 1,128,129,500,1333" "--dhead 64 --heads 3 --varlen 1,2,190,400 --causal" \
         "--dhead 256 --heads 2 --heads-kv 1 --varlen 0,77,300 --causal" "--dhead 128 --heads 4 --varlen 1,300,700 --paged 16" \
         "--dhead 128 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500) --causal" "--dhead 64 --heads 2 --varlen $(seq -s, 0 9 400)"; do
  timeout 90 "$G/V/runner" --kernel all $a 2>&1 | grep -E "OK|FAIL|rror"
done > "$O/runner_v.txt" 2>&1
echo "runner OK: $(grep -c 'OK\]' "$O/runner_v.txt"), FAIL: $(grep -c -E 'FAIL|rror' "$O/runner_v.txt")" | tee -a "$O/ab_summary.txt"
B=$G/V
dc_tests 'Varlen*:*/Varlen*:Paged*:*/Paged*:-*Bwd*' 200 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --varlen 1,128,129,500,0,77 --causal" > /dev/null
cat "$O/sanitizers.txt"
echo "total: $((SECONDS - DC_T0)) s"
