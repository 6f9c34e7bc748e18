#!/usr/bin/env bash
# (session 61's staging script, reused by sessions 62-64; carry [".anchors/fa4-p1a"], then call3.sh)
cp .anchors/fa4-p1a/cu13.xz.0 /tmp/cu13.xz.0 && ls -la /tmp/cu13.xz.0 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
