#!/usr/bin/env bash
# Session 44, call 3: M = session 43's build + O staged by stmatrix (call 1); on M:
#   TR = diag_tile_trace2.patch (clock64 of tile boundaries, hdim 128; conflicts resolved by hand),
#   W  = the wait for a warpgroup's own P V pinned after the softmax at hdim 64 too (ptxas hoists a
#        plain wait above the softmax: session 35's ncu page has our hdim 64 warps waiting there,
#        FA4's not),
#   F  = no pingpong turn for a tile's first S or last P V (FA4's order): turns only between,
#   T4 = hdim 64 in four K / V stages.
# fwd_09 recompiled and relinked; A/B only. Runner checks of W, F, T4 first (30 s each at most).
set -u
source benchmarks/device_call.sh
dc_setup A > /dev/null
{
  for t in F W T4; do
    for c in "--dhead 128 --batch 2 --heads 4 --seq 100" "--dhead 128 --batch 2 --heads 4 --seq 300 --seq-k 129 --causal" \
             "--dhead 64 --batch 2 --heads 6 --seq 1100" "--dhead 64 --batch 2 --heads 4 --seq 1000 --seq-k 1300 --causal" \
             "--dhead 256 --batch 3 --heads 4 --seq 700 --seq-k 333" "--dhead 256 --batch 2 --heads 4 --seq 1500 --causal" \
             "--dhead 64 --batch 1 --heads 4 --seq 5000 --causal" "--dhead 128 --batch 1 --heads 4 --seq 130 --seq-k 5000"; do
      timeout 30 "$G/$t/runner" --kernel wgmma_persistent $c 2>&1 | grep -E "OK|FAIL|rror" | sed "s/^/$t /" || echo "$t TIMEOUT $c"
    done
  done
} > "$O/runner.txt" 2>&1
grep -c OK "$O/runner.txt"; grep -E "FAIL|rror|TIMEOUT" "$O/runner.txt" | head
mkdir -p "$O/tr"
tr_run() {  # tr_run NAME FLAGS...
  local n=$1; shift
  FLASH_TRACE="$O/tr/$n.bin" timeout 60 "$G/TR/bench" --min-time 0.1 "$@" --benchmark_filter='^fwd' 2>&1 |
    grep -E "^fwd|rror" | sed "s/^/$n /" >> "$O/trace_bench.txt"
}
tr_run f128_512 --seq 512 --dhead 128 --kernel wgmma_persistent
tr_run c128_4k --seq 4096 --dhead 128 --causal --kernel wgmma_persistent
tr_run w128_16k --batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel wgmma_persistent
(cd "$O" && tar -cf - tr | xz -6 > traces.tar.xz && rm -rf tr)
DC_BENCH_FLAGS="" dc_abn "M W F T4" '^fwd' \
  "--seq 2048 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" > "$O/ab.txt" 2>&1
DC_BENCH_FLAGS="" dc_abn "M F" '^fwd' \
  "--seq 512 --dhead 128 --kernel auto" "--seq 1024 --dhead 128 --causal --kernel auto" \
  "--seq 4096 --dhead 128 --causal --kernel auto" "--seq 8192 --dhead 128 --kernel auto" \
  "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel auto" \
  "--seq 512 --dhead 256 --kernel auto" "--seq 2048 --dhead 256 --causal --kernel auto" >> "$O/ab.txt" 2>&1
for t in W F T4; do dc_summary M $t "$O/ab.txt"; done | tee "$O/ab_summary.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
