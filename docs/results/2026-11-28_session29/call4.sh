#!/usr/bin/env bash
# Session 29, call 4 (H200): F = the tree with the named dQ hand-off at 128-row steps (hdim 64;
# session 28's exp_dq_named_barriers.patch made a Cfg choice), B = the tree before it.
#  1. A/B B -> F at hdim 64, both modes: full and causal, 8k and 16k (call 3: D +4.9% / +2.2% full 8k).
#  2. The backward suites in 4 shards on F; memcheck and racecheck on hdim 64 runner cases and one
#     hdim 64 variable-length test with every score modifier.
source benchmarks/device_call.sh
dc_setup F
dc_ab B F '.' "--seq 8192 --dhead 64 --kernel wgmma" "--seq 16384 --dhead 64 --kernel wgmma" \
  "--seq 8192 --dhead 64 --causal --kernel wgmma" "--seq 16384 --dhead 64 --causal --kernel wgmma" | tee "$O/ab.txt"
dc_summary B F "$O/ab.txt" | tee "$O/ab_summary.txt"
dc_tests '*Backward*:*Bwd*:Concurrency*' 330 | tee "$O/tests_summary.txt"
dc_sanitize "$B/runner --bwd --kernel wgmma --batch 2 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 64 --causal" \
  "$B/runner --bwd --kernel wgmma --batch 1 --seq 333 --heads 4 --heads-kv 1 --dhead 64 --softcap 20 --window 100,3" \
  "$B/test_gpu --gtest_filter=Cases/VarlenBwd.MatchesReferencePerSequence/bf16_cap30_alibi_batch_sinks_causal_gqa4_d64_seqused:Cases/VarlenBwd.MatchesReferencePerSequence/bf16_many_short_causal_gqa4_d64_seqused" > /dev/null
cat "$O/sanitizers.txt"
echo "total: $((SECONDS - DC_T0)) s"
