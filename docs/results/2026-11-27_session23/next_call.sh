#!/usr/bin/env bash
# Session 23's two backward experiments, prepared but not run (its device
# time ran out): one device call that times them against the tree they
# apply to and tests the candidate. Build here first (2 cores, ~3 min each):
#   D=docs/results/2026-11-27_session23
#   V='-DFLASH_VARIANTS=bwd_wgmma;bwd_wgmma_wide;wgmma_persistent' H='-DFLASH_HEAD_DIMS=64;128;256'
#   git worktree add /tmp/a HEAD                    # A: the tree as landed
#   cmake -S /tmp/a -B /tmp/bA -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a "$V" "$H" && ninja -C /tmp/bA bench
#   git apply $D/exp_bwd_convert_tiles.patch $D/exp_bwd_preprocess_vec.patch   # N0: convert by tiles, preprocess by 16-byte loads
#   cmake -S . -B build-n0 -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a "$V" "$H" \
#     -DCMAKE_CUDA_FLAGS=-DFLASH_BWD03_DQ_RED=0 && ninja -C build-n0 bench
#   git apply $D/exp_bwd03_dq_red.patch               # N1: + dQ by RED.128 in bwd_03
#   cmake -S . -B build-n1 -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90a "$V" "$H" && ninja -C build-n1 bench test_gpu runner
#   mkdir -p .gpu/A .gpu/N0 .gpu/N1 .gpu/lib && cp /tmp/bA/bin/bench .gpu/A/ && cp build-n0/bin/bench .gpu/N0/ &&
#     cp build-n1/bin/{bench,test_gpu,runner} .gpu/N1/ &&
#     cp -L $(ldd .gpu/A/bench | awk '/libbenchmark|libfmt/ {print $3}') .gpu/lib/ && cp $D/next_call.sh .gpu/
# then run `bash .gpu/next_call.sh` with carry [".gpu"] (about 6 minutes).
# (N0 and N1 differ only in -DFLASH_BWD03_DQ_RED; with the RED patch applied
# N0 needs the macro, without it the macro is unused.)
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib
O=${OUT:-./out}; mkdir -p "$O"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
# Preflight: every binary runs a backward call (no "ERROR OCCURRED").
for t in A N0 N1; do
  if $t/bench --bwd --seq 1024 --dhead 128 --kernel wgmma --min-time 0.01 2>&1 | grep -A3 "ERROR OCCURRED"; then
    echo "$t fails; stopping"; exit 2
  fi
done
# 1. The preprocess and convert kernels alone (ncu durations; A and N0 differ
# there only).
for t in A N0; do
  timeout 120 ncu --metrics gpu__time_duration.sum -k regex:'convert|preprocess' -c 4 \
    $t/bench --bwd --seq 16384 --dhead 128 --kernel wgmma --min-time 0.01 --benchmark_filter='bwd/wgmma/' > "$O/ncu_$t.txt" 2>&1
  echo "$t:"; grep -E 'convert|preprocess|gpu__time_duration' "$O/ncu_$t.txt" | head -8
done
# 2. Whole backward calls, non-deterministic (the RED change) and
# deterministic (the convert only), rotated, two rounds.
cells=("--seq 8192 --dhead 128" "--seq 8192 --dhead 128 --causal" "--seq 16384 --dhead 128"
       "--seq 8192 --dhead 64" "--seq 8192 --dhead 64 --causal" "--seq 16384 --dhead 64 --causal" "--seq 8192 --dhead 256")
for r in 0 1; do
  order="A N0 N1"; [ $r = 1 ] && order="N1 N0 A"
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
    for t in ("N0", "N1"):
        if (n, t) in d:
            v = sum(d[(n, t)]) / len(d[(n, t)]); s += f"  {t} {v:6.1f} ({100 * (v / a - 1):+5.1f}%)"
    print(s)
PY
# 3. N1 on the backward suites and the two sanitizers.
cd N1
timeout 300 ./test_gpu --gtest_filter='Backward*:VarlenBwd*' --gtest_brief=1 > "$O/n1_tests.txt" 2>&1; echo "tests rc=$?"; tail -3 "$O/n1_tests.txt"
for tool in memcheck racecheck; do
  timeout 150 compute-sanitizer --tool $tool ./runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 457 --heads 8 --heads-kv 2 --dhead 128 --causal > "$O/n1_$tool.txt" 2>&1
  echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/n1_$tool.txt"
done
