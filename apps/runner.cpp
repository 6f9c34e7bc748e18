// runner: checks every variant against the fp64 CPU reference and prints a
// table, one line per case: the error and its bound, the time, the
// throughput and [OK]/[FAIL]. Exits 1 if anything failed, 2 on a usage
// error or without a GPU.
//
//   ./runner                          the forward on the default list of shapes
//   ./runner --seq 16384 --dhead 128  one shape (query rows sampled when large)
//   ./runner --kernel tiled --dtype f16 --causal
//   ./runner --kernel auto            what the API's default picks, printed per case
//   ./runner --bwd                    the backward variants (both modes) on the default shapes
//   ./runner --decode                 the decode variants, contiguous and paged caches
//   ./runner --decode --batch 2 --cache 8192 --seqlen-q 4 --append 4 --causal
//   ./runner --causal --softcap 30 --sinks --alibi   score modifiers (forward, --bwd and --decode)
//   ./runner --varlen --heads 16 --causal   one variable-length forward over FA4's 7 sequences of
//                                     16384 tokens (or --varlen 1374,3778,...), each sequence
//                                     checked against its own fp64 reference
//   ./runner --paged 16,256 --seq 1000 --seq-k 1500 --causal   paged prefill: a chunk of 1000
//                                     queries per sequence over 1500 keys in pages of 16 (then 256)
//                                     keys of a shuffled pool; with --varlen, packed queries whose
//                                     keys (seqused_k, the lengths) are paged; checked as --varlen
//
// The flags, the FLOP counts and the timer are bench's too
// (src/testing/tools.h), so one shape gives the same TFLOPS in both.
#include <cuda_runtime_api.h>
#include <fmt/core.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "flash/flash.h"
#include "paged_table.h"
#include "testing/testing.h"
#include "testing/tools.h"
#include "varlen_lengths.h"

namespace {

using flash::DType;
using flash::VariantInfo;
using flash::testing::Layout;
using flash::testing::ProblemFlags;
using flash::testing::Shape;
using flash::testing::UsageError;

struct Options {
  ProblemFlags flags;
  Layout layout = Layout::bshd;
  bool layout_given = false;
  int sample_rows = 64;
  std::uint64_t seed = std::random_device{}();
  bool list = false;
  std::optional<std::vector<int>> varlen;  // --varlen: the sequence lengths
  std::optional<std::vector<int>> paged;   // --paged: the page sizes
};

// Timed calls per case (after the checked call and kWarmupCalls more).
constexpr int kTimedCalls = 5;

// --paged without --varlen or --seq: query rows per sequence.
constexpr int kPagedSeq = 1024;

void print_help() {
  fmt::print(
      "usage: runner [flags]\n"
      "Checks every built variant against the fp64 CPU reference: error, bound, time, throughput, [OK]/[FAIL].\n"
      "{}"
      "runner only:\n"
      "  --layout L        bshd (default) or bhsd memory for q, k, v, o (forward and backward)\n"
      "  --rows N          query rows checked per shape when seq is larger (forward; default 64)\n"
      "  --seed N          the random inputs' seed (default: random, printed)\n"
      "  --list            the registered variants, forward, backward and decode\n"
      "  --varlen [L,L,..] one variable-length forward over these sequence lengths, seqlen_q = seqlen_k\n"
      "                    (default {}: FA4's 16384 tokens in 7), --heads 8\n"
      "                    --dhead 128 unless given; each sequence checked against the reference of that\n"
      "                    sequence alone (--rows of each)\n"
      "  --paged P[,P..]   paged prefill: the keys in pages of P keys (powers of two >= 16) from a shuffled\n"
      "                    pool, one call per page size, checked as --varlen: dense queries (--batch 2\n"
      "                    --seq {} --heads 8 --dhead 128 unless given) over --seq-k keys per sequence\n"
      "                    (default --seq; seqused_k when not a multiple of P), or with --varlen packed\n"
      "                    queries whose keys are the lengths (seqused_k)\n"
      "Without --seq (or --cache with --decode) runs a default list of shapes: head dims 64, 128\n"
      "and 256, both masks, bf16 (--batch, --heads, --heads-kv, --dhead, --dtype and --causal narrow\n"
      "it). One shape defaults to --batch 2 --heads 8 --dhead 128; with --decode to --batch 1\n"
      "--heads 32 --heads-kv 8 --dhead 128, every sequence's cache full. With --softcap C, q and k are\n"
      "drawn with scores of about C, so that the cap bites and the check sees it.\n",
      flash::testing::problem_flags_help(), fmt::join(flash::testing::default_varlen_lengths(), ","), kPagedSeq);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(a + " needs a value");
      return argv[++i];
    };
    if (flash::testing::parse_problem_flag(argc, argv, i, o.flags)) continue;
    if (flash::testing::parse_varlen_flag(argc, argv, i, o.varlen)) continue;
    if (flash::testing::parse_paged_flag(argc, argv, i, o.paged)) continue;
    if (a == "--layout") {
      const std::string v = value();
      if (v != "bshd" && v != "bhsd") throw UsageError("--layout must be bshd or bhsd, got '" + v + "'");
      o.layout = v == "bhsd" ? Layout::bhsd : Layout::bshd;
      o.layout_given = true;
    } else if (a == "--rows" || a == "--seed") {
      const std::string v = value();
      char* end = nullptr;
      const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || v[0] == '-') throw UsageError(a + " expects a non-negative integer, got '" + v + "'");
      if (a == "--seed") o.seed = n;
      else o.sample_rows = static_cast<int>(std::clamp<unsigned long long>(n, 1, 1u << 30));
    } else if (a == "--list") {
      o.list = true;
    } else if (a == "--help" || a == "-h") {
      print_help();
      std::exit(0);
    } else {
      throw UsageError("unknown flag " + a);
    }
  }
  flash::testing::check_problem_flags(o.flags);
  if (o.flags.decode && o.layout_given) throw UsageError("--layout applies to the forward and the backward");
  if (o.varlen && (o.flags.bwd || o.flags.decode)) throw UsageError("--varlen checks the forward; not with --bwd or --decode");
  if (o.varlen && (o.flags.seq || o.flags.seq_k || o.flags.batch))
    throw UsageError("--varlen gives the sequences and their lengths; not with --seq, --seq-k or --batch");
  if (o.paged && (o.flags.bwd || o.flags.decode))
    throw UsageError("--paged checks the forward's paged prefill; not with --bwd or --decode (decode: --page-size)");
  if (o.paged && (o.flags.batch == 0 || o.flags.seq == 0)) throw UsageError("--paged needs --batch and --seq >= 1");
  return o;
}

