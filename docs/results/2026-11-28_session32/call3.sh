#!/usr/bin/env bash
# Session 32, call 3 (~2 minutes): bwd_04's deterministic order per half of the head dim.
# The two warpgroups' dQ halves are disjoint dims, so each half can have its own order: every key
# block counts the tile's counter once per completed half (a count >= 2t - 1 means every block
# above added its first half; >= 2t + 1, with this block's own first, its second half too).
# F = the tree; S1 = one writer, counting each half once its addition completed; S3 = two writer
# threads (warps 1 and 2), one per half. Call 1's diagnostic: warpgroup 1 waited 3762 of 6784
# cycles per step for the staging buffer, behind the writer's turn wait (1252) and warpgroup 0's
# bulk read (1529); the chain from one key block's count to the next block's is both halves'
# reads plus the completion (~5400 cycles). Predicted: S1 +1-3% (the chain link halves but the
# writer waits for completion twice), S3 +3-6%.
set -u
source benchmarks/device_call.sh
dc_setup X > /dev/null
d="--dhead 256 --kernel wgmma_wide"
for r in 0 1; do
  for c in "--seq 8192 $d" "--seq 16384 $d" "--seq 8192 $d --causal" "--seq 16384 $d --causal"; do
    order="F S1 S3"; [ $r = 1 ] && order="S3 S1 F"
    for t in $order; do
      timeout 60 "$G/$t/bench" --bwd $c --benchmark_filter='det/' 2>&1 | grep -E "^bwd|rror" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done
done > "$O/ab_det.txt"
{ dc_summary F S1 "$O/ab_det.txt"; dc_summary F S3 "$O/ab_det.txt"; } | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
