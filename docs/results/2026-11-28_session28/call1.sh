#!/usr/bin/env bash
# Session 28, call 1 ran session 27's prepared script unchanged (its header has the build recipe):
exec bash docs/results/2026-11-28_session27/next_call.sh "$@"
