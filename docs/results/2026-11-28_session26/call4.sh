#!/usr/bin/env bash
# Session 26, call 4 (carry [".gpu"]: bundle.txz = F, the final tree: the dQ convert started early
# in non-deterministic dense calls, head groups of 2 only for bwd_03 calls without a mask;
# H.txz = H (514ea36, head groups of 2 everywhere) and A (7f70b92) benches). 1. A/B on the cells
# the final tree changes; 2. sanitizers; 3. backward and concurrency tests, 4 shards.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
[ -d "$G/H" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/H.txz" "$G"
mkdir -p "$G/F" && ln -sf "$G/bin/bench" "$G/F/bench"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
t0=$SECONDS
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
ab H F 'bwd/wgmma/' "--seq 8192 --dhead 64 --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma"
ab A F 'det/' "--seq 16384 --dhead 128 --causal --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma"
} | tee "$O/ab.txt"
echo "bench in $((SECONDS - t0)) s"
python3 - "$O/ab.txt" <<'P' | tee "$O/ab_summary.txt"
import re, sys, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r'(\S+) bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', l)
    if m: d[(m[3], m[2], m[1])].append(float(m[4]))
for x, y in (("H", "F"), ("A", "F")):
    for k in sorted(set((a, b) for a, b, _ in d)):
        a, b = d.get(k + (x,), []), d.get(k + (y,), [])
        if a and b: print(f"{k[0]:46s} {k[1]:16s} {x} {sum(a)/len(a):7.1f} {y} {sum(b)/len(b):7.1f} {100*(sum(b)/len(b)/(sum(a)/len(a))-1):+5.1f}%  {a} {b}")
P
for R in "$B/runner --bwd --kernel wgmma --batch 3 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 128" \
         "$B/runner --bwd --kernel wgmma_wide --batch 2 --seq 513 --heads 4 --heads-kv 2 --dhead 256 --causal"; do
  $R > "$O/runner.txt" 2>&1; echo "runner rc=$?"; tail -3 "$O/runner.txt"
  for tool in memcheck racecheck; do
    timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $R > "$O/${tool}_runner.txt" 2>&1
    echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/${tool}_runner.txt" | head -3
  done
done 2>&1 | tee "$O/sanitizers.txt"
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 370 stdbuf -oL "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*:Concurrency*' \
    > "$O/tests_$k.txt" 2>&1 &
done; wait
for k in 0 1 2 3; do echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/tests_$k.txt" | head -5; done
cat "$O"/tests_?.txt > "$O/tests.txt"; rm -f "$O"/tests_?.txt
echo "total $((SECONDS - t0)) s"
