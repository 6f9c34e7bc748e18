#!/usr/bin/env bash
# Session 68, call 4: issue 17's two clauses against flash's own dense calls, not re-measured since
# the early sessions: varlen forward >= 0.97x the dense call of as many sequences of the mean length
# (the same visible work for full calls; `./bench --varlen` prints both), and the varlen backward
# >= 0.95x the dense backward. hdim 128, bf16, 16 heads, FA4's 7 lengths; full and causal; two
# rounds; default timing and --flush always. Then flash_ladder's overhead again (call 1's host was
# slow throughout).
# carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup Z > /dev/null
{
for r in 1 2; do
  for fl in auto always; do
    for c in "" "--causal" "--bwd" "--bwd --causal"; do
      # shellcheck disable=SC2086
      timeout 90 "$B/bench" --varlen --heads 16 --dhead 128 --kernel auto --flush $fl $c 2>&1 |
        grep -E "^(fwd|bwd)" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/flush_$fl /"
    done
  done
done
} > "$O/varlen.txt" 2>&1
python3 - "$O/varlen.txt" <<'P' | tee "$O/varlen_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"(\S+) ((?:fwd|bwd)\w*)/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)", l)
    if m: d[(m[1], m[2], m[3], m[4])].append(float(m[5]))
for k in sorted(d):
    print(f"{k[0]:13s} {k[1]:14s} {k[2]:12s} {k[3]:44s} {sum(d[k]) / len(d[k]):7.1f}  {d[k]}")
P
export FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python
timeout 60 python3 benchmarks/overhead.py --cpp $G/x/overhead 2>&1 | grep -v -i warn | tail -12 | tee "$O/overhead.txt"
echo "total: $((SECONDS - DC_T0)) s"