void print_variants(const std::vector<VariantInfo>& variants) {
  for (const auto& v : variants) {
    std::string dtypes, dims;
    for (auto t : v.dtypes) dtypes += std::string(dtypes.empty() ? "" : ",") + std::string(flash::dtype_name(t));
    for (int d : v.head_dims) dims += (dims.empty() ? "" : ",") + std::to_string(d);
    if (v.built && dims.empty()) dims = fmt::format("any <= {}", v.max_head_dim);
    fmt::print("{:<17} {:<5} {:<6} {:<14} {:<22} {}\n", v.name, v.built ? "yes" : "no",
               !v.built ? "-"
               : v.max_compute_capability == v.min_compute_capability
                   ? fmt::format("={}.{}", v.min_compute_capability / 10, v.min_compute_capability % 10)
                   : fmt::format("{}.{}", v.min_compute_capability / 10, v.min_compute_capability % 10),
               dtypes, dims, v.description);
  }
}

void list_variants() {
  fmt::print("{:<17} {:<5} {:<6} {:<14} {:<22} {}\n", "variant", "built", "cc", "dtypes", "head dims", "description");
  print_variants(flash::forward_variants());
  fmt::print("\nbackward (flash::attention_backward; ./runner --bwd, ./bench --bwd):\n");
  print_variants(flash::backward_variants());
  fmt::print("\ndecode (flash::attention_decode; ./runner --decode, ./bench --decode):\n");
  print_variants(flash::decode_variants());
}

// The kernels a run checks, from --kernel: every built variant ("all"), the
// one named, or "auto" (resolved per case by plan_forward / plan_backward /
// plan_decode, whose choice each line prints). Says which variants are not
// built or cannot run on this GPU; empty when none by that name can run.
std::vector<std::string> select_kernels(const std::vector<VariantInfo>& variants, const std::string& wanted,
                                        const char* kind, int cc) {
  if (wanted == "auto") return {"auto"};
  std::vector<std::string> names;
  bool known = false;
  for (const auto& v : variants) {
    if (wanted != "all" && v.name != wanted) continue;
    known = true;
    if (!v.built) fmt::print("{:<21} not built (FLASH_VARIANTS)\n", v.name);
    else if (!v.runs_on(cc)) fmt::print("{:<21} does not run on this GPU (compute capability {}.{})\n", v.name, cc / 10, cc % 10);
    else names.push_back(v.name);
  }
  if (!known) fmt::print(stderr, "runner: no {} variant named '{}' (runner --list)\n", kind, wanted);
  return names;
}

// Whether `kernel` ("auto" or a variant name) has a variant for this case.
bool covers(const std::vector<VariantInfo>& variants, const std::string& kernel, DType dtype, int head_dim, int cc) {
  for (const auto& v : variants)
    if ((kernel == "auto" || v.name == kernel) && v.runs_on(cc) && v.supports(dtype, head_dim)) return true;
  return false;
}

// The backward modes `kernel` runs: deterministic too unless it names a
// variant without kFeatureDeterministic ("auto" takes one that has it).
std::vector<bool> backward_modes(const std::vector<VariantInfo>& variants, const std::string& kernel) {
  for (const auto& v : variants)
    if (v.name == kernel && !(v.features & flash::kFeatureDeterministic)) return {false};
  return {false, true};
}

// Whether any of `kernels` has a variant for this case (else its reference is not worth computing).
bool covers_any(const std::vector<VariantInfo>& variants, const std::vector<std::string>& kernels, DType dtype,
                int head_dim, int cc) {
  return std::any_of(kernels.begin(), kernels.end(),
                     [&](const std::string& k) { return covers(variants, k, dtype, head_dim, cc); });
}

// The name a line shows: the variant, or "auto:<the variant auto picked>".
std::string shown(const std::string& kernel, const std::string& planned) {
  return kernel == "auto" ? "auto:" + planned : kernel;
}

std::string unwritten_note(std::size_t unwritten) {
  return unwritten ? fmt::format(" ({} unwritten)", unwritten) : std::string();
}

