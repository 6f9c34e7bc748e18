#!/usr/bin/env bash
# Session 50, call 11 (carry [".gpu"]). T (bundle) = S + hdim 128's 16-key-page kernel on 96-key
# tiles with four stages (6 boxes per operand, 24 KB per stage; 224 KB), against S, rotated, two
# rounds; T's hdim 128 paged tests first.
source benchmarks/device_call.sh
dc_setup T > /dev/null
dc_tests '*Paged*d128*' 60 16 | tail -3
V=1374,3778,2225,3022,3204,498,2283
DC_BENCH_FLAGS="" dc_abn "S T" '^fwd' "--varlen $V --paged 16 --dhead 128 --heads 16 --kernel auto" \
  "--varlen $V --paged 16 --dhead 128 --heads 16 --causal --kernel auto" \
  "--paged 16 --batch 4 --seq 4096 --dhead 128 --kernel auto" > "$O/st.txt"
dc_summary S T "$O/st.txt" | tee "$O/summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
