#!/usr/bin/env bash
# Session 32, call 1 (~5 minutes): session 31's two prepared calls and the new dense-query tests.
# 1. next_call.sh (results/2026-11-28_session31/next/): F = the tree (bundle), O = the compact
#    causal varlen grid off, S = the compact grid in the L2 sections' order; 1 x 16k, 2 x 8k, issue
#    17's batch, hdim 64 1 x 16k, hdim 256 2 x 8k, causal. Predicted: long sequences F 1-5% under
#    O, S = O within 1%; issue 17's batch S within 1% of F.
# 2. next_call2.sh: T = diag_det_writer.patch, where bwd_04's deterministic step time goes.
# 3. VarlenForward's new dense-query cases (Packing::dense, seqused_k, no cu_seqlens) and the
#    paged suite's dense-query comparisons, on the tree.
set -u
bash docs/results/2026-11-28_session31/next/next_call.sh 2>&1 | tail -30
bash docs/results/2026-11-28_session31/next/next_call2.sh 2>&1 | tail -30
source benchmarks/device_call.sh
dc_setup F > /dev/null
timeout 200 "$B/test_gpu" --gtest_filter='*VarlenForward*dense_q*:*PagedPrefill*' 2>&1 | tail -4 | tee "$O/tests.txt"
echo "total: $((SECONDS - DC_T0)) s"
