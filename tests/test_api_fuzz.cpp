// Random malformed calls to plan_forward, plan_backward and plan_decode:
// a valid call of random sizes (dense, variable-length, paged; optional
// LSE, ALiBi, sinks, new keys), then one to three mutations (a size or
// stride from a list of edge values, a rank, a dtype outside the enum, a
// null, misaligned, aliased or overlapping pointer, a wild window, scale,
// softcap, split count, workspace or kernel name). Every call must return
// or raise flash::Error: no crash and no other exception (the brief's "bad
// input gets a flash::Error ... never a crash"). test_api.cpp checks each
// class of bad argument and its message one at a time; this checks their
// combinations. Only plan_* calls (they launch nothing), so the fake device
// addresses are safe on a GPU machine too. The seed is fresh each run
// (FLASH_TEST_SEED repeats one); a failure prints the call's index.
// Session 66: 1.2 M such calls (plan_* and attention_*) on a machine
// without a GPU raised flash::Error every time.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <variant>

#include "flash/flash.h"

namespace {

using flash::DType;
using flash::TensorView;

// Far apart (2^40 bytes), so that unmutated views overlap nothing.
char* fake(int i) { return reinterpret_cast<char*>(static_cast<std::uintptr_t>(i + 1) << 40); }
// An address moved by d bytes, in integers (the pointer may be null: no
// pointer arithmetic on it).
void* shifted(void* p, std::int64_t d) {
  return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) + static_cast<std::uintptr_t>(d));
}

std::uint64_t fresh_seed() {
  const char* env = std::getenv("FLASH_TEST_SEED");
  return env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
}

class Fuzzer {
 public:
  explicit Fuzzer(std::uint64_t seed) : rng_(seed) {}
  int below(int n) { return static_cast<int>(rng_() % static_cast<std::uint64_t>(n)); }
  TensorView view(int i, DType t, std::initializer_list<std::int64_t> shape) {
    return flash::make_contiguous(fake(i), t, shape);
  }
  std::int64_t wild() {
    static constexpr std::int64_t kValues[] = {-1, 0, 1, 2, 3, 7, 8, 63, 64, 65, 127, 128, 255, 256, 1 << 20,
                                               (std::int64_t{1} << 31) - 1, std::int64_t{1} << 31,
                                               std::int64_t{1} << 40, std::numeric_limits<std::int64_t>::max(),
                                               std::numeric_limits<std::int64_t>::min()};
    return kValues[below(std::size(kValues))];
  }
  int wild_int() {
    static constexpr int kValues[] = {-7, -2, -1, 0, 1, 5, 127, 1 << 20, std::numeric_limits<int>::max(),
                                      std::numeric_limits<int>::min()};
    return kValues[below(std::size(kValues))];
  }
  float wild_float() {
    static constexpr float kValues[] = {0.0f, -1.0f, 1e-30f, 0.125f, 30.0f, 1e30f, INFINITY, -INFINITY, NAN};
    return kValues[below(std::size(kValues))];
  }
  void mutate(TensorView& t) {
    switch (below(9)) {
      case 0: t.shape[below(4)] = wild(); break;
      case 1: t.stride[below(4)] = wild(); break;
      case 2: t.rank = below(7) - 1; break;
      case 3: t.dtype = static_cast<DType>(below(6)); break;  // 4 and 5 are outside the enum
      case 4: t.data = nullptr; break;
      case 5: t.data = shifted(t.data, below(2) ? 2 : 6); break;  // misaligned
      case 6: t.data = fake(0); break;  // aliases q
      case 7: t.data = shifted(t.data, 64 - (std::int64_t{1} << 40)); break;  // inside the view before
      default: {  // a negated stride (INT64_MIN's own negation, without the overflow)
        std::int64_t& st = t.stride[below(4)];
        st = static_cast<std::int64_t>(std::uint64_t{0} - static_cast<std::uint64_t>(t.stride[below(4)]));
        break;
      }
    }
  }
  void mutate(std::optional<TensorView>& t) {
    if (t) mutate(*t);
  }
  void workspace(void*& ptr, std::size_t& bytes) {
    ptr = below(3) ? shifted(fake(20), below(3)) : nullptr;
    bytes = static_cast<std::size_t>(wild());
  }
  std::string kernel() {
    static const char* const kNames[] = {"", "nope", "naive", "tiled", "wgmma", "wgmma_persistent", "splitkv", "auto"};
    return kNames[below(std::size(kNames))];
  }

 private:
  std::mt19937_64 rng_;
};

