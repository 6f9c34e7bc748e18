#!/usr/bin/env bash
# Prepared in session 61 for the next session's first call (carry [".gpu"]; ~450 s: timeout_s 600).
# READY at session 61's stop (built from 5fd85b5): .gpu/bundle.txz holds bin/ = HEAD + next_F_mask_free_step.patch (bench, runner,
# test_gpu, ...; tag F) and H/bench = HEAD's kernels (6b2c9fd). If the kernels moved on, rebuild: apply the
# patch, ninja -C build-gpu, benchmarks/pack_gpu.sh, then add H/bench (tar | xz, 192 MiB dictionary).
# F: bwd_03's 80-row step body in two copies; the mask-free one (every step of a full call, all but the
# diagonal's of a causal one) reads the LSE pairs between the S^T and dP^T issues and the dpsum pairs before
# dP^T's wait, and waits for dP^T after st[0..3]'s exponentials (FlashAttention-4's order; a helper's reading
# of session 53's ncu pages). Every other kernel is SASS-identical to HEAD (cuobjdump, session 61).
# Measured in session 61 as D (with S, V loaded after the first stage, which F drops): call 9, H -> D: hdim 128
# full 8k / 16k +1.4% / +1.7%, causal 8k / 16k +1.1% / +0.7%; call 12 (N = S + D, the two-copy loop for every
# Config): +1.3% full 16k, +1.1% causal 8k, deterministic +1.3% / +0.3%, and beside FA4 0.997 / 1.008 / 0.991 /
# 1.001 (full 8k / 16k, causal 8k / 16k); hdim 64 -2.9 to -3.5% in N, which F avoids (its hdim 64 kernels are
# HEAD's). Not run as F: the device budget ran out. Predicted F against H: hdim 128 +0.7 to +1.7%, hdim 64 0.
# (Then R2's rule, below.) The call proves F (runner, every backward suite with threads and fuzz, memcheck and racecheck on 80-row
# full and causal cases; the tests include session 61's KvExpandedOverTheBatch, first run here) and times it against H. If it passes and gains: git apply the patch, commit, add the
# session-61 paragraph to bwd_03's header (NOTES "Session 61"), README issue-18 row.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
for a in "--seq 333 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" "--seq 300 --seq-k 200 --heads 2 --dhead 128 --causal" \
         "--seq 700 --heads 2 --dhead 128 --causal --window 128,0" "--batch 2 --seq 160 --seq-k 1000 --heads 2 --dhead 128 --causal" \
         "--seq 190 --heads 3 --heads-kv 1 --dhead 128 --window 40,7" "--seq 300 --seq-k 517 --heads 4 --heads-kv 1 --dhead 64 --causal"; do
  timeout 60 "$B/runner" --bwd --kernel wgmma $a 2>&1 | grep -E "OK|FAIL|rror" | head -4
done > "$O/runner.txt" 2>&1
echo "runner OK $(grep -c OK "$O/runner.txt") FAIL $(grep -c -E 'FAIL|rror' "$O/runner.txt")"
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*:ForwardLayouts.*' 240 8 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 1 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 128" \
  "$B/runner --bwd --kernel wgmma --batch 1 --seq 333 --seq-k 333 --heads 2 --heads-kv 1 --dhead 128 --causal" | grep -E "rc=|SUMMARY" | cut -c1-100
dc_abn "H F" 'bwd/wgmma/|det/' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --kernel wgmma" \
  "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" > "$O/ab.txt" 2>&1
dc_summary H F "$O/ab.txt" | tee "$O/ab_summary.txt"
# R2 (next_R2_ordered_narrow_windows.patch, not applied in either build): non-deterministic dense calls with a
# narrow window take the ordered (deterministic) kernels. Its rule from H's own rows: deterministic against
# non-deterministic at windows of 128, 256 and 512 keys, each head dim (one binary, both modes in one run).
for w in 128,0 256,0 512,0; do
  dc_abn "H" 'bwd/wgmma|det/' "--batch 1 --heads 16 --seq 16384 --dhead 128 --causal --window $w --kernel wgmma" \
    "--batch 2 --heads 32 --seq 8192 --dhead 64 --causal --window $w --kernel wgmma" \
    "--batch 2 --heads 8 --seq 8192 --dhead 256 --causal --window $w --kernel wgmma_wide"
done > "$O/windows.txt" 2>&1
grep -E "wgmma" "$O/windows.txt" | sed -E 's/ +/ /g' | cut -c1-150
echo "total: $((SECONDS - DC_T0)) s"
