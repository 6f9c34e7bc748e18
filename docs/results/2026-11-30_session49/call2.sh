#!/usr/bin/env bash
# Session 49, call 2 (carry [".gpu"]). N = the sequences of a packed call longest first within
# groups of 32 (forward compact order, backward grid's batch index; bundle.txz: bench, runner,
# test_gpu); A = session 48's final tree (A.txz: A/bench). The varlen and paged-prefill suites on
# N (with the new >32-sequence cases), memcheck / racecheck of those cases, then A / N rotated,
# two rounds: issue 17's 7 sequences as given, forward and backward, and other packed batches.
source benchmarks/device_call.sh
dc_setup N > /dev/null
dc_tests '*Varlen*:*PagedPrefill*:-*Decode*' 220 12
for tool in memcheck racecheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 "$B/test_gpu" --gtest_filter='*bf16_many_spread*' > "$O/$tool.txt" 2>&1
  echo "$tool rc=$?: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' "$O/$tool.txt" | head -3 | tr '\n' ' ')"
done | tee "$O/sanitizers.txt"
L64=431,254,504,766,149,174,940,648,196,474,696,159,619,319,138,188,544,528,171,346,192,664,534,160,946,679,226,328,745,742,696,163,690,699,506,150,326,147,670,979,236,396,529,247,653,220,684,415,673,935,798,285,205,695,684,754,292,481,199,660,829,164,677,161
V=1374,3778,2225,3022,3204,498,2283
{ DC_BENCH_FLAGS="" dc_abn "A N" '^(fwd|bwd)_varlen/' \
    "--varlen $V --dhead 128 --heads 16 --kernel auto" "--varlen $V --dhead 128 --heads 16 --causal --kernel auto" \
    "--varlen $V --dhead 128 --heads 16 --bwd --kernel auto" "--varlen $V --dhead 128 --heads 16 --bwd --causal --kernel auto" \
    "--varlen $V --dhead 64 --heads 32 --kernel auto" "--varlen $V --dhead 256 --heads 8 --bwd --kernel auto" \
    "--varlen $L64 --dhead 128 --heads 16 --kernel auto" "--varlen $L64 --dhead 128 --heads 16 --bwd --causal --kernel auto"
  DC_BENCH_FLAGS="" dc_abn "A N" '^fwd_varlen_paged' "--varlen $V --paged 16 --dhead 128 --heads 16 --causal --kernel auto"; } > "$O/ab.txt" 2>&1
dc_summary A N "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
