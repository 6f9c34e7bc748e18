#!/usr/bin/env bash
# Session 69, call 9c: issue 17's paged prefill in both libraries from one call. FA4's paged prefill
# (flash_attn_varlen_func with a page table, dense queries) against FA4's own contiguous call
# (fa4_paged_prefill.py: do_bench, L2 cleared before each call), and flash's ./bench --paged 16,256
# --flush always on the same cells (H = HEAD), so that flash's page 16 can be read against FA4's.
# Not predicted beyond: FA4's page 16 below its contiguous call too (it has no 16-key-page kernel).
# carry [".anchors/fa4-part2", ".gpu"].
set -u
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=docs/results/2026-12-01_session69
timeout 300 python3 $R/fa4_paged_prefill.py "$O/fa4_paged.json" 2>&1 | grep -v -E "Warning|warn" | tail -4
echo "fa4: $((SECONDS - DC_T0)) s"
for r in 1 2; do
  for c in "" "--causal"; do
    timeout 60 "$B/bench" --paged 16,256 --dhead 128 --kernel auto --flush always --seq 4096 --batch 4 --heads 16 $c 2>&1 |
      grep -E "^fwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  done
done | tee "$O/flash_paged.txt" | cut -c1-120
echo "total: $((SECONDS - DC_T0)) s"
