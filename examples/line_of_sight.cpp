// examples/line_of_sight.cpp -- which points of a terrain profile an observer standing at
// point 0 sees: point i is visible when its angle of elevation, seen from point 0, is above
// the angle of every point before it.
// The scan: an exclusive max-scan of the slopes (tally::line_of_sight,
// tally/algorithms/line_of_sight.hpp).
//
//   line_of_sight_cpu data/line_of_sight.txt   the spacing of the samples, then the altitudes
//   line_of_sight_cpu --generate N             N altitudes 1 apart: a valley's side that rises
//                                              ever more steeply, with random bumps
// (line_of_sight_gpu: the same on the GPU.)
#include <cstdint>
#include <iostream>
#include <limits>
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
  double spacing = 1;
  std::vector<double> altitude;
  if (args.generate > 0) {
    std::mt19937 random(2024);
    std::uniform_real_distribution<double> bump(-1.0, 1.0);
    const double n = static_cast<double>(args.generate);
    for (double i = 0; i < n; ++i) altitude.push_back(i * i / n + bump(random));
  } else {
    const std::vector<std::string> lines = example::read_lines(args.file, 2);
    spacing = example::numbers<double>(lines[0]).at(0);
    altitude = example::numbers<double>(lines[1]);
  }
  const std::int64_t n = static_cast<std::int64_t>(altitude.size());

  // visible[i]: 1 where the observer at point 0 sees point i
#if defined(__CUDACC__)
  example::device_array<double> d_altitude(altitude);
  example::device_array<unsigned char> d_visible(altitude.size());
  tally::line_of_sight(d_altitude.data(), n, spacing, d_visible.data());
  const std::vector<unsigned char> visible = d_visible.to_host();
#else
  std::vector<unsigned char> visible(altitude.size());
  tally::cpu::line_of_sight(altitude.begin(), altitude.end(), spacing, visible.begin());
#endif

  std::vector<std::int64_t> seen;
  for (std::int64_t i = 0; i < n; ++i) {
    if (visible[i]) seen.push_back(i);
  }
  example::print("altitudes", altitude);
  example::print("visible points", seen);
  std::cout << seen.size() << " of " << n << " points visible\n";

  // the loop: the steepest slope so far hides every point below it
  double steepest = -std::numeric_limits<double>::infinity();
  bool agrees = visible[0] == 1;
  for (std::int64_t i = 1; i < n; ++i) {
    const double slope = (altitude[i] - altitude[0]) / (spacing * static_cast<double>(i));
    agrees = agrees && visible[i] == (slope > steepest);
    if (slope > steepest) steepest = slope;
  }
  return example::report(agrees);
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
