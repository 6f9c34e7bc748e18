#!/usr/bin/env bash
# Session 25, diagnostic, prepared and NOT yet run (the session's device time ran out; its first
# try printed from the writer thread, which after setmaxnreg.dec 24 is an illegal instruction):
# the deterministic dQ writer's turn waits per CTA (globaltimer around BwdDqOrder::wait_turn,
# stored by the writer of every CTA of batch 0, KV heads 0 and 5 into a __device__ array that a
# one-thread kernel prints after each deterministic call), in the tree (D) and with the
# head-group launch order (DG), hdim 128 and 64 full 8k.
# Build (from 79f34e1 or later): git apply diag_turn_waits_dg.patch holds both the diagnostic and
# the head-group order (DG); the diagnostic alone is its bwd_03_wgmma.cu hunks that mention
# diag (D). Build bench for each, then: tar -cf - D DG | xz -T1 --lzma2=preset=6,dict=192MiB >
# .gpu/diag2.txz, with .gpu/bundle.txz from benchmarks/pack_gpu.sh for the libraries; one call
# with carry [".gpu"], about 20 s.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/DG" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/diag2.txz" "$G"
[ -d "$G/lib" ] || python3 -c 'import tarfile, sys; t = tarfile.open(sys.argv[1]); t.extractall(sys.argv[2], members=[m for m in t.getmembers() if m.name.startswith("lib")])' "$G/bundle.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
for t in D DG; do for d in 128 64; do
  timeout 60 "$G/$t/bench" --bwd --seq 8192 --dhead $d --kernel wgmma --min-time 0.05 --benchmark_filter='bwd/wgmma-det/' > "$O/raw.txt" 2>&1
  grep -E "^bwd" "$O/raw.txt" | sed "s/^/$t d$d /" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  grep "^DIAG" "$O/raw.txt" | tail -128 > "$O/waits_${t}_d$d.txt"
done; done | tee "$O/bench.txt"
rm -f "$O/raw.txt"
python3 - "$O" <<'P' | tee "$O/summary.txt"
import sys, re, glob, os
for f in sorted(glob.glob(os.path.join(sys.argv[1], "waits_*.txt"))):
    rows = [dict(zip(l.split()[1::2], map(int, l.split()[2::2]))) for l in open(f) if l.startswith("DIAG")]
    if not rows: print(f, "no rows"); continue
    t0 = min(r["start"] for r in rows)
    print("==", os.path.basename(f), "rows", len(rows))
    for h in sorted(set(r["h"] for r in rows)):
        rs = sorted((r for r in rows if r["h"] == h), key=lambda r: -r["n"])
        tot = sum(r["wait_total"] for r in rs) / len(rs); dur = sum(r["end"] - r["start"] for r in rs) / len(rs)
        print(f" h {h}: mean duration {dur/1e3:.1f} us, mean wait {tot/1e3:.1f} us ({100*tot/dur:.1f}%), first-step {sum(r['first'] for r in rs)/len(rs)/1e3:.1f} us, first half {sum(r['half'] for r in rs)/len(rs)/1e3:.1f} us")
        for r in rs[::8]:
            print(f"   n {r['n']:3d} start {(r['start']-t0)/1e3:8.1f} end {(r['end']-t0)/1e3:8.1f} wait {r['wait_total']/1e3:6.1f} first {r['first']/1e3:6.1f} half {r['half']/1e3:6.1f}")
P
