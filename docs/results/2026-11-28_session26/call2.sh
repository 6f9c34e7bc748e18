#!/usr/bin/env bash
# Session 26, call 2 (carry [".gpu"]: bundle.txz = the tree with head groups of 2 (G2), A.txz =
# 7f70b92's bench). 1. A/B of the deterministic cells call 1 did not cover (two rotated rounds);
# 2. memcheck and racecheck on the runner (deterministic GQA call); 3. the backward tests, 4 shards.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
[ -d "$G/A" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/A.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
t0=$SECONDS
cells=("--seq 16384 --dhead 128 --causal --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma"
       "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide"
       "--seq 16384 --dhead 64 --causal --kernel wgmma")
for r in 0 1; do for c in "${cells[@]}"; do
  order="A G2"; [ $r = 1 ] && order="G2 A"
  for t in $order; do
    bin=$B/bench; [ $t = A ] && bin=$G/A/bench
    # shellcheck disable=SC2086
    timeout 60 "$bin" --bwd $c --benchmark_filter='-det/' 2>&1 | grep -E "^bwd|ERROR|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
  done
done; done | tee "$O/ab.txt"
echo "bench in $((SECONDS - t0)) s"
python3 - "$O/ab.txt" <<'P' | tee "$O/ab_summary.txt"
import re, sys, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r'(\S+) bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', l)
    if m: d[(m[3], m[2], m[1])].append(float(m[4]))
for k in sorted(set((a, b) for a, b, _ in d)):
    a, b = d.get(k + ('A',), []), d.get(k + ('G2',), [])
    if a and b: print(f"{k[0]:45s} {k[1]:16s} A {sum(a)/len(a):7.1f} G2 {sum(b)/len(b):7.1f} {100*(sum(b)/len(b)/(sum(a)/len(a))-1):+5.1f}%  {a} {b}")
P
R="$B/runner --bwd --kernel wgmma --batch 3 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 128"
$R > "$O/runner.txt" 2>&1; echo "runner rc=$?"; tail -3 "$O/runner.txt"
for tool in memcheck racecheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $R > "$O/${tool}_runner.txt" 2>&1
  echo "$tool runner rc=$?"; grep -E "SUMMARY|ERROR SUMMARY|RACECHECK" "$O/${tool}_runner.txt" | head -3
done
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 380 stdbuf -oL "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*' \
    > "$O/bwd_tests_$k.txt" 2>&1 &
done; wait
for k in 0 1 2 3; do echo "shard $k: $(grep -c '^\[       OK' "$O/bwd_tests_$k.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/bwd_tests_$k.txt" | head -5; done
cat "$O"/bwd_tests_*.txt > "$O/bwd_tests.txt"; rm -f "$O"/bwd_tests_?.txt
echo "total $((SECONDS - t0)) s"
