#!/usr/bin/env bash
# Session 47, call 9 (carry [".gpu"]): the reduction-rate microbenchmark (.gpu/red_rate, built from
# red_rate.cu here), twice (with the one-region cases).
mkdir -p "${OUT:-./out}"
for r in 1 2; do .gpu/red_rate; done 2>&1 | tee "${OUT:-./out}/red_rate.txt"
