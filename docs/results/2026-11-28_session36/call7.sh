#!/usr/bin/env bash
# Session 36, call 7 (FA4 4.0.0b36 staged in the two calls before; carry [".gpu", ".anchors/fa4-part2"]):
# issue 19's table at 8k and 16k on the kept build, flash / FA4 / cuDNN at one timing; then issue
# 16's forward rows (FA4_MODES=fwd; the backward did not change this session).
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' .gpu/bundle.txz .gpu
export LD_LIBRARY_PATH=$PWD/.gpu/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 250 python3 benchmarks/fa4_fwd_matched.py .gpu/bin/bench "$OUT/fwd_matched.json" 8192,16384 2>&1 | tail -3
FA4_MODES=fwd timeout 250 python3 benchmarks/fa4_features_matched.py .gpu/bin/bench "$OUT/features_matched.json" 2>&1 |
  grep -v -E "Warning|warn|exe_args" | tail -14
