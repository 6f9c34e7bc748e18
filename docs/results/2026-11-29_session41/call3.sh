#!/usr/bin/env bash
# Session 41, call 3 (diagnostic for issue 17, no change measured): since session 40's row-group
# K / V tiles, hdim 128's paged prefill runs at 0.90x of the contiguous cache at page 16 and
# 0.95x at page 256. ncu (base clocks) on fwd_09's kernel of one call each: contiguous, page 16,
# page 256 (4 x 4096, 16 heads, full), the same counters as session 34's forward diagnostic plus
# L2 / DRAM bytes; and the page-16 kernel's source counters (where its warps stall). Expectation,
# written before the call: page 16 shows more L2 sectors per tile (its boxes of 8-row groups)
# and the consumers' `wait` / barrier stalls per issue 10-20% higher than contiguous; the
# tensor pipe's active share drops by ~the 10%.
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
S="long_scoreboard wait gmma barrier mio_throttle short_scoreboard math_pipe_throttle membar lg_throttle branch_resolving no_instruction sleeping dispatch_stall not_selected selected misc"
M="gpu__time_duration.sum,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,lts__t_sector_hit_rate.pct,lts__t_sectors.sum,dram__bytes_read.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,l1tex__throughput.avg.pct_of_peak_sustained_elapsed,launch__registers_per_thread,launch__grid_size"
for s in $S; do M="$M,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
C="--dhead 128 --seq 4096 --batch 4 --heads 16 --kernel auto --min-time 0.02"
timeout 120 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --metrics "$M" "$B/bench" $C --paged 16 \
  --benchmark_filter='^fwd_paged_contig/' > "$O/ncu_contig.txt" 2>&1
timeout 120 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --metrics "$M" "$B/bench" $C --paged 16 \
  --benchmark_filter='^fwd_paged16/' > "$O/ncu_p16.txt" 2>&1
timeout 120 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --metrics "$M" "$B/bench" $C --paged 256 \
  --benchmark_filter='^fwd_paged256/' > "$O/ncu_p256.txt" 2>&1
timeout 180 ncu -k regex:fwd_ --launch-skip 3 --launch-count 1 --section SourceCounters --print-details all "$B/bench" $C --paged 16 \
  --benchmark_filter='^fwd_paged16/' > "$O/ncu_p16_source.txt" 2>&1
for f in "$O"/ncu_contig.txt "$O"/ncu_p16.txt "$O"/ncu_p256.txt; do echo "== $f"; grep -E "fwd_09|^ +[a-z_]+__" "$f" | cut -c1-150; done > "$O/summary.txt"
cat "$O/summary.txt" | head -120
grep -iE "stall|warp|Location|0x" "$O/ncu_p16_source.txt" | head -40
echo "total: $((SECONDS - DC_T0)) s"
