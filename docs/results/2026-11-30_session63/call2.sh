#!/usr/bin/env bash
# Session 63, call 2: G (masked non-deterministic dense backward calls take the (KV head, batch)
# pairs two at a time, key blocks ascending: BwdParams::head_group) against H (HEAD), two rotated
# rounds. carry [".gpu"] (bundle.txz = H, G.txz = G/bench).
source benchmarks/device_call.sh
dc_setup H > /dev/null
{ dc_abn "H G" 'bwd/auto/' \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16 --causal" "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --causal" \
    "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal" "--kernel auto --dhead 64 --seq 16384 --batch 1 --heads 32 --causal" \
    "--kernel auto --dhead 256 --seq 8192 --batch 2 --heads 8 --causal" "--kernel auto --dhead 256 --seq 16384 --batch 1 --heads 8 --causal" \
    "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16 --window 4096,0" "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16" \
    "--kernel auto --dhead 128 --seq 4096 --batch 4 --heads 16 --causal" "--kernel auto --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --sinks"
} > "$O/ab.txt" 2>&1
dc_summary H G "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
