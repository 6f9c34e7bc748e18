#!/usr/bin/env bash
# Session 43, call 4 (FA4 4.0.0b36 staged: call 3 unpacked part 1; carry [".anchors/fa4-part2", ".gpu"]).
# F = this tree's fwd_09 (session 42's hand-on + H) relinked into session 42's library (.gpu/F.txz;
# every other object unchanged). Issue 19's forward table at every seq (512 ... 16k), flash / FA4 /
# cuDNN at one timing; issue 18's backward at hdims 64 / 128; hdim 256's deterministic ratio.
source .anchors/fa4-part2/install.sh > /dev/null 2>&1 || { echo "fa4 not staged"; exit 3; }
python3 -c 'import tarfile, sys; [tarfile.open(a).extractall(".gpu") for a in sys.argv[1:]]' .gpu/bundle.txz .gpu/F.txz
export LD_LIBRARY_PATH=$PWD/.gpu/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
T0=$SECONDS
for s in 8192 16384; do for c in "" "--causal"; do
  # shellcheck disable=SC2086
  .gpu/F/bench --bwd --batch $((16384 / s)) --heads 8 --seq $s --dhead 256 $c --kernel auto 2>&1 | grep -E "^bwd" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
done; done | tee "$OUT/bwd256_det.txt"
echo "det: $((SECONDS - T0)) s"
timeout 380 python3 benchmarks/fa4_fwd_matched.py .gpu/F/bench "$OUT/fwd_matched.json" 512,1024,2048,4096,8192,16384 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$OUT/fwd_matched.txt"
echo "fwd: $((SECONDS - T0)) s"; tail -2 "$OUT/fwd_matched.txt"
timeout 150 python3 benchmarks/fa4_bwd_matched.py .gpu/F/bench "$OUT/bwd_matched.json" 64,128 2>&1 |
  grep -v -E "Warning|warn|exe_args" > "$OUT/bwd_matched.txt"
echo "bwd: $((SECONDS - T0)) s"; tail -2 "$OUT/bwd_matched.txt"
