#!/usr/bin/env bash
# Session 38, call 2: where call 1's gather lost. A = session 37's final build; G = call 1's gather
# (consumers fence the async proxy after each K / V wait); G2 = G without that fence (a
# diagnostic: cp.async writes through the generic proxy, so the fence is needed somewhere);
# G4 = the fence on the producer side: each fill is released once the next is issued
# (cp.async.wait_group 1, fence.proxy.async, mbarrier.arrive), the consumers as in A.
set -u
source benchmarks/device_call.sh
dc_setup G > /dev/null
DC_BENCH_FLAGS="" dc_abn "A G G2 G4" '^fwd_(paged|varlen)' \
  "--paged 16,32 --batch 4 --seq 4096 --dhead 128 --heads 16 --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --heads 16 --causal --kernel auto" \
  "--varlen --paged 16 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16 --batch 2 --seq 8192 --dhead 64 --heads 32 --causal --kernel auto" \
  "--paged 16,256 --batch 2 --seq 8192 --dhead 256 --heads 8 --kernel auto" > "$O/ab_paged.txt" 2>&1
for t in G G2 G4; do dc_summary A $t "$O/ab_paged.txt"; done | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
