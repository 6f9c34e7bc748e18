#!/usr/bin/env bash
# bwd_03_wgmma (the Hopper backward rung) on the H200 in one device call:
# a smoke call with a timeout first (a barrier-phase bug hangs rather than
# fails), the backward GPU tests, compute-sanitizer on a small subset, the
# runner and the bench against bwd_02 (mma), each also in deterministic mode
# ("-det"; the bench step ends with det / non-det TFLOPS per cell, issue
# 18's target >= 0.9). Expects binaries packed from a build that has the
# rung, e.g.
#   cmake -S . -B build-b3 -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
#     -DFLASH_VARIANTS="bwd_mma;bwd_wgmma;wgmma_persistent" && cmake --build build-b3
#   benchmarks/pack_gpu.sh build-b3      (copies the binaries into .gpu/)
# and writes logs under $OUT (default ./out). Steps: STEPS="smoke tests sanitize runner bench".
# BMODS adds score modifiers to every bench call (BMODS="--softcap 30" or
# "--alibi": wgmma's kMods kernels against bwd_02's).
# In a build of the subset above the backward tests run mma and wgmma only.
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
STEPS=${STEPS:-"smoke tests sanitize runner bench"}
BIN=.gpu/bin
# pack_gpu.sh carries one tarball (.txz; older bundles .tgz); Python's
# tarfile reads both, whether or not the machine has xz.
[ -d $BIN ] || python3 -c 'import glob, tarfile; tarfile.open(glob.glob(".gpu/bundle.t?z")[0]).extractall(".gpu")'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
$BIN/runner --list > "$OUT/variants.txt" 2>&1; grep -E "wgmma|mma" "$OUT/variants.txt"
# The suites that reach the backward variants (the score suites run wgmma on
# every case: softcap, ALiBi and sinks; BackwardScoresEdges and
# BackwardScoresChecker name it among the variants that take all three).
BTESTS=${BTESTS:-"BackwardGrid*d64*:BackwardGrid*d128*:BackwardWindow*:BackwardTiles*:BackwardEdges*:BackwardLayouts*:BackwardChecker*:BackwardScores*:BackwardDeterminism*"}
for step in $STEPS; do
  echo "=== $step"
  case $step in
    smoke)
      # One small call per head dim and mask; 60 s each at most (a hang is a
      # barrier bug, or in deterministic mode an ordering bug); then the
      # ordering stress test alone (deterministic, GQA 8, more CTAs than SMs).
      # The last call per head dim adds a softcap and ALiBi (the kMods kernels).
      for d in 64 128; do for c in "" "--causal" "--causal --softcap 30 --alibi"; do
        timeout 60 $BIN/runner --bwd --kernel wgmma --batch 1 --heads 4 --heads-kv 2 --seq 300 --seq-k 520 --dhead $d $c \
          >> "$OUT/smoke.txt" 2>&1
        echo "smoke d$d ${c:-full} rc=$?"; tail -2 "$OUT/smoke.txt"
      done; done
      timeout 180 $BIN/test_gpu --gtest_filter="BackwardDeterminism/OrderedDq.*" > "$OUT/smoke_det.log" 2>&1
      echo "smoke deterministic ordering rc=$?"; grep -E "OK|FAILED|rror" "$OUT/smoke_det.log" | tail -5 ;;
    tests)
      t0=$SECONDS
      timeout ${TEST_TIMEOUT:-300} $BIN/test_gpu --gtest_filter="$BTESTS" > "$OUT/test_backward.log" 2>&1
      echo "backward tests rc=$? in $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|SKIPPED" "$OUT/test_backward.log" | tail -30
      timeout 120 $BIN/test_cpu --gtest_brief=1 > "$OUT/test_cpu.log" 2>&1; echo "test_cpu rc=$?"; tail -3 "$OUT/test_cpu.log" ;;
    sanitize)
      # Ragged tails, GQA, causal and windows on both head dims, small enough
      # for racecheck; every case runs each variant in both modes, so wgmma's
      # deterministic path (the dQ writer, its mbarriers and counters) is in.
      filter=${BSAN_FILTER:-"*BackwardGrid*bf16_d64_causal_sq113_sk203_gqa4:*BackwardGrid*f16_d128_full_sq257_sk129_mqa:*BackwardGrid*bf16_d128_causal_sq17_sk17_mha:*BackwardWindow*bf16_d128*:BackwardEdges.CausalRowsAndKeysWithoutPartners"}
      for tool in memcheck racecheck synccheck; do
        timeout ${SAN_TIMEOUT:-240} compute-sanitizer --tool $tool --error-exitcode 9 $BIN/test_gpu \
          --gtest_filter="$filter" > "$OUT/b_$tool.log" 2>&1
        echo "backward $tool rc=$?"; tail -3 "$OUT/b_$tool.log"
      done ;;
    runner)
      timeout 300 $BIN/runner --bwd --kernel wgmma > "$OUT/runner_bwd.txt" 2>&1
      echo "runner --bwd --kernel wgmma rc=$?"; grep -c "\[OK\]" "$OUT/runner_bwd.txt"; grep "FAIL" "$OUT/runner_bwd.txt" | head; tail -2 "$OUT/runner_bwd.txt" ;;
    bench)
      for d in ${BDHEADS:-64 128}; do for s in ${BSEQS:-8192}; do for c in "" "--causal"; do
        for k in wgmma mma; do
          timeout 300 $BIN/bench --bwd --kernel $k --seq $s --dhead $d $c ${BMODS:-} --benchmark_out_format=json \
            --benchmark_out="$OUT/bpart_${k}_s${s}_d${d}${c:+_causal}.json" 2>&1 | grep -E "^bwd/"
        done
      done; done; done
      python3 -c 'import json,glob,sys; json.dump({"benchmarks": [b for f in sorted(glob.glob(sys.argv[1] + "/bpart_*.json")) for b in json.load(open(f))["benchmarks"]]}, open(sys.argv[1] + "/bwd03_bench.json", "w"), indent=1)' "$OUT"
      rm -f "$OUT"/bpart_*.json
      # Deterministic over non-deterministic TFLOPS, per kernel and cell.
      python3 - "$OUT/bwd03_bench.json" <<'PY'
import json, sys
tf = {b["name"]: b["TFLOPS"] for b in json.load(open(sys.argv[1]))["benchmarks"] if "TFLOPS" in b}
for name, t in sorted(tf.items()):
    parts = name.split("/")
    if len(parts) > 2 and parts[1].endswith("-det"):
        base = "/".join([parts[0], parts[1][:-4]] + parts[2:])
        if base in tf:
            print(f"{name}: {t:.1f} / {tf[base]:.1f} TFLOPS = {t / tf[base]:.3f}")
PY
      ;;
  esac
done
