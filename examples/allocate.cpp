// examples/allocate.cpp -- allocating memory to parallel workers: worker i asks for
// sizes[i] units and gets the block that starts at the sum of the sizes before it, all
// workers at once. The course's picture: pieces of 3, 5, 2, ... inches cut from one sausage.
// The scan: an exclusive sum of the sizes (tally::allocate, tally/algorithms/allocate.hpp).
//
//   allocate_cpu data/allocate.txt     a sausage's length, then the pieces' sizes
//   allocate_cpu --generate N          N random sizes from 0 to 99, no length limit
// (allocate_gpu: the same on the GPU.)
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
  std::int64_t length = 0;  // 0: no limit
  std::vector<std::int32_t> sizes;
  if (args.generate > 0) {
    std::mt19937 random(2024);
    std::uniform_int_distribution<std::int32_t> size(0, 99);
    for (std::int64_t i = 0; i < args.generate; ++i) sizes.push_back(size(random));
  } else {
    const std::vector<std::string> lines = example::read_lines(args.file, 2);
    length = example::numbers<std::int64_t>(lines[0]).at(0);
    sizes = example::numbers<std::int32_t>(lines[1]);
  }
  const std::int64_t n = static_cast<std::int64_t>(sizes.size());

  // offsets[i] = sizes[0] + ... + sizes[i-1] (in int64: the sums may pass 2^31), and the
  // total of all sizes
#if defined(__CUDACC__)
  example::device_array<std::int32_t> d_sizes(sizes);
  example::device_array<std::int64_t> d_offsets(sizes.size());
  const std::int64_t total = tally::allocate(d_sizes.data(), n, d_offsets.data());
  const std::vector<std::int64_t> offsets = d_offsets.to_host();
#else
  std::vector<std::int64_t> offsets(sizes.size());
  const std::int64_t total = tally::cpu::allocate(sizes.begin(), sizes.end(), offsets.begin());
#endif

  // piece i is [offsets[i], offsets[i] + sizes[i]): the cuts are at the ends of the pieces
  std::vector<std::int64_t> cuts(sizes.size());
  for (std::int64_t i = 0; i < n; ++i) cuts[i] = offsets[i] + sizes[i];
  example::print("sizes", sizes);
  example::print("pieces start at", offsets);
  example::print("cuts at", cuts);
  std::cout << "total: " << total;
  if (length > 0) {
    std::cout << " of " << length << " inches used, " << length - total << " inches left";
  }
  std::cout << '\n';

  std::int64_t sum = 0;
  bool agrees = true;
  for (std::int64_t i = 0; i < n; ++i) {
    agrees = agrees && offsets[i] == sum;
    sum += sizes[i];
  }
  return example::report(agrees && total == sum);
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
