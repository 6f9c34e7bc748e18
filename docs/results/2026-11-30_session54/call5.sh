#!/usr/bin/env bash
# Session 54, call 5 (carry [".gpu"]). Calls 1-4 changed the decode loop four ways (fewer
# instructions, bulk copies a row, tensor-map TMA, warps decoupled) and none moved the time: what
# bounds it? Z (X.txz): W with the key loop's compute removed (the copies, waits and barriers
# alone; wrong output). If Z ~ W, the loop's compute does not matter and the copies' pattern and
# the grid set the time. Then W against cuDNN timed alike on this machine (fa4_decode_matched.py
# without FA4: cuDNN alone), since W's times move 2-3% between device instances.
source benchmarks/device_call.sh
dc_setup W > /dev/null
DC_BENCH_FLAGS="--decode --flush always" dc_abn "W Z" '^decode.*contiguous' "" | tee "$O/ab.txt" > /dev/null
dc_summary W Z "$O/ab.txt" us | tee "$O/ab_summary.txt"
for r in 1 2; do
  for c in "--batch 16 --cache 8192 --splits 1" "--batch 16 --cache 8192 --splits 2" "--batch 16 --cache 8192 --splits 4" \
           "--batch 1 --cache 131072 --splits 32" "--batch 64 --cache 4096 --splits 1"; do
    for t in W Z; do
      timeout 60 "$G/$t/bench" --decode --flush always $c --benchmark_filter=contiguous 2>&1 | grep -E "^decode" |
        sed -E 's/ +[0-9.]+ us +[0-9.]+ us +[0-9]+//' | sed "s/^/r$r $t $c | /"
    done
  done
done | tee "$O/splits.txt"
timeout 300 python3 benchmarks/fa4_decode_matched.py "$G/W/bench" "$O/cudnn.json" 2 2>&1 | grep -v Warn | tail -5
echo "total: $((SECONDS - DC_T0)) s"
