#!/usr/bin/env python3
"""Reads diag_tile_trace.patch's dumps (clock64 of tile boundaries, CTAs 0-7).
Per consumer warpgroup c, events [8c + e]: 0 tile start (slot read), 1 Q ready,
2 K(0) ready, 3 first turn, 4 step 0's softmax done, 5 last PV's turn, 6 run
done, 7 epilogue done. Producer [24 + e]: 0 slot published, 1 Q issued, 2 K(0)
issued, 3 last K issued, 4 last V issued, 5 next index back, 6 index, 7 key tiles."""
import sys, struct
import numpy as np

# Layout: diag_tile_trace.patch (call 1): 32 events a tile, 8 per warpgroup, the producer at 24;
# diag_tile_trace2.patch (call 5): 48, 12 per warpgroup (8 finalize done, 9 first barrier done,
# 10 second barrier done, 11 setup done), the producer at 36.
EV, WS, PR = 32, 8, 24

def load(path):
    a = np.fromfile(path, dtype=np.int64)
    global EV, WS, PR
    if a.size == 8 * 160 * 48:
        EV, WS, PR = 48, 12, 36
    return a.reshape(8, 160, EV)

def fit(x, y):
    x = np.asarray(x, float); y = np.asarray(y, float)
    if len(x) < 3 or np.ptp(x) == 0:
        return float('nan'), float(np.mean(y)) if len(y) else float('nan')
    A = np.vstack([x, np.ones_like(x)]).T
    (m, b), *_ = np.linalg.lstsq(A, y, rcond=None)
    return m, b

def main(path, wgs):
    a = load(path)
    print(f"== {path} ({wgs} consumer warpgroups)")
    rows = []
    for cta in range(8):
        t = a[cta]
        # The array is not cleared between launches: keep the last launch's
        # run of tiles (each tile's first turn after the one before).
        ks = []
        for k in range(160):
            if not (t[k, PR + 7] > 0 and t[k, 7] > 0):
                break
            if ks and t[k, 3] <= t[ks[-1], 3]:
                break
            ks.append(k)
        for k in ks:
            n = int(t[k, PR + 7])
            r = {'cta': cta, 'k': k, 'n': n}
            for c in range(wgs):
                e = t[k, WS * c: WS * c + WS]
                r[c] = e
            r['p'] = t[k, PR:PR + 8]
            r['next'] = t[k + 1] if k + 1 in ks else None
            rows.append(r)
    if not rows:
        print("no tiles"); return
    ns = np.array([r['n'] for r in rows])
    print(f"tiles traced {len(rows)}; key tiles per tile min {ns.min()} max {ns.max()} mean {ns.mean():.1f}")
    names = ['Q wait (1-0)', 'K0 wait (2-1)', 'turn wait (3-2)', 'step 0 (4-3)', 'loop (5-4)', 'last PV (6-5)', 'epilogue (7-6)']
    for c in range(wgs):
        print(f"-- warpgroup {c}: mean cycles per tile")
        for i, nm in enumerate(names):
            v = np.array([r[c][i + 1] - r[c][i] for r in rows])
            print(f"   {nm:16s} {v.mean():9.0f}  (median {np.median(v):8.0f})")
        gaps = [r['next'][WS * c] - r[c][7] for r in rows if r['next'] is not None]
        if gaps:
            print(f"   {'to next start':16s} {np.mean(gaps):9.0f}  (median {np.median(gaps):8.0f})")
        if WS == 12:
            for nm, a_, b_ in (('  setup (11-0)', 0, 11), ('  O zero, Q (1-11)', 11, 1), ('  finalize (8-6)', 6, 8),
                               ('  barrier 1 (9-8)', 8, 9), ('  O to smem, barrier 2 (10-9)', 9, 10), ('  TMA, LSE (7-10)', 10, 7)):
                v = np.array([r[c][b_] - r[c][a_] for r in rows])
                print(f"   {nm:16s} {v.mean():9.0f}  (median {np.median(v):8.0f})")
        # loop per step
        lp = [(r['n'] - 1, r[c][5] - r[c][4]) for r in rows if r['n'] > 1]
        m, b = fit(*zip(*lp)) if lp else (float('nan'), float('nan'))
        print(f"   loop fit: {m:8.0f} cycles per step + {b:8.0f}")
        per = [(r['n'], r['next'][WS * c + 3] - r[c][3]) for r in rows if r['next'] is not None]
        if per:
            m2, b2 = fit(*zip(*per))
            print(f"   period (first turn to next first turn) fit: {m2:8.0f} per step + {b2:8.0f} fixed = {b2 / m2 if m2 == m2 and m2 else float('nan'):.2f} steps")
    print("-- producer: mean cycles")
    pn = ['Q issue (1-0)', 'K0 issued (2-1)', 'last K (3-2)', 'last V (4-3)', 'next idx (5-4)']
    for i, nm in enumerate(pn):
        v = np.array([r['p'][i + 1] - r['p'][i] for r in rows])
        print(f"   {nm:16s} {v.mean():9.0f}  (median {np.median(v):8.0f})")
    # slot published vs consumer 0 reading it
    lag = np.array([r[0][0] - r['p'][0] for r in rows])
    print(f"   consumer 0's start - publish: mean {lag.mean():.0f} median {np.median(lag):.0f} (negative: never)")
    # K0 issue vs wg0 K0 ready
    l2 = np.array([r[0][2] - r['p'][2] for r in rows])
    print(f"   wg0 K(0) ready - K(0) issued: mean {l2.mean():.0f} median {np.median(l2):.0f}")
    # per-CTA timeline of first CTA
    print("-- CTA 0 timeline (cycles from its first tile's first turn): k n | wg starts/turn/end ...")
    r0 = [r for r in rows if r['cta'] == 0]
    if r0:
        base = r0[0][0][3]
        for r in r0[:20]:
            s = f"   k{r['k']:3d} n{r['n']:3d} "
            for c in range(wgs):
                e = r[c] - base
                s += f"| wg{c} turn {e[3]:8d} pv {e[5]:8d} end {e[7]:8d} "
            s += f"| prod pub {r['p'][0]-base:8d} k0 {r['p'][2]-base:8d} lastV {r['p'][4]-base:8d}"
            print(s)

if __name__ == '__main__':
    for arg in sys.argv[1:]:
        path, wgs = arg.split(':')
        main(path, int(wgs))
