#!/usr/bin/env bash
# Session 30, call 5. B = the tree (c9fde3a's kernels, .gpu/bundle.txz); N (.gpu/A.txz) =
# exp_fwd_no_edge_turns.patch: a query tile's first S and last PV issued without the pingpong
# turn (FA4's order; the reading of session 28, item 4), so that a warpgroup starts its next tile
# while the other finishes its epilogue. Predicted: +0.5-1% at 8k-16k, +1-3% at 2k (more turns
# per tile edge), hdim 64 (three warpgroups) alike.
source benchmarks/device_call.sh
dc_setup B
{ DC_BENCH_FLAGS="" dc_ab B N 'fwd/auto' "--seq 2048 --dhead 128 --kernel auto" "--seq 8192 --dhead 128 --kernel auto" \
    "--seq 16384 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --causal --kernel auto" "--seq 8192 --dhead 128 --causal --kernel auto" \
    "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" "--seq 2048 --dhead 256 --kernel auto" \
    "--seq 8192 --dhead 256 --causal --kernel auto"; } > "$O/ab.txt"
dc_summary B N "$O/ab.txt" | tee "$O/ab_summary.txt"
R="$G/N/runner --kernel all"
for a in "--dhead 128 --batch 2 --heads 4 --seq 1000 --seq-k 1777" "--dhead 64 --batch 2 --heads 6 --heads-kv 2 --seq 777 --causal" \
         "--dhead 256 --batch 1 --heads 2 --seq 333 --seq-k 2049 --causal" "--dhead 128 --batch 1 --heads 2 --seq 1500 --window 200,37" \
         "--dhead 64 --batch 1 --heads 2 --seq 100 --seq-k 128" "--dhead 128 --batch 3 --heads 2 --seq 129 --seq-k 255" \
         "--dhead 128 --heads 4 --varlen 1,128,129,500,1333" "--dhead 64 --heads 3 --varlen 1,2,190,400 --causal" \
         "--dhead 128 --heads 4 --paged 16 --batch 2 --seq 300 --seq-k 1000"; do
  timeout 60 $R $a 2>&1 | grep -E "OK|FAIL|rror"
done > "$O/runner_n.txt" 2>&1
echo "runner OK lines: $(grep -c 'OK\]' "$O/runner_n.txt"), FAIL: $(grep -c FAIL "$O/runner_n.txt")"
grep -E "FAIL|rror" "$O/runner_n.txt" | head
echo "total: $((SECONDS - DC_T0)) s"