struct Tally {
  int passed = 0, failed = 0;
  int finish() const {
    fmt::print("{} passed, {} failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  }
};

// --- forward and backward ---------------------------------------------------

// The shapes, head dims and masks of a forward or backward run.
struct Cases {
  std::vector<Shape> shapes;
  std::vector<int> dheads;
  std::vector<bool> causals;
};

// The score modifiers of --softcap, --sinks and --alibi. With a softcap, q
// and k are drawn with scores of about C (standard deviation qk_gain^2 = C),
// so that the cap bites and the check sees it.
void set_scores(const ProblemFlags& f, Shape& s) {
  s.softcap = f.softcap;
  s.sinks = f.sinks;
  s.alibi = f.alibi ? flash::testing::Alibi::per_head : flash::testing::Alibi::none;
  if (f.softcap > 0.0f) s.qk_gain = std::sqrt(static_cast<double>(f.softcap));
}

Cases attention_cases(const ProblemFlags& f) {
  Cases c;
  if (f.seq) {
    Shape s;
    s.seqlen_q = *f.seq;
    s.seqlen_k = f.seq_k.value_or(*f.seq);
    s.batch = f.batch.value_or(2);
    s.heads_q = f.heads.value_or(8);
    s.heads_kv = f.heads_kv.value_or(s.heads_q);
    s.window_left = f.window_left, s.window_right = f.window_right;
    set_scores(f, s);
    c.shapes.push_back(s);
    c.dheads = {f.dhead.value_or(128)};
    c.causals = {f.causal};
    return c;
  }
  const int sq_sk[][2] = {{1, 1}, {17, 17}, {113, 203}, {128, 128}, {257, 129}, {1023, 1024}, {2048, 2048}};
  for (const auto& [sq, sk] : sq_sk) {
    Shape s;
    s.seqlen_q = sq, s.seqlen_k = sk;
    s.batch = f.batch.value_or(2);
    s.heads_q = f.heads.value_or(8);
    s.heads_kv = f.heads_kv.value_or(2);
    s.window_left = f.window_left, s.window_right = f.window_right;
    set_scores(f, s);
    c.shapes.push_back(s);
  }
  c.dheads = f.dhead ? std::vector<int>{*f.dhead} : std::vector<int>{64, 128, 256};
  // A window names its own mask: only the given causal flag then.
  const bool window = f.window_left >= 0 || f.window_right >= 0;
  c.causals = f.causal || window ? std::vector<bool>{f.causal} : std::vector<bool>{false, true};
  return c;
}

std::vector<DType> dtypes_of(const ProblemFlags& f) {
  return f.dtypes.empty() ? std::vector<DType>{DType::bf16} : f.dtypes;
}

std::string shape_text(const Shape& s) {
  return fmt::format("{}x{}x{}x{}/{}", s.batch, s.seqlen_q, s.seqlen_k, s.heads_q, s.heads_kv);
}

int run_forward(const Options& opt, int cc) {
  const auto variants = flash::forward_variants();
  const auto kernels = select_kernels(variants, opt.flags.kernel, "forward", cc);
  if (kernels.empty()) return 2;
  const Cases cases = attention_cases(opt.flags);
  fmt::print("seed {}\n", opt.seed);
  fmt::print("{:<21} {:>22} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8}  {}\n", "variant", "b x sq x sk x hq/hkv",
             "d", "dtype", "max err", "bound", "lse err", "lse bnd", "ms", "TFLOPS", "result");
  Tally tally;
  std::uint64_t case_seed = opt.seed;
  for (DType dtype : dtypes_of(opt.flags))
    for (int d : cases.dheads)
      for (bool causal : cases.causals)
        for (Shape s : cases.shapes) {
          s.head_dim = d;
          if (!covers_any(variants, kernels, dtype, d, cc)) continue;
          const auto rows = flash::testing::sample_rows(s.seqlen_q, opt.sample_rows, case_seed);
          flash::testing::Problem prob;
          try {
            prob = flash::testing::make_problem(s, dtype, causal, opt.layout, case_seed++,
                                                static_cast<int>(rows.size()) < s.seqlen_q ? rows : std::vector<int>{});
          } catch (const flash::Error& e) {
            fmt::print("cannot set up shape {}: {}\n", shape_text(s), e.what());
            ++tally.failed;
            continue;
          }
          for (const std::string& k : kernels) {
            if (!covers(variants, k, dtype, d, cc)) continue;
            flash::ForwardArgs args;
            args.q = prob.vq, args.k = prob.vk, args.v = prob.vv, args.o = prob.vo, args.lse = prob.vlse;
            args.causal = causal;
            args.window_left = s.window_left, args.window_right = s.window_right;
            prob.scores.apply(args);
            args.kernel = k;
            std::string name = k;
            try {
              name = shown(k, flash::plan_forward(args).kernel);
              const auto r = flash::testing::run_and_check(prob, k);
              if (!r.error.empty()) throw flash::Error(r.error);
              flash::testing::L2Flush flush(flash::testing::view_bytes(prob.vq) + flash::testing::view_bytes(prob.vk) +
                                            flash::testing::view_bytes(prob.vv) + flash::testing::view_bytes(prob.vo));
              const double ms = flash::testing::median_ms(kTimedCalls, flush, [&] { flash::attention_forward(args); });
              fmt::print("{:<21} {:>22} {:>5} {:>6} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>9.3f} {:>8.2f}  {}{}{}{}\n",
                         name, shape_text(s), d, flash::dtype_name(dtype), r.max_err, r.bound, r.lse_err, r.lse_bound,
                         ms, flash::testing::forward_flops(s, causal) / (ms * 1e-3) / 1e12, r.ok ? "[OK]" : "[FAIL]",
                         causal ? " causal" : "", flash::testing::score_note(s), unwritten_note(r.unwritten));
              (r.ok ? tally.passed : tally.failed)++;
            } catch (const flash::Error& e) {
              fmt::print("{:<21} {:>22} {:>5} {:>6}  [FAIL] ERROR {}\n", name, shape_text(s), d, flash::dtype_name(dtype),
                         e.what());
              ++tally.failed;
            }
          }
        }
  return tally.finish();
}

// --bwd: every backward variant in both modes (deterministic where it has it); the reference is the full
// fp64 backward (no row sampling), so large shapes take CPU time.
int run_backward(const Options& opt, int cc) {
  const auto variants = flash::backward_variants();
  const auto kernels = select_kernels(variants, opt.flags.kernel, "backward", cc);
  if (kernels.empty()) return 2;
  const Cases cases = attention_cases(opt.flags);
  fmt::print("seed {}\n", opt.seed);
  fmt::print("{:<21} {:>22} {:>4} {:>5} {:>21} {:>21} {:>21} {:>8} {:>7}  {}\n", "backward", "b x sq x sk x hq/hkv", "d",
             "dtype", "dq err / bound", "dk err / bound", "dv err / bound", "ms", "TFLOPS", "result");
  Tally tally;
  std::uint64_t case_seed = opt.seed;
  for (DType dtype : dtypes_of(opt.flags))
    for (int d : cases.dheads)
      for (bool causal : cases.causals)
        for (Shape s : cases.shapes) {
          s.head_dim = d;
          if (!covers_any(variants, kernels, dtype, d, cc)) continue;
          auto prob = flash::testing::make_bwd_problem(s, dtype, causal, opt.layout, case_seed++);
          for (const std::string& k : kernels) {
            if (!covers(variants, k, dtype, d, cc)) continue;
            for (bool deterministic : backward_modes(variants, k)) {
              flash::BackwardArgs a = prob.args;
              a.kernel = k;
              a.deterministic = deterministic;
              std::string name = k + (deterministic ? "/det" : "");
              try {
                name = shown(k, flash::plan_backward(a).kernel) + (deterministic ? "/det" : "");
                const auto r = flash::testing::run_and_check_backward(prob, k, deterministic);
                if (!r.error.empty()) throw flash::Error(r.error);
                flash::testing::L2Flush flush(flash::testing::view_bytes(a.q) + flash::testing::view_bytes(a.k) +
                                              flash::testing::view_bytes(a.v) + flash::testing::view_bytes(a.o) +
                                              flash::testing::view_bytes(a.dout));
                const double ms = flash::testing::median_ms(kTimedCalls, flush, [&] { flash::attention_backward(a); });
                const std::string dsinks =
                    a.dsinks ? fmt::format(" (dsinks err {:.3e} / bound {:.3e})", r.err[3], r.bound[3]) : std::string();
                fmt::print("{:<21} {:>22} {:>4} {:>5} {:>10.3e}/{:>10.3e} {:>10.3e}/{:>10.3e} {:>10.3e}/{:>10.3e} "
                           "{:>8.3f} {:>7.2f}  {}{}{}{}{}\n",
                           name, shape_text(s), d, flash::dtype_name(dtype), r.err[0], r.bound[0], r.err[1], r.bound[1],
                           r.err[2], r.bound[2], ms, flash::testing::backward_flops(s, causal) / (ms * 1e-3) / 1e12,
                           r.ok ? "[OK]" : "[FAIL]", causal ? " causal" : "", flash::testing::score_note(s), dsinks,
                           unwritten_note(r.unwritten));
                (r.ok ? tally.passed : tally.failed)++;
              } catch (const flash::Error& e) {
                fmt::print("{:<21} {:>22} {:>4} {:>5}  [FAIL] ERROR {}\n", name, shape_text(s), d,
                           flash::dtype_name(dtype), e.what());
                ++tally.failed;
              }
            }
          }
        }
  return tally.finish();
}

// --- decode -----------------------------------------------------------------

// One decode case before the head dim, mask and cache layout are chosen.
struct DecodeShape {
  int batch, seqlen_q, heads_q, heads_kv;
  int cache;   // keys per sequence the cache holds (its capacity in the default list)
  int append;  // new keys per sequence
  bool full;   // every sequence's cache full (one shape, as bench) or ragged lengths (the list)
};

std::vector<DecodeShape> decode_shapes(const ProblemFlags& f) {
  if (f.cache)
    return {{f.batch.value_or(1), f.seqlen_q.value_or(1), f.heads.value_or(32), f.heads_kv.value_or(8), *f.cache,
             f.append.value_or(0), true}};
  // Four sequences each, of lengths 0, 1, full and random (ragged_lens); GQA
  // 4 and 8; one query token, or four appended (a speculative step); an 8k
  // cache that the heuristic splits.
  const DecodeShape list[] = {{4, 1, 8, 2, 1024, 0, false}, {4, 4, 16, 4, 2048, 4, false}, {4, 1, 16, 2, 8192, 1, false}};
  std::vector<DecodeShape> out;
  for (DecodeShape s : list) {
    s.batch = f.batch.value_or(s.batch);
    s.seqlen_q = f.seqlen_q.value_or(s.seqlen_q);
    s.heads_q = f.heads.value_or(s.heads_q);
    s.heads_kv = f.heads_kv.value_or(s.heads_kv);
    s.append = f.append.value_or(s.append);
    out.push_back(s);
  }
  return out;
}

int run_decode(const Options& opt, int cc) {
  const ProblemFlags& f = opt.flags;
  const auto variants = flash::decode_variants();
  const auto kernels = select_kernels(variants, f.kernel, "decode", cc);
  if (kernels.empty()) return 2;
  const bool one_shape = f.cache.has_value();
  const std::vector<int> dheads = f.dhead ? std::vector<int>{*f.dhead} : std::vector<int>{64, 128, 256};
  const std::vector<bool> causals =
      one_shape || f.causal || f.window_left >= 0 || f.window_right >= 0 ? std::vector<bool>{f.causal}
                                                                        : std::vector<bool>{false, true};
  const std::vector<int> pages = f.page_size ? std::vector<int>{*f.page_size} : std::vector<int>{0, 16, 256};
  fmt::print("seed {}\n", opt.seed);
  fmt::print("{:<21} {:>24} {:>4} {:>5} {:>7} {:>6} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8}  {}\n", "decode",
             "b x sq x cache+new x hq/hkv", "d", "dtype", "cache", "splits", "max err", "bound", "lse err", "lse bnd",
             "us", "GB/s", "result");
  Tally tally;
  std::uint64_t case_seed = opt.seed;
  flash::testing::DeviceBuffer status(4 * sizeof(int));
  for (DType dtype : dtypes_of(f))
    for (int d : dheads)
      for (bool causal : causals)
        for (const DecodeShape& sh : decode_shapes(f))
          for (int page : pages) {
            if (!covers_any(variants, kernels, dtype, d, cc)) continue;
            flash::testing::DecodeSpec spec;
            spec.dtype = dtype;
            spec.batch = sh.batch;
            spec.seqlen_q = sh.seqlen_q;
            spec.heads_q = sh.heads_q;
            spec.heads_kv = sh.heads_kv;
            spec.head_dim = d;
            spec.page_size = page;
            spec.seqlen_new = sh.append;
            spec.causal = causal;
            spec.window_left = f.window_left, spec.window_right = f.window_right;
            spec.num_splits = f.splits.value_or(0);
            Shape mods;  // the score modifiers, as the forward's
            set_scores(f, mods);
            spec.softcap = mods.softcap, spec.alibi = mods.alibi, spec.sinks = mods.sinks, spec.qk_gain = mods.qk_gain;
            // A paged cache holds whole pages.
            const int keys = sh.full ? sh.cache + sh.append : sh.cache;
            spec.capacity = page > 0 ? (keys + page - 1) / page * page : keys;
            spec.lens = sh.full ? std::vector<int>(sh.batch, sh.cache)
                                : flash::testing::ragged_lens(sh.batch, spec.capacity, sh.append, case_seed);
            const std::string shape =
                fmt::format("{}x{}x{}+{}x{}/{}", sh.batch, sh.seqlen_q, sh.cache, sh.append, sh.heads_q, sh.heads_kv);
            const std::string layout = page > 0 ? fmt::format("page{}", page) : std::string("contig");
            flash::testing::DecodeProblem prob;
            try {
              prob = flash::testing::make_decode_problem(spec, case_seed++);
            } catch (const flash::Error& e) {
              fmt::print("cannot set up decode shape {} {}: {}\n", shape, layout, e.what());
              ++tally.failed;
              continue;
            }
            for (const std::string& k : kernels) {
              if (!covers(variants, k, dtype, d, cc)) continue;
              // Timed on the asynchronous path, as bench does: no wait for the
              // metadata check, its verdict in a status tensor read afterwards.
              flash::DecodeArgs a = prob.args;
              a.kernel = k;
              a.sync_check = false;
              a.status = flash::make_contiguous(status.get(), DType::i32, {4});
              std::string name = k;
              try {
                const flash::DecodePlan plan = flash::plan_decode(a);
                name = shown(k, plan.kernel);
                auto r = flash::testing::run_and_check_decode(prob, k);
                if (!r.error.empty()) throw flash::Error(r.error);
                flash::testing::L2Flush flush(2 * flash::testing::view_bytes(a.k_cache) + flash::testing::view_bytes(a.q) +
                                              flash::testing::view_bytes(a.o));
                const double ms = flash::testing::median_ms(kTimedCalls, flush, [&] { flash::attention_decode(a); });
                const auto words = flash::testing::download(*a.status);
                const int st[4] = {int(words[0]), int(words[1]), int(words[2]), int(words[3])};
                if (st[0] != 0) throw flash::Error("timed call's status: " + flash::describe_decode_status(st));
                std::string notes = unwritten_note(r.unwritten);
                if (r.cache_mismatch) notes += fmt::format(" ({} cache elements differ from the append)", r.cache_mismatch);
                fmt::print("{:<21} {:>24} {:>4} {:>5} {:>7} {:>6} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>9.2f} {:>8.1f}  "
                           "{}{}{}{}\n",
                           name, shape, d, flash::dtype_name(dtype), layout, plan.num_splits, r.max_err, r.bound,
                           r.lse_err, r.lse_bound, ms * 1e3, flash::testing::decode_kv_bytes(spec) / (ms * 1e-3) / 1e9,
                           r.ok ? "[OK]" : "[FAIL]", causal ? " causal" : "", flash::testing::score_note(mods), notes);
                (r.ok ? tally.passed : tally.failed)++;
              } catch (const flash::Error& e) {
                fmt::print("{:<21} {:>24} {:>4} {:>5} {:>7}  [FAIL] ERROR {}\n", name, shape, d,
                           flash::dtype_name(dtype), layout, e.what());
                ++tally.failed;
              }
            }
          }
  return tally.finish();
}

// --- varlen and paged -------------------------------------------------------

// The sequences of one --varlen or --paged call and where they live.
// Queries: packed [total_q, heads_q, head_dim] with cu_seqlens_q (--varlen),
// or dense [batch, seqlen_q, heads_q, head_dim] (--paged alone: every q_len
// equal). Keys: packed like the queries with cu_seqlens_k (page_size 0), or
// in pages of page_size keys through a page table (--paged).
struct SeqCall {
  std::vector<int> q_lens, k_lens;
  bool dense_q = false;
  int page_size = 0;
};

// The keys a call's page table holds per sequence: the most pages a
// sequence needs (at least one, as shuffled_page_table) times the page size.
std::int64_t table_capacity(const SeqCall& c) {
  const int longest = c.k_lens.empty() ? 0 : *std::max_element(c.k_lens.begin(), c.k_lens.end());
  return std::max<std::int64_t>(1, flash::testing::pages_for(longest, c.page_size)) * c.page_size;
}

// Whether a paged call passes seqused_k: packed queries always (FA4's rule),
// dense ones when a sequence has fewer keys than the table holds.
bool passes_seqused_k(const SeqCall& c) {
  if (c.page_size == 0) return false;
  if (!c.dense_q) return true;
  const std::int64_t capacity = table_capacity(c);
  return std::any_of(c.k_lens.begin(), c.k_lens.end(), [&](int n) { return n != capacity; });
}

// The features of flash::Feature the call needs beyond a dense one's.
unsigned call_features(const SeqCall& c) {
  return (c.page_size ? flash::kFeaturePaged : 0u) | (!c.dense_q || passes_seqused_k(c) ? flash::kFeatureVarlen : 0u);
}

// One call on the device, random inputs ([rows, heads, head_dim] memory, or
// [heads, rows, head_dim] with --layout bhsd, for q, o and packed k, v; the
// pages [num_pages, page_size, heads_kv, head_dim], handed out from a
// shuffled pool by benchmarks/paged_table.h, NaN in every row no sequence
// attends), lse [heads_q, total_q] packed or [batch, heads_q, seqlen_q]
// dense, and the fp64 reference of each sequence alone (a dense batch-1
// problem of its lengths over its keys) on sampled rows.
struct SeqProblem {
  Shape shape;  // heads, head dim, window and score modifiers (batch and seqlen unused)
  DType dtype = DType::bf16;
  bool causal = false;
  SeqCall call;
  std::vector<int> cu_q, cu_k;  // each sequence's first query and key row in the host arrays (packed: on the device)
  std::vector<std::vector<int>> rows;  // per sequence, the rows its reference holds
  std::vector<flash::reference::Result> ref;
  flash::testing::ScoreInputs scores;
  flash::testing::DeviceBuffer q, k, v, o, lse, cu_seqlens_q, cu_seqlens_k, seqused_k, page_table;
  flash::ForwardArgs args;  // every view, flag and modifier; kernel left to the caller
};

std::vector<int> prefix_sums(const std::vector<int>& lens) {
  std::vector<int> cu = {0};
  for (int len : lens) cu.push_back(cu.back() + len);
  return cu;
}

// An int32 vector on the device, [values.size()].
flash::TensorView device_ints(flash::testing::DeviceBuffer& buf, const std::vector<int>& values) {
  buf = flash::testing::DeviceBuffer(std::max<std::size_t>(values.size(), 1) * sizeof(std::int32_t));
  const flash::TensorView t =
      flash::make_contiguous(buf.get(), DType::i32, {static_cast<std::int64_t>(values.size())});
  flash::testing::upload(std::vector<double>(values.begin(), values.end()), t);
  return t;
}

SeqProblem make_seq_problem(const Shape& s, const SeqCall& call, DType dtype, bool causal, Layout layout,
                            int sample_rows, std::uint64_t seed) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  SeqProblem p;
  p.shape = s, p.dtype = dtype, p.causal = causal, p.call = call;
  p.cu_q = prefix_sums(call.q_lens);
  p.cu_k = prefix_sums(call.k_lens);
  const int batch = static_cast<int>(call.q_lens.size());
  const std::int64_t Tq = p.cu_q.back(), Tk = p.cu_k.back(), Hq = s.heads_q, Hkv = s.heads_kv, D = s.head_dim;
  std::mt19937_64 rng(seed);
  const auto q = flash::testing::random_values(std::size_t(Tq * Hq * D), dtype, rng, s.qk_gain);
  const auto k = flash::testing::random_values(std::size_t(Tk * Hkv * D), dtype, rng, s.qk_gain);
  const auto v = flash::testing::random_values(std::size_t(Tk * Hkv * D), dtype, rng);
  p.scores = flash::testing::make_score_inputs(batch, s.heads_q, s.softcap, s.alibi, s.sinks,
                                               flash::testing::typical_row_max(s.qk_gain, s.softcap), rng);
  const std::int64_t es = static_cast<std::int64_t>(flash::dtype_size(dtype));
  auto packed = [&](flash::testing::DeviceBuffer& buf, std::int64_t rows, std::int64_t heads) {
    buf = flash::testing::DeviceBuffer(std::max<std::size_t>(std::size_t(rows * heads * D * es), 1));
    return layout == Layout::bhsd ? flash::make_view(buf.get(), dtype, {rows, heads, D}, {D, rows * D, 1})
                                  : flash::make_contiguous(buf.get(), dtype, {rows, heads, D});
  };
  // The packed rows of dense queries as [batch, seqlen_q, heads, head_dim].
  const std::int64_t seqlen_q = call.dense_q && batch > 0 ? call.q_lens[0] : 0;
  auto as_dense = [&](const flash::TensorView& t) {
    return flash::make_view(t.data, dtype, {batch, seqlen_q, t.shape[1], D},
                            {seqlen_q * t.stride[0], t.stride[0], t.stride[1], 1});
  };
  flash::ForwardArgs& a = p.args;
  a.q = packed(p.q, Tq, Hq), a.o = packed(p.o, Tq, Hq);
  flash::testing::upload(q, a.q);
  p.lse = flash::testing::DeviceBuffer(std::max<std::size_t>(std::size_t(Hq * Tq) * sizeof(float), 1));
  if (call.dense_q) {
    a.q = as_dense(a.q), a.o = as_dense(a.o);
    a.lse = flash::make_contiguous(p.lse.get(), DType::f32, {batch, Hq, seqlen_q});
  } else {
    a.lse = flash::make_contiguous(p.lse.get(), DType::f32, {Hq, Tq});
    a.cu_seqlens_q = device_ints(p.cu_seqlens_q, p.cu_q);
    a.max_seqlen_q = *std::max_element(call.q_lens.begin(), call.q_lens.end());
    a.max_seqlen_k = *std::max_element(call.k_lens.begin(), call.k_lens.end());
  }
  if (call.page_size == 0) {
    a.k = packed(p.k, Tk, Hkv), a.v = packed(p.v, Tk, Hkv);
    flash::testing::upload(k, a.k);
    flash::testing::upload(v, a.v);
    a.cu_seqlens_k = device_ints(p.cu_seqlens_k, p.cu_k);
  } else {
    // Each sequence's keys scattered into its pages; every other row NaN, so
    // that a kernel which lets one in fails the check.
    const flash::testing::PageTable t = flash::testing::shuffled_page_table(call.k_lens, call.page_size, seed);
    const std::int64_t P = t.page_size, row = Hkv * D;
    std::vector<double> k_pages(std::size_t(t.num_pages * P * row), kNaN), v_pages = k_pages;
    for (int b = 0; b < batch; ++b)
      for (std::int64_t j = 0; j < call.k_lens[b]; ++j) {
        const std::int64_t page = t.entries[std::size_t(b) * t.max_pages + std::size_t(j / P)];
        const std::int64_t from = (p.cu_k[b] + j) * row, to = (page * P + j % P) * row;
        std::copy_n(k.begin() + from, row, k_pages.begin() + to);
        std::copy_n(v.begin() + from, row, v_pages.begin() + to);
      }
    auto pages = [&](flash::testing::DeviceBuffer& buf, const std::vector<double>& host) {
      buf = flash::testing::DeviceBuffer(host.size() * std::size_t(es));
      const flash::TensorView view = flash::make_contiguous(buf.get(), dtype, {t.num_pages, P, Hkv, D});
      flash::testing::upload(host, view);
      return view;
    };
    a.k = pages(p.k, k_pages), a.v = pages(p.v, v_pages);
    device_ints(p.page_table, t.entries);  // [batch, max_pages], row-major
    a.page_table = flash::make_contiguous(p.page_table.get(), DType::i32, {batch, t.max_pages});
    if (passes_seqused_k(call)) a.seqused_k = device_ints(p.seqused_k, call.k_lens);
  }
  a.causal = causal;
  a.window_left = s.window_left, a.window_right = s.window_right;
  p.scores.apply(a);

  for (int b = 0; b < batch; ++b) {
    const int len_q = call.q_lens[b], len_k = call.k_lens[b];
    flash::reference::Problem rp;
    rp.seqlen_q = len_q, rp.seqlen_k = len_k;
    rp.heads_q = s.heads_q, rp.heads_kv = s.heads_kv, rp.head_dim = s.head_dim;
    rp.softmax_scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(s.head_dim)));  // the API's default
    rp.causal = causal;
    rp.window_left = s.window_left, rp.window_right = s.window_right;
    p.scores.apply(rp);  // ALiBi slopes per head: each sequence's own distances
    p.rows.push_back(flash::testing::sample_rows(len_q, sample_rows, seed + 1 + b));
    if (len_q == 0) {
      p.ref.emplace_back();
      continue;
    }
    auto rows_of = [&](const std::vector<double>& x, const std::vector<int>& cu, std::int64_t heads) {
      return std::vector<double>(x.begin() + cu[b] * heads * D, x.begin() + cu[b + 1] * heads * D);
    };
    p.ref.push_back(flash::reference::forward(rp, rows_of(q, p.cu_q, Hq), rows_of(k, p.cu_k, Hkv),
                                              rows_of(v, p.cu_k, Hkv), dtype, p.rows[b]));
  }
  return p;
}

