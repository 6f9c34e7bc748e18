#!/usr/bin/env bash
# Session 69, call 9a / 9b / 9c: FA4 staged (session 61's split of part 1), then 9c measures.
# 9a: carry [".anchors/fa4-p1a"].
cp .anchors/fa4-p1a/cu13.xz.0 /tmp/cu13.xz.0 && ls -la /tmp/cu13.xz.0
