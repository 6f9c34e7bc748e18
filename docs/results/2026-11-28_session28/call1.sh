#!/usr/bin/env bash
# Prepared for the next session (not run): 80-row steps for masked hdim 128 calls
# (exp_bwd03_rows80_masked.patch), A/B and the tests, and the CTA-edge diagnostic
# (diag_edges.patch, build E) in one call (~8 minutes).
# Build here: A = the tree (cmake --preset h200 && cmake --build --preset h200;
#   mkdir -p /tmp/Apack/A && cp build-gpu/bin/bench /tmp/Apack/A/), then
#   git apply docs/results/2026-11-28_session27/exp_bwd03_rows80_masked.patch, rebuild,
#   benchmarks/pack_gpu.sh (B), tar -cf - -C /tmp/Apack A | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz,
#   git checkout kernels; git apply docs/results/2026-11-28_session27/diag_edges.patch, rebuild
#   bench, mkdir -p /tmp/Apack/E && cp build-gpu/bin/bench /tmp/Apack/E/, git checkout kernels;
#   pack A and E together (tar -cf - -C /tmp/Apack A E | xz ... > .gpu/A.txz: ~16 MB);
#   cp this script to .gpu/; run: bash .gpu/next_call.sh, carry [".gpu"].
source benchmarks/device_call.sh
dc_setup B
{
  dc_ab A B 'bwd/wgmma' "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma"
  dc_ab A B 'bwd/wgmma/' "--seq 16384 --dhead 128 --window 4096,0 --kernel wgmma" "--seq 8192 --dhead 128 --kernel wgmma"
} | tee "$O/ab.txt"
dc_summary A B "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 128 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 2 --seq 1000 --heads 4 --dhead 128 --window 100,3"
dc_tests '*Backward*:*Bwd*:Concurrency*' 330
# The CTA edges (E prints every CTA's stamps after each call; the last call's 2048 lines kept):
# per CTA entry -> K/V -> dK/dV stored -> writer done -> exit, and the SM's gap to its next CTA.
for s in 2048 8192 16384; do
  timeout 60 "$G/E/bench" --bwd --seq $s --dhead 128 --kernel wgmma --min-time 0.05 --benchmark_filter='bwd/wgmma/' \
    > /tmp/edges_raw.txt 2>&1
  grep -E "^bwd|ERROR" /tmp/edges_raw.txt | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  grep "^EDGE" /tmp/edges_raw.txt | tail -2048 > /tmp/edges_$s.txt
done > "$O/edges.txt" 2>&1
python3 docs/results/2026-11-28_session27/edges_summary.py /tmp/edges_2048.txt /tmp/edges_8192.txt /tmp/edges_16384.txt \
  | tee -a "$O/edges.txt"
