// examples/string_compare.cpp -- comparing two strings in dictionary order, every position
// at once: the first position where they differ decides, and where one string is the
// start of the other, the shorter is the smaller.
// The scan: a reduction that keeps the earliest difference (tally::lexicographic_compare),
// and the material's method, a compaction of the differences
// (tally::lexicographic_compare_by_compaction; both in tally/algorithms/lexicographic_compare.hpp).
//
//   string_compare_cpu data/string_compare.txt   two lines: the two strings
//   string_compare_cpu --generate N              two random strings of N letters that
//                                                differ first at position 2N/3
// (string_compare_gpu: the same on the GPU.)
#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include <tally/tally.cuh>
#else
#include <tally/tally.hpp>
#endif

#include "example.hpp"

int main(int argc, char** argv) try {
  const example::arguments args = example::parse(argc, argv);
  std::string s, t;
  if (args.generate > 0) {
    std::mt19937 random(2024);
    std::uniform_int_distribution<int> letter('a', 'y');
    for (std::int64_t i = 0; i < args.generate; ++i) s.push_back(static_cast<char>(letter(random)));
    t = s;
    t[2 * s.size() / 3] = 'z';  // a letter s never has: t is the larger
  } else {
    const std::vector<std::string> lines = example::read_lines(args.file, 2);
    s = lines[0];
    t = lines[1];
  }

  // -1, 0 or 1 as s is before, equal to or after t
#if defined(__CUDACC__)
  const auto s_len = static_cast<std::int64_t>(s.size());
  const auto t_len = static_cast<std::int64_t>(t.size());
  example::device_array<char> d_s(std::vector<char>(s.begin(), s.end()));
  example::device_array<char> d_t(std::vector<char>(t.begin(), t.end()));
  const int by_reduction = tally::lexicographic_compare(d_s.data(), s_len, d_t.data(), t_len);
  const int by_compaction =
      tally::lexicographic_compare_by_compaction(d_s.data(), s_len, d_t.data(), t_len);
#else
  const int by_reduction =
      tally::cpu::lexicographic_compare(s.begin(), s.end(), t.begin(), t.end());
  const int by_compaction =
      tally::cpu::lexicographic_compare_by_compaction(s.begin(), s.end(), t.begin(), t.end());
#endif

  const char* relation[] = {"<", "==", ">"};
  auto shown = [](const std::string& x, const char* name) {
    return x.size() <= 40 ? '"' + x + '"' : name + (" (" + std::to_string(x.size()) + " letters)");
  };
  const std::string left = shown(s, "s"), right = shown(t, "t");
  std::cout << "by reduction:  " << left << ' ' << relation[by_reduction + 1] << ' ' << right
            << "\nby compaction: " << left << ' ' << relation[by_compaction + 1] << ' ' << right
            << '\n';

  const int expected = s.compare(t) < 0 ? -1 : (s.compare(t) > 0 ? 1 : 0);
  return example::report(by_reduction == expected && by_compaction == expected,
                         "std::string::compare");
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
