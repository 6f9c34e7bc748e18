#!/usr/bin/env bash
# Session 31, call 3 (H200). B = the tree (024d7b2); W = call 2's V (compact varlen forward grid,
# warp-collective tile lookup) + the fix for what call 2's tests found: dense queries with
# per-sequence keys (seqused_k, no cu_seqlens_q; SeqLayout::per_sequence too) read cu_seqlens_q
# (null) in the new scheduler, an illegal address in PagedPrefill.MatchesTheContiguousCacheBitwise;
# they keep the single-tile grid now. Predicted as V (call 2: full +-0.2%, causal +2.2-6.2%).
# A/B, then W's correctness: runner (varlen, paged with dense and packed queries, seqused),
# the varlen / paged forward suites, memcheck / racecheck on a paged dense-query case and a varlen case.
source benchmarks/device_call.sh
dc_setup B
DC_BENCH_FLAGS="" dc_ab B W 'fwd_varlen/wgmma_persistent' "--varlen --dhead 128 --heads 16" \
  "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 64 --heads 32 --causal" \
  "--varlen 100,3000,700,2048,5000,1,333 --dhead 256 --heads 8 --heads-kv 2 --causal" > "$O/ab.txt"
dc_summary B W "$O/ab.txt" | tee "$O/ab_summary.txt"
for a in "--dhead 128 --heads 4 --varlen 1,128,129,500,1333" "--dhead 64 --heads 3 --varlen 1,2,190,400 --causal" \
         "--dhead 256 --heads 2 --heads-kv 1 --varlen 0,77,300 --causal" "--dhead 128 --heads 4 --varlen 1,300,700 --paged 16" \
         "--dhead 128 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500) --causal" "--dhead 64 --heads 2 --varlen $(seq -s, 0 9 400)" \
         "--dhead 128 --heads 4 --heads-kv 1 --batch 3 --seq 333 --paged 16,64 --causal" "--dhead 64 --heads 2 --batch 2 --seq 700 --seq-k 1000 --paged 16"; do
  timeout 90 "$G/W/runner" --kernel all $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner_w.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner_w.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner_w.txt")" | tee -a "$O/ab_summary.txt"
B=$G/W
dc_tests 'Varlen*:*/Varlen*:Paged*:*/Paged*:-*Bwd*' 200 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 1 --batch 3 --seq 333 --paged 16 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --varlen 1,128,129,500,0,77 --causal" > /dev/null
cat "$O/sanitizers.txt"
echo "total: $((SECONDS - DC_T0)) s"
