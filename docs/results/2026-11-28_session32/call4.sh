#!/usr/bin/env bash
# Session 32, call 4 (~5 minutes). T = the tree (A.txz; the compact grid under 32 MiB); D = the
# bundle: causal variable-length calls on the compact grid take the dynamic schedule
# (Fa3DynamicScheduler: one CTA per SM, tile indices from an atomic counter in the compact grid's
# order, handed to the consumers through two shared-memory slots), as dense causal calls of at
# most 4096 keys do (dense 2k +4%, 4k +1.7%, session 18). Session 18 tried it on the old varlen
# grid, where half the indices were empty tiles (-1% at hdim 128, +3% at hdim 64); the compact
# grid has none. Predicted: issue 17's causal hdim 128 +2-4%, hdim 64 +1.5-3%; full calls and
# hdim 256 unchanged (same kernels).
set -u
source benchmarks/device_call.sh
dc_setup D
DC_BENCH_FLAGS="" dc_ab T D 'fwd_varlen/wgmma_persistent' "--varlen --dhead 128 --heads 16 --causal" \
  "--varlen --dhead 64 --heads 32 --causal" "--varlen 100,3000,700,2048,5000,1,333 --dhead 128 --heads 8 --heads-kv 2 --causal" \
  "--varlen $(seq -s, 200 97 2300) --dhead 128 --heads 16 --causal" "--varlen --dhead 128 --heads 16" > "$O/ab.txt"
dc_summary T D "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*VarlenForward*:*PagedPrefill*:ForwardEdges.*:Concurrency*:BackwardDeterminism.*' 240 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500) --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 64 --heads 4 --varlen 1,128,129,500,0,77,1100 --causal" > /dev/null
cat "$O/sanitizers.txt"; rm -f "$O/memcheck.txt" "$O/racecheck.txt"
for a in "--dhead 128 --heads 4 --varlen 1,128,129,500,1333 --causal" "--dhead 64 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500) --causal" \
         "--dhead 128 --heads 2 --varlen 0,0,5 --causal" "--dhead 64 --heads 3 --varlen 4000,1,2 --causal"; do
  timeout 90 "$B/runner" --kernel all $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")" | tee -a "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
