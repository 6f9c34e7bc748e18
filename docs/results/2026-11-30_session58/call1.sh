#!/usr/bin/env bash
# Prepared in session 57 for the next session's first call (carry [".gpu"]). Build: pack HEAD
# (bundle, tag F); apply next_S2_det_two_slot_staging.patch, `ninja -C build-gpu bench runner`,
# copy bench and runner into S2/, revert, rebuild; `tar cf - S2 | xz -T1 --lzma2=preset=6,dict=192MiB
# > .gpu/X.txz` (after packing: pack_gpu.sh deletes .gpu's other files).
# 1. Fuzz* on HEAD (the fuzz builders' refactor after session 57's last call has not run yet).
# 2. The decode question of NOTES "all 132 SMs": 128 pairs (16 x 8 KV heads) against 132 pairs
#    (33 x 4) at the same cache length, GB/s from bench's decode rows, --flush always.
# 3. S2 against F on hdim 256's deterministic backward, its runner and sanitizers.
source benchmarks/device_call.sh
dc_setup F > /dev/null
timeout 120 "$B/test_gpu" --gtest_filter='Fuzz*' > "$O/fuzz.txt" 2>&1; echo "fuzz rc=$?"
grep -E "^\[  (PASSED|FAILED)|Failure|FLASH_FUZZ_CASE" "$O/fuzz.txt" | head -10
for r in 1 2; do
  for shape in "--batch 16 --heads 32 --heads-kv 8" "--batch 33 --heads 16 --heads-kv 4" "--batch 32 --heads 16 --heads-kv 4"; do
    timeout 60 "$B/bench" --decode --kernel splitkv --cache 8192 --page-size 0 --flush always $shape 2>&1 |
      grep -E "^decode" | sed "s/^/round $r: /"
  done
done | tee "$O/decode_pairs.txt"
echo "decode: $((SECONDS - DC_T0)) s"
dc_abn "F S2" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide" > "$O/ab.txt" 2>&1
dc_summary F S2 "$O/ab.txt" | tee "$O/ab_summary.txt"
for a in "--dhead 256 --heads 2 --batch 2 --seq 600 --seq-k 300 --causal" "--dhead 256 --heads 4 --heads-kv 2 --batch 2 --seq 333 --seq-k 517 --window 100,20" \
         "--dhead 256 --heads 2 --batch 1 --seq 1000 --causal --softcap 30 --alibi"; do
  timeout 90 "$G/S2/runner" --bwd --kernel wgmma_wide $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
done
B=$G/S2 dc_sanitize "$G/S2/runner --bwd --kernel wgmma_wide --batch 1 --seq 300 --seq-k 200 --heads 2 --dhead 256 --causal"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
echo "total: $((SECONDS - DC_T0)) s"
