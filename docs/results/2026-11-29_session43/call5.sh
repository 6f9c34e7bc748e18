#!/usr/bin/env bash
# Session 43, call 5 (diagnostic): T2 = this tree + diag_tile_trace2.patch (call 1's trace with the
# epilogue and the setup split: finalize, first barrier, O to shared memory + second barrier,
# TMA store + LSE; the consumer's setup before O is zeroed). hdim 128 only.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
mkdir -p "$O/tr"
tr_run() {  # tr_run NAME FLAGS...
  local n=$1; shift
  FLASH_TRACE="$O/tr/$n.bin" timeout 60 "$G/T2/bench" --min-time 0.1 "$@" --benchmark_filter='^fwd' 2>&1 |
    grep -E "^fwd|rror" | sed "s/^/$n /" >> "$O/trace_bench.txt"
}
tr_run f128_512 --seq 512 --dhead 128 --kernel wgmma_persistent
tr_run f128_4k --seq 4096 --dhead 128 --kernel wgmma_persistent
tr_run c128_4k --seq 4096 --dhead 128 --causal --kernel wgmma_persistent
tr_run w128_16k --batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window 4096,0 --kernel wgmma_persistent
(cd "$O" && tar -cf - tr | xz -6 > traces.tar.xz && rm -rf tr)
cat "$O/trace_bench.txt"
rm -f "$O/gpu.txt"
echo "total: $((SECONDS - DC_T0)) s"
