#!/usr/bin/env bash
# Session 43, call 1. G = the tree's h200 build (bundle). H = G + the last warpgroup's wait for
# the next slot before its hand-on, hdim 64's dynamic kernels only (session 42's prepared
# next_hand_on_wait_hdim64.patch). T = G + diag_tile_trace.patch (clock64 of tile boundaries,
# CTAs 0-7; dumped at exit to $FLASH_TRACE).
# 1. Traces (T): hdim 128 causal 4k / 8k, full 512 / 4k, (4096, 0) 16k; hdim 64 causal 4k.
# 2. H: the forward suites; memcheck / racecheck / synccheck on hdim 64's dynamic schedule.
# 3. A/B G H, two rounds.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
mkdir -p "$O/tr"
tr_run() {  # tr_run NAME FLAGS...
  local n=$1; shift
  FLASH_TRACE="$O/tr/$n.bin" timeout 60 "$G/T/bench" --min-time 0.1 "$@" --benchmark_filter='^fwd' 2>&1 |
    grep -E "^fwd|rror" | sed "s/^/$n /" >> "$O/trace_bench.txt"
}
tr_run c128_4k --seq 4096 --dhead 128 --causal --kernel wgmma_persistent
tr_run c128_8k --seq 8192 --dhead 128 --causal --kernel wgmma_persistent
tr_run f128_512 --seq 512 --dhead 128 --kernel wgmma_persistent
tr_run f128_4k --seq 4096 --dhead 128 --kernel wgmma_persistent
tr_run w128_16k --batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel wgmma_persistent
tr_run c64_4k --seq 4096 --dhead 64 --causal --kernel wgmma_persistent
tr_run f64_512 --seq 512 --dhead 64 --kernel wgmma_persistent
(cd "$O" && tar -cf traces.tar tr && rm -rf tr)
cat "$O/trace_bench.txt"
echo "traces: $((SECONDS - DC_T0)) s"
B=$G/H
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 150 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 64 --causal"
timeout 120 compute-sanitizer --tool synccheck --error-exitcode 9 "$B/runner" --kernel wgmma_persistent --batch 4 --heads 8 --heads-kv 2 --seq 1500 --seq-k 700 --dhead 64 --causal > "$O/synccheck.txt" 2>&1
echo "synccheck rc=$?"; grep -E "ERROR SUMMARY" "$O/synccheck.txt" | tee -a "$O/sanitizers.txt"
B=$G/bin
DC_BENCH_FLAGS="" dc_abn "G H" '^fwd' \
  "--seq 512 --dhead 64 --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" \
  "--seq 4096 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window 4096,0 --kernel auto" \
  "--seq 4096 --dhead 128 --causal --kernel auto" > "$O/ab.txt" 2>&1
dc_summary G H "$O/ab.txt" | tee "$O/ab_summary.txt"
grep -q "FAILED" "$O/tests.txt" || rm -f "$O/tests.txt"
rm -f "$O/memcheck.txt" "$O/racecheck.txt" "$O/synccheck.txt" "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
