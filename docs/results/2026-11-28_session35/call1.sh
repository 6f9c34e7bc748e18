#!/usr/bin/env bash
# Session 35, call 1: session 34's prepared tests (the window suites with the causal (700, 0) case,
# eight shards; memcheck / racecheck of fwd_10's grid path at hdim 64, span 700), and FA4 staging
# part A (the first half of its wheel archive to /tmp).
cp .anchors/fa4-p1a/cu13.xz.0 /tmp/ &
bash docs/results/2026-11-28_session34/next/next_tests.sh
wait
ls -la /tmp/cu13.xz.0
