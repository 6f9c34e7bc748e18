#!/usr/bin/env bash
# Session 46, call 5 (carry [".gpu"]). F (the kept tree: bwd_04's deterministic dP wait pinned, in
# session 45's library; every other kernel's SASS unchanged): the backward suites; then
# bwd_04's four hdim 256 cells in both modes, two rounds, for the deterministic ratio of one call.
source benchmarks/device_call.sh
rm -f .gpu/E.txz
dc_setup F > /dev/null
dc_tests '*Backward*:*Bwd*:Concurrency*' 330 8 | tail -20
for r in 1 2; do
  for c in "--seq 8192" "--seq 8192 --causal" "--seq 16384" "--seq 16384 --causal"; do
    timeout 60 "$B/bench" --bwd $c --dhead 256 --kernel wgmma_wide --benchmark_filter='^bwd/' 2>&1 | grep -E "^bwd" |
      sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  done
done > "$O/det_ratio.txt" 2>&1
python3 - "$O/det_ratio.txt" <<'P' | tee "$O/det_ratio_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', line)
    if m: d[(m[2], m[1])].append(float(m[3]))
for shape in sorted(set(s for s, _ in d)):
    nd, de = d.get((shape, "wgmma_wide"), []), d.get((shape, "wgmma_wide-det"), [])
    if nd and de:
        a, b = sum(nd) / len(nd), sum(de) / len(de)
        print(f"{shape:46s} non-det {a:6.1f} det {b:6.1f} det/non-det {b / a:.3f}  {nd} {de}")
P
echo "total: $((SECONDS - DC_T0)) s"
