#!/usr/bin/env bash
# Session 50, call 9 (carry [".gpu"]). The final build (R): every forward suite in 16 shards, and
# memcheck / racecheck on a dense-query full hdim 64 call on 16-key pages (the six-stage kernel).
source benchmarks/device_call.sh
dc_setup R > /dev/null
dc_tests '*Forward*:*Varlen*:*Paged*:*Window*:*Score*:*Concurren*:*Graph*:*Sink*:*Alibi*:*Softcap*:-*Backward*:*Bwd*' 300 16
dc_sanitize "$B/runner --kernel auto --batch 2 --seq 500 --seq-k 777 --dhead 64 --heads 4 --heads-kv 2 --paged 16"
echo "total: $((SECONDS - DC_T0)) s"
