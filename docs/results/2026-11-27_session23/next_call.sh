#!/usr/bin/env bash
# Session 23's backward experiments, prepared but not run (its device time
# ran out): one device call that times them against the tree they apply to
# and tests the last build, which holds all four. Patches, in this order
# (each applies on the ones before): exp_bwd_convert_tiles, exp_bwd_preprocess_vec,
# exp_bwd03_dq_red, exp_bwd03_rows80. Build here first (the whole recipe
# below ran in 6m17s on 2 cores on 2026-11-27: an 86 MB .gpu, a 34 MB tarball):
#   D=docs/results/2026-11-27_session23
#   V='-DFLASH_VARIANTS=bwd_wgmma;bwd_wgmma_wide;wgmma_persistent' H='-DFLASH_HEAD_DIMS=64;128;256'
#   cfg() { cmake -S "$1" -B "$2" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a "$V" "$H" "${@:3}"; }
#   git worktree add /tmp/a HEAD && cfg /tmp/a /tmp/bA && ninja -C /tmp/bA bench            # A: the tree
#   git apply $D/exp_bwd_convert_tiles.patch $D/exp_bwd_preprocess_vec.patch
#   cfg . build-n0 && ninja -C build-n0 bench                                                 # N0: convert, preprocess
#   git apply $D/exp_bwd03_dq_red.patch
#   cfg . build-n1 && ninja -C build-n1 bench                                                 # N1: + dQ by RED.128
#   git apply $D/exp_bwd03_rows80.patch
#   cfg . build-n2 && ninja -C build-n2 bench test_gpu runner                                 # N2: + 80-row steps
#   mkdir -p .gpu/lib && for t in A:/tmp/bA N0:build-n0 N1:build-n1 N2:build-n2; do
#     mkdir -p .gpu/${t%%:*} && cp ${t#*:}/bin/bench .gpu/${t%%:*}/; done
#   cp build-n2/bin/{test_gpu,runner} .gpu/N2/ && cp -L $(ldd .gpu/A/bench | awk '/libbenchmark|libfmt/ {print $3}') .gpu/lib/
#   tar -czf .gpu/bundle.tgz -C .gpu A N0 N1 N2 lib && rm -rf .gpu/{A,N0,N1,N2,lib} && cp $D/next_call.sh .gpu/
# (the binaries take ~100 MB, the carry at most 64 MiB: the tarball, about a
# third of that, is unpacked on the device), then `bash .gpu/next_call.sh`
# with carry [".gpu"] (about 8 minutes; STEPS picks parts: "pre ncu ab tests").
set -u
cd "$(dirname "$0")"
[ -d A ] || tar -xzf bundle.tgz
export LD_LIBRARY_PATH=$PWD/lib
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
STEPS=${STEPS:-"pre ncu ab tests"}
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
for step in $STEPS; do case $step in
pre)  # every binary runs a backward call (no "ERROR OCCURRED"), or stop here
  for t in A N0 N1 N2; do
    if $t/bench --bwd --seq 1024 --dhead 128 --kernel wgmma --min-time 0.01 2>&1 | grep -A3 "ERROR OCCURRED"; then
      echo "$t fails; stopping"; exit 2
    fi
  done ;;
ncu)  # the preprocess and convert alone (A and N0 differ there only)
  for t in A N0; do
    timeout 120 ncu --metrics gpu__time_duration.sum -k regex:'convert|preprocess' -c 4 \
      $t/bench --bwd --seq 16384 --dhead 128 --kernel wgmma --min-time 0.01 --benchmark_filter='bwd/wgmma/' > "$O/ncu_$t.txt" 2>&1
    echo "$t:"; grep -E 'convert|preprocess|gpu__time_duration' "$O/ncu_$t.txt" | head -8
  done ;;
ab)  # whole backward calls, both modes, rotated, two rounds
  cells=("--seq 8192 --dhead 128" "--seq 16384 --dhead 128" "--seq 8192 --dhead 128 --causal"
         "--seq 8192 --dhead 64" "--seq 8192 --dhead 64 --causal" "--seq 16384 --dhead 64 --causal" "--seq 8192 --dhead 256")
  for r in 0 1; do
    order="A N0 N1 N2"; [ $r = 1 ] && order="N2 N1 N0 A"
    for cell in "${cells[@]}"; do for t in $order; do
      k=wgmma; case "$cell" in *256*) k=wgmma_wide;; esac
      # shellcheck disable=SC2086
      timeout 120 $t/bench --bwd $cell --kernel $k 2>&1 | grep -E '^bwd' | sed "s/^/$t /"
    done; done
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
    for t in ("N0", "N1", "N2"):
        if (n, t) in d:
            v = sum(d[(n, t)]) / len(d[(n, t)]); s += f"  {t} {v:6.1f} ({100 * (v / a - 1):+5.1f}%)"
    print(s)
PY
  ;;
tests)  # N2 (all four changes): the backward suites, then memcheck and racecheck
  # on a full call (the 80-row kernel) and a causal one (64 rows), GQA, ragged
  (cd N2
   for k in 0 1 2 3; do  # four shards at once
     GTEST_TOTAL_SHARDS=4 GTEST_SHARD_INDEX=$k timeout 300 ./test_gpu --gtest_filter='Backward*:VarlenBwd*' --gtest_brief=1 \
       > "$O/n2_tests_$k.txt" 2>&1 &
   done; wait
   for k in 0 1 2 3; do tail -2 "$O/n2_tests_$k.txt"; done
   for tool in memcheck racecheck; do for c in "" "--causal"; do
     timeout 120 compute-sanitizer --tool $tool ./runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 457 --heads 8 --heads-kv 2 --dhead 128 $c > "$O/n2_${tool}${c}.txt" 2>&1
     echo "$tool ${c:-full} rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|FAIL" "$O/n2_${tool}${c}.txt" | head -3
   done; done) ;;
esac; done
