#!/usr/bin/env bash
# Session 56, call 7 (carry [".gpu"]): H = the kept tree; PW = H with dense-query full paged calls on
# the persistent walk from pages of 16 keys (was: >= 128; pages of 16 ran the 3-stage grid kernel,
# 32 / 64 the grid). Session 40 measured the walk at page 16 -1.4% / +0.2%, page 32 -0.4%, before
# session 51's batched table loads and session 52's 40 / 232 registers for the paged walk.
# Call 6's ncu: page 16's grid kernel spends +1400 consumer samples (of ~70K) waiting at each CTA's
# start (Q and the first K), which the walk overlaps with the previous tile.
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "H PW" '^fwd_paged' \
  "--paged 16,32,64 --batch 4 --seq 4096 --dhead 128 --kernel auto" \
  "--paged 16,32 --batch 8 --seq 2048 --dhead 128 --kernel auto" \
  "--paged 16 --batch 1 --seq 16384 --dhead 128 --kernel auto" > "$O/ab.txt"
dc_summary H PW "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
