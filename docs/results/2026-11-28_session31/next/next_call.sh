#!/usr/bin/env bash
# Prepared in session 31 for the next session (not run: no device time left). ~3 minutes.
# The compact causal varlen grid (session 31, kept) orders each sequence's tiles with all its heads
# fastest: the single-tile grid's L2 sections (heads whose K/V fit in 16 MiB) are gone. Measured only
# on sequences of <= 5000 tokens (+2.1-4.9%); a long sequence's causal varlen call may lose what the
# sections gave dense calls (+1-6%, session 16). Builds:
#   F = the tree (bundle); O = exp_varlen_grid_off.patch (the compact grid off: the old grid);
#   S = exp_varlen_grid_l2_sections.patch (the compact grid, each sequence in the sections' order by
#       its own keys; lane j also reads sequence j's key count; dense kernels SASS-identical, no
#       local memory; a second fa3_l2_section taking the keys and pairs: making the first call it
#       changed every dense causal kernel's SASS, +64 instructions, so the loop is written twice).
# Predicted: 1 x 16k and 2 x 8k causal: F 1-5% under O, S = O within 1%; issue 17's 7 sequences:
# S within 1% of F (widths of 8-16 heads there).
# Build here: for X in O S: git apply next/exp_varlen_grid_<off|l2_sections>.patch, cmake --build
#   --preset h200 --target bench runner, mkdir -p /tmp/Npack/X && cp build-gpu/bin/{bench,runner}
#   /tmp/Npack/X/, git checkout kernels; then cmake --build --preset h200, benchmarks/pack_gpu.sh (F),
#   tar -cf - -C /tmp/Npack O S | xz -T2 --lzma2=preset=6,dict=192MiB > .gpu/A.txz; carry [".gpu"].
source benchmarks/device_call.sh
dc_setup F
cells=("--varlen 16384 --dhead 128 --heads 16 --causal" "--varlen 8192,8192 --dhead 128 --heads 16 --causal"
       "--varlen --dhead 128 --heads 16 --causal" "--varlen 16384 --dhead 64 --heads 32 --causal"
       "--varlen 8192,8192 --dhead 256 --heads 8 --causal")
for r in 0 1; do
  for c in "${cells[@]}"; do
    order="F O S"; [ $r = 1 ] && order="S O F"
    for t in $order; do
      timeout 60 "$G/$t/bench" $c --benchmark_filter='fwd_varlen/wgmma_persistent' 2>&1 |
        grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done
done > "$O/ab.txt"
{ dc_summary O F "$O/ab.txt"; dc_summary O S "$O/ab.txt"; } | tee "$O/ab_summary.txt"
# S's correctness if it is kept: its runner on varlen causal cases (every variant).
for a in "--dhead 128 --heads 4 --varlen 1,128,129,500,1333 --causal" "--dhead 64 --heads 6 --heads-kv 2 --varlen $(seq -s, 1 37 1500) --causal" \
         "--dhead 256 --heads 2 --heads-kv 1 --varlen 0,77,300 --causal"; do
  timeout 90 "$G/S/runner" --kernel all $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done > "$O/runner_s.txt" 2>&1
echo "runner S OK: $(grep -c '\[OK' "$O/runner_s.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner_s.txt")"
echo "total: $((SECONDS - DC_T0)) s"
