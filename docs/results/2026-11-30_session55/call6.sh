#!/usr/bin/env bash
# Session 55, call 6 (carry [".gpu"]). Call 5: page 16's gap to the contiguous cache is the page-table
# lookups' latency (lookups replaced by their result: 139.5 us against contiguous 136.5 and HEAD's
# 148.4 at 16 x 8k one split). Q (Y.txz, decode-only build): pages of 16 / 32 keys take each tile's
# entries from shared memory, copied 8 tiles ahead by cp.async in the tiles' groups (kStagedTable);
# N = HEAD. Shuffled pool (the bench's default), --flush always, two rounds rotated.
# Predicted: page 16 at the heuristic's splits (2 at 16 x 8k, 32 at 1 x 128k) +1-3%; at one CTA an SM
# (splits 1 / 15) +5-8%, within ~2-3% of contiguous, so the one-wave split rule can take pages of 16 /
# 32; contiguous and page 256 unchanged (their kernels did not change but for 128 bytes of shared memory).
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N Q" '^decode' "" | tee "$O/ab.txt" > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "N Q" 'decode' \
  "--batch 16 --cache 8192 --page-size 16 --splits 1" "--batch 16 --cache 8192 --page-size 16 --splits 2" \
  "--batch 1 --cache 131072 --page-size 16 --splits 15" "--batch 1 --cache 131072 --page-size 16 --splits 16" \
  "--batch 16 --cache 8192 --page-size 32 --splits 1" "--batch 16 --cache 8192 --page-size 32 --splits 2" \
  "--batch 16 --cache 8192 --page-size 16 --dhead 64 --splits 1" "--batch 16 --cache 8192 --page-size 16 --dhead 64 --splits 2" \
  "--batch 16 --cache 8192 --dhead 64 --splits 1" \
  "--batch 16 --cache 8192 --page-size 16 --dhead 256 --splits 1" "--batch 16 --cache 8192 --page-size 16 --dhead 256" \
  "--batch 16 --cache 8192 --dhead 256" | tee "$O/ab_pages.txt" > /dev/null
{ dc_summary N Q "$O/ab.txt" us; dc_summary N Q "$O/ab_pages.txt" us; } > "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
