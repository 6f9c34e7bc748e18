#!/usr/bin/env bash
# Session 63, call 10: the grouped order where the rule takes it but no call measured it (hdim 256 causal 4k,
# replay +5.5%), beside hdim 128 causal 8k (its measured case) and a GQA causal call. N = HEAD's kernels,
# N0 = the same binary with FLASH_BWD_NOGROUP=1 (the grid's order). carry [".gpu"].
source benchmarks/device_call.sh
dc_setup N > /dev/null
{ dc_abn "N0 N" 'bwd/auto/' \
    "--kernel auto --dhead 256 --seq 4096 --batch 4 --heads 8 --causal" \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16 --causal" \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16 --heads-kv 4 --causal"
} > "$O/ab.txt" 2>&1
dc_summary N0 N "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-56,66-130
echo "total: $((SECONDS - DC_T0)) s"
