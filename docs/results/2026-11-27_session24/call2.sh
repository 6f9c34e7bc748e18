#!/usr/bin/env bash
# Session 24, call 2: A = the tree (1f0085c); M1 = + preprocess by 16-byte
# loads + dQ convert through shared memory with 16-byte row stores (64-row
# steps, dQ staged for the writer as before); M2 = M1 + 80-row steps at hdim
# 128 without a mask, dQ^T staged for the writer (not by RED). Built locally
# (subset: bwd_wgmma;bwd_wgmma_wide;wgmma_persistent, hdims 64;128;256,
# sm_90a), carried as .gpu/bundle.tgz. STEPS: "pre ncu ab tests".
set -u
cd "$(dirname "$0")"
[ -d A ] || tar -xzf bundle.tgz
export LD_LIBRARY_PATH=$PWD/lib
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
STEPS=${STEPS:-"pre ncu ab tests"}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
for step in $STEPS; do case $step in
pre)
  for t in A M1 M2; do
    if timeout 60 $t/bench --bwd --seq 1024 --dhead 128 --kernel wgmma --min-time 0.01 2>&1 | grep -A3 "ERROR OCCURRED"; then
      echo "$t fails; stopping"; exit 2
    fi
  done; echo pre ok ;;
ncu)
  for t in A M1 M2; do
    timeout 90 ncu --metrics gpu__time_duration.sum -k regex:'convert|preprocess' -c 4 \
      $t/bench --bwd --seq 16384 --dhead 128 --kernel wgmma --min-time 0.01 --benchmark_filter='bwd/wgmma/' > "$O/ncu_$t.txt" 2>&1
    echo "$t:"; grep -E '^  [a-z_].*\(|gpu__time_duration' "$O/ncu_$t.txt" | head -4
  done ;;
ab)
  cells=("--seq 8192 --dhead 128|A M1 M2" "--seq 16384 --dhead 128|A M1 M2"
         "--seq 8192 --dhead 128 --causal|A M1" "--seq 8192 --dhead 64 --causal|A M1" "--seq 8192 --dhead 256|A M1")
  for r in 0 1; do
    for c in "${cells[@]}"; do
      cell=${c%%|*}; order=${c#*|}
      [ $r = 1 ] && order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
      for t in $order; do
        k=wgmma; case "$cell" in *256*) k=wgmma_wide;; esac
        # shellcheck disable=SC2086
        timeout 60 $t/bench --bwd $cell --kernel $k 2>&1 | grep -E '^bwd' | sed "s/^/$t /"
      done
    done
  done > "$O/ab.txt"
  python3 - "$O/ab.txt" <<'PY' | tee "$O/ab_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.search(r"TFLOPS=([0-9.]+)", line)
    if m:
        tag, name = line.split()[:2]
        d[(name.split("/min_time")[0], tag)].append(float(m.group(1)))
for n in sorted({n for n, _ in d}):
    if (n, "A") not in d: continue
    a = sum(d[(n, "A")]) / len(d[(n, "A")]); s = f"{n:58s} A {a:6.1f}"
    for t in ("M1", "M2"):
        if (n, t) in d:
            v = sum(d[(n, t)]) / len(d[(n, t)]); s += f"  {t} {v:6.1f} ({100 * (v / a - 1):+5.1f}%)"
    print(s)
PY
  ;;
tests)
  (cd M2
   for k in 0 1 2 3; do
     GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 240 ./test_gpu --gtest_filter='Backward*:VarlenBwd*' --gtest_brief=1 \
       > "$O/m2_tests_$k.txt" 2>&1 &
   done; wait
   for k in 0 1 2 3; do tail -3 "$O/m2_tests_$k.txt"; done
   for tool in memcheck racecheck; do for c in "" "--causal"; do
     timeout 100 compute-sanitizer --tool $tool ./runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 457 --heads 8 --heads-kv 2 --dhead 128 $c > "$O/m2_${tool}${c}.txt" 2>&1
     echo "$tool ${c:-full} rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAIL|PASS" "$O/m2_${tool}${c}.txt" | head -3
   done; done) ;;
esac; done
