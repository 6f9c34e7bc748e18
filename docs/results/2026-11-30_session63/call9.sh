#!/usr/bin/env bash
# Session 63, call 9: narrow windows' key blocks even first, then odd (E1 = FLASH_BWD_PARITY=1), so that the
# CTAs running together add their dQ to disjoint tiles, against the same binary without it (E). carry [".gpu"].
source benchmarks/device_call.sh
dc_setup E > /dev/null
{ dc_abn "E E1" 'bwd/auto/' \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --window 128,0" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --window 256,0" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --window 512,0" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --window 4096,0" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal"
} > "$O/ab.txt" 2>&1
dc_summary E E1 "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-56,66-130
echo "total: $((SECONDS - DC_T0)) s"
