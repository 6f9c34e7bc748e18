#!/usr/bin/env bash
# Session 31, call 1 (H200). B = the tree (024d7b2). Three builds against it (A.txz):
#  Z = exp_bwd04_det_do_staging.patch: bwd_04's deterministic mode stages each warpgroup's dQ half
#      in the step's dO buffer once both warpgroups' dV is done (warpgroup 1 arrives on a named
#      barrier after its dV), and the dQ writer frees the Q/dO stage after reading the second half;
#      so dO gets its second stage back (the one dO stage cost ~9% in session 22). Only the 8
#      deterministic bwd_04 kernels change in SASS (-32..-48 instructions, no spills).
#      Predicted: hdim 256 deterministic +4-8% (det / non-det 0.875-0.891 -> 0.91-0.95).
#  X = exp_bwd80_mods.patch (session 30's prepared call 1): hdim 128 softcap / ALiBi calls on
#      bwd_03's 80-row steps (spills 16-56 B). Predicted +0-4%.
#  Y = exp_fwd_varlen_compact_grid.patch (session 30's prepared call 2): compact one-CTA-per-tile
#      varlen forward grid. Predicted +1.5-3% full, +2.5-4.5% causal.
# Then Z's correctness: the hdim 256 / deterministic / varlen backward tests (220) and memcheck /
# racecheck on a hdim 256 GQA causal runner case (both modes).
source benchmarks/device_call.sh
dc_setup B
d="--dhead 256 --kernel wgmma_wide"
{ dc_ab B Z 'det/' "--seq 8192 $d" "--seq 16384 $d" "--seq 8192 $d --causal" "--seq 16384 $d --causal"
  for c in "--seq 8192 $d" "--seq 16384 $d" "--seq 8192 $d --causal" "--seq 16384 $d --causal"; do
    timeout 30 "$B/bench" --bwd $c --benchmark_filter='bwd/wgmma_wide/' 2>&1 | grep -E "^bwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/B /"
  done
  c="--batch 1 --heads 16 --seq 16384 --dhead 128 --kernel wgmma"
  dc_ab B X 'bwd/wgmma/' "$c --causal --softcap 30" "--seq 8192 --dhead 128 --kernel wgmma --alibi"
  DC_BENCH_FLAGS="" dc_ab B Y 'fwd_varlen/wgmma_persistent' "--varlen --dhead 128 --heads 16" \
    "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 64 --heads 32 --causal" \
    "--varlen 100,3000,700,2048,5000,1,333 --dhead 128 --heads 8 --heads-kv 2"
} > "$O/ab.txt"
{ dc_summary B Z "$O/ab.txt"; dc_summary B X "$O/ab.txt"; dc_summary B Y "$O/ab.txt"; grep "^B bwd/wgmma_wide" "$O/ab.txt"; } | tee "$O/ab_summary.txt"
B=$G/Z
dc_tests '*Backward*d256*:*Bwd*d256*:BackwardScoresEdges.*:BackwardTiles.*:BackwardEdges.*:BackwardDeterminism.*:BackwardLayouts.*:BackwardChecker.*:VarlenBwdErrors.*:VarlenBwdEdges.*:VarlenBwdChecker.*:Cases/VarlenBwd.*' 250 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma_wide --batch 2 --seq 300 --seq-k 517 --heads 4 --heads-kv 2 --dhead 256 --causal" > /dev/null
cat "$O/sanitizers.txt"
echo "total: $((SECONDS - DC_T0)) s"
