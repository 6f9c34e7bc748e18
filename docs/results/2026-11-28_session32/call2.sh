#!/usr/bin/env bash
# Session 32, call 2 (~6 minutes). Builds: F = session 31's tree (A.txz); N4 = the bundle: (G) the
# compact causal varlen grid only where one sequence's K and V over every KV head fit in 32 MiB
# (call 1: the compact grid lost 2-5% on 1 x 16k / 2 x 8k, gained 2.1% on issue 17's batch), and
# (W) bwd_04's deterministic dQ writer as a whole warp adding the staged halves by float4
# reductions from shared memory (LDS + RED.128, 4 loads in flight per lane) instead of the copy
# engine's bulk reduction: call 1's diagnostic had warpgroup 1 waiting 3762 of 6784 cycles per
# step for the bulk read of warpgroup 0's half (1529 cycles) behind the writer's turn wait.
# W2 / W1: the same writer with 2 / 1 loads in flight (ptxas spills 16-72 bytes of the prologue's
# values in W's det kernels, fewer with fewer loads in flight; none in the tree).
# Predicted: G = O (old grid) within 1% on the long cells, = F on issue 17's batch and the mixed
# GQA cell; W: hdim 256 det +4-8% (0.88 -> 0.92-0.95 of non-det); W1 slower than W4.
set -u
source benchmarks/device_call.sh
dc_setup N4
cells=("--varlen 16384 --dhead 128 --heads 16 --causal" "--varlen 8192,8192 --dhead 128 --heads 16 --causal"
       "--varlen --dhead 128 --heads 16 --causal" "--varlen 16384 --dhead 64 --heads 32 --causal"
       "--varlen 8192,8192 --dhead 256 --heads 8 --causal"
       "--varlen 100,3000,700,2048,5000,1,333 --dhead 256 --heads 8 --heads-kv 2 --causal")
DC_BENCH_FLAGS="" dc_ab F N4 'fwd_varlen/wgmma_persistent' "${cells[@]}" > "$O/ab_fwd.txt"
d="--dhead 256 --kernel wgmma_wide"
for r in 0 1; do
  for c in "--seq 8192 $d" "--seq 16384 $d" "--seq 8192 $d --causal"; do
    order="F N4 W2 W1"; [ $r = 1 ] && order="W1 W2 N4 F"
    for t in $order; do
      timeout 60 "$G/$t/bench" --bwd $c --benchmark_filter='det/' 2>&1 | grep -E "^bwd|rror" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done
done > "$O/ab_det.txt"
# non-deterministic reference (same kernels in every build): N4 only
for c in "--seq 8192 $d" "--seq 8192 $d --causal"; do
  timeout 60 "$B/bench" --bwd $c --benchmark_filter='bwd/wgmma_wide/' 2>&1 | grep -E "^bwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
done >> "$O/ab_det.txt"
{ dc_summary F N4 "$O/ab_fwd.txt"; dc_summary F N4 "$O/ab_det.txt"; dc_summary F W2 "$O/ab_det.txt"; dc_summary F W1 "$O/ab_det.txt"; } | tee "$O/ab_summary.txt"
grep "^bwd" "$O/ab_det.txt" | tee -a "$O/ab_summary.txt"
dc_tests '*Backward*d256*:*Bwd*d256*:BackwardDeterminism.*:BackwardScoresEdges.*:BackwardTiles.*:BackwardEdges.*:VarlenBwdEdges.*:Cases/VarlenBwd.*:*VarlenForward*' 200 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 2 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 256 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --varlen 1,128,129,500,0,77 --causal" > /dev/null
cat "$O/sanitizers.txt"; rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
