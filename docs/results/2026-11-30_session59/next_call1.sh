#!/usr/bin/env bash
# Prepared in session 59 for the next session's first call (carry [".gpu"]). READY at session 59's
# stop: .gpu/bundle.txz is HEAD + next_C2_det_two_chains.patch (pack_gpu.sh: bench, runner,
# test_gpu, tag C2), .gpu/F.txz holds F/bench (HEAD). If the tree moved on, rebuild both: apply the
# patch, `ninja -C build-gpu`, `bash benchmarks/pack_gpu.sh build-gpu`, revert and rebuild, then
# `tar cf - F | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/F.txz` with HEAD's bench in F/.
# C2 (NOTES "Prepared for the next session: C2"): bwd_04's deterministic writer orders each
# warpgroup's half of the head dim on a counter of its own (kBwdDqChains = 2 counters per 64-row
# tile), so half 0's count no longer waits for half 1's turn, staging and additions.
# Predicted: hdim 256 deterministic +1-4% (0.89-0.91 -> 0.91-0.94 of non-deterministic),
# non-deterministic and bwd_03 unchanged (+-0.5%).
source benchmarks/device_call.sh
dc_setup C2 > /dev/null
timeout 40 "$B/runner" --bwd --kernel wgmma_wide --batch 1 --seq 300 --seq-k 200 --heads 2 --dhead 256 --causal > "$O/runner.txt" 2>&1
echo "runner rc=$?"; grep -E "FAIL" "$O/runner.txt" | head -3
dc_abn "F C2" '^bwd/' "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --kernel wgmma_wide" \
  "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab_bwd.txt" 2>&1
dc_summary F C2 "$O/ab_bwd.txt" | tee "$O/ab_summary.txt"
# bwd_03's counters moved too (two a tile, it uses the first): every backward suite.
dc_tests '*Backward*:*Bwd*' 250 8 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 1 --seq 130 --seq-k 100 --heads 2 --heads-kv 1 --dhead 256 --causal"
echo "total: $((SECONDS - DC_T0)) s"
