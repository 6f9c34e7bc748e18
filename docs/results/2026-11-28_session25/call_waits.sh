#!/usr/bin/env bash
# Prepared in session 25 for the next session's device time (NOT yet run; the first try printed
# from the dQ writer thread, and printf after setmaxnreg.dec 24 is an illegal instruction).
# Two diagnostics of bwd_03 (builds D = diag_D.patch on 79f34e1 or later, DG = diag_DG.patch,
# the same plus the head-group launch order of results/2026-11-27_session24):
#  1. per-CTA timeline, non-deterministic, hdim 128 full at 2k / 8k / 16k (16k tokens x 16
#     heads): kernel entry, K and V landed, step 0 done, last step done, dK/dV stored, for the
#     CTAs of batch 0, KV head 0 (where the ~15-20 us per CTA of NOTES "Where the hdim 128 full
#     time goes" sits);
#  2. deterministic turn waits per CTA (total, first step, first half) for batch 0, KV heads 0
#     and 5, hdim 128 and 64 full 8k, in D and DG (why head groups help hdim 64, not 128).
# Both store into __device__ arrays that a one-thread kernel (diag_print) prints after each call.
# Build: for P in D DG: git apply diag_$P.patch; cmake --build --preset h200 --target bench;
# copy build-gpu/bin/bench to /tmp/diag2/$P/; git checkout kernels tests. Then
# (cd /tmp/diag2 && tar -cf - D DG | xz -T1 --lzma2=preset=6,dict=192MiB) > .gpu/diag2.txz, with
# .gpu/bundle.txz (benchmarks/pack_gpu.sh) for the libraries; one call, carry [".gpu"], ~1 min.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/DG" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/diag2.txz" "$G"
[ -d "$G/lib" ] || python3 -c 'import tarfile, sys; t = tarfile.open(sys.argv[1]); t.extractall(sys.argv[2], members=[m for m in t.getmembers() if m.name.startswith("lib")])' "$G/bundle.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
for s in 2048 8192 16384; do
  timeout 60 "$G/D/bench" --bwd --seq $s --dhead 128 --kernel wgmma --min-time 0.05 --benchmark_filter='bwd/wgmma/' > "$O/raw.txt" 2>&1
  grep -E "^bwd|ERROR" "$O/raw.txt" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  grep "^CTA" "$O/raw.txt" | tail -$((s / 128)) > "$O/cta_$s.txt"
done | tee "$O/bench_cta.txt"
for t in D DG; do for d in 128 64; do
  timeout 60 "$G/$t/bench" --bwd --seq 8192 --dhead $d --kernel wgmma --min-time 0.05 --benchmark_filter='bwd/wgmma-det/' > "$O/raw.txt" 2>&1
  grep -E "^bwd|ERROR" "$O/raw.txt" | sed "s/^/$t d$d /" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
  grep "^DIAG" "$O/raw.txt" | tail -128 > "$O/waits_${t}_d$d.txt"
done; done | tee "$O/bench_det.txt"
rm -f "$O/raw.txt"
# 3. The L2 side of the head groups at hdim 128 (four heads' Q, dO and dQ accumulator in flight
#    instead of two: 32 MB against 16): ncu's memory sections of the deterministic kernel, D and DG.
for t in D DG; do
  timeout 90 ncu -k regex:dkv --launch-skip 3 --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    "$G/$t/bench" --bwd --seq 8192 --dhead 128 --kernel wgmma --min-time 0.02 --benchmark_filter='bwd/wgmma-det/' > "$O/ncu_det_$t.txt" 2>&1
  echo "$t: $(grep -E "Duration|L2 Hit Rate|DRAM Throughput" "$O/ncu_det_$t.txt" | tr -s ' ' | tr '\n' ';')"
done | tee "$O/ncu_det.txt"
python3 - "$O" <<'P' | tee "$O/summary.txt"
import sys, glob, os
def rows(f, tag):
    return [dict(zip(l.split()[1::2], map(int, l.split()[2::2]))) for l in open(f) if l.startswith(tag)]
for f in sorted(glob.glob(os.path.join(sys.argv[1], "cta_*.txt"))):
    rs = rows(f, "CTA")
    if not rs: print(f, "no rows"); continue
    m = lambda a, b: sum(r[b] - r[a] for r in rs) / len(rs) / 1e3
    print(f"== {os.path.basename(f)}: {len(rs)} CTAs; mean us: entry->kv {m('entry','kv'):.2f}, kv->step0 {m('kv','step0'):.2f}, "
          f"step0->last {m('step0','last'):.1f}, last->stored {m('last','stored'):.2f}, entry->stored {m('entry','stored'):.1f}")
    t0 = min(r["entry"] for r in rs)
    for r in sorted(rs, key=lambda r: r["n"])[::max(1, len(rs) // 8)]:
        print(f"   n {r['n']:3d} entry {(r['entry']-t0)/1e3:8.1f} kv {(r['kv']-t0)/1e3:8.1f} step0 {(r['step0']-t0)/1e3:8.1f} last {(r['last']-t0)/1e3:8.1f} stored {(r['stored']-t0)/1e3:8.1f}")
for f in sorted(glob.glob(os.path.join(sys.argv[1], "waits_*.txt"))):
    rs = rows(f, "DIAG")
    if not rs: print(f, "no rows"); continue
    t0 = min(r["start"] for r in rs)
    print("==", os.path.basename(f), "rows", len(rs))
    for h in sorted(set(r["h"] for r in rs)):
        hs = sorted((r for r in rs if r["h"] == h), key=lambda r: -r["n"])
        tot = sum(r["wait_total"] for r in hs) / len(hs); dur = sum(r["end"] - r["start"] for r in hs) / len(hs)
        print(f" h {h}: mean duration {dur/1e3:.1f} us, mean wait {tot/1e3:.1f} us ({100*tot/dur:.1f}%), first step "
              f"{sum(r['first'] for r in hs)/len(hs)/1e3:.1f} us, first half {sum(r['half'] for r in hs)/len(hs)/1e3:.1f} us")
        for r in hs[::8]:
            print(f"   n {r['n']:3d} start {(r['start']-t0)/1e3:8.1f} end {(r['end']-t0)/1e3:8.1f} wait {r['wait_total']/1e3:6.1f} "
                  f"first {r['first']/1e3:6.1f} half {r['half']/1e3:6.1f}")
P
