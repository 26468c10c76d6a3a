// examples/polynomial.cpp -- evaluating a polynomial p(x) = c[0] + c[1] x + ... + c[d] x^d,
// all its terms at once.
// The scan: Horner's steps p <- p x + c[k] are affine maps, and their composition is one
// reduction (tally::polynomial_evaluate; at many points, a segmented reduction, one
// segment per point); the material's method, the powers of x by an exclusive
// multiplies-scan and then a sum of the terms (tally::polynomial_evaluate_by_powers;
// both in tally/algorithms/polynomial.hpp).
//
//   polynomial_cpu data/polynomial.txt   the coefficients c[0] ... c[d], then the points
//   polynomial_cpu --generate N          N random coefficients in [-1, 1], at 8 points
// (polynomial_gpu: the same on the GPU.)
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
  std::vector<double> c, xs;
  if (args.generate > 0) {
    std::mt19937 random(2024);
    std::uniform_real_distribution<double> coefficient(-1.0, 1.0);
    for (std::int64_t k = 0; k < args.generate; ++k) c.push_back(coefficient(random));
    for (int j = 0; j < 8; ++j) xs.push_back(-0.9 + 1.8 * j / 7);
  } else {
    const std::vector<std::string> lines = example::read_lines(args.file, 2);
    c = example::numbers<double>(lines[0]);
    xs = example::numbers<double>(lines[1]);
  }
  const auto degree = static_cast<std::int64_t>(c.size()) - 1;
  const auto m = static_cast<std::int64_t>(xs.size());

  // ys[j] = p(xs[j]); and at the first point, both ways
#if defined(__CUDACC__)
  example::device_array<double> d_c(c), d_xs(xs), d_ys(xs.size());
  tally::polynomial_evaluate(d_c.data(), degree, d_xs.data(), m, d_ys.data());
  const std::vector<double> ys = d_ys.to_host();
  const double horner = tally::polynomial_evaluate(d_c.data(), degree, xs.at(0));
  const double by_powers = tally::polynomial_evaluate_by_powers(d_c.data(), degree, xs.at(0));
#else
  std::vector<double> ys(xs.size());
  tally::cpu::polynomial_evaluate(c.begin(), c.end(), xs.begin(), xs.end(), ys.begin());
  const double horner = tally::cpu::polynomial_evaluate(c.begin(), c.end(), xs.at(0));
  const double by_powers = tally::cpu::polynomial_evaluate_by_powers(c.begin(), c.end(), xs.at(0));
#endif

  std::cout << "degree " << degree << '\n';
  example::print("x", xs);
  example::print("p(x)", ys);
  std::cout << "p(" << xs[0] << "): by Horner's rule " << horner << ", by powers " << by_powers
            << '\n';

  // the loop: Horner's rule, highest coefficient first; `size` (the sum of the terms'
  // magnitudes) bounds the rounding that another order of the same sums may give
  bool agrees = true;
  for (std::int64_t j = 0; j < m; ++j) {
    double p = 0, size = 0;
    for (std::int64_t k = degree; k >= 0; --k) {
      p = p * xs[j] + c[k];
      size = size * std::abs(xs[j]) + std::abs(c[k]);
    }
    auto close = [&](double y) { return std::abs(y - p) <= 1e-9 * size; };
    agrees = agrees && close(ys[j]) && (j > 0 || (close(horner) && close(by_powers)));
  }
  return example::report(agrees);
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
