#!/usr/bin/env bash
# Session 70, call 1 (session 69's call14.sh, prepared there): F, the consumers' sequence record fetched again for the epilogue instead of held
# through the K/V loop (`exp_F_record_refetched_for_epilogue.patch`). In the SASS (mufu_gaps.py) it
# unpacks the exponentials of one paged kernel, the packed-query paged grid (gaps of 4-7 instructions
# 8 -> 23 times a loop; the dense kernels' 27-29), which issue 17's full batch at page 256 runs; the
# paged walk and the 16-key-page kernel stay packed. A test of call 5's reading: if the packed MUFU
# order costs, that cell gains and the others do not.
# H = HEAD. Predicted: issue 17's batch full page 256 +1-3%; other cells +-1%.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
for a in "--paged 16,256 --varlen 1,128,129,500,0,3000 --heads 4" "--paged 256 --varlen 7,300,1000 --heads 4 --heads-kv 2"; do
  timeout 90 "$G/F/runner" --kernel auto --dhead 128 $a 2>&1 | grep -E "OK|FAIL|rror|xception" | head -12
done > "$O/runner.txt" 2>&1
echo "runner OK: $(grep -c 'OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
DC_BENCH_FLAGS="" dc_abn "H F" 'fwd' \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" \
  "--paged 256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" > "$O/ab.txt" 2>&1
dc_summary H F "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
echo "total: $((SECONDS - DC_T0)) s"
