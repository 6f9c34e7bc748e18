// Compiled by a plain C++ compiler against the installed headers: lists the
// variants and checks that a bad call raises flash::Error.
#include <flash/flash.h>

#include <cstdio>

int main() {
  int built = 0;
  for (const auto& v : flash::forward_variants()) {
    std::printf("%s%s: %s\n", v.name.c_str(), v.built ? "" : " (not built)", v.description.c_str());
    built += v.built;
  }
  flash::ForwardArgs args;  // every view empty: rank 0
  try {
    flash::attention_forward(args);
  } catch (const flash::Error& e) {
    std::printf("flash::Error: %s\n", e.what());
    return built > 0 ? 0 : 1;
  }
  return 1;
}
