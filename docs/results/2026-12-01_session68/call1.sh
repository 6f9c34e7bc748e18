#!/usr/bin/env bash
# Session 68, call 1. (a) Session 67's call20: flash_ladder's overhead after the dense forward's part
# packing, and the Python GPU tests of the forward paths it serves. (b) Where page-16 / page-256
# prefill loses against the contiguous cache (hdim 128, bf16, shuffled pool), three builds rotated:
#   Z  = HEAD (the bundle);
#   E1 = paged K/V in the plain layout (no row groups: kRowGroups false, 4-D boxes; page 16 = 16
#        boxes a K tile over 8 lanes, page 256 = 2 boxes from one lane, as the contiguous cache);
#   E2 = no page-table loads (each box's page computed as b * max_pages + key / page_size: the
#        same amount of memory read, from the unshuffled part of the pool).
# Predictions (written before the call): E1 page 256 full 0.960 -> 0.98-0.99 if the row-group layout
# is what page 256 pays; page 16 unknown (more boxes, plain layout). E2 within +-1% (the lookups are
# batched a tile ahead).
# carry [".gpu"] (the bundle holds x/overhead, benchmarks/overhead/ built against HEAD's library).
set -u
source benchmarks/device_call.sh
dc_setup Z > /dev/null
(
export FLASH_LADDER_LIBRARY=$G/lib/libflash_c.so PYTHONPATH=python:python/tests FLASH_TEST_HEAD_DIM=64
(timeout 60 python3 benchmarks/overhead.py --cpp $G/x/overhead 2>&1 | grep -v -i warn | tail -9)
timeout 120 python3 -m pytest -x -q -p no:cacheprovider python/tests/test_gpu.py python/tests/test_torch_integration.py 2>&1 | tail -4
) 2>&1 | tee "$O/python.txt"
echo "python: $((SECONDS - DC_T0)) s"
export DC_BENCH_FLAGS=""
dc_abn "Z E1 E2" 'fwd' "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16" \
  "--paged 16,256 --dhead 128 --kernel auto --seq 4096 --batch 4 --heads 16 --causal" \
  "--paged 16,256 --dhead 128 --kernel auto --varlen --heads 16" > "$O/paged.txt" 2>&1
python3 - "$O/paged.txt" <<'P' | tee "$O/paged_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for l in open(sys.argv[1]):
    m = re.match(r"(\S+) (fwd_\w+)/auto/(\S+?)/.*TFLOPS=([\d.]+)", l)
    if m: d[(m[3], m[2], m[1])].append(float(m[4]))
mean = lambda v: sum(v) / len(v)
for shape in sorted({k[0] for k in d}):
    for fam in sorted({k[1] for k in d if k[0] == shape}):
        cells = []
        for t in ("Z", "E1", "E2"):
            v = d.get((shape, fam, t))
            base = d.get((shape, "fwd_paged_contig", t)) or d.get((shape, "fwd_varlen", t))
            if v: cells.append(f"{t} {mean(v):6.1f} ({mean(v) / mean(base):.3f})")
        print(f"{shape:42s} {fam:20s} " + "  ".join(cells))
P
grep -i -E "error|fail" "$O/paged.txt" | head -5
echo "total: $((SECONDS - DC_T0)) s"
