#!/usr/bin/env bash
# Session 68, call 8 (session 67's call 15 on R, call 5's kept tree): issue 17's paged prefill against the contiguous cache, timed as ./bench times
# (back to back, each call timed alone: a paged call's host work for its metadata check and its
# forward is exposed at each call's start) and with --flush always (256 MB cleared before each call,
# as do_bench times FA4: the host enqueues the call meanwhile). hdim 128, bf16, pages of 16 and 256
# (shuffled pool), 4 x 4096 full / causal and issue 17's packed batch full / causal; two rounds.
# carry [".gpu"] (R/bench in R.txz; the bundle is call 7's P, dropped).
set -u
source benchmarks/device_call.sh
dc_setup P > /dev/null
{
for r in 1 2; do
  for fl in auto always; do
    for c in "--seq 4096 --batch 4 --heads 16" "--seq 4096 --batch 4 --heads 16 --causal" "--varlen --heads 16" "--varlen --heads 16 --causal"; do
      # shellcheck disable=SC2086
      timeout 60 "$G/R/bench" --paged 16,256 --dhead 128 --kernel auto --flush $fl $c 2>&1 | grep -E "^fwd" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/flush_$fl /"
    done
  done
done
} 2>&1 | tee "$O/paged.txt"
python3 - "$O/paged.txt" <<'P'
import collections, re, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"(\S+) (fwd_\w+)/auto/(\S+?)/.*TFLOPS=([\d.]+)", l)
    if m: d[(m[1], m[3], m[2])].append(float(m[4]))
for (fl, shape, fam) in sorted(d):
    if "contig" in fam or fam == "fwd_varlen": continue
    base = d.get((fl, shape, "fwd_paged_contig")) or d.get((fl, shape, "fwd_varlen"))
    v = sum(d[(fl, shape, fam)]) / len(d[(fl, shape, fam)])
    if base:
        b = sum(base) / len(base)
        print(f"{fl:13s} {shape:45s} {fam:22s} {v:7.1f} / {b:7.1f} = {v / b:.3f}")
P
echo "total: $((SECONDS - DC_T0)) s"