// A view of a call's tensors, required (TensorView) or optional, to break one
// at random.
using AnyView = std::variant<TensorView*, std::optional<TensorView>*>;

// One to three of a call's arguments broken: one of `views`, or one of the
// scalars every entry point has (window, softcap, softmax scale, kernel,
// workspace), or what `extra` breaks (the entry point's own scalars).
template <class Args, class Extra>
void break_some(Fuzzer& f, Args& a, std::initializer_list<AnyView> views, Extra&& extra) {
  const int n = static_cast<int>(views.size());
  for (int m = 1 + f.below(3); m > 0; --m) {
    const int c = f.below(n + 6);
    if (c < n) {
      std::visit([&](auto* v) { f.mutate(*v); }, views.begin()[c]);
      continue;
    }
    switch (c - n) {
      case 0: a.window_left = f.wild_int(), a.window_right = f.wild_int(); break;
      case 1: a.softcap = f.wild_float(); break;
      case 2: a.softmax_scale = f.wild_float(); break;
      case 3: a.kernel = f.kernel(); break;
      case 4: f.workspace(a.workspace, a.workspace_bytes); break;
      default: extra(); break;
    }
  }
}

// The sizes of one random valid call.
struct Sizes {
  std::int64_t b, sq, sk, hkv, hq, d;
  DType t;
  static Sizes draw(Fuzzer& f) {
    static constexpr std::int64_t kDims[] = {64, 128, 256, 96, 32};
    Sizes s{1 + f.below(3), 1 + f.below(300), 1 + f.below(300), 1 + f.below(4), 0, kDims[f.below(5)],
            f.below(4) ? DType::bf16 : DType::f16};
    s.hq = s.hkv * (1 + f.below(3));
    return s;
  }
};

// Returns normally or raises flash::Error; anything else is a failure.
void expect_error_or_plan(const char* what, int call, const std::function<void()>& f) {
  try {
    f();
  } catch (const flash::Error& e) {
    EXPECT_GT(std::string(e.what()).size(), 0u) << what << " call " << call << ": an empty message";
  } catch (const std::exception& e) {
    ADD_FAILURE() << what << " call " << call << ": " << e.what() << " (not a flash::Error)";
  } catch (...) {
    ADD_FAILURE() << what << " call " << call << ": an exception that is not a std::exception";
  }
}

constexpr int kCalls = 4000;

TEST(ApiFuzz, PlanForwardRaisesOnlyFlashErrors) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("FLASH_TEST_SEED=" + std::to_string(seed));
  Fuzzer f(seed);
  for (int call = 0; call < kCalls; ++call) {
    const Sizes s = Sizes::draw(f);
    flash::ForwardArgs a;
    a.q = f.view(0, s.t, {s.b, s.sq, s.hq, s.d});
    a.k = f.view(1, s.t, {s.b, s.sk, s.hkv, s.d});
    a.v = f.view(2, s.t, {s.b, s.sk, s.hkv, s.d});
    a.o = f.view(3, s.t, {s.b, s.sq, s.hq, s.d});
    if (f.below(2)) a.lse = f.view(4, DType::f32, {s.b, s.hq, s.sq});
    if (f.below(4) == 0) a.alibi_slopes = f.view(5, DType::f32, {s.hq});
    if (f.below(4) == 0) a.sinks = f.view(6, DType::f32, {s.hq});
    if (f.below(4) == 0) {  // variable-length
      a.q = f.view(0, s.t, {s.b * s.sq, s.hq, s.d});
      a.k = f.view(1, s.t, {s.b * s.sk, s.hkv, s.d});
      a.v = f.view(2, s.t, {s.b * s.sk, s.hkv, s.d});
      a.o = f.view(3, s.t, {s.b * s.sq, s.hq, s.d});
      if (a.lse) a.lse = f.view(4, DType::f32, {s.hq, s.b * s.sq});
      a.cu_seqlens_q = f.view(7, DType::i32, {s.b + 1});
      a.cu_seqlens_k = f.view(8, DType::i32, {s.b + 1});
      a.max_seqlen_q = static_cast<int>(s.sq);
      a.max_seqlen_k = static_cast<int>(s.sk);
    } else if (f.below(4) == 0) {  // paged
      a.k = f.view(1, s.t, {8, 64, s.hkv, s.d});
      a.v = f.view(2, s.t, {8, 64, s.hkv, s.d});
      a.page_table = f.view(9, DType::i32, {s.b, 4});
    }
    if (f.below(5) == 0) a.seqused_k = f.view(10, DType::i32, {s.b});
    if (f.below(5) == 0) a.status = f.view(11, DType::i32, {4});
    a.causal = f.below(2);
    break_some(f, a,
               {&a.q, &a.k, &a.v, &a.o, &a.lse, &a.alibi_slopes, &a.sinks, &a.cu_seqlens_q, &a.cu_seqlens_k,
                &a.page_table, &a.seqused_k, &a.status},
               [&] { a.max_seqlen_q = f.wild_int(), a.max_seqlen_k = f.wild_int(); });
    expect_error_or_plan("plan_forward", call, [&] { flash::plan_forward(a); });
    if (HasFailure()) return;
  }
}

