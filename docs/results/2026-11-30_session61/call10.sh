#!/usr/bin/env bash
# Session 61, call 10 (as call 2) (carry [".anchors/fa4-p1a"]): the first half of FA4 4.0.0b36's cu13 libraries, to /tmp.
cp .anchors/fa4-p1a/cu13.xz.0 /tmp/cu13.xz.0 && ls -la /tmp/cu13.xz.0 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
