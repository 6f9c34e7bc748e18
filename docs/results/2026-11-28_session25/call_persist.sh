#!/usr/bin/env bash
# Session 25: bwd_03 on a persistent grid (dense calls without mask bounds: one CTA per SM, each
# taking every gridDim.x-th tile) against the tree before it (A = 79f34e1's bench, .gpu/A/bench.xz),
# two rotated rounds; then, if B leads at hdim 128 full 8k, the backward tests and sanitizers.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
[ -f "$G/A/bench" ] || python3 -c 'import lzma, sys, shutil; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$G/A/bench.xz" "$G/A/bench"
chmod +x "$G/A/bench"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
t0=$SECONDS
cells=("--seq 8192 --dhead 128" "--seq 16384 --dhead 128" "--seq 2048 --dhead 128" "--seq 8192 --dhead 64"
       "--seq 16384 --dhead 64" "--seq 8192 --dhead 128 --causal" "--seq 8192 --dhead 64 --causal")
for r in 0 1; do for c in "${cells[@]}"; do
  order="A B"; [ $r = 1 ] && order="B A"
  for t in $order; do
    bin=$B/bench; [ $t = A ] && bin=$G/A/bench
    # shellcheck disable=SC2086
    timeout 60 "$bin" --bwd $c --kernel wgmma 2>&1 | grep -E "^bwd|ERROR|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
  done
done; done | tee "$O/ab.txt"
echo "bench in $((SECONDS - t0)) s"
python3 - "$O/ab.txt" <<'P' | tee "$O/ab_summary.txt"
import re, sys, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r'(\S) bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', l)
    if m: d[(m[3], m[2], m[1])].append(float(m[4]))
for k in sorted(set((a, b) for a, b, _ in d)):
    a = d[k + ('A',)]; b = d[k + ('B',)]
    if a and b: print(f"{k[0]:45s} {k[1]:10s} A {sum(a)/len(a):7.1f} B {sum(b)/len(b):7.1f} {100*(sum(b)/len(b)/(sum(a)/len(a))-1):+5.1f}%")
P
if ! grep -qE "d128_bf16 +wgmma +A .* \+[1-9]" "$O/ab_summary.txt"; then echo "B does not lead: no tests"; exit 0; fi
for k in 0 1 2 3; do
  GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 300 stdbuf -oL "$B/test_gpu" --gtest_filter='*Backward*:*Bwd*' \
    > "$O/bwd_tests_$k.txt" 2>&1 &
done; wait
for k in 0 1 2 3; do echo "shard $k: $(grep -c '^\[       OK' "$O/bwd_tests_$k.txt") ok"; grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/bwd_tests_$k.txt" | head -5; done
R="$B/runner --bwd --kernel wgmma --batch 40 --seq 200 --seq-k 333 --heads 8 --heads-kv 2 --dhead 128"
for tool in memcheck racecheck; do
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 $R > "$O/${tool}_runner.txt" 2>&1
  echo "$tool runner (both modes) rc=$?"; grep -E "SUMMARY|OK|FAIL" "$O/${tool}_runner.txt" | head -4
done
echo "total $((SECONDS - t0)) s"
