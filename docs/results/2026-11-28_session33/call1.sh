#!/usr/bin/env bash
# Session 33, call 1: exponentials on the FMA pipe under a softcap (issue 16: softcap <= 10% cost).
# A = session start (dd97731); V1 = the tree (kMods kernels: forward hdim 64 / 128 emulate 8 / 6
# of 16 n-tiles' exp2, bwd_03 6 of 16 / 2 of 8); V2 = (5, 4 / 4, 1); V3 = (11, 9 / 9, 4).
# Four binaries rotated per round, two rounds; then V1's tests, runner and sanitizers.
set -u
source benchmarks/device_call.sh
dc_setup V1 > /dev/null
TAGS="A V1 V2 V3"
S64="--seq 8192 --dhead 64 --batch 2 --heads 32 --causal"
S128="--seq 16384 --dhead 128 --batch 1 --heads 16 --causal"
FWD=("$S64 --softcap 30" "$S128 --softcap 30" "--seq 4096 --dhead 128 --softcap 30" "$S128 --alibi" "$S64 --alibi" "$S128" "$S64")
BWD=("$S64 --softcap 30" "$S128 --softcap 30" "$S128 --alibi")
rot() { local r=$1; set -- $TAGS; local n=$#; local i; for i in $(seq 0 $((n - 1))); do local k=$(( (i + r) % n + 1 )); echo -n "${!k} "; done; }
for r in 0 1; do
  for c in "${FWD[@]}"; do
    for t in $(rot $r); do
      timeout 60 "$G/$t/bench" $c --kernel auto --benchmark_filter=fwd 2>&1 | grep -E "^fwd|rror" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done
  for c in "${BWD[@]}"; do
    for t in $(rot $((r + 2))); do
      timeout 60 "$G/$t/bench" --bwd $c --kernel wgmma --benchmark_filter=bwd/wgmma/ 2>&1 | grep -E "^bwd|rror" |
        sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
    done
  done
done > "$O/ab.txt" 2>&1
echo "bench: $((SECONDS - DC_T0)) s"
for t in V1 V2 V3; do dc_summary A $t "$O/ab.txt"; done | tee "$O/ab_summary.txt"
dc_tests '*Scores*:*Window*:*VarlenForward*:*PagedPrefill*:ForwardEdges.*:BackwardTiles.*' 240
dc_runner "--dhead 128 --heads 4 --heads-kv 2 --seq 700 --seq-k 1333 --causal --softcap 15" \
  "--dhead 64 --heads 4 --seq 1000 --causal --softcap 30 --alibi" "--dhead 128 --heads 2 --seq 333 --alibi --window 100,50" \
  "--dhead 64 --heads 2 --varlen 1,160,161,700 --causal --softcap 20"
cat "$O/runner.txt" | tail -3
dc_sanitize "$B/runner --kernel wgmma_persistent --dhead 128 --heads 4 --heads-kv 2 --seq 300 --seq-k 555 --causal --softcap 15" \
  "$B/runner --bwd --kernel wgmma --dhead 64 --heads 4 --seq 300 --seq-k 555 --causal --softcap 15 --alibi"
echo "total: $((SECONDS - DC_T0)) s"
