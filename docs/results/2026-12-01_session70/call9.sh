#!/usr/bin/env bash
# Session 70, call 9: which operand to multicast. Call 8: both multicast (P) -3.4%, coupled without
# multicast (C) -7.1%: coupling the two CTAs' empty barriers costs ~7%, multicast returns ~3.7.
# M3 multicasts K alone (coupled on K's barriers only; V loaded by each CTA), M4 V alone; M1 = P,
# M2 = C. K is released right after S (early), V after P V. Predicted: M3 best of the four, -1 to
# +2% against X. X = HEAD + switch (dev build).
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
{
for t in M3 M4; do
  for a in "--paged 16 --batch 3 --seq 777 --heads 4" "--paged 16 --varlen 7,300,1000,33 --heads 4 --heads-kv 2"; do
    timeout 40 "$G/$t/runner" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
  done
done
} > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
DC_BENCH_FLAGS="" dc_abn "X M1 M2 M3 M4" 'fwd_paged16' \
  "--paged 16 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" > "$O/ab.txt" 2>&1
for t in M1 M2 M3 M4; do dc_summary X $t "$O/ab.txt" | cut -c1-120; done
echo "total: $((SECONDS - DC_T0)) s"
