#!/usr/bin/env bash
# Session 30, call 8. V = .gpu/bundle.txz: variable-length hdim 128 backward calls without score
# modifiers on bwd_03's 80-row steps (each sequence padded by 256 rows in the row arrays,
# bwd_ws_seq_pad); B (.gpu/A.txz) = the tree's bench (backward code of c9fde3a; call 7's ncu showed
# varlen calls on the 64-row kernel: 2.03 ms, 378 M instructions, FA4 1.85 ms, 293 M).
# Predicted: issue 17's varlen backward +4-7% full, +3-5% causal (dense: 80 rows +4.9-5.4% full,
# +4.1% causal); deterministic likewise. Then the backward suites (4 shards) and sanitizers.
source benchmarks/device_call.sh
dc_setup V
dc_ab B V 'bwd_varlen/wgmma' "--varlen --dhead 128 --heads 16" "--varlen --dhead 128 --heads 16 --causal" \
  "--varlen 100,3000,700,2048,5000,1,333 --dhead 128 --heads 8 --heads-kv 2" > "$O/ab.txt"
dc_summary B V "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --dhead 128 --heads 4 --heads-kv 2 --varlen 1,80,81,200,700" \
  "$B/runner --bwd --kernel wgmma --dhead 128 --heads 2 --varlen 160,161,79,500 --causal"
dc_tests '*Backward*:*Bwd*:Concurrency*' 420
echo "total: $((SECONDS - DC_T0)) s"
