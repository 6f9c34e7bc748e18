#!/usr/bin/env bash
# Session 69, call 4: where page 16's per-step gap is. Call 3 (HEAD): page 16 / contiguous 0.946 at
# 1 x 16k and 0.942 at 4 x 4096, so the gap is per step, not per tile (1 x 16k has a quarter of the
# tile starts per step). Pages of 4096 keys (one page a sequence, through the same paged walk as
# page 256) and the pool unshuffled split it: paged 4096 ~ contiguous puts the gap in the page count
# (boxes, pages); paged 4096 ~ paged 256 (0.96) puts it in the paged kernels' code.
# H = HEAD (session 68's bundle).
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup H > /dev/null
{
for r in 1 2; do
  for po in shuffled sequential; do
    for c in "--seq 4096 --batch 4 --heads 16" "--seq 4096 --batch 4 --heads 16 --causal" "--seq 16384 --batch 1 --heads 16"; do
      # shellcheck disable=SC2086
      timeout 60 "$B/bench" --paged 16,32,256,4096 --dhead 128 --kernel auto --page-order $po $c 2>&1 | grep -E "^fwd" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$po /"
    done
  done
done
} 2>&1 | tee "$O/paged.txt" > /dev/null
python3 - "$O/paged.txt" <<'P'
import collections, re, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"(\S+) (fwd_\w+)/auto/(\S+?)/.*TFLOPS=([\d.]+)", l)
    if m: d[(m[1], m[3], m[2])].append(float(m[4]))
for (po, shape, fam) in sorted(d):
    if "contig" in fam: continue
    base = d.get((po, shape, "fwd_paged_contig"))
    v = sum(d[(po, shape, fam)]) / len(d[(po, shape, fam)])
    b = sum(base) / len(base)
    print(f"{po:11s} {shape:45s} {fam:18s} {v:7.1f} / {b:7.1f} = {v / b:.3f}  {d[(po, shape, fam)]}")
P
echo "total: $((SECONDS - DC_T0)) s"
