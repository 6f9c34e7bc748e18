#!/usr/bin/env bash
# Prepared in session 53 for the next session's first decode call (carry [".gpu"]). Build here
# first, from the committed tree (W) and each patch of docs/results/2026-11-30_session53/:
#   for t in C:next_decode_combined W2:next_decode_w2 L:next_decode_lazy R:next_decode_small_page_runs; do
#     git apply docs/results/2026-11-30_session53/${t#*:}.patch && cmake --build build-gpu --target bench &&
#     mkdir -p /tmp/xb/${t%%:*} && cp build-gpu/bin/bench /tmp/xb/${t%%:*}/ && git checkout kernels/dec_01_splitkv.cu
#   done
#   bash benchmarks/pack_gpu.sh build-gpu       # W, after the loop (it deletes other .gpu/*.txz)
#   (cd /tmp/xb && tar cf - C W2 L R | xz -T2 --lzma2=preset=6,dict=192MiB > "$OLDPWD/.gpu/X.txz")
# For the suites and sanitizers on C, pack C's whole build as the bundle instead and W's bench as
# W/bench (predictions: docs/NOTES.md, session 53, "the decode loop together").
source benchmarks/device_call.sh
dc_setup W > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "W C W2 L R" '^decode' "" | tee "$O/ab.txt" > /dev/null
for t in C W2 L R; do dc_summary W $t "$O/ab.txt" us; done | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
