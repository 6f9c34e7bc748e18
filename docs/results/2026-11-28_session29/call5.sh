#!/usr/bin/env bash
# Session 29, call 5c (H200): issue 18's table beside FlashAttention-4 and cuDNN on the tree
# (d2f50b0: the named dQ hand-off at hdim 64), and one A/B first: G = the tree + session 28's
# exp_dk_after_dv.patch (dK issued once dV is done), which was -0.3% at hdim 64 under the
# mbarrier hand-off (call 3); predicted 0 to +1% now that the writer warp blocks instead of spinning.
# Calls 5a / 5b staged FA4 (carry .anchors/fa4-p1a, then fa4-p1b); this one carries
# [".gpu", ".anchors/fa4-part2"].
source benchmarks/device_call.sh
dc_setup F
dc_ab F G '.' "--seq 8192 --dhead 64 --kernel wgmma" "--seq 16384 --dhead 64 --causal --kernel wgmma" > "$O/ab.txt"
dc_summary F G "$O/ab.txt" | tee "$O/ab_summary.txt"
source .anchors/fa4-part2/install.sh || exit 3
T0=$SECONDS
timeout 420 python3 benchmarks/fa4_bwd_matched.py "$B/bench" "$O/bwd_matched.json" 64,128 2>&1 | tail -12 | tee "$O/bwd_matched.txt"
echo "matched: $((SECONDS - T0)) s"
for d in 64 128; do for m in "" "--causal"; do for s in 8192 16384; do
  timeout 60 "$B/bench" --bwd --seq $s --dhead $d $m --kernel wgmma 2>&1 | grep -E "^bwd" |
    sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
done; done; done | tee "$O/flash_modes.txt"
echo "modes: $((SECONDS - T0)) s"
[ $SECONDS -lt 470 ] && timeout $((575 - SECONDS)) python3 .anchors/fa4-part2/fa4_bench.py --parts bwd --dheads 64,128 --json "$O/fa4_bwd.json" 2>&1 | tail -20 | tee "$O/fa4_bench.txt"
echo "total: $((SECONDS - T0)) s"
