#!/usr/bin/env bash
# (session 61's staging script, reused by session 62)
cp .anchors/fa4-p1a/cu13.xz.0 /tmp/cu13.xz.0 && ls -la /tmp/cu13.xz.0 && nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
