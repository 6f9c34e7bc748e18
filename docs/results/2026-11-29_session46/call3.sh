#!/usr/bin/env bash
# Session 46, call 3 (carry [".gpu"]). C = session 45's library with fwd_09 rebuilt: the kernels
# that may freeze (capped / ALiBi at hdims 128, 256) take kPvPin through probs(..., frozen):
# bundle.txz; A = session 45's bench (A.txz). Runner on C's fwd_09 (capped, ALiBi, sinks, varlen),
# the score suites, then A / C rotated, two rounds, `--kernel auto`.
source benchmarks/device_call.sh
dc_setup C > /dev/null
for a in "--dhead 128 --heads 4 --batch 2 --seq 700 --causal --softcap 30 --alibi" "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 1500 --seq-k 1200 --softcap 15" \
         "--dhead 128 --heads 4 --batch 1 --seq 3000 --causal --softcap 50 --sinks" "--dhead 128 --heads 4 --varlen 1,128,129,500,2000 --causal --softcap 30" \
         "--dhead 256 --heads 2 --batch 2 --seq 900 --causal --softcap 30" "--dhead 256 --heads 2 --batch 2 --seq 1000 --alibi" \
         "--dhead 128 --heads 8 --heads-kv 1 --batch 2 --seq 2000 --causal --alibi" "--dhead 64 --heads 4 --batch 2 --seq 800 --causal --softcap 30"; do
  timeout 90 "$B/runner" --kernel wgmma_persistent $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
dc_tests '*Softcap*:*Score*:*Alibi*:*Sink*:-*Backward*:*Bwd*' 200 8 | tail -12
DC_BENCH_FLAGS="" dc_abn "A C" '^fwd' \
  "--seq 16384 --dhead 128 --causal --softcap 30 --kernel auto" "--seq 4096 --dhead 128 --softcap 30 --kernel auto" \
  "--seq 16384 --dhead 128 --causal --alibi --kernel auto" "--seq 16384 --dhead 256 --causal --softcap 30 --kernel auto" \
  "--seq 2048 --dhead 256 --softcap 30 --kernel auto" "--seq 16384 --dhead 128 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary A C "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
