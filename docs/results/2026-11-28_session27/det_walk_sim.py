#!/usr/bin/env python3
"""Session 27: session 25's model of the ordered dQ additions (det_order_sim.py), extended by a
second scheme for causal calls.

desc (today): key blocks launched in descending order per pair, each walks its query tiles
  upwards from its diagonal, and adds to a tile after key block n + 1 did.
asc_rev (proposal): key blocks launched in ascending order (longest first, as the
  non-deterministic grid), each walks its query tiles DOWNWARDS (last tile first, diagonal
  last), and adds to a tile after key block n - 1 did. Deadlock-free for the same reason as
  today: a block waits only for blocks of its pair launched before it.
"""
import heapq, random, sys

def simulate(H, N, M, causal, rows, s, L, scheme, det, sig=0.0, sigL=0.0, slots=132, seed=1, g=1):
    rnd = random.Random(seed)
    first = [(n * 128) // rows if causal else 0 for n in range(N)]
    if scheme == 'desc':
        order = []
        for g0 in range(0, H, g):
            for n in reversed(range(N)):
                order += [(h, n) for h in range(g0, min(H, g0 + g))]
        pred, walk = (lambda n: n + 1), (lambda n: range(first[n], M))
    else:
        order = []
        for g0 in range(0, H, g):
            for n in range(N):
                order += [(h, n) for h in range(g0, min(H, g0 + g))]
        pred, walk = (lambda n: n - 1), (lambda n: reversed(range(first[n], M)))
    done, free, end = {}, [0.0] * slots, 0.0
    for (h, n) in order:
        c = prev = heapq.heappop(free)
        d, above = {}, done.get((h, pred(n))) if det else None
        for m in walk(n):
            c = max(c + s * max(0.2, 1 + sig * rnd.gauss(0, 1)), prev)
            w = max(c, above[m]) if above is not None and m in above else c
            prev = d[m] = w + L * max(0.2, 1 + sigL * rnd.gauss(0, 1))
        done[(h, n)] = d
        heapq.heappush(free, prev)
        end = max(end, prev)
    return end

if __name__ == '__main__':
    cells = [("hdim 128 causal 8k, 64 rows", 32, 64, 128, True, 64, 2.1),
             ("hdim 128 causal 16k, 64 rows", 16, 128, 256, True, 64, 2.1),
             ("hdim 64 causal 8k, 128 rows", 64, 64, 64, True, 128, 3.6),
             ("hdim 64 causal 16k, 128 rows", 32, 128, 128, True, 128, 3.6),
             ("hdim 256 causal 8k, 64 rows, 80 keys", 16*2, 103, 128, True, 64, 4.0)]
    for name, H, N, M, causal, rows, s in cells:
        print("==", name)
        for L, sig, sigL in [(1.0, 0.1, 0.5), (2.0, 0.1, 0.5), (3.0, 0.1, 0.5)]:
            base = simulate(H, N, M, causal, rows, s, L, 'asc_rev', False, sig, sigL)
            r = [f"{k}{'' if g == 1 else ' g' + str(g)} {base / simulate(H, N, M, causal, rows, s, L, k, True, sig, sigL, g=g):.3f}"
                 for k in ['desc', 'asc_rev'] for g in (1, 2)]
            print(f"  L {L} us (jitter step {sig}, link {sigL}): det " + ", ".join(r))
