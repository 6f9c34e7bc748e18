#!/usr/bin/env bash
# Session 51, call 7 (carry [".gpu"]). F (bundle) = the final tree; S (S.txz) = session 50's final bench.
# hdim 64's 16-key pages, where L measured -0.7% (call 3, full) and call 6's table reads lower than
# session 50's: S / F rotated, three rounds, hdim 64 page 16 (full / causal, dense / packed), and
# hdim 128 page 16 as the reference.
source benchmarks/device_call.sh
dc_setup F > /dev/null
DC_BENCH_FLAGS="" dc_abn "S F" '^fwd_(varlen_)?paged16' \
  "--paged 16 --batch 4 --seq 4096 --dhead 64 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen --paged 16 --dhead 64 --heads 32 --kernel auto" \
  "--varlen --paged 16 --dhead 64 --heads 32 --causal --kernel auto" \
  "--varlen --paged 16 --dhead 128 --heads 16 --causal --kernel auto" > "$O/sf.txt"
DC_BENCH_FLAGS="" dc_abn "F S" '^fwd_(varlen_)?paged16' \
  "--paged 16 --batch 4 --seq 4096 --dhead 64 --causal --kernel auto" \
  "--varlen --paged 16 --dhead 64 --heads 32 --causal --kernel auto" >> "$O/sf.txt"
dc_summary S F "$O/sf.txt" | tee "$O/sf_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
