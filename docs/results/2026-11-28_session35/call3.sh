#!/usr/bin/env bash
# Session 35, call 3 (after FA4 staging): session 34's prepared ncu comparison as it stood,
# results/2026-11-28_session34/next/next_ncu.sh (forward kernels' stall reasons at hdim 64 causal 8k
# and hdim 128 full 16k; the (128, 0) window backward's kernels one by one), flash against FA4.
bash docs/results/2026-11-28_session34/next/next_ncu.sh