// One sequence's errors and bounds, by the rule of the dense check
// (testing::run_and_check): O within 2 * the low-precision reference's
// error + the dtype's rounding floor * max|ref|, the LSE within 2^-16
// relative (-inf exactly).
struct SeqCheck {
  double err = 0, bound = 0, lse_err = 0, lse_bound = 0;
  bool ok() const { return err <= bound && lse_err <= lse_bound; }
  double ratio() const { return std::max(err / std::max(bound, 1e-300), lse_err / std::max(lse_bound, 1e-300)); }
};

SeqCheck check_sequence(const SeqProblem& p, int b, const std::vector<double>& o, const std::vector<double>& lse) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const std::int64_t Hq = p.shape.heads_q, D = p.shape.head_dim, Tq = p.cu_q.back(), len = p.call.q_lens[b];
  const flash::reference::Result& ref = p.ref[b];
  SeqCheck c;
  double lowp_err = 0, max_ref = 0, max_lse = 1;
  for (int i : p.rows[b]) {
    const std::int64_t row = p.cu_q[b] + i;  // packed row; dense queries' row b * seqlen_q + i is the same
    for (std::int64_t h = 0; h < Hq; ++h) {
      for (std::int64_t d = 0; d < D; ++d) {
        const std::size_t ri = std::size_t((i * Hq + h) * D + d);
        const double e = std::fabs(o[std::size_t((row * Hq + h) * D + d)] - ref.o[ri]);
        c.err = std::isnan(e) ? kInf : std::max(c.err, e);
        lowp_err = std::max(lowp_err, std::fabs(ref.o_lowp[ri] - ref.o[ri]));
        max_ref = std::max(max_ref, std::fabs(ref.o[ri]));
      }
      const std::size_t at = p.call.dense_q ? std::size_t((b * Hq + h) * len + i) : std::size_t(h * Tq + row);
      const double want = ref.lse[std::size_t(h * len + i)], got = lse[at];
      if (std::isinf(want)) {
        if (got != want) c.lse_err = kInf;
      } else {
        const double e = std::fabs(got - want);
        c.lse_err = std::isnan(e) ? kInf : std::max(c.lse_err, e);
        max_lse = std::max(max_lse, std::fabs(want));
      }
    }
  }
  c.bound = 2 * lowp_err + flash::testing::rounding_floor(p.dtype) * max_ref;
  c.lse_bound = std::ldexp(1.0, -16) * max_lse;
  return c;
}