TEST(ApiFuzz, PlanBackwardRaisesOnlyFlashErrors) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("FLASH_TEST_SEED=" + std::to_string(seed));
  Fuzzer f(seed);
  for (int call = 0; call < kCalls; ++call) {
    const Sizes s = Sizes::draw(f);
    flash::BackwardArgs a;
    a.q = f.view(0, s.t, {s.b, s.sq, s.hq, s.d});
    a.k = f.view(1, s.t, {s.b, s.sk, s.hkv, s.d});
    a.v = f.view(2, s.t, {s.b, s.sk, s.hkv, s.d});
    a.o = f.view(3, s.t, {s.b, s.sq, s.hq, s.d});
    a.lse = f.view(4, DType::f32, {s.b, s.hq, s.sq});
    a.dout = f.view(5, s.t, {s.b, s.sq, s.hq, s.d});
    a.dq = f.view(6, s.t, {s.b, s.sq, s.hq, s.d});
    a.dk = f.view(7, s.t, {s.b, s.sk, s.hkv, s.d});
    a.dv = f.view(8, s.t, {s.b, s.sk, s.hkv, s.d});
    if (f.below(4) == 0) {
      a.sinks = f.view(9, DType::f32, {s.hq});
      if (f.below(2)) a.dsinks = f.view(10, DType::f32, {s.hq});
    }
    if (f.below(4) == 0) a.alibi_slopes = f.view(11, DType::f32, {s.b, s.hq});
    a.causal = f.below(2);
    a.deterministic = f.below(2);
    break_some(f, a, {&a.q, &a.k, &a.v, &a.o, &a.lse, &a.dout, &a.dq, &a.dk, &a.dv, &a.dsinks, &a.alibi_slopes},
               [&] { a.deterministic = !a.deterministic; });
    expect_error_or_plan("plan_backward", call, [&] { flash::plan_backward(a); });
    if (HasFailure()) return;
  }
}

TEST(ApiFuzz, PlanDecodeRaisesOnlyFlashErrors) {
  const std::uint64_t seed = fresh_seed();
  SCOPED_TRACE("FLASH_TEST_SEED=" + std::to_string(seed));
  Fuzzer f(seed);
  for (int call = 0; call < kCalls; ++call) {
    const Sizes s = Sizes::draw(f);
    const std::int64_t new_q = 1 + f.below(4);
    flash::DecodeArgs a;
    a.q = f.view(0, s.t, {s.b, new_q, s.hq, s.d});
    a.k_cache = f.view(1, s.t, {s.b, s.sk, s.hkv, s.d});
    a.v_cache = f.view(2, s.t, {s.b, s.sk, s.hkv, s.d});
    a.cache_seqlens = f.view(3, DType::i32, {s.b});
    a.o = f.view(4, s.t, {s.b, new_q, s.hq, s.d});
    if (f.below(3) == 0) {
      a.k_cache = f.view(1, s.t, {16, 16, s.hkv, s.d});
      a.v_cache = f.view(2, s.t, {16, 16, s.hkv, s.d});
      a.page_table = f.view(5, DType::i32, {s.b, 4});
    }
    if (f.below(3) == 0) {
      a.k_new = f.view(6, s.t, {s.b, new_q, s.hkv, s.d});
      a.v_new = f.view(7, s.t, {s.b, new_q, s.hkv, s.d});
    }
    if (f.below(3) == 0) a.lse = f.view(8, DType::f32, {s.b, s.hq, new_q});
    a.causal = f.below(2);
    break_some(f, a, {&a.q, &a.k_cache, &a.v_cache, &a.cache_seqlens, &a.o, &a.page_table, &a.k_new, &a.v_new, &a.lse},
               [&] { a.num_splits = f.wild_int(); });
    expect_error_or_plan("plan_decode", call, [&] { flash::plan_decode(a); });
    if (HasFailure()) return;
  }
}

}  // namespace
