#!/usr/bin/env bash
# Prepared in session 58 for the next session's first call (carry [".gpu"]). READY at session 58's
# stop: .gpu/bundle.txz holds bin/bench and bin/test_gpu (HEAD, tag F) and A/, B/, C/bench as below
# (one xz stream, 36 MB). Rebuild it as below if the tree moved on. Binaries:
#   F = HEAD (the bundle: pack_gpu.sh build-gpu).
#   A = HEAD + next_H_early_pairs.patch (edit FLASH_X_EARLY_PAIRS's default to 2) + next_L64_no_lazy_rescale_hdim64.patch
#   B = HEAD + next_U64_desc_add64.patch
#   C = A + B
# For each: apply, `ninja -C build-gpu bench`, copy build-gpu/bin/bench to <tag>/, revert; then rebuild
# HEAD, pack, and `tar cf - A B C | xz -T1 --lzma2=preset=6,dict=192MiB > .gpu/X.txz` (pack_gpu.sh
# deletes .gpu's other files). If the carry is over 64 MiB, move test_cpu and test_c_api_gpu out of
# build-gpu/bin before packing.
# Predictions (NOTES session 58): H (A) hdim 128 backward +1-3%, hdim 64 0 to +2%; U64 (B) backward
# +0.5-1.5%, forward +-0.5%; C about their sum; L64 (A's forward rows at hdim 64) -1 to +1.5%.
source benchmarks/device_call.sh
dc_setup F > /dev/null
# The fuzz builders' bind_qkvo / bind_gradients (session 58's review) have not run on the H200 yet.
timeout 120 "$B/test_gpu" --gtest_filter='Fuzz*' > "$O/fuzz.txt" 2>&1; echo "fuzz rc=$?"
grep -E "^\[  (PASSED|FAILED)|Failure|FLASH_FUZZ_CASE" "$O/fuzz.txt" | head -10
dc_abn "F A B C" '^bwd/' \
  "--seq 8192 --dhead 128 --kernel wgmma" "--seq 16384 --dhead 128 --kernel wgmma" \
  "--seq 8192 --dhead 128 --causal --kernel wgmma" "--seq 16384 --dhead 128 --causal --kernel wgmma" \
  "--seq 8192 --dhead 64 --kernel wgmma" "--seq 8192 --dhead 256 --kernel wgmma_wide" > "$O/ab_bwd.txt" 2>&1
for x in A B C; do dc_summary F $x "$O/ab_bwd.txt"; done | tee "$O/ab_bwd_summary.txt"
DC_BENCH_FLAGS="" dc_abn "F A B" '^fwd' \
  "--seq 4096 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--seq 8192 --dhead 128 --kernel auto" "--seq 8192 --dhead 256 --kernel auto" > "$O/ab_fwd.txt" 2>&1
for x in A B; do dc_summary F $x "$O/ab_fwd.txt"; done | tee "$O/ab_fwd_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
