#!/usr/bin/env bash
# Session 49, call 9 (carry [".gpu"]; diagnostic, no build change: O). The cost per query tile of
# the windowed forward (issue 16's (4096, 0) at 0.92x of causal): (W, 0) windows of W = 2048 and
# 4096 (17 and 33 key tiles per 128-row query tile) at 16k and 32k tokens (hdim 128, batch 1, 16
# heads; the dynamic schedule), two rounds. Per query tile p(n) = n a + h: the 16k -> 32k
# difference removes the launch and the tail, the two widths separate a (per key tile) from h
# (per query tile). The same at hdim 64 (32 heads) and hdim 256 (8 heads).
source benchmarks/device_call.sh
dc_setup O > /dev/null
for r in 0 1; do
  for d in "128 16" "64 32" "256 8"; do
    set -- $d
    for s in 16384 32768; do
      for w in 2048 4096; do
        timeout 60 "$B/bench" --seq $s --batch 1 --heads $2 --dhead $1 --causal --window $w,0 --kernel auto 2>&1 |
          grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9]+//'
      done
    done
  done
done > "$O/window_tiles.txt"
cat "$O/window_tiles.txt" | sed -E 's/min_time:0.500\/manual_time//'
echo "total: $((SECONDS - DC_T0)) s"
