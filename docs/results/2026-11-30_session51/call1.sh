#!/usr/bin/env bash
# Session 51, call 1 (carry [".gpu"]). The tree at session 50's end (bundle = its final build, S).
# 1. Session 50's two GPU cases not yet run (the paged suites, 16 shards).
# 2. Session 50's untimed routings: dense-query paged windows, (4096, 0) and (2048, 2048), on
#    pages of 16 and 256 beside the contiguous cache (bench's fwd_paged_contig row), hdims 64 / 128.
# 3. ncu (one launch each, base clocks): issue 17's packed batch, full, hdim 128, 16 heads:
#    the contiguous varlen call (dynamic schedule) and the page-16 call (the small-page grid
#    kernel, three stages), details page + source page, for src_opcodes.py.
source benchmarks/device_call.sh
dc_setup S > /dev/null
dc_tests '*Paged*' 150 16
DC_BENCH_FLAGS="" dc_abn "S" '^fwd' \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --window 4096,0 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 128 --window 2048,2048 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --heads 32 --window 4096,0 --kernel auto" \
  "--paged 16,256 --batch 4 --seq 4096 --dhead 64 --heads 32 --window 2048,2048 --kernel auto" > "$O/windows.txt"
cat "$O/windows.txt"
prof() {  # name, skip, command...
  local name=$1 skip=$2; shift 2
  timeout 150 ncu -k regex:fwd_09 --launch-skip "$skip" --launch-count 1 --section SpeedOfLight --section LaunchStats \
    --section Occupancy --section SchedulerStats --section WarpStateStats --section SourceCounters \
    --section MemoryWorkloadAnalysis -o "/tmp/$name" -f "$@" > "$O/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - DC_T0)) s"
  ncu -i "/tmp/$name.ncu-rep" --page details > "$O/$name.details.txt" 2>&1
  ncu -i "/tmp/$name.ncu-rep" --page source --print-source sass --csv 2>/dev/null | xz > "$O/$name.csv.xz"
}
V="--varlen --dhead 128 --heads 16 --kernel auto --min-time 0.02"
prof contig 3 "$B/bench" $V --benchmark_filter='fwd_varlen/auto/'
prof page16 3 "$B/bench" $V --paged 16 --benchmark_filter='fwd_varlen_paged16/auto/'
python3 docs/results/2026-11-28_session35/src_opcodes.py "$O/contig.csv.xz" "$O/page16.csv.xz" > "$O/ops.txt" 2>&1
head -50 "$O/ops.txt"
tar -C "$O" -cJf "$O/ncu.tar.xz" contig.details.txt page16.details.txt contig.csv.xz page16.csv.xz contig.log page16.log ops.txt \
  contig.lst page16.lst 2>/dev/null && rm -f "$O"/contig.* "$O"/page16.* "$O"/*.lst
rm -f "$O"/shard_*.txt
echo "total: $((SECONDS - DC_T0)) s"
