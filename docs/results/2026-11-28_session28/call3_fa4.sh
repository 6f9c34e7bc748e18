#!/usr/bin/env bash
# Session 28, call 3c: issue 18's table beside FlashAttention-4 and cuDNN on the tree (bf59966).
# Calls 3a / 3b carried .anchors/fa4-p1a / fa4-p1b and left /tmp/cu13.xz.0 and the extracted
# /tmp/fa4site (stage.sh's first call, split in two because of the 64 MiB carry limit).
# carry [".gpu", ".anchors/fa4-part2"].
set -u
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
source .anchors/fa4-part2/install.sh || exit 3
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
T0=$SECONDS
timeout 420 python3 benchmarks/fa4_bwd_matched.py .gpu/bin/bench "$O/bwd_matched.json" 64,128 2>&1 | tail -12 | tee "$O/bwd_matched.txt"
echo "matched: $((SECONDS - T0)) s"
for d in 64 128; do for m in "" "--causal"; do for s in 8192 16384; do
  timeout 60 .gpu/bin/bench --bwd --seq $s --dhead $d $m --kernel wgmma 2>&1 | grep -E "^bwd" |
    sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
done; done; done | tee "$O/flash_modes.txt"
echo "modes: $((SECONDS - T0)) s"
[ $SECONDS -lt 430 ] && timeout $((560 - SECONDS)) python3 .anchors/fa4-part2/fa4_bench.py --parts bwd --dheads 64,128 --json "$O/fa4_bwd.json" 2>&1 | tail -20 | tee "$O/fa4_bench.txt"
echo "total: $((SECONDS - T0)) s"
