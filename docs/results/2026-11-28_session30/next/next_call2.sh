#!/usr/bin/env bash
# Prepared in session 30 for the next session (not run: no device time left; ~4 minutes).
# Y = exp_fwd_varlen_compact_grid.patch: variable-length forward calls (SeqLayout::per_sequence)
# on a compact one-CTA-per-tile grid (Fa3VarlenTileScheduler: sequence by sequence, query block
# fastest then head; causal longest block first, heads fastest), FlashAttention-4's grid, instead
# of max_seqlen_q blocks x heads x batch with 38% of the CTAs exiting at once at issue 17's shape
# (fa4_varlen_fwd_reading.md, experiment 1). Compiled here: every dense / paged forward kernel
# SASS-identical (sass_diff.py), no spills; the per_sequence kernels change their scheduler only.
# Predicted (the reading): +1.5-3% full, +2.5-4.5% causal on issue 17's 7 sequences; hdim 64 alike.
# Build here: git apply next/exp_fwd_varlen_compact_grid.patch, cmake --build --preset h200
#   --target bench runner test_gpu, mkdir -p /tmp/Ypack/Y && cp build-gpu/bin/{bench,runner,test_gpu}
#   /tmp/Ypack/Y/, git checkout kernels, cmake --build --preset h200, benchmarks/pack_gpu.sh (B),
#   tar -cf - -C /tmp/Ypack Y | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz; carry [".gpu"].
source benchmarks/device_call.sh
dc_setup B
DC_BENCH_FLAGS="" dc_ab B Y 'fwd_varlen/wgmma_persistent' "--varlen --dhead 128 --heads 16" \
  "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 64 --heads 32 --causal" \
  "--varlen 100,3000,700,2048,5000,1,333 --dhead 128 --heads 8 --heads-kv 2" > "$O/ab.txt"
dc_summary B Y "$O/ab.txt" | tee "$O/ab_summary.txt"
# Y's correctness: the runner's varlen forward (every variant) and the varlen suites of Y's test_gpu.
for a in "--dhead 128 --heads 4 --varlen 1,128,129,500,1333" "--dhead 64 --heads 3 --varlen 1,2,190,400 --causal" \
         "--dhead 256 --heads 2 --heads-kv 1 --varlen 0,77,300 --causal" "--dhead 128 --heads 4 --varlen 1,300,700 --paged 16"; do
  timeout 60 "$G/Y/runner" --kernel all $a 2>&1 | grep -E "OK|FAIL|rror"
done > "$O/runner_y.txt" 2>&1
echo "runner OK: $(grep -c 'OK\]' "$O/runner_y.txt"), FAIL: $(grep -c FAIL "$O/runner_y.txt")"
B_SAVE=$B; B=$G/Y; dc_tests 'Varlen*:*/Varlen*:Paged*:*/Paged*' 240; B=$B_SAVE
timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 "$G/Y/runner" --kernel wgmma_persistent --dhead 128 --heads 4 \
  --varlen 1,128,129,500 > "$O/racecheck.txt" 2>&1; echo "racecheck rc=$?"; grep -E "RACECHECK SUMMARY" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
