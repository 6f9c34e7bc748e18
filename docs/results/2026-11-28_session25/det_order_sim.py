#!/usr/bin/env python3
"""Session 25: a model of deterministic mode's ordered dQ additions in bwd_03.

Each (KV head, batch) pair has N key blocks; key block n walks query tiles first(n)..M-1
(causal: first(n) = n * 128 / rows), one step of s us each. Its writer adds step m's dQ block
when both its consumers staged it and key block n + 1 finished adding the same tile (the
descending order), taking L us; the consumers stage step m + 1 only after step m's addition
completed (one staging block). 132 slots take CTAs in launch order as they free. Step and link
times may jitter (Gaussian, relative). Prints det / non-det time ratios per launch order:
asc (non-deterministic), desc (deterministic today), dgG (G pairs interleaved).
"""
import heapq, random

def orders(H, N, kind):
    if kind == 'asc': return [(h, n) for h in range(H) for n in range(N)]
    if kind == 'desc': return [(h, n) for h in range(H) for n in reversed(range(N))]
    g = int(kind[2:]); out = []
    for g0 in range(0, H, g):
        hs = list(range(g0, min(H, g0 + g)))
        for n in reversed(range(N)):
            out += [(h, n) for h in hs]
    return out

def simulate(H, N, M, causal, rows, s, L, order, det, sig=0.0, sigL=0.0, slots=132, seed=1):
    rnd = random.Random(seed)
    first = [(n * 128) // rows if causal else 0 for n in range(N)]
    done, free, end = {}, [0.0] * slots, 0.0
    for (h, n) in order:
        c = prev = heapq.heappop(free)
        d, above = {}, done.get((h, n + 1)) if det else None
        for m in range(first[n], M):
            c = max(c + s * max(0.2, 1 + sig * rnd.gauss(0, 1)), prev)
            w = max(c, above[m]) if above is not None and m in above else c
            prev = d[m] = w + L * max(0.2, 1 + sigL * rnd.gauss(0, 1))
        done[(h, n)] = d
        heapq.heappush(free, prev)
        end = max(end, prev)
    return end

if __name__ == '__main__':
    cells = [("hdim 128 full 8k, 80 rows", 32, 64, 103, False, 80, 2.6),
             ("hdim 128 full 16k, 80 rows", 16, 128, 205, False, 80, 2.6),
             ("hdim 64 full 8k, 128 rows", 64, 64, 64, False, 128, 3.6),
             ("hdim 128 causal 8k, 64 rows", 32, 64, 128, True, 64, 2.1),
             ("hdim 128 causal 16k, 64 rows", 16, 128, 256, True, 64, 2.1)]
    for name, H, N, M, causal, rows, s in cells:
        print("==", name)
        for L, sig, sigL in [(1.0, 0.1, 0.5), (1.5, 0.1, 0.5), (2.0, 0.1, 0.5)]:
            base = simulate(H, N, M, causal, rows, s, L, orders(H, N, 'asc'), False, sig, sigL)
            ratios = [f"{k} {base / simulate(H, N, M, causal, rows, s, L, orders(H, N, k), True, sig, sigL):.3f}"
                      for k in ['desc', 'dg2', 'dg4']]
            nd = base / simulate(H, N, M, causal, rows, s, L, orders(H, N, 'desc'), False, sig, sigL)
            print(f"  L {L} us (jitter step {sig}, link {sigL}): det " + ", ".join(ratios) + f"; non-det desc {nd:.3f}")
