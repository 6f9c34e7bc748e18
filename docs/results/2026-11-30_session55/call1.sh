#!/usr/bin/env bash
# Session 55, call 1 (carry [".gpu"]): session 54's prepared decode call (its next_call.sh).
# X.txz holds benches built with FLASH_VARIANTS=splitkv (build-dec): N = HEAD, F (next_decode_table_prefetch.patch), D (next_decode_deep_ring.patch),
# T (next_decode_tma_one_wave.patch), O (call 9's probe: one-split whole-tile kernels at 116 KB of
# shared memory). Predictions: docs/NOTES.md, session 54 ("Prepared for the next session").
source benchmarks/device_call.sh
dc_setup H > /dev/null   # H = HEAD's full bundle (unused here); N, F, D, T, O: decode-only benches (X.txz)
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N F D T O" '^decode' "" | tee "$O/ab.txt" > /dev/null
echo "ab: $((SECONDS - DC_T0)) s"
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N O" 'contiguous|page256' "--batch 32 --cache 8192" \
  "--batch 128 --cache 2048" "--batch 64 --cache 4096 --dhead 64" | tee "$O/ab_o.txt" > /dev/null
echo "ab_o: $((SECONDS - DC_T0)) s"
{ for t in F D T O; do dc_summary N $t "$O/ab.txt" us; done
  dc_summary N O "$O/ab_o.txt" us; } > "$O/ab_summary.txt"
for r in 1 2; do
  for c in "--batch 16 --cache 8192 --splits 1" "--batch 16 --cache 8192 --splits 2" \
           "--batch 1 --cache 131072 --splits 16"; do
    for t in N F; do
      timeout 60 "$G/$t/bench" --decode --flush always $c --benchmark_filter=page16 2>&1 | grep -E "^decode" |
        grep -o "splits=.*" | sed "s/^/r$r $t $c | /"
    done
  done
done > "$O/splits.txt"
echo "total: $((SECONDS - DC_T0)) s"
