#!/usr/bin/env bash
# Prepared in session 58 for the next session's first call (carry [".gpu"]). Build: pack HEAD (bundle,
# tag F); apply next_L64_no_lazy_rescale_hdim64.patch, `ninja -C build-gpu bench`, copy bench into L/,
# revert, rebuild; `tar cf - L | xz -T1 --lzma2=preset=6,dict=192MiB > .gpu/L.txz` (after packing:
# pack_gpu.sh deletes .gpu's other files).
# L64: hdim 64's forward rescales O every tile (kLazyRescale off at hdim 64 only; every hdim 64 kernel
# of fwd_09 changes: dense walk / dynamic / grid, paged, varlen; fwd_10 keeps its own Config).
# Predicted (NOTES session 58 candidates): full 8k / 16k -1 to +1.5%, causal the same, short calls 0.
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "F L" '^fwd' \
  "--seq 4096 --dhead 64 --kernel auto" "--seq 8192 --dhead 64 --kernel auto" "--seq 16384 --dhead 64 --kernel auto" \
  "--seq 8192 --dhead 64 --causal --kernel auto" "--seq 16384 --dhead 64 --causal --kernel auto" \
  "--seq 2048 --dhead 64 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --window 4096,0 --kernel auto" \
  "--paged 16,256 --batch 2 --seq 8192 --heads 32 --dhead 64 --kernel auto" > "$O/ab.txt" 2>&1
dc_summary F L "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
