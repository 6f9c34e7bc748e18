#!/usr/bin/env bash
# Session 45, call 5 (carry [".gpu"]). J = this tree (bundle.txz: every kernel rebuilt; fwd_09's
# P V wait after row 0 at hdim 128, kPvPin); A = J's library with session 44's fwd_09 object (R);
# K = J with kPvPin -1 at hdim 64 (before the exponentials) and 0 at hdim 256; E2 / E4 = J with 2 /
# 4 of each row's 16 n-tiles of exponentials on the FMA pipe at hdim 64 (session 33's
# emulated_exp2; uncapped kernels). The runner on fwd_09 for J, K, E2, E4; A / J / K / E2 / E4
# rotated, two rounds; then J with --flush always (256 MB cleared before each call, as do_bench
# times FA4) against its default on the short cells where FA4 leads.
source benchmarks/device_call.sh
dc_setup J > /dev/null
for t in J K E2 E4; do
  R=$G/$t/runner; [ $t = J ] && R=$B/runner
  for a in "--dhead 64 --heads 6 --batch 2 --seq 1100" "--dhead 64 --heads 4 --heads-kv 1 --batch 2 --seq 1000 --seq-k 1300 --causal" \
           "--dhead 64 --heads 4 --batch 1 --seq 5000 --causal" "--dhead 64 --heads 4 --varlen 1,128,129,500 --causal" \
           "--dhead 128 --heads 4 --batch 3 --seq 3000" "--dhead 128 --heads 4 --heads-kv 2 --batch 2 --seq 777 --seq-k 1500 --causal" \
           "--dhead 64 --heads 4 --batch 2 --seq 1000 --window 100,20" "--dhead 256 --heads 2 --batch 2 --seq 600 --causal" \
           "--dhead 256 --heads 2 --batch 2 --seq 1500" "--dhead 128 --heads 4 --batch 2 --seq 700 --causal --softcap 30 --alibi"; do
    timeout 60 "$R" --kernel wgmma_persistent $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception" | sed "s/^/$t: /"
  done
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
grep -E "FAIL|rror:|xception" "$O/runner.txt" | head -5
DC_BENCH_FLAGS="" dc_abn "A J K E2 E4" '^fwd' \
  "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --causal --kernel auto" \
  "--seq 512 --dhead 256 --kernel auto" "--seq 2048 --dhead 256 --kernel auto" "--seq 2048 --dhead 256 --causal --kernel auto" > "$O/ab.txt" 2>&1
{ for t in J K E2 E4; do dc_summary A $t "$O/ab.txt"; done; } > "$O/ab_summary.txt"
for r in 1 2; do
  for c in "--seq 512 --dhead 256" "--seq 1024 --dhead 256" "--seq 512 --dhead 128" "--seq 16384 --dhead 64"; do
    for f in auto always; do
      timeout 60 "$B/bench" $c --kernel auto --flush $f --benchmark_filter='^fwd' 2>&1 | grep -E "^fwd" | sed "s/^/flush_$f /"
    done
  done
done > "$O/flush.txt" 2>&1
cat "$O/flush.txt" | awk '{print $1, $2, $NF, $(NF-1)}' | head -20
echo "total: $((SECONDS - DC_T0)) s"
