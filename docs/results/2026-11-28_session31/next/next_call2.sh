#!/usr/bin/env bash
# Prepared in session 31 (not run). ~1 minute. Where bwd_04's deterministic step time goes (issue 18's
# hdim 256 cell at 0.88-0.90 of non-deterministic; two layouts that gave dO its second stage back lost
# 1-7%, NOTES session 31). T = diag_det_writer.patch (clock() intervals summed per step over calls
# 11-30 of the process, printed once: the writer's turn wait, its waits for each half, each half's
# bulk read, completion + count; warpgroup 0's / 1's waits for the staging buffer, warpgroup 0's step
# and its wait for the stage). Only the 8 deterministic bwd_04 kernels change (one spilled pair in
# 2 of them, the writer's 24 registers). Read: if the turn wait dominates, the order (BwdDqOrder)
# is the cost; if the consumers' freed waits do, the staging buffer; if neither, the one dO stage.
# Build here: git apply next/diag_det_writer.patch, cmake --build --preset h200 --target bench,
#   mkdir -p /tmp/Tpack/T && cp build-gpu/bin/bench /tmp/Tpack/T/, git checkout kernels,
#   tar -cf - -C /tmp/Tpack T | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz; carry [".gpu"].
source benchmarks/device_call.sh
dc_setup B > /dev/null
d="--dhead 256 --kernel wgmma_wide"
for c in "--seq 8192 $d" "--seq 16384 $d" "--seq 8192 $d --causal" "--seq 16384 $d --causal"; do
  echo "== $c"
  timeout 40 "$G/T/bench" --bwd $c --benchmark_filter='det/' 2>&1 | grep -E "^bwd|DETDIAG" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
done | tee "$O/det_diag.txt"
