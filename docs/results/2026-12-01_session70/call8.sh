#!/usr/bin/env bash
# Session 70, call 8: P again, with the peer's empty-barrier arrival in CUTLASS's form (no cluster-
# scope release: call 7's arrive.release.cluster may have cost each consumer warp a fence twice a
# step), beside C: the same clusters and coupled empty barriers, each CTA loading its whole tile
# itself (no multicast). Call 7: P -25%. If C is also far down, the coupling costs; if only P, the
# multicast boxes do. X = HEAD + switch (dev build), P = FLASH_X_PAIRS=1, C = FLASH_X_PAIRS=2.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
{
for t in P C; do
  for a in "--paged 16 --batch 3 --seq 777 --heads 4" "--paged 16 --varlen 7,300,1000,33 --heads 4 --heads-kv 2"; do
    timeout 40 "$G/$t/runner" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
  done
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
DC_BENCH_FLAGS="" dc_abn "X P C" 'fwd_paged16' \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" > "$O/ab.txt" 2>&1
dc_summary X P "$O/ab.txt" | cut -c1-120
dc_summary X C "$O/ab.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
