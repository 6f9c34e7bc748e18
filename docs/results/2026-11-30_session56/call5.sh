#!/usr/bin/env bash
# Session 56, call 5 (carry [".gpu"]: call 3's report): the SASS source page of call 3's ncu report
# of hdim 128's (128, 0) window kernel, with its stall samples per instruction.
O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
ncu -i .gpu/w128_d128.ncu-rep --page source --csv --print-source sass > "$O/source_d128.csv" 2> "$O/err.txt"
head -c 600 "$O/source_d128.csv"; wc -c "$O/source_d128.csv"; cat "$O/err.txt" | head -5
xz -9 "$O/source_d128.csv"
