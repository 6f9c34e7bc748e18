#!/usr/bin/env bash
# Session 48, call 6 (carry [".gpu"]). The final tree's build (bundle.txz: Z + C, comments
# aside the code of calls 1 and 5): every backward and decode suite (12 shards), then the
# deterministic / non-deterministic ratio at hdim 256 (issue 18), two rounds.
source benchmarks/device_call.sh
dc_setup F > /dev/null
dc_tests '*Backward*:*Bwd*:Decode*:*/Decode*' 330 12 > "$O/tests_summary.txt" 2>&1
grep -c "^\[       OK" "$O/tests.txt" | sed 's/^/tests OK: /'
grep -E "^\[  FAILED|FAILED  \]" "$O/tests.txt" | sort -u | head -10
grep -E "shard|PASSED|FAILED" "$O/tests_summary.txt" | tr '\n' ' '; echo
rm -f "$O/tests.txt"
{ dc_abn "F" '^bwd/' \
  "--seq 8192 --dhead 256 --kernel wgmma_wide" "--seq 8192 --dhead 256 --causal --kernel wgmma_wide" \
  "--seq 16384 --dhead 256 --kernel wgmma_wide" "--seq 16384 --dhead 256 --causal --kernel wgmma_wide"; } > "$O/ab.txt" 2>&1
python3 - "$O/ab.txt" <<'P' | tee "$O/ratio.txt"
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'\S+ bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', line)
    if m: d[(m[2], m[1])].append(float(m[3]))
for shape in sorted(set(s for s, _ in d)):
    a, b = d.get((shape, "wgmma_wide"), []), d.get((shape, "wgmma_wide-det"), [])
    if a and b:
        ma, mb = sum(a) / len(a), sum(b) / len(b)
        print(f"{shape:46s} non-det {ma:6.1f} det {mb:6.1f} ratio {mb / ma:.3f}  {a} {b}")
P
echo "total: $((SECONDS - DC_T0)) s"
