// examples/linear_recurrence.cpp -- a first-order linear recurrence
//     x[i] = a[i] * x[i-1] + b[i],   x[-1] = x0
// every step at once. The file's example: a savings account, whose balance each month
// grows by the month's interest (a = 1 + rate) and then takes the month's deposit (b).
// The scan: an inclusive scan of the affine maps y -> a[i] y + b[i], which compose
// (tally::linear_recurrence, tally/algorithms/linear_recurrence.hpp).
//
//   linear_recurrence_cpu data/linear_recurrence.txt   three lines: x0, the a's, the b's
//   linear_recurrence_cpu --generate N                 N random decays a in [0.9, 1) and
//                                                      inputs b in [-1, 1], from x0 = 0
// (linear_recurrence_gpu: the same on the GPU.)
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <vector>

#if defined(__CUDACC__)
#include <tally/tally.cuh>
#else
#include <tally/tally.hpp>
#endif

#include "example.hpp"

int main(int argc, char** argv) try {
  const example::arguments args = example::parse(argc, argv);
  double x0 = 0;
  std::vector<double> a, b;
  if (args.generate > 0) {
    std::mt19937 random(2024);
    std::uniform_real_distribution<double> decay(0.9, 1.0), input(-1.0, 1.0);
    for (std::int64_t i = 0; i < args.generate; ++i) {
      a.push_back(decay(random));
      b.push_back(input(random));
    }
  } else {
    const std::vector<std::string> lines = example::read_lines(args.file, 3);
    x0 = example::numbers<double>(lines[0]).at(0);
    a = example::numbers<double>(lines[1]);
    b = example::numbers<double>(lines[2]);
    if (a.size() != b.size()) throw std::runtime_error("a and b must have the same length");
  }
  const auto n = static_cast<std::int64_t>(a.size());

  // x[i] for every i
#if defined(__CUDACC__)
  example::device_array<double> d_a(a), d_b(b), d_x(a.size());
  tally::linear_recurrence(d_a.data(), d_b.data(), d_x.data(), n, x0);
  const std::vector<double> x = d_x.to_host();
#else
  std::vector<double> x(a.size());
  tally::cpu::linear_recurrence(a.begin(), a.end(), b.begin(), x.begin(), x0);
#endif

  std::cout << "x0: " << x0 << '\n';
  example::print("a", a);
  example::print("b", b);
  example::print("x", x);

  // the loop, one step after another (the scan associates the same products and sums
  // differently, so the two agree up to rounding)
  bool agrees = true;
  double previous = x0;
  for (std::int64_t i = 0; i < n; ++i) {
    previous = a[i] * previous + b[i];
    agrees = agrees && std::abs(x[i] - previous) <= 1e-9 * (1 + std::abs(previous));
  }
  return example::report(agrees);
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
