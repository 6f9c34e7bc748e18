#!/usr/bin/env bash
# One device call on the H200: gpu tests, compute-sanitizer, runner, bench and
# PyTorch SDPA in the same run. Expects a tree installed by
#   cmake --preset h200 && cmake --build --preset h200
#   benchmarks/pack_gpu.sh           (copies binaries and shared libraries into .gpu/)
# and writes logs under $OUT (default ./out).
#   STEPS="tests sanitize runner bench sdpa" benchmarks/h200_check.sh
# Decode (KV cache): STEPS="dtests dsanitize druner dbench dsdpa".
# Backward: STEPS="btests bsanitize brunner bbench bsdpa" (BSEQS, BDHEADS, BBENCH_FILTER).
# Sliding windows: STEPS="wtests wbench" (WBWD=1 adds the backward; wbench is issue 16's whole table).
# Score modifiers (softcap, ALiBi, sinks): STEPS="stests sbench" (sbench: the table's softcap and sinks rows).
set -u
OUT=${OUT:-./out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$PWD/.gpu/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
STEPS=${STEPS:-"tests sanitize runner bench sdpa"}
SEQS=${SEQS:-"512 1024 2048 4096 8192 16384"}
DHEADS=${DHEADS:-"128"}
BIN=.gpu/bin
# pack_gpu.sh carries one tarball (.txz; older bundles .tgz); Python's
# tarfile reads both, whether or not the machine has xz.
[ -d $BIN ] || python3 -c 'import glob, tarfile; tarfile.open(glob.glob(".gpu/bundle.t?z")[0]).extractall(".gpu")'
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv | tee "$OUT/gpu.txt"
for step in $STEPS; do
  echo "=== $step"
  case $step in
    tests)
      t0=$SECONDS; $BIN/test_gpu > "$OUT/test_gpu.log" 2>&1
      echo "test_gpu rc=$? in $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|SKIPPED" "$OUT/test_gpu.log" | tail -20
      $BIN/test_cpu --gtest_brief=1 2>&1 | tail -3 ;;
    sanitize)
      FILTER=${SAN_FILTER:-"*"}
      timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool memcheck --error-exitcode 9 $BIN/test_gpu --gtest_filter="$FILTER" > "$OUT/memcheck.log" 2>&1
      echo "memcheck rc=$?"; tail -4 "$OUT/memcheck.log"
      RFILTER=${RACE_FILTER:-"*bf16_d*_causal_sq113_sk203_gqa4:*f32_d*_full_sq257_sk129_mqa:*f16_d*_causal_sq1023_sk1024_mha"}
      timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool racecheck --error-exitcode 9 $BIN/test_gpu --gtest_filter="$RFILTER" > "$OUT/racecheck.log" 2>&1
      echo "racecheck rc=$?"; tail -4 "$OUT/racecheck.log"
      timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool synccheck --error-exitcode 9 $BIN/test_gpu --gtest_filter="$RFILTER" > "$OUT/synccheck.log" 2>&1
      echo "synccheck rc=$?"; tail -3 "$OUT/synccheck.log" ;;
    runner)
      $BIN/runner > "$OUT/runner.txt" 2>&1; echo "runner rc=$?"; tail -3 "$OUT/runner.txt"
      $BIN/runner --seq 16384 --dhead 128 --kernel tiled >> "$OUT/runner.txt" 2>&1; tail -2 "$OUT/runner.txt" ;;
    brunner)
      $BIN/runner --bwd ${BRUNNER_ARGS:-} > "$OUT/runner_bwd.txt" 2>&1; echo "runner --bwd rc=$?"; tail -3 "$OUT/runner_bwd.txt" ;;
    druner)
      $BIN/runner --decode ${DRUNNER_ARGS:-} > "$OUT/runner_decode.txt" 2>&1; echo "runner --decode rc=$?"; tail -3 "$OUT/runner_decode.txt" ;;
    bench)
      # BENCH_FILTER_<dhead> narrows one head dim (e.g. BENCH_FILTER_64=mma).
      for d in $DHEADS; do for s in $SEQS; do for c in "" "--causal"; do
        filter_var=BENCH_FILTER_$d
        $BIN/bench --seq $s --dhead $d $c --benchmark_out_format=json --benchmark_filter="${!filter_var:-${BENCH_FILTER:-.}}" \
          --benchmark_out="$OUT/part_s${s}_d${d}${c:+_causal}.json" 2>&1 | grep -E "^fwd" ; done; done; done
      # One file back instead of one per shape (the device tool returns at most 8).
      python3 -c 'import json,glob,sys; json.dump({"benchmarks": [b for f in sorted(glob.glob(sys.argv[1] + "/part_*.json")) for b in json.load(open(f))["benchmarks"]]}, open(sys.argv[1] + "/bench.json", "w"), indent=1)' "$OUT"
      rm -f "$OUT"/part_*.json ;;
    ncu)
      timeout 300 ncu --clock-control none --section SpeedOfLight --section Occupancy --section WarpStateStats \
        --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis -k regex:${NCU_KERNEL:-fwd_08_wgmma_pingpong_kernel} \
        --launch-skip 3 --launch-count 1 $BIN/bench ${NCU_ARGS:---seq 4096 --dhead 128 --kernel ${NCU_VARIANT:-wgmma_pingpong}} \
        --benchmark_min_time=0.01 > "$OUT/ncu.txt" 2>&1
      echo "ncu rc=$?"; grep -E "Duration|Throughput|Achieved Occupancy|Registers|Issue Slots Busy|Stall|Pipe" "$OUT/ncu.txt" | head -30 ;;
    btests)
      t0=$SECONDS; $BIN/test_gpu --gtest_filter="${BTEST_FILTER:-*Backward*}" > "$OUT/test_backward.log" 2>&1
      echo "backward tests rc=$? in $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|SKIPPED" "$OUT/test_backward.log" | tail -30 ;;
    bsanitize)
      # racecheck is the slowest tool: it skips the 300 x 520 layout cases.
      grid='*BackwardGrid*d64_causal_sq113_sk203_gqa4:*BackwardGrid*f16_d256_full_sq257_sk129_mqa:*BackwardGrid*bf16_d128_causal_sq257_sk129_mha:*BackwardGrid*bf16_d128_full_sq17_sk17_mqa'
      for tool in memcheck racecheck synccheck; do
        filter=${BSAN_FILTER:-BackwardL*:BackwardE*:$grid}
        [ $tool = racecheck ] && filter=${BRACE_FILTER:-BackwardE*:$grid}
        timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 $BIN/test_gpu \
          --gtest_filter="$filter" > "$OUT/b_$tool.log" 2>&1
        echo "backward $tool rc=$?"; tail -2 "$OUT/b_$tool.log"
      done ;;
    bbench)
      for d in ${BDHEADS:-64 128 256}; do for s in ${BSEQS:-8192 16384}; do for c in "" ${BCAUSAL:-}; do
        $BIN/bench --bwd --seq $s --dhead $d $c --benchmark_out_format=json --benchmark_filter="${BBENCH_FILTER:-mma}" \
          --benchmark_out="$OUT/bpart_s${s}_d${d}${c:+_causal}.json" 2>&1 | grep -E "^bwd" ; done; done; done
      python3 -c 'import json,glob,sys; json.dump({"benchmarks": [b for f in sorted(glob.glob(sys.argv[1] + "/bpart_*.json")) for b in json.load(open(f))["benchmarks"]]}, open(sys.argv[1] + "/bwd_bench.json", "w"), indent=1)' "$OUT"
      rm -f "$OUT"/bpart_*.json ;;
    bsdpa)
      python3 benchmarks/sdpa_bench.py --bwd --seq ${BSEQS:-8192 16384} --dhead ${BDHEADS:-64 128 256} ${BCAUSAL:+--both-masks} --json "$OUT/bwd_sdpa.json" 2>&1 | tee "$OUT/bwd_sdpa.txt" ;;
    dtests)
      t0=$SECONDS; $BIN/test_gpu --gtest_filter='*Decode*' > "$OUT/test_decode.log" 2>&1
      echo "decode tests rc=$? in $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|SKIPPED" "$OUT/test_decode.log" | tail -20 ;;
    dsanitize)
      for tool in memcheck racecheck synccheck; do
        timeout ${SAN_TIMEOUT:-150} compute-sanitizer --tool $tool --error-exitcode 9 $BIN/test_gpu \
          --gtest_filter="${DSAN_FILTER:-DecodeP*:DecodeS*:DecodeH*:DecodeL*:DecodeE*:DecodeW*:*d64_page16_gqa8_sq4_causal_append:*d256_contiguous_gqa4_sq1_full}" > "$OUT/d_$tool.log" 2>&1
        echo "decode $tool rc=$?"; tail -2 "$OUT/d_$tool.log"
      done ;;
    dbench)
      $BIN/bench --decode ${DBENCH_ARGS:-} --benchmark_out_format=json --benchmark_out="$OUT/decode_bench.json" 2>&1 | grep -E "^decode" ;;
    wtests)
      # Sliding windows: the three window suites, then memcheck and racecheck on a subset.
      t0=$SECONDS; $BIN/test_gpu --gtest_brief=1 --gtest_filter='*Window*' > "$OUT/test_window.log" 2>&1
      echo "window tests rc=$? in $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|SKIPPED" "$OUT/test_window.log" | tail -20
      wsub='*ForwardWindow*bf16_d*_causal_l127_sq113_sk203:*ForwardWindow*f16_d128_l64_r32_sq257_sk129:*BackwardWindow*bf16_d128_left127_sq1023_sk1024:*BackwardWindow*f16_d64_right1_sq113_sk203:DecodeWindow*'
      for tool in memcheck racecheck; do
        timeout ${SAN_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 9 $BIN/test_gpu --gtest_brief=1 \
          --gtest_filter="${WSAN_FILTER:-$wsub}" > "$OUT/w_$tool.log" 2>&1
        echo "window $tool rc=$?"; tail -2 "$OUT/w_$tool.log"
      done ;;
    wbench|sbench)
      # Issue 16's table: TFLOPS of visible work (the modifiers add no FLOPs), forward (and WBWD=1
      # backward, with dsinks for --sinks), causal, windows, softcap and sinks; sbench: the causal
      # baseline and the modifier rows only.
      masks=("--causal" "--causal --window 4096,0" "--causal --window 128,0" "--window 2048,2048"
             "--causal --softcap 30" "--causal --sinks")
      [ $step = sbench ] && masks=("--causal" "--causal --softcap 30" "--causal --sinks")
      for shape in "--batch 2 --heads 32 --seq 8192 --dhead 64" "--batch 1 --heads 16 --seq 16384 --dhead 128"; do
        for mask in "${masks[@]}"; do
          $BIN/bench $shape $mask --kernel ${WKERNEL:-auto} 2>&1 | grep -E "^fwd"
          [ "${WBWD:-0}" = 1 ] && $BIN/bench --bwd $shape $mask --kernel ${WBKERNEL:-mma} 2>&1 | grep -E "^bwd/[a-z_]+/"
        done
      done | tee "$OUT/${step}.txt" ;;
    stests)
      # Score modifiers: the three score suites with their edges and checkers, then memcheck and
      # racecheck on a subset (small shapes, every kind of call, sinks through the split combine).
      t0=$SECONDS; $BIN/test_gpu --gtest_brief=1 --gtest_filter='*Scores*' > "$OUT/test_scores.log" 2>&1
      echo "score tests rc=$? in $((SECONDS - t0)) s"; grep -E "PASSED|FAILED|SKIPPED" "$OUT/test_scores.log" | tail -20
      ssub='*ForwardScores*bf16_d*_cap15_causal_sq113_sk203_gqa4:*ForwardScores*f16_d*_cap30_alibi_batch_sinks_full_sq257_sk129_mqa'
      ssub+=':*BackwardScores*bf16_d*_sinks_causal_sq257_sk129_gqa2:*BackwardScores*f16_d*_cap30_alibi_batch_sinks_causal_sq113_sk203_gqa4'
      ssub+=':*DecodeScores*sinks_page16_sq4_left300_splits3:ForwardScoresEdges.*:BackwardScoresEdges.EmptyCallsZeroDsinks'
      for tool in memcheck racecheck; do
        timeout ${SAN_TIMEOUT:-300} compute-sanitizer --tool $tool --error-exitcode 9 $BIN/test_gpu --gtest_brief=1 \
          --gtest_filter="${SSAN_FILTER:-$ssub}" > "$OUT/s_$tool.log" 2>&1
        echo "score $tool rc=$?"; tail -2 "$OUT/s_$tool.log"
      done ;;
    dsdpa)
      python3 benchmarks/sdpa_decode.py --json "$OUT/decode_sdpa.json" 2>&1 | tee "$OUT/decode_sdpa.txt" ;;
    sdpa)
      python3 benchmarks/sdpa_bench.py --seq $SEQS --dhead $DHEADS --both-masks --json "$OUT/sdpa.json" 2>&1 | tee "$OUT/sdpa.txt" ;;
  esac
done
