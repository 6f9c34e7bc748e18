#!/usr/bin/env bash
# Session 70, call 10: M5 = the paired kernel's clusters with nothing shared (each CTA alone: its
# own loads, its own barriers, no end sync; only the cluster launch, the first cluster barrier and
# the pairs' tile order remain). Call 9: every coupled form lost 6.5-8.7%, K alone or V alone as
# much as both. If M5 loses as much, the clusters' launch and placement cost it, not the sharing.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "X M5 M1" 'fwd_paged16' \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" > "$O/ab.txt" 2>&1
for t in M5 M1; do dc_summary X $t "$O/ab.txt" | cut -c1-120; done
echo "total: $((SECONDS - DC_T0)) s"
