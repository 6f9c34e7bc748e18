#!/usr/bin/env bash
# Session 63, call 1: where the backward's SMs idle. D = HEAD + a diagnostic (diag_edges63.patch):
# globaltimer stamps of every dkv CTA of the 30th call (SM, entry, consumer 0's stores, writer's end),
# for issue 18's cells (hdim 128 full / causal 8k, 16k; hdim 64 8k). Then HEAD's split
# OrderedDq tests (their first GPU run). carry [".gpu"].
source benchmarks/device_call.sh
dc_setup H > /dev/null
cell() {  # name, bench flags
  timeout 60 "$G/D/bench" --bwd --kernel auto --min-time 0.3 --benchmark_filter='bwd/auto/' $2 > "$O/e_$1.txt" 2>&1
  grep -E "^bwd" "$O/e_$1.txt" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//'
}
cell d128_full8k "--dhead 128 --seq 8192 --batch 2 --heads 16"
cell d128_full16k "--dhead 128 --seq 16384 --batch 1 --heads 16"
cell d128_causal8k "--dhead 128 --seq 8192 --batch 2 --heads 16 --causal"
cell d128_causal16k "--dhead 128 --seq 16384 --batch 1 --heads 16 --causal"
cell d64_full8k "--dhead 64 --seq 8192 --batch 2 --heads 32"
cell d64_causal8k "--dhead 64 --seq 8192 --batch 2 --heads 32 --causal"
for f in "$O"/e_*.txt; do echo "$f $(grep -c EDGE "$f")"; done
tar -C "$O" -cJf "$O/edges.tar.xz" $(cd "$O" && ls e_*.txt) && rm -f "$O"/e_*.txt
dc_tests '*OrderedDq*:*FiftyRuns*:*RaggedLengthsAndWideGroups*' 200 8 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '
grep -h -E "^\[ +OK|FAILED" "$O/tests.txt" | grep -E "ms\)" | sort -t'(' -k2 -n | tail -8
echo "total: $((SECONDS - DC_T0)) s"
