#!/usr/bin/env bash
# Session 27, call 4 (carry [".gpu"]: bundle.txz = E, the tree (e6c8f94) + session 26's
# exp_bwd_det_chains2.patch (two chains of ordered dQ additions in bwd_03's deterministic calls
# without a mask); D.txz = D's bench (e6c8f94). 1. A/B D/E, two rotated rounds; 2. sanitizers on a
# deterministic full hdim 128 call; 3. backward and concurrency tests on E, 4 shards.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
[ -d "$G/D" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/D.txz" "$G"
mkdir -p "$G/E" && ln -sf "$G/bin/bench" "$G/E/bench"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
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
ab D E 'bwd/wgmma' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma"
ab D E 'det/' "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 2048 --dhead 128 --kernel wgmma"
} | tee "$O/ab.txt"
echo "bench in $((SECONDS - t0)) s"
python3 - "$O/ab.txt" <<'P' | tee "$O/ab_summary.txt"
import re, sys, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r'(\S+) bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', l)
    if m: d[(m[3], m[2], m[1])].append(float(m[4]))
for k in sorted(set((a, b) for a, b, _ in d)):
    a, b = d.get(k + ("D",), []), d.get(k + ("E",), [])
    if a and b: print(f"{k[0]:46s} {k[1]:16s} D {sum(a)/len(a):7.1f} E {sum(b)/len(b):7.1f} {100*(sum(b)/len(b)/(sum(a)/len(a))-1):+5.1f}%  {a} {b}")
P
R="$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 128"
$R > "$O/runner.txt" 2>&1; echo "runner rc=$?"; tail -3 "$O/runner.txt"
for tool in memcheck racecheck; do
  timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $R > "$O/${tool}.txt" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/${tool}.txt" | head -3
done 2>&1 | tee "$O/sanitizers.txt"
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 290 stdbuf -oL "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*:Concurrency*' \
    > "$O/tests_$k.txt" 2>&1 &
done; wait
for k in 0 1 2 3; do echo "shard $k: $(grep -c '^\[       OK' "$O/tests_$k.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/tests_$k.txt" | head -5; done
cat "$O"/tests_?.txt > "$O/tests.txt"; rm -f "$O"/tests_?.txt
echo "total $((SECONDS - t0)) s"
