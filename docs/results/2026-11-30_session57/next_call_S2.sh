#!/usr/bin/env bash
# Prepared in session 57 (not run): S2 = next_S2_det_two_slot_staging.patch (bwd_04's deterministic
# dQ staging in two 16 KB slots, each freed once the writer's reduction has read it) against the
# tree it applies to (F, bundle). Build: apply the patch, `ninja -C build-gpu bench runner`, copy
# bench and runner to S2/, revert, rebuild, `benchmarks/pack_gpu.sh build-gpu`, then
# `tar cf - S2 | xz -T1 --lzma2=preset=6,dict=192MiB > .gpu/X.txz` (carry [".gpu"]).
source benchmarks/device_call.sh
dc_setup F > /dev/null
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
