#!/usr/bin/env bash
# Session 59, call 3: the helper's hdim 64 forward proposals (helper/report.md), A/B against HEAD.
# F = HEAD (bundle); P1 = the issue window emptied (K and V waited together before the turn, the
# per-tile mask test as two warp-uniform iteration bounds); P13 = P1 + one predicate per unrolled
# copy; P123 = P13 + FA4's softmax order at hdim 64 (kPvPin 2: exponentials n-tile by n-tile, the
# P V wait after 4 n-tiles, packs beside the exponentials). Predictions (NOTES): P1 +1.5-4% at
# hdim 64, P3 +0.5-1%, P2 0-2% on top; hdims 128 / 256 (P1, P3 only) +-1%.
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "F P1 P13 P123" '^fwd' \
  "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" \
  "--seq 8192 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 128 --kernel auto" \
  "--seq 8192 --dhead 128 --causal --kernel auto" "--seq 8192 --dhead 256 --kernel auto" > "$O/ab_fwd.txt" 2>&1
for x in P1 P13 P123; do dc_summary F $x "$O/ab_fwd.txt"; done | tee "$O/ab_fwd_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
