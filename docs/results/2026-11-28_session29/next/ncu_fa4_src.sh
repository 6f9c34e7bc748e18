#!/usr/bin/env bash
# Prepared in session 29 (not run): ncu's source page of FlashAttention-4's backward kernel at hdim
# 128, full 8k (b2 x 8192, 16 heads), the same recipe that gave session 28's page of ours
# (results/2026-11-28_session28/call6_src/, summarized by src_summary.py). Question (session 29's
# reading, fa4_bwd_hdim128_reading.md, item 1): does FA4's HGMMA issue carry the same uniform
# descriptor moves (UMOV / UIADD3 before each of the 34 HGMMAs), and where do its "wait" and MIO
# stall samples fall? ~2 minutes. FA4 staged first; carry [".anchors/fa4-part2"].
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh || exit 3
timeout 300 ncu -k regex:BackwardSm90 --launch-skip 2 --launch-count 1 --section SourceCounters --section WarpStateStats \
  --page source --print-source sass --csv python3 docs/results/2026-11-28_session28/fa4_bwd_once.py 128 8192 \
  2> "$O/src_fa4_d128.err" | xz > "$O/src_fa4_d128.csv.xz"
echo "rc=$?"
python3 docs/results/2026-11-28_session28/src_summary.py "$O/src_fa4_d128.csv.xz" | tee "$O/src_fa4_summary.txt"
