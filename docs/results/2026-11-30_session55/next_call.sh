#!/usr/bin/env bash
# Prepared in session 55 for the next session (carry [".gpu"]); not run.
# (1) next_decode_staged_hdim64.patch: the staged page-table entries at hdim 64 too, with 16 slots
#     (kStages 6 needs >= 11; session 55's 8-slot hdim 64 kernel raced). Build decode-only benches:
#       cmake -S . -B build-dec -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90a \
#         -DFLASH_VARIANTS=splitkv -DFLASH_BUILD_TESTS=OFF -DFLASH_BUILD_APPS=OFF
#       N = HEAD's build-dec/bin/bench; P = the same with the patch applied; full build (bundle,
#       benchmarks/pack_gpu.sh) with the patch for the runner; X.txz = tar of N/bench, P/bench.
#     Prediction: hdim 64 page 16 at one split (forced) much closer to two splits' time (session 55's
#     racy kernel: 93.0 against 81.8), hdim 64 page 32 1 x 128k at 15 splits -3 to +3% against 32;
#     nothing elsewhere (hdim 128 / 256 kernels unchanged). If one split then wins at hdim 64, the
#     split rule (one_wave_loads) takes hdim 64's small pages and test_decode_splits.cpp follows.
# (2) call10.sh (session 55, refused): each decode kernel's time under ncu, three layouts.
# (3) next_decode_paged_deferred.patch (paged calls read the cache before the check's verdict, page
#     indices clamped): a third decode-only bench D against N on '^decode' (all nine cells), then, on
#     a full build with it, `compute-sanitizer --tool memcheck test_gpu --gtest_filter='DecodeErrors*'`
#     and the decode suites (dc_tests as in session 55's call 8). Prediction in NOTES (session 55).
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N P" 'page' \
  "--batch 16 --cache 8192 --page-size 16 --dhead 64 --splits 1" "--batch 16 --cache 8192 --page-size 16 --dhead 64 --splits 2" \
  "--batch 16 --cache 8192 --page-size 32 --dhead 64 --splits 1" "--batch 16 --cache 8192 --page-size 32 --dhead 64 --splits 2" \
  "--batch 1 --cache 131072 --page-size 32 --dhead 64 --splits 15" "--batch 1 --cache 131072 --page-size 16 --dhead 64 --splits 15" \
  "--batch 1 --cache 131072 --page-size 16 --dhead 64" | tee "$O/ab.txt" > /dev/null
dc_summary N P "$O/ab.txt" us > "$O/ab_summary.txt"
dc_sanitize "$B/runner --decode --batch 2 --cache 1300 --page-size 16 --dhead 64 --heads 8 --heads-kv 2 --splits 1" \
  "$B/runner --decode --batch 2 --cache 1300 --page-size 32 --dhead 64 --heads 8 --heads-kv 2 --splits 2"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
