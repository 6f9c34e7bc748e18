#!/usr/bin/env bash
# Session 35, call 8 (FA4 4.0.0b36 staged in the two calls before; carry [".gpu", ".anchors/fa4-part2"]):
# issue 19's table at 8k and 16k on the final build (kTreeMax), flash / FA4 / cuDNN at one timing.
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || exit 3
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 280 python3 benchmarks/fa4_fwd_matched.py .gpu/bin/bench "$OUT/fwd_matched.json" 8192,16384
