#!/usr/bin/env bash
# Session 31, call 4 (after FA4 staging in calls 4a / 4b). F = the final code (.gpu/bundle.txz: the
# compact varlen forward grid for causal calls only, warp-collective lookup); B = the tree
# (024d7b2, .gpu/A.txz). Predicted: causal varlen as W (+1.6-6%), full unchanged (same grid).
# 1. A/B B / F; 2. F's varlen / paged forward suites, runner, memcheck / racecheck;
# 3. issue 17's table: flash's varlen forward / backward and paged benches, fa4_bench.py --parts varlen.
source benchmarks/device_call.sh
dc_setup F
DC_BENCH_FLAGS="" dc_ab B F 'fwd_varlen/wgmma_persistent' "--varlen --dhead 128 --heads 16" \
  "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 64 --heads 32 --causal" \
  "--varlen 100,3000,700,2048,5000,1,333 --dhead 256 --heads 8 --heads-kv 2 --causal" > "$O/ab.txt"
dc_summary B F "$O/ab.txt" | tee "$O/ab_summary.txt"
for a in "--dhead 128 --heads 4 --varlen 1,128,129,500,1333 --causal" "--dhead 64 --heads 3 --varlen 1,2,190,400 --causal" \
         "--dhead 256 --heads 2 --heads-kv 1 --varlen 0,77,300 --causal" "--dhead 128 --heads 4 --varlen 1,300,700 --paged 16 --causal" \
         "--dhead 128 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500) --causal" "--dhead 64 --heads 2 --varlen $(seq -s, 0 9 400)" \
         "--dhead 128 --heads 4 --heads-kv 1 --batch 3 --seq 333 --paged 16,64 --causal" "--dhead 64 --heads 2 --batch 2 --seq 700 --seq-k 1000 --paged 16"; do
  timeout 90 "$B/runner" --kernel all $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner_f.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner_f.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner_f.txt")" | tee -a "$O/ab_summary.txt"
dc_tests 'Varlen*:*/Varlen*:Paged*:*/Paged*:-*Bwd*' 200 | tee -a "$O/ab_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --varlen 1,128,129,500,0,77 --causal" > /dev/null
cat "$O/sanitizers.txt"; rm -f "$O/memcheck.txt" "$O/racecheck.txt"  # 8 files come back
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
T0=$SECONDS
for m in "" "--causal"; do
  timeout 60 "$B/bench" --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent|auto'
  timeout 90 "$B/bench" --varlen --bwd --dhead 128 --heads 16 $m --benchmark_filter='wgmma'
  timeout 60 "$B/bench" --paged 16,256 --varlen --dhead 128 --heads 16 $m --benchmark_filter='wgmma_persistent'
done 2>&1 | grep -E "^(fwd|bwd)|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' > "$O/varlen_bench.txt"
timeout 200 python3 .anchors/fa4-part2/fa4_bench.py --parts varlen --json "$O/fa4_varlen.json" 2>&1 |
  grep -v -E "UserWarning|exe_args" | tail -20 >> "$O/varlen_bench.txt"
cat "$O/varlen_bench.txt"
echo "varlen part: $((SECONDS - T0)) s; total: $((SECONDS - DC_T0)) s"
