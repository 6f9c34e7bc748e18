#!/usr/bin/env bash
# Session 67, call 1: issue 16's softcap clause against the MUFU pipe's floor.
# For each cell of issue 16's causal rows (hdim 64 8k x 2 x 32, hdim 128 16k x 1 x 16), uncapped and
# capped (30, 50): `bench --kernel auto` (0.5 s, then 3 s) with nvidia-smi sampling the SM clock and
# power every 20 ms; then softcap_ceiling (the MUFU pair per visible score alone, its clock read in
# the kernel); ApiFuzz on the device; the MUFU count in the ceiling's SASS. carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
R=docs/results/2026-12-01_session67
nvcc -O3 -arch=sm_90a -o "$O/softcap_ceiling" $R/softcap_ceiling.cu
cuobjdump -sass "$O/softcap_ceiling" | grep -c MUFU | sed 's/^/MUFU instructions in the ceiling: /'
cell() {  # name, min-time, flags
  local name=$1 mt=$2
  shift 2
  nvidia-smi --query-gpu=clocks.sm,power.draw,clocks_event_reasons.active --format=csv,noheader,nounits -lms 20 > "$O/smi_$name.csv" &
  local p=$!
  sleep 0.3
  "$B/bench" --kernel auto --min-time "$mt" "$@" 2>&1 | grep -E "^fwd|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$name /"
  kill $p; wait $p 2>/dev/null
  python3 - "$O/smi_$name.csv" "$name" <<'P'
import sys, statistics
rows = [l.split(",") for l in open(sys.argv[1]) if l.strip()]
busy = [(float(c), float(p), r.strip()) for c, p, r in rows if float(p) > 300]
if busy:
    cl = [c for c, _, _ in busy]; pw = [p for _, p, _ in busy]
    reasons = sorted(set(r for _, _, r in busy))
    print(f"{sys.argv[2]} clock under load: median {statistics.median(cl):.0f} MHz (min {min(cl):.0f}, max {max(cl):.0f}), "
          f"power median {statistics.median(pw):.0f} W, {len(busy)} samples > 300 W, reasons {reasons}")
P
  rm -f "$O/smi_$name.csv"
}
{
for mt in 0.5 3; do
  cell d64_causal_$mt $mt --dhead 64 --seq 8192 --batch 2 --heads 32 --causal
  cell d64_cap30_$mt $mt --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --softcap 30
  cell d64_cap50_$mt $mt --dhead 64 --seq 8192 --batch 2 --heads 32 --causal --softcap 50
  cell d128_causal_$mt $mt --dhead 128 --seq 16384 --batch 1 --heads 16 --causal
  cell d128_cap30_$mt $mt --dhead 128 --seq 16384 --batch 1 --heads 16 --causal --softcap 30
done
for i in 1 2; do
  "$O/softcap_ceiling" 2 32 8192 pairs
  "$O/softcap_ceiling" 2 32 8192 single
  "$O/softcap_ceiling" 1 16 16384 pairs
done
} 2>&1 | tee "$O/cells.txt"
for i in 1 2 3; do "$B/test_cpu" --gtest_filter='ApiFuzz*' 2>&1 | grep -E "PASSED|FAILED|seed" | head -4; done | tee "$O/apifuzz.txt"
echo "total: $((SECONDS - DC_T0)) s"
