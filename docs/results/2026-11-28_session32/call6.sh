#!/usr/bin/env bash
# Session 32, call 6 (~5 minutes). D = the tree at 751d923 (A.txz): causal varlen calls on the
# dynamic schedule in the compact order, full ones on the single-tile grid. V = the bundle: full
# (unmasked) varlen calls take the dynamic schedule in the compact order too (call 5: issue 17's
# full forward at 0.90 of FA4 at one timing; the dense call of the same tokens gets the
# persistent walk, the varlen one a CTA launch per tile). Predicted: full varlen hdim 128 +1-4%,
# hdim 64 +2-5%; causal unchanged (same kernel and schedule).
set -u
source benchmarks/device_call.sh
dc_setup V
DC_BENCH_FLAGS="" dc_ab D V 'fwd_varlen/wgmma_persistent' "--varlen --dhead 128 --heads 16" \
  "--varlen --dhead 64 --heads 32" "--varlen $(seq -s, 200 97 2300) --dhead 128 --heads 16" \
  "--varlen --dhead 128 --heads 16 --causal" > "$O/ab.txt"
dc_summary D V "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*VarlenForward*:*PagedPrefill*:ForwardEdges.*:Concurrency*' 200 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500)" > /dev/null
cat "$O/sanitizers.txt"; rm -f "$O/memcheck.txt" "$O/racecheck.txt"
for a in "--dhead 128 --heads 4 --varlen 1,128,129,500,1333" "--dhead 64 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500)" \
         "--dhead 128 --heads 2 --varlen 0,0,5" "--dhead 64 --heads 3 --varlen 4000,1,2"; do
  timeout 90 "$B/runner" --kernel all $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