// --varlen and --paged: one call per page size (none for --varlen alone),
// dtype and variant; every sequence checked on its own, every element of O
// and the LSE written; then timed on the asynchronous path (sync_check off,
// a status tensor), as bench does. The line shows the sequence nearest its
// bound. Variants without the call's features get a line saying so.
int run_sequences(const Options& opt, int cc) {
  const ProblemFlags& f = opt.flags;
  const auto variants = flash::forward_variants();
  const std::vector<std::string> selected = select_kernels(variants, f.kernel, "forward", cc);
  if (selected.empty()) return 2;
  Shape s;
  s.heads_q = f.heads.value_or(8);
  s.heads_kv = f.heads_kv.value_or(s.heads_q);
  s.head_dim = f.dhead.value_or(128);
  s.window_left = f.window_left, s.window_right = f.window_right;
  set_scores(f, s);
  SeqCall base;
  std::string shape;
  double flops = 0;
  if (opt.varlen) {
    base.q_lens = base.k_lens = *opt.varlen;
    std::int64_t total = 0;
    for (int len : *opt.varlen) total += len;
    shape = fmt::format("{}x{}x{}/{}", opt.varlen->size(), total, s.heads_q, s.heads_kv);
    flops = flash::testing::varlen_forward_flops(*opt.varlen, s.heads_q, s.head_dim, f.causal, s.window_left,
                                                 s.window_right);
    fmt::print("seed {}\nlengths {}\n", opt.seed, fmt::join(*opt.varlen, ","));
  } else {  // --paged alone: dense queries, seq_k keys per sequence (a cached prefix when more than seq)
    Shape dense = s;
    dense.batch = f.batch.value_or(2);
    dense.seqlen_q = f.seq.value_or(kPagedSeq);
    dense.seqlen_k = f.seq_k.value_or(dense.seqlen_q);
    base.q_lens.assign(dense.batch, dense.seqlen_q);
    base.k_lens.assign(dense.batch, dense.seqlen_k);
    base.dense_q = true;
    shape = shape_text(dense);
    flops = flash::testing::forward_flops(dense, f.causal);
    fmt::print("seed {}\n", opt.seed);
  }
  fmt::print("{:<21} {:>22} {:>5} {:>6} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8}  {}\n", opt.varlen ? "varlen" : "paged",
             opt.varlen ? "seqs x tokens x hq/hkv" : "b x sq x sk x hq/hkv", "d", "dtype", "max err", "bound", "lse err",
             "lse bnd", "ms", "TFLOPS", "result");
  Tally tally;
  flash::testing::DeviceBuffer status(4 * sizeof(std::int32_t));
  for (int page_size : opt.paged ? *opt.paged : std::vector<int>{0}) {
    SeqCall call = base;
    call.page_size = page_size;
    const unsigned needed = call_features(call);
    std::vector<std::string> kernels;
    for (const std::string& k : selected) {
      const auto v = std::find_if(variants.begin(), variants.end(), [&](const VariantInfo& x) { return x.name == k; });
      if (v == variants.end() || (v->features & needed) == needed) kernels.push_back(k);
      else if (!(v->features & flash::kFeaturePaged) && page_size) fmt::print("{:<21} does not take a paged KV cache\n", k);
      else fmt::print("{:<21} does not take variable-length batches or seqused_k\n", k);
    }
    std::string layout_note = page_size ? fmt::format(" page{}", page_size) : std::string();
    if (passes_seqused_k(call) && call.dense_q) layout_note += " (seqused_k)";
    for (DType dtype : dtypes_of(f)) {
      if (!covers_any(variants, kernels, dtype, s.head_dim, cc)) continue;
      SeqProblem p;
      try {
        p = make_seq_problem(s, call, dtype, f.causal, opt.layout, opt.sample_rows, opt.seed);
      } catch (const flash::Error& e) {
        fmt::print("cannot set up {}{}: {}\n", shape, layout_note, e.what());
        ++tally.failed;
        continue;
      }
      for (const std::string& k : kernels) {
        if (!covers(variants, k, dtype, s.head_dim, cc)) continue;
        flash::ForwardArgs args = p.args;
        args.kernel = k;
        std::string name = k;
        try {
          name = shown(k, flash::plan_forward(args).kernel);
          flash::testing::poison(args.o);
          flash::testing::poison(*args.lse);
          flash::attention_forward(args);  // sync_check: bad metadata would throw
          flash::testing::check(cudaDeviceSynchronize(), "kernel execution");
          const std::vector<double> o = flash::testing::download(args.o), lse = flash::testing::download(*args.lse);
          // Every query row belongs to a sequence: every element must be written.
          std::size_t unwritten = 0;
          for (double x : o) unwritten += std::isnan(x);
          for (double x : lse) unwritten += std::isnan(x);
          SeqCheck worst;
          int worst_seq = -1;
          std::string over;
          for (int b = 0; b < static_cast<int>(call.q_lens.size()); ++b) {
            if (call.q_lens[b] == 0) continue;
            const SeqCheck c = check_sequence(p, b, o, lse);
            if (!c.ok()) over += fmt::format(" seq{}", b);
            if (worst_seq < 0 || !(c.ratio() <= worst.ratio())) worst = c, worst_seq = b;
          }
          const bool ok = unwritten == 0 && over.empty();
          flash::ForwardArgs timed = args;
          timed.sync_check = false;
          timed.status = flash::make_contiguous(status.get(), DType::i32, {4});
          flash::testing::L2Flush flush(flash::testing::view_bytes(args.q) + flash::testing::view_bytes(args.k) +
                                        flash::testing::view_bytes(args.v) + flash::testing::view_bytes(args.o));
          const double ms = flash::testing::median_ms(kTimedCalls, flush, [&] { flash::attention_forward(timed); });
          const auto words = flash::testing::download(*timed.status);
          if (words[0] != 0)
            throw flash::Error(fmt::format("timed call's status: {} {} {} {}", words[0], words[1], words[2], words[3]));
          std::string notes = layout_note + (f.causal ? " causal" : "");
          if (s.window_left >= 0 || s.window_right >= 0) notes += fmt::format(" window {},{}", s.window_left, s.window_right);
          notes += flash::testing::score_note(s) + fmt::format(" (errors of seq{}, the nearest its bound)", worst_seq);
          if (!over.empty()) notes += " over the bound:" + over;
          notes += unwritten_note(unwritten);
          fmt::print("{:<21} {:>22} {:>5} {:>6} {:>10.3e} {:>10.3e} {:>10.3e} {:>10.3e} {:>9.3f} {:>8.2f}  {}{}\n", name,
                     shape, s.head_dim, flash::dtype_name(dtype), worst.err, worst.bound, worst.lse_err,
                     worst.lse_bound, ms, flops / (ms * 1e-3) / 1e12, ok ? "[OK]" : "[FAIL]", notes);
          (ok ? tally.passed : tally.failed)++;
        } catch (const flash::Error& e) {
          fmt::print("{:<21} {:>22} {:>5} {:>6}  [FAIL] ERROR {}{}\n", name, shape, s.head_dim, flash::dtype_name(dtype),
                     e.what(), layout_note);
          ++tally.failed;
        }
      }
    }
  }
  return tally.finish();
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  try {
    opt = parse(argc, argv);
  } catch (const UsageError& e) {
    fmt::print(stderr, "runner: {} (runner --help lists the flags)\n", e.what());
    return 2;
  }
  if (opt.list) {
    list_variants();
    return 0;
  }
  std::string why;
  if (!flash::testing::gpu_available(&why)) {
    fmt::print(stderr, "runner: {}; nothing to check\n", why);
    return 2;
  }
  const int cc = flash::testing::device_compute_capability();
  if (opt.flags.decode) return run_decode(opt, cc);
  if (opt.varlen || opt.paged) return run_sequences(opt, cc);
  if (opt.flags.bwd) return run_backward(opt, cc);
  return run_forward(opt, cc);
}
