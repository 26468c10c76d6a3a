// tests/install/main.cpp -- a CPU program against the installed tally::cpu: an inclusive
// scan large enough to take the parallel, vectorised path (oneTBB and the Highway kernels
// of the static library), checked against the closed form.
#include <cstdint>
#include <cstdio>
#include <vector>

#include <tally/tally.hpp>

int main() {
  const std::int64_t n = std::int64_t{1} << 20;
  std::vector<std::int64_t> x(n), y(n);
  for (std::int64_t i = 0; i < n; ++i) x[i] = i + 1;
  tally::cpu::inclusive_scan(x.begin(), x.end(), y.begin());
  for (std::int64_t i = 0; i < n; ++i) {
    if (y[i] != (i + 1) * (i + 2) / 2) {
      std::fprintf(stderr, "tally install check: y[%lld] = %lld, expected %lld\n",
                   static_cast<long long>(i), static_cast<long long>(y[i]),
                   static_cast<long long>((i + 1) * (i + 2) / 2));
      return 1;
    }
  }
  std::printf("tally install check: tally::cpu::inclusive_scan of 1..%lld ends in %lld\n",
              static_cast<long long>(n), static_cast<long long>(y[n - 1]));
  return 0;
}
