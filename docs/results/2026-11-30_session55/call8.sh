#!/usr/bin/env bash
# Session 55, call 8 (carry [".gpu"]): the kept tree (bundle.txz). After call 7 the staged page-table
# kernels are instantiated at hdim 128 alone (hdim 64's six stages outran the 8 slots: call 7's
# racecheck, hdim 64 page 32), and the one-wave rule takes small pages at hdim 128 alone; every kernel
# is SASS-identical to HEAD's (96) or to call 7's measured staged ones (16). The decode suites, the
# sanitizers on staged (hdim 128 pages 16 / 32, 1 and 3 splits) and unstaged (hdim 64 page 32)
# calls, and the bench's new --page-order flag.
source benchmarks/device_call.sh
dc_setup H > /dev/null
dc_tests 'Decode*:*/Decode*:ConcurrencyCapture.*' 150 16 | grep -E "FAILED|dc_tests" | head
grep -c "^\[       OK" "$O/tests.txt"
grep -E "^\[  FAILED|Failure" "$O/tests.txt" | head -20
rm -f "$O/tests.txt"
echo "tests: $((SECONDS - DC_T0)) s"
dc_sanitize "$B/runner --decode --batch 2 --cache 1300 --page-size 32 --dhead 64 --heads 8 --heads-kv 2 --splits 2" \
  "$B/runner --decode --batch 2 --cache 1700 --page-size 32 --dhead 128 --heads 8 --heads-kv 2 --splits 3" \
  "$B/runner --decode --batch 3 --cache 1100 --page-size 16 --dhead 128 --heads 8 --heads-kv 2 --seqlen-q 3 --append 3 --causal --splits 1"
rm -f "$O/memcheck.txt" "$O/racecheck.txt"
for ord in shuffled sequential; do
  "$B/bench" --decode --flush always --batch 16 --cache 8192 --page-order $ord 2>&1 | grep -E "^decode" | awk -v t=$ord '{print t, $2, $NF, $(NF-1)}'
done | tee "$O/order.txt"
echo "total: $((SECONDS - DC_T0)) s"
