#!/usr/bin/env bash
# Session 49, call 3 (carry [".gpu"]). O = the sequences of a packed call longest first within
# groups of 32, ranked once by the metadata check (AttnParams::seq_order; bundle.txz: bench, runner,
# test_gpu); A = session 48's final tree (A.txz: A/bench). The varlen and paged-prefill suites on
# O (with the new >32-sequence cases), memcheck of those cases, racecheck of a packed forward
# (runner, 40 sequences) and of the 70-sequence backward case, then A / O rotated,
# two rounds: issue 17's 7 sequences as given, forward and backward, and other packed batches.
source benchmarks/device_call.sh
dc_setup O > /dev/null
dc_tests '*Varlen*:*PagedPrefill*:Concurrency*:BackwardEdges.*:-*Decode*' 220 12
L40=$(python3 -c "print(','.join(str(i * 37 % 61 * 5) for i in range(40)))")
{ timeout 100 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" --gtest_filter='*bf16_many_spread*' > "$O/memcheck.txt" 2>&1
  echo "memcheck tests rc=$?: $(grep -E 'ERROR SUMMARY|PASSED|FAILED' "$O/memcheck.txt" | head -3 | tr '\n' ' ')"
  timeout 100 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/runner" --kernel auto --varlen "$L40" --heads 4 --heads-kv 2 --dhead 128 > "$O/racecheck.txt" 2>&1
  echo "racecheck runner fwd rc=$?: $(grep -E 'RACECHECK SUMMARY|OK|FAIL' "$O/racecheck.txt" | head -3 | tr '\n' ' ')"
  timeout 150 compute-sanitizer --tool racecheck --error-exitcode 9 "$B/test_gpu" --gtest_filter='Cases/VarlenBwd.*bf16_many_spread_full*' > "$O/racecheck_bwd.txt" 2>&1
  echo "racecheck bwd test rc=$?: $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' "$O/racecheck_bwd.txt" | head -3 | tr '\n' ' ')"
} | tee "$O/sanitizers.txt"
L64=431,254,504,766,149,174,940,648,196,474,696,159,619,319,138,188,544,528,171,346,192,664,534,160,946,679,226,328,745,742,696,163,690,699,506,150,326,147,670,979,236,396,529,247,653,220,684,415,673,935,798,285,205,695,684,754,292,481,199,660,829,164,677,161
V=1374,3778,2225,3022,3204,498,2283
{ DC_BENCH_FLAGS="" dc_abn "A O" '^(fwd|bwd)_varlen/' \
    "--varlen $V --dhead 128 --heads 16 --kernel auto" "--varlen $V --dhead 128 --heads 16 --causal --kernel auto" \
    "--varlen $V --dhead 128 --heads 16 --bwd --kernel auto" "--varlen $V --dhead 128 --heads 16 --bwd --causal --kernel auto" \
    "--varlen $V --dhead 64 --heads 32 --kernel auto" "--varlen $V --dhead 256 --heads 8 --bwd --kernel auto" \
    "--varlen $L64 --dhead 128 --heads 16 --kernel auto" "--varlen $L64 --dhead 128 --heads 16 --bwd --causal --kernel auto"
  DC_BENCH_FLAGS="" dc_abn "A O" '^fwd_varlen_paged' "--varlen $V --paged 16 --dhead 128 --heads 16 --causal --kernel auto"; } > "$O/ab.txt" 2>&1
dc_summary A O "$O/ab.txt" | tee "$O/ab_summary.txt"
echo "total: $((SECONDS - DC_T0)) s"
