#!/usr/bin/env bash
# Session 66, call 2: B1' (B1's compact varlen backward grid in the grid's own order: each sequence's
# KV heads in turn, each head's key blocks ascending) against H (HEAD), four rotated rounds on issue 17's
# batch and on 16 short GQA sequences; the varlen / fuzz / concurrency suites on N; sanitizers on two
# varlen backward cases. carry [".gpu"].
set -u
source benchmarks/device_call.sh
dc_setup N > /dev/null
SHORT="--varlen 1000,200,1500,700,300,1200,900,100,800,1400,600,400,1100,500,1300,256 --dhead 64 --heads 16 --heads-kv 4"
{ for k in 1 2; do
    dc_abn "H N" 'bwd_varlen/wgmma/' "--varlen --dhead 128 --heads 16 --causal" "--varlen --dhead 128 --heads 16" \
      "$SHORT --causal" "$SHORT"
  done
} > "$O/ab.txt" 2>&1
dc_summary H N "$O/ab.txt" | tee "$O/ab_summary.txt" | cut -c1-150
dc_tests '*Varlen*:*Fuzz*:Concurrency*' 300 16 | grep -E "^shard|PASSED|FAILED" | tr '\n' ' '; echo
grep -h -E "^\[  FAILED" "$O/tests.txt" | head -5
grep -h -E "^\[       OK \].*(Identical)" "$O/tests.txt" | head -5
dc_sanitize "$B/test_gpu --gtest_filter=*VarlenBwd.*bf16_tile_edges_80*:*VarlenBwd.*bf16_tile_edges_causal_l100*:*VarlenBwd.*bf16_tile_edges_l70*"
echo "total: $((SECONDS - DC_T0)) s"
