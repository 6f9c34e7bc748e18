#!/usr/bin/env bash
# Prepared in session 33 (not run). exp_fwd_early_q_release.patch: in the hdim 128 forward (the
# only persistent Config with Q in registers), each consumer warp releases the Q tile right after
# its ldmatrix of Q, not after the tile's last S = Q K^T, so the persistent producer loads the
# next tile's Q while this tile runs (before: the next Q's load latency sat between tiles,
# behind only the last P V and the epilogue). SASS (here): 20 of 52 fwd_09 kernels change by a
# few instructions, no new stack. Build: A = the tree's bench (/tmp/Ypack/A), the bundle with the
# patch applied (benchmarks/pack_gpu.sh), A.txz as in next_call.sh.
# Predicted: hdim 128 (128, 0) window (2 key tiles per query tile) +3-8%; hdim 128 full 2k +0.5-1%,
# 16k 0; causal 1k-4k (dynamic schedule) +0.5-1.5%; issue 17's varlen +0.5-1%; hdim 64 / 256 0
# (SASS-identical kernels).
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
W128="--seq 16384 --dhead 128 --batch 1 --heads 16"
DC_BENCH_FLAGS="" dc_abn "A N" '^fwd' "$W128 --causal --window 128,0 --kernel auto" "$W128 --causal --window 512,0 --kernel auto" \
  "--seq 2048 --dhead 128 --kernel auto" "--seq 16384 --dhead 128 --kernel auto" "--seq 2048 --dhead 128 --causal --kernel auto" \
  "--seq 4096 --dhead 128 --causal --kernel auto" "--seq 8192 --dhead 64 --causal --kernel auto" \
  "--varlen --dhead 128 --heads 16 --kernel wgmma_persistent" "--varlen --dhead 128 --heads 16 --causal --kernel wgmma_persistent" > "$O/ab.txt" 2>&1
dc_summary A N "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Forward*:*VarlenForward*:*PagedPrefill*:Concurrency*' 300
dc_runner "--dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal" "--dhead 128 --heads 2 --seq 1000 --window 128,0 --causal" \
  "--dhead 128 --heads 4 --varlen 1,128,129,500 --causal" "--dhead 128 --heads 4 --seq 333"
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal" \
  "$B/runner --kernel wgmma_persistent --dhead 128 --heads 2 --seq 2000 --window 128,0 --causal"
echo "total: $((SECONDS - DC_T0)) s"
