#!/usr/bin/env bash
# Prepared in session 54 for the next session's first decode call (carry [".gpu"]); not run.
# Four benches, built here from HEAD (N) and three one-change trees (each patch applies to HEAD):
#   F: next_decode_table_prefetch.patch (pages of 16 / 32: the page table's line 16 tiles ahead in L2)
#   D: next_decode_deep_ring.patch (one wave of one CTA an SM: a 6-stage ring at hdim 128, 12 at 64)
#   T: next_decode_tma_one_wave.patch (call 3's tensor-map TMA, now only for contiguous calls of one
#      wave of one CTA an SM; ~114 kernels, dec_01 ~60 s)
#   O: call9's PROBE (one-split whole-tile kernels at 116 KB of shared memory: one CTA an SM past one
#      wave; the one-line edit in run() described in NOTES, "Call 9")
#   for t in N F:next_decode_table_prefetch D:next_decode_deep_ring T:next_decode_tma_one_wave; do
#     [ "$t" = N ] || git apply docs/results/2026-11-30_session54/${t#*:}.patch
#     cmake --build build-gpu --target bench && mkdir -p /tmp/xb/${t%%:*} && cp build-gpu/bin/bench /tmp/xb/${t%%:*}/
#     git checkout kernels/
#   done   # then O by hand; then the bundle (HEAD's full build, for dc_setup) and X.txz with F, D, T, O:
#   cmake --build build-gpu && bash benchmarks/pack_gpu.sh build-gpu
#   (cd /tmp/xb && tar cf - F D T O | xz -T2 --lzma2=preset=6,dict=192MiB > "$OLDPWD/.gpu/X.txz")
# Predictions (docs/NOTES.md, session 54): F page 16 +0-2% at two CTAs an SM, and at one CTA an SM
# (splits forced) within ~2% of contiguous if the table's misses are the cause; D +0-2% at 16 x 8k
# and 1 x 128k contiguous / page 256 (more tiles in flight at one CTA an SM), 64 x 4k unchanged; O
# +1-3% at 64 x 4k, 32 x 8k, 128 x 2k if fewer streams help past one wave; T: unknown (-3 to +3%
# at 16 x 8k and 1 x 128k contiguous; call 3 lost 3.4-4.5% at two CTAs an SM). The winner(s) then need
# the decode suites and the sanitizers (dc_tests / dc_sanitize, as in call 8).
source benchmarks/device_call.sh
dc_setup N > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N F D T O" '^decode' "" | tee "$O/ab.txt" > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N O" 'contiguous|page256' "--batch 32 --cache 8192" \
  "--batch 128 --cache 2048" "--batch 64 --cache 4096 --dhead 64" | tee "$O/ab_o.txt" > /dev/null
for t in F D T O; do dc_summary N $t "$O/ab.txt" us; done | tee "$O/ab_summary.txt"
dc_summary N O "$O/ab_o.txt" us | tee -a "$O/ab_summary.txt"
for r in 1 2; do
  for c in "--batch 16 --cache 8192 --splits 1" "--batch 16 --cache 8192 --splits 2" \
           "--batch 1 --cache 131072 --splits 16" "--batch 1 --cache 131072 --splits 32"; do
    for t in N F; do
      timeout 60 "$G/$t/bench" --decode --flush always $c --benchmark_filter=page16 2>&1 | grep -E "^decode" |
        grep -o "splits=.*" | sed "s/^/r$r $t $c | /"
    done
  done
done | tee "$O/splits.txt"
echo "total: $((SECONDS - DC_T0)) s"
