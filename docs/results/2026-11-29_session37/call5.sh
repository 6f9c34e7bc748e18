#!/usr/bin/env bash
# Session 37, call 5: decode, F = the deferred wait for contiguous caches only (paged calls wait first, as in A) + B2's check (independent loads, 8 entries per thread in flight); tests as call 4 (four new bad-metadata cases).
# A = the tree at a399617. Then F's decode tests, memcheck on the error / split / paged tests,
# runner memcheck / racecheck, and SDPA (cuDNN) in the same call.
set -u
source benchmarks/device_call.sh
dc_setup F > /dev/null
{ DC_BENCH_FLAGS="" dc_abn "A F" '^decode' "--decode"; DC_BENCH_FLAGS="" dc_abn "F A" '^decode' "--decode"; } > "$O/ab_decode.txt" 2>&1
python3 - "$O/ab_decode.txt" <<'P' | tee "$O/ab_summary.txt"
import collections, re, sys
d = collections.defaultdict(list)
for line in open(sys.argv[1]):
    m = re.match(r'(\S+) decode/\S+?/(\S+?)/.*us=([\d.]+)', line)
    if m: d[(m[2], m[1])].append(float(m[3]))
for k in sorted(set(a for a, _ in d)):
    a, b = d[(k, 'A')], d[(k, 'F')]
    ma, mb = sum(a) / len(a), sum(b) / len(b)
    print(f"{k:50s} A {ma:7.1f} us  B {mb:7.1f} us  {100 * (ma / mb - 1):+5.1f}% speed  {a} {b}")
P
python3 benchmarks/sdpa_decode.py --json "$O/sdpa_decode.json" > "$O/sdpa_decode.txt" 2>&1; tail -6 "$O/sdpa_decode.txt"
dc_tests '*Decode*' 200 4
timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$B/test_gpu" --gtest_filter='DecodeErrors.*:DecodeSplits.*:DecodePaged.*' > "$O/memcheck_tests.txt" 2>&1
echo "memcheck tests rc=$?"; grep -E "ERROR SUMMARY|PASSED|FAILED" "$O/memcheck_tests.txt" | head -5
dc_sanitize "$B/runner --decode --kernel splitkv --batch 3 --cache 3000 --heads 8 --heads-kv 2 --dhead 128 --splits 5" \
  "$B/runner --decode --kernel splitkv --batch 2 --cache 777 --heads 4 --heads-kv 1 --dhead 64 --page-size 16"
echo "total: $((SECONDS - DC_T0)) s"
