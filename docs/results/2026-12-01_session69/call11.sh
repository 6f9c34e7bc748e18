#!/usr/bin/env bash
# Session 69, call 11: Hd, a bisection of the paged kernels' ~3.5% at pages of 4096 keys (call 4): the
# paged walk with the dense producer (thread 0, 4-D boxes of the plain layout over the page pool,
# page = the sequence: right only for one page a sequence in the sequential pool, these cells) and
# everything else paged (the consumers' per-sequence code, the epilogue, the schedule).
# H = HEAD. Predicted: if Hd's paged 4096 reaches contiguous, the producer side (its lane-parallel
# loop, lookups, 5-D boxes, spills) is the gap; if it stays at ~0.965, the consumers' side is.
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
DC_BENCH_FLAGS="" dc_abn "H Hd" 'fwd' \
  "--paged 4096 --page-order sequential --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 4096 --page-order sequential --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16384 --page-order sequential --dhead 128 --kernel auto --seq 16384 --batch 1 --heads 16" > "$O/ab.txt" 2>&1
dc_summary H Hd "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-110
python3 - "$O/ab.txt" <<'P'
import collections, re, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"(\S+) (fwd_\w+)/auto/(\S+?)/.*TFLOPS=([\d.]+)", l)
    if m: d[(m[1], m[3], m[2])].append(float(m[4]))
for (t, shape, fam) in sorted(d):
    if "contig" in fam: continue
    b = d[(t, shape, "fwd_paged_contig")]
    print(f"{t:3s} {shape:46s} {fam:16s} {sum(d[(t, shape, fam)]) / len(d[(t, shape, fam)]) / (sum(b) / len(b)):.3f} of contiguous")
P
echo "total: $((SECONDS - DC_T0)) s"
