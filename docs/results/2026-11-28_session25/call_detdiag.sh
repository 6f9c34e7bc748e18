#!/usr/bin/env bash
# Session 25, diagnostic (not a change to land): deterministic mode with the dQ writer's turn
# not waited for (N: BwdDqOrder::wait_turn without its spin; the writer still frees the staging
# block only once its additions completed) against the tree (A), hdim 128 and 64, two rounds:
# how much of deterministic mode's cost is the order itself.
set -u
G=$(cd "$(dirname "$0")" && pwd)
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
[ -d "$G/N" ] || python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$G/diag.txz" "$G"
[ -d "$G/lib" ] || python3 -c 'import tarfile, sys; t = tarfile.open(sys.argv[1]); t.extractall(sys.argv[2], members=[m for m in t.getmembers() if m.name.startswith("lib")])' "$G/bundle.txz" "$G"
export LD_LIBRARY_PATH=$G/lib
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$O/gpu.txt"
cells=("--seq 8192 --dhead 128" "--seq 16384 --dhead 128 --causal" "--seq 8192 --dhead 128 --causal" "--seq 8192 --dhead 64")
for r in 0 1; do for c in "${cells[@]}"; do
  order="A N"; [ $r = 1 ] && order="N A"
  for t in $order; do
    # shellcheck disable=SC2086
    timeout 60 "$G/$t/bench" --bwd $c --kernel wgmma 2>&1 | grep -E "^bwd|ERROR" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
  done
done; done | tee "$O/detdiag.txt"
