#!/usr/bin/env bash
# The pieces every device call of the backward work repeated (sessions 24-27), to be sourced by
# a short call script that `run` executes from the repository root:
#
#   #!/usr/bin/env bash
#   # What this call measures, and what each binary is.
#   source benchmarks/device_call.sh
#   dc_setup B                                    # .gpu/bundle.txz is binary "B"; A.txz holds A/bench
#   { dc_ab A B 'bwd/wgmma/' "--seq 8192 --dhead 128 --kernel wgmma" "--seq 2048 --dhead 128 --kernel wgmma"
#     dc_ab A B 'det/' "--seq 16384 --dhead 128 --causal --kernel wgmma"; } | tee "$O/ab.txt"
#   dc_summary A B "$O/ab.txt" | tee "$O/ab_summary.txt"
#   dc_summary A B "$O/ab_decode.txt" us          # decode rows (bench --decode): microseconds
#   dc_abn "A B C" 'bwd/wgmma/' "..."             # three or more binaries, rotated; dc_summary A C ...
#   dc_sanitize "$B/runner --bwd --kernel wgmma --batch 3 --seq 700 --seq-k 1333 --heads 8 --heads-kv 2 --dhead 128"
#   dc_tests '*Backward*:*Bwd*:Concurrency*' 300     # a third argument: the shard count (4)
#   dc_runner "--dhead 128 --heads 4 --varlen 1,128,129,500 --causal" "--dhead 64 --heads 2 --varlen 0,9,400"
#
# Binaries: .gpu/bundle.txz (benchmarks/pack_gpu.sh) unpacks to $G/bin and $G/lib, and its bench
# answers to the tag given to dc_setup; every other .gpu/*.txz holds TAG/bench for another tag
# (tar it with `xz --lzma2=preset=6,dict=192MiB`: the library inside each bench is the same bytes,
# so a second bench costs ~14 MB alone, 1-4 MB inside one archive). The device returns only 8 files
# from $OUT: the functions write few.
# Benchmark filters: Google Benchmark's filter starting with '-' is negative; 'det/' selects the
# deterministic rows, 'bwd/wgmma/' the non-deterministic ones of bwd_03.

