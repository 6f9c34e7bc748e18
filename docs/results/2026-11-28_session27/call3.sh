#!/usr/bin/env bash
# Session 27, call 3 (carry [".gpu"]: bundle.txz = B, the final code: dK/dV stored through shared
# memory in bwd_03 and bwd_04, the warpgroup and tile base read afresh after the step loop (loops
# as long as A's), the done count in non-deterministic kernels only; A.txz = A's bench (6974570).
# 1. runner checks; 2. A/B, two rotated rounds; 3. sanitizers; 4. backward tests, 4 shards.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
[ -d "$G/A" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/A.txz" "$G"
mkdir -p "$G/B" && ln -sf "$G/bin/bench" "$G/B/bench"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
t0=$SECONDS
RUNS=("--bwd --kernel wgmma --batch 3 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 128"
      "--bwd --kernel wgmma --batch 2 --seq 1000 --seq-k 777 --heads 4 --heads-kv 1 --dhead 64 --causal"
      "--bwd --kernel wgmma_wide --batch 2 --seq 513 --heads 4 --heads-kv 2 --dhead 256 --causal"
      "--bwd --kernel wgmma_wide --batch 1 --seq 300 --seq-k 457 --heads 2 --dhead 256"
      "--bwd --kernel wgmma --batch 1 --seq 1 --seq-k 77 --heads 4 --dhead 128 --causal"
      "--bwd --kernel wgmma --batch 2 --seq 640 --heads 4 --dhead 128 --window 100,3")
for r in "${RUNS[@]}"; do
  # shellcheck disable=SC2086
  echo "== $r"; timeout 60 "$B/runner" $r 2>&1 | tail -4
done > "$O/runner.txt" 2>&1
grep -c "OK" "$O/runner.txt"; grep -iE "fail|error|mismatch" "$O/runner.txt" | head -5
timeout 150 stdbuf -oL "$B/test_gpu" --gtest_filter='VarlenBwd*' > "$O/varlen_tests.txt" 2>&1
echo "varlen tests rc=$?"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/varlen_tests.txt" | head -5
echo "runner in $((SECONDS - t0)) s"
ab() {  # ab X Y FILTER cells...
  local x=$1 y=$2 f=$3; shift 3
  for r in 0 1; do for c in "$@"; do
    order="$x $y"; [ $r = 1 ] && order="$y $x"
    for t in $order; do
      # shellcheck disable=SC2086
      timeout 60 "$G/$t/bench" --bwd $c --benchmark_filter="$f" 2>&1 | grep -E "^bwd|ERROR|rror" \
        | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done; done
}
{
ab A B 'bwd/wgmma/' "--seq 2048 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma" \
  "--seq 16384 --dhead 128 --kernel wgmma" "--seq 8192 --dhead 128 --causal --kernel wgmma" \
  "--seq 16384 --dhead 128 --causal --kernel wgmma" "--seq 8192 --dhead 64 --kernel wgmma" \
  "--seq 8192 --dhead 64 --causal --kernel wgmma" "--seq 2048 --dhead 64 --kernel wgmma"
ab A B 'bwd/wgmma_wide/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide"
ab A B 'det/' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 256 --causal --kernel wgmma_wide"
} | tee "$O/ab.txt"
echo "bench in $((SECONDS - t0)) s"
python3 - "$O/ab.txt" <<'P' | tee "$O/ab_summary.txt"
import re, sys, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r'(\S+) bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', l)
    if m: d[(m[3], m[2], m[1])].append(float(m[4]))
for k in sorted(set((a, b) for a, b, _ in d)):
    a, b = d.get(k + ("A",), []), d.get(k + ("B",), [])
    if a and b: print(f"{k[0]:46s} {k[1]:16s} A {sum(a)/len(a):7.1f} B {sum(b)/len(b):7.1f} {100*(sum(b)/len(b)/(sum(a)/len(a))-1):+5.1f}%  {a} {b}")
P
for R in "$B/runner ${RUNS[0]}" "$B/runner ${RUNS[2]}" "$B/runner ${RUNS[3]}"; do
  for tool in memcheck racecheck; do
    timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $R > "$O/${tool}.txt" 2>&1
    echo "$tool rc=$? : $R"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/${tool}.txt" | head -3
  done
done 2>&1 | tee "$O/sanitizers.txt"
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 300 stdbuf -oL "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*:Concurrency*' \
    > "$O/tests_$k.txt" 2>&1 &
done; wait
for k in 0 1 2 3; do echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/tests_$k.txt" | head -5; done
cat "$O"/tests_?.txt > "$O/tests.txt"; rm -f "$O"/tests_?.txt
echo "total $((SECONDS - t0)) s"
