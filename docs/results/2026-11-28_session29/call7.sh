#!/usr/bin/env bash
# Session 29, call 7 (H200, the session's last ~4 device minutes): I = the tree + the named dQ
# hand-off in hdim 128's 64-row kernels too (exp_named_hdim128_rows64.patch; they run narrow
# windows and short calls), F = the tree. A/B only, no tests (not landable this session).
# Predicted: (128, 0) window at 16k +2-4% (short steps, as at hdim 64), causal b8 x 2k +0-2%.
source benchmarks/device_call.sh
dc_setup X
c="--batch 1 --heads 16 --seq 16384 --dhead 128 --kernel wgmma"
dc_ab F I '.' "$c --causal --window 128,0" "--batch 8 --heads 16 --seq 2048 --dhead 128 --causal --kernel wgmma" > "$O/ab.txt"
dc_summary F I "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
