#!/usr/bin/env bash
# Session 25: bwd_03 at hdim 128 full over the sequence length (fixed 16k tokens x 16 heads, and
# 8k at half the CTAs), to fit a per-step time and a per-CTA overhead; then ncu durations of the
# backward's kernels at 8k x 2 and 16k x 1.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/bin" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/bundle.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
B=$G/bin
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
{
for r in 0 1; do
for c in "--seq 2048" "--seq 4096" "--seq 8192" "--seq 16384" "--seq 32768 --batch 1 --heads 8" \
         "--seq 8192 --batch 1" "--seq 8192 --batch 1 --heads 8" "--seq 16384 --heads 8" "--seq 4096 --causal" "--seq 8192 --causal" "--seq 16384 --causal"; do
  # shellcheck disable=SC2086
  timeout 60 "$B/bench" --bwd --dhead 128 $c --kernel wgmma --benchmark_filter='bwd/wgmma/' 2>&1 | grep -E "^bwd"
done; done
} | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | tee "$O/scaling.txt"
for c in "--seq 8192" "--seq 16384"; do
  # shellcheck disable=SC2086
  timeout 120 ncu --metrics gpu__time_duration.sum,sm__cycles_active.avg,smsp__cycles_active.avg --launch-skip 40 --launch-count 12 \
    "$B/bench" --bwd --dhead 128 $c --kernel wgmma --min-time 0.05 --benchmark_filter='bwd/wgmma/' > "$O/ncu_${c##* }.txt" 2>&1
  grep -E "^  [a-z_0-9]+.*\(|gpu__time_duration|sm__cycles_active" "$O/ncu_${c##* }.txt" | head -40
done
