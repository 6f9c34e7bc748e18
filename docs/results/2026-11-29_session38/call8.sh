#!/usr/bin/env bash
# Session 38, call 8: the final build (S, fe817d8): the forward suites that call 7 did not run
# (dense, window, score modifiers, sinks, graph), so that every forward suite has run on it; the
# backward and decode kernels are as in call 5's build (Q), where their suites passed.
set -u
source benchmarks/device_call.sh
dc_setup S > /dev/null
dc_tests '*Forward*:*Window*:*Score*:*Sink*:*Alibi*:*Softcap*:*Graph*:*Capture*:*Mask*:-*Backward*:*Bwd*:*Varlen*:*Paged*' 200 8
"$B/test_c_api_gpu" > "$O/c_api.txt" 2>&1; echo "test_c_api_gpu rc=$?"
echo "total: $((SECONDS - DC_T0)) s"
