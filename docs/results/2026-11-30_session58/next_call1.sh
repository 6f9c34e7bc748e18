#!/usr/bin/env bash
# Prepared in session 58 for the next session's first call (carry [".gpu"]). Binaries:
#   F  = HEAD (bundle; pack_gpu.sh build-gpu).
#   X1, X2, X4 = HEAD + next_H_early_pairs.patch with FLASH_X_EARLY_PAIRS 1 / 2 / 4 (edit the
#        #define's default, `ninja -C build-gpu bench`, copy bench to X<n>/), each also with
#        next_L64_no_lazy_rescale_hdim64.patch applied (a forward change: the fwd rows of X1 / X2 / X4
#        are the same code, L64; the bwd rows differ only in H). Then revert both, rebuild, and
#        `tar cf - X1 X2 X4 | xz -T1 --lzma2=preset=6,dict=192MiB > .gpu/X.txz` after packing
#        (pack_gpu.sh deletes .gpu's other files). If the carry is over 64 MiB, move test_cpu and
#        test_c_api_gpu out of build-gpu/bin before packing.
# H (NOTES session 58): bwd_03 reads the first 1 / 2 / 4 LSE pairs of a step before the wait for S^T
# and the first dpsum pairs before the wait for dP^T (session 53's ncu: 7% of hdim 128's stall
# samples on the exponentials' FFMAs waiting for their LSE loads, 2.5% on dS's FADDs; FA4's 0.1%).
# Predicted: hdim 128 +1-3% both modes, hdim 64 0 to +2%; X4 >= X2 >= X1 if the loads' latency is
# what the FFMAs wait for. L64 (fwd rows): hdim 64 -1 to +1.5%.
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_abn "F X1 X2 X4" '^bwd/' \
  "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --kernel wgmma" \
  "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" "--seq 16384 --dhead 64 --causal --kernel wgmma" > "$O/ab_bwd.txt" 2>&1
for x in X1 X2 X4; do dc_summary F $x "$O/ab_bwd.txt"; done | tee "$O/ab_bwd_summary.txt"
DC_BENCH_FLAGS="" dc_abn "F X2" '^fwd' \
  "--seq 4096 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" \
  "--seq 8192 --dhead 64 --causal --kernel auto" "--seq 2048 --dhead 64 --causal --kernel auto" > "$O/ab_fwd.txt" 2>&1
dc_summary F X2 "$O/ab_fwd.txt" | tee "$O/ab_fwd_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