# dc_setup TAG: G (the .gpu folder), O ($OUT), B ($G/bin); unpacks; prints the GPU.
dc_setup() {
  set -u
  G=$(cd .gpu && pwd)
  O=$(mkdir -p "${OUT:-./out}" && cd "${OUT:-./out}" && pwd)
  local a
  for a in "$G"/*.txz; do
    [ "$(basename "$a")" = bundle.txz ] && [ -d "$G/bin" ] && continue
    python3 -c 'import tarfile, sys; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$a" "$G"
  done
  # The bundle's bench answers to TAG, unless another archive brought its own TAG/bench (session 63's
  # calls 9 and 10 lost their A/B to this: the link replaced the tag's bench, and a wrapper tag that
  # execs ../TAG/bench then timed the bundle's binary too). Such a tag is refused.
  if [ -e "$G/$1/bench" ] && [ ! -L "$G/$1/bench" ]; then
    echo "dc_setup: $1/bench came from an archive; give the bundle another tag" >&2
    return 2
  fi
  mkdir -p "$G/$1" && ln -sf "$G/bin/bench" "$G/$1/bench"
  export LD_LIBRARY_PATH=$G/lib
  B=$G/bin
  DC_T0=$SECONDS
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$O/gpu.txt"
}

# dc_ab X Y FILTER CELL...: `bench --bwd CELL` of tags X and Y, two rounds, the order rotated
# each round; one line per benchmark, prefixed by the tag. DC_BENCH_FLAGS adds flags (--fwd cells:
# set it to "" and put the mode in the cell).
dc_ab() {
  local x=$1 y=$2
  shift 2
  dc_abn "$x $y" "$@"
}

# dc_abn "TAG..." FILTER CELL...: dc_ab for any number of tags; round r starts at the r-th tag.
dc_abn() {
  local -a tags=($1)
  local f=$2 n=${#tags[@]} r c i t
  shift 2
  for r in 0 1; do
    for c in "$@"; do
      for i in $(seq 0 $((n - 1))); do
        t=${tags[$(( (i + r) % n ))]}
        # shellcheck disable=SC2086  # a cell is several flags
        timeout 60 "$G/$t/bench" ${DC_BENCH_FLAGS---bwd} $c --benchmark_filter="$f" 2>&1 |
          grep -E "^(bwd|fwd|decode)|ERROR|rror" | sed -E 's/ +[0-9.]+ ms +[0-9.]+ ms +[0-9]+//' | sed "s/^/$t /"
      done
    done
  done
  echo "dc_abn: $((SECONDS - DC_T0)) s since setup" >&2
}

# dc_summary X Y FILE [us]: the mean TFLOPS of each (shape, kernel) for X and Y, and Y's change
# (any benchmark family: bwd/, bwd_varlen/, fwd_paged16/, ...); with `us`, decode rows' mean
# microseconds and Y's change in speed.
dc_summary() {
  python3 - "$@" <<'P'
import collections, re, sys
x, y, path = sys.argv[1:4]
us = len(sys.argv) > 4 and sys.argv[4] == "us"
d = collections.defaultdict(list)
for line in open(path):
    if us:
        m = re.match(r'(\S+) decode/\S+?/(\S+?)/.*us=([\d.]+)', line)
        if m: d[(m[2], "decode", m[1])].append(float(m[3]))
        continue
    m = re.match(r'(\S+) ((?:bwd|fwd|decode)\w*)/(\S+?)/(\S+?)/.*TFLOPS=([\d.]+)', line)
    # (the family joins the shape: fwd_varlen_paged16 and _paged256 rows share a shape name)
    if m: d[(m[4] + ("" if m[2] in ("bwd", "fwd", "decode") else " " + m[2]), m[3], m[1])].append(float(m[5]))
for k in sorted(set((a, b) for a, b, _ in d)):
    a, b = d.get(k + (x,), []), d.get(k + (y,), [])
    if a and b:
        ma, mb = sum(a) / len(a), sum(b) / len(b)
        change = ma / mb - 1 if us else mb / ma - 1  # us: lower is faster
        unit = " us" if us else ""
        print(f"{k[0]:46s} {k[1]:16s} {x} {ma:7.1f}{unit} {y} {mb:7.1f}{unit} {100 * change:+5.1f}%  {a} {b}")
P
}

# dc_sanitize CMD...: memcheck and racecheck of each command line (60 s each at most);
# the summaries to sanitizers.txt.
dc_sanitize() {
  local cmd tool
  for cmd in "$@"; do
    for tool in memcheck racecheck; do
      # shellcheck disable=SC2086  # a command line
      timeout 90 compute-sanitizer --tool $tool --error-exitcode 9 $cmd > "$O/$tool.txt" 2>&1
      echo "$tool rc=$? : $cmd"
      grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$O/$tool.txt" | head -3
    done
  done 2>&1 | tee -a "$O/sanitizers.txt"
}

# dc_tests FILTER SECONDS [SHARDS]: test_gpu's FILTER in SHARDS shards at once (default 4; the
# backward suites need ~280 s in four on the device's 16 cores, and session 34 ran every suite but
# Decode* in twelve, 185 s), line-buffered; per-shard counts, then one tests.txt.
dc_tests() {
  local k n=${3:-4}
  for k in $(seq 0 $((n - 1))); do
    GTEST_TOTAL_SHARDS=$n GTEST_SHARD_INDEX=$k timeout "$2" stdbuf -oL "$B/test_gpu" --gtest_filter="$1" \
      > "$O/shard_$k.txt" 2>&1 &
  done
  wait
  for k in $(seq 0 $((n - 1))); do
    echo "shard $k: $(grep -c '^\[       OK' "$O/shard_$k.txt") ok"
    grep -E "^\[  (PASSED|FAILED)|FAILED  \]" "$O/shard_$k.txt" | head -5
  done
  # (shard_*, not tests_*: a caller's tests_summary.txt in $O survives the cleanup)
  cat "$O"/shard_*.txt > "$O/tests.txt"
  rm -f "$O"/shard_*.txt
  echo "dc_tests: $((SECONDS - DC_T0)) s since setup"
}

# dc_runner ARGS...: `runner --kernel all ARGS` for each argument string (90 s each at most), the
# checks to runner.txt and one line of counts (the every-variant check the forward calls of
# sessions 31-32 repeated by hand).
dc_runner() {
  local a
  for a in "$@"; do
    # shellcheck disable=SC2086  # an argument string is several flags
    timeout 90 "$B/runner" --kernel all $a 2>&1 | grep -E "\[OK|FAIL|rror:|xception"
  done > "$O/runner.txt" 2>&1
  echo "runner OK: $(grep -c '\[OK' "$O/runner.txt"), FAIL: $(grep -c -E 'FAIL|rror:|xception' "$O/runner.txt")"
}

# dc_ncu NAME REGEX SKIP COMMAND...: one ncu report (base clocks) of the first launch of a kernel
# matching REGEX after SKIP launches, COMMAND's; its source page (SASS, xz) and details page
# (csv) into $O/r/NAME.*, the report itself dropped (pack $O/r into one archive: the device returns
# 8 files). Sections: source counters, warp states, speed of light, compute and memory workload,
# launch statistics, occupancy. docs/results/2026-11-28_session35/src_opcodes.py compares two source pages.
dc_ncu() {
  local name=$1 k=$2 skip=$3
  shift 3
  mkdir -p "$O/r"
  timeout 170 ncu -k regex:"$k" --launch-skip "$skip" --launch-count 1 --section SourceCounters --section WarpStateStats \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section LaunchStats --section MemoryWorkloadAnalysis \
    --section Occupancy -o "$O/r/$name" "$@" > "$O/r/$name.log" 2>&1
  echo "$name rc=$? $((SECONDS - DC_T0)) s"
  ncu -i "$O/r/$name.ncu-rep" --page source --print-source sass --csv 2>/dev/null | xz > "$O/r/$name.csv.xz"
  ncu -i "$O/r/$name.ncu-rep" --page details --csv > "$O/r/$name.details.csv" 2>/dev/null
  rm -f "$O/r/$name.ncu-rep"
}
