#!/usr/bin/env bash
# Session 32, call 8 (~3 minutes). V = the tree at 66b7719 (A.txz); P = the bundle: paged calls
# with packed queries (cu_seqlens_q) take the dynamic schedule in the compact order as contiguous
# varlen calls do (call 7: page 256 causal fell to 0.90x of contiguous once the contiguous causal
# call gained it). Predicted: paged varlen causal +1-4%, full +0-2% (page 16 and 256).
set -u
source benchmarks/device_call.sh
dc_setup P
DC_BENCH_FLAGS="" dc_ab V P 'fwd_varlen_paged' "--paged 16,256 --varlen --dhead 128 --heads 16" \
  "--paged 16,256 --varlen --dhead 128 --heads 16 --causal" > "$O/ab.txt"
dc_summary V P "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*PagedPrefill*:*VarlenForward*' 150 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --varlen 1,300,700,129,1500 --paged 16 --causal" > /dev/null
cat "$O/sanitizers.txt"; rm -f "$O/memcheck.txt" "$O/racecheck.txt"
for a in "--dhead 128 --heads 4 --varlen 1,300,700 --paged 16 --causal" "--dhead 64 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500) --paged 256" \
         "--dhead 128 --heads 2 --varlen 0,0,5,2000 --paged 32 --causal"; do
  timeout 90 "$B/runner" --kernel all $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
