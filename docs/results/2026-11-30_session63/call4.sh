#!/usr/bin/env bash
# Session 63, call 4: the last wave in pieces (bwd_03, 80-row steps, dense full non-deterministic calls).
# P = this tree (bundle.txz); P0 = the same binary with FLASH_NO_TAIL=1 (no pieces). carry [".gpu"].
source benchmarks/device_call.sh
dc_setup P > /dev/null
"$B/test_gpu" --gtest_filter='*LastWaveInPieces*' 2>&1 | grep -E "^\[ +(OK|FAILED)|Failure|error" | head -10
{ dc_abn "P P0" 'bwd/auto/' \
    "--kernel auto --dhead 128 --seq 8192 --batch 2 --heads 16" "--kernel auto --dhead 128 --seq 16384 --batch 1 --heads 16" \
    "--kernel auto --dhead 128 --seq 4096 --batch 4 --heads 16" "--kernel auto --dhead 128 --seq 2048 --batch 8 --heads 16"
} > "$O/ab.txt" 2>&1
dc_summary P0 P "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-48,58-100
timeout 60 "$B/runner" --bwd --kernel wgmma --batch 9 --seq 170 --seq-k 1000 --heads 4 --heads-kv 2 --dhead 128 2>&1 | tail -3
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 9 --seq 170 --seq-k 1000 --heads 4 --heads-kv 2 --dhead 128"
dc_tests '*Backward*:*Bwd*:Concurrency*:Fuzz*' 280 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head
grep -h -E "^\[ +OK" "$O/tests.txt" | sort -t'(' -k2 -n | tail -4
echo "total: $((SECONDS - DC_T0)) s"
