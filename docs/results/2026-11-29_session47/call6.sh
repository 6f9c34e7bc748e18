#!/usr/bin/env bash
# Session 47, call 6 (carry [".gpu"]). F2 = F (call 5b) with 16 splits' partials in flight in
# the merge (F2.txz: bench, runner); A = session 46 (A.txz). Runner on F2 (split decode calls),
# then A / F2 rotated, four runs each of `./bench --decode`.
source benchmarks/device_call.sh
dc_setup F > /dev/null
for a in "--batch 3 --cache 3000 --heads 8 --heads-kv 2 --dhead 128 --splits 5" "--batch 2 --cache 777 --heads 4 --heads-kv 1 --dhead 64 --page-size 16 --splits 3" \
         "--batch 1 --cache 20000 --heads 16 --heads-kv 2 --dhead 256 --splits 40" "--batch 1 --cache 50000 --heads 32 --heads-kv 8 --dhead 128" \
         "--batch 2 --cache 9000 --heads 8 --heads-kv 8 --dhead 64 --splits 33 --softcap 20"; do
  timeout 90 "$G/F2/runner" --decode --kernel splitkv $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -3
{ DC_BENCH_FLAGS="" dc_abn "A F2" '^decode' "--decode"; DC_BENCH_FLAGS="" dc_abn "F2 A" '^decode' "--decode"; } > "$O/ab_decode.txt" 2>&1
dc_summary A F2 "$O/ab_decode.txt" us | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
