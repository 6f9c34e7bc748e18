#!/usr/bin/env bash
# Session 26, call 1 (carry [".gpu"]: bundle.txz, diag2.txz with A D DG P G2 benches, call_waits.sh).
# 1. session 25's call_waits.sh (per-CTA timeline, det turn waits D vs DG, ncu L2 D vs DG);
# 2. A/B, two rotated rounds, ./bench --bwd ... --kernel wgmma (TFLOPS):
#    P  = exp_bwd_prefetch_maps.patch (non-det cells), prediction +0.2-0.5% at 8k, ~+1% at 2k;
#    G2 = exp_bwd_det_head_groups2.patch (det cells), prediction det/non-det 0.95-0.97 at hdim 128 8k
#    if four heads in flight were the L2 problem.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
t0=$SECONDS
OUT=$O/waits bash "$G/call_waits.sh" > "$O/waits.log" 2>&1
tar -C "$O/waits" -cJf "$O/waits.txz" . ; rm -rf "$O/waits"
echo "waits in $((SECONDS - t0)) s"
export LD_LIBRARY_PATH=$G/lib
ab() {  # ab FILTER VARIANT cells...
  local f=$1 v=$2; shift 2
  for r in 0 1; do for c in "$@"; do
    order="A $v"; [ $r = 1 ] && order="$v A"
    for t in $order; do
      # shellcheck disable=SC2086
      timeout 60 "$G/$t/bench" --bwd $c --kernel wgmma --benchmark_filter="$f" 2>&1 | grep -E "^bwd|ERROR|rror" \
        | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done; done
}
{
ab 'bwd/wgmma/' P "--seq 2048 --dhead 128" "--seq 8192 --dhead 128" "--seq 16384 --dhead 128" "--seq 8192 --dhead 64" "--seq 8192 --dhead 128 --causal"
ab 'bwd/wgmma-det/' G2 "--seq 8192 --dhead 128" "--seq 16384 --dhead 128" "--seq 8192 --dhead 128 --causal" "--seq 8192 --dhead 64" "--seq 16384 --dhead 64"
} | tee "$O/ab.txt"
echo "ab in $((SECONDS - t0)) s"
python3 - "$O/ab.txt" <<'P' | tee "$O/ab_summary.txt"
import re, sys, collections
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r'(\S+) bwd/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', l)
    if m: d[(m[3], m[2], m[1])].append(float(m[4]))
for k in sorted(set((a, b) for a, b, _ in d)):
    a = d.get(k + ('A',), [])
    for v in ('P', 'G2'):
        b = d.get(k + (v,), [])
        if a and b: print(f"{k[0]:45s} {k[1]:10s} A {sum(a)/len(a):7.1f} {v} {sum(b)/len(b):7.1f} {100*(sum(b)/len(b)/(sum(a)/len(a))-1):+5.1f}%  ({a} {b})")
P
