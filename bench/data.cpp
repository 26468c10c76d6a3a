// bench/data.cpp -- input generation and poisoning, in parallel.
//
// Both write every page of their buffer from the oneTBB worker threads, which is also the
// first touch of a fresh allocation: the pages are mapped before any timing starts (and,
// on a NUMA machine, spread over the nodes of the threads that will work on them).
#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>

#include <cstring>

#include "verify.hpp"

namespace tally_bench {

namespace {

constexpr std::int64_t chunk_elements = std::int64_t{1} << 16;

template <class T>
void fill_input_typed(T* data, std::int64_t n, std::uint64_t seed) {
  tbb::parallel_for(tbb::blocked_range<std::int64_t>(0, n, chunk_elements),
                    [&](const tbb::blocked_range<std::int64_t>& r) {
                      for (std::int64_t i = r.begin(); i != r.end(); ++i) {
                        data[i] = static_cast<T>(input_value(seed, i));
                      }
                    });
}

}  // namespace

void fill_input(std::int32_t* data, std::int64_t n, std::uint64_t seed) {
  fill_input_typed(data, n, seed);
}
void fill_input(std::int64_t* data, std::int64_t n, std::uint64_t seed) {
  fill_input_typed(data, n, seed);
}
void fill_input(float* data, std::int64_t n, std::uint64_t seed) { fill_input_typed(data, n, seed); }
void fill_input(double* data, std::int64_t n, std::uint64_t seed) {
  fill_input_typed(data, n, seed);
}

void poison(void* data, std::size_t bytes) {
  auto* p = static_cast<unsigned char*>(data);
  tbb::parallel_for(tbb::blocked_range<std::size_t>(0, bytes, std::size_t{1} << 18),
                    [&](const tbb::blocked_range<std::size_t>& r) {
                      std::memset(p + r.begin(), 0x7F, r.size());
                    });
}

}  // namespace tally_bench
