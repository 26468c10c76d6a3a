// tests/device/test_device_common.cuh -- the device-wide scan tests of one block algorithm
// under both strategies. Each test_device_<algorithm>.cu instantiates them for its
// selector (tally::detail::*_selector), so every strategy x block algorithm x type x
// operator x {inclusive, exclusive} runs, while each translation unit compiles only its
// own algorithm's kernels.
//
// For each configuration the input is generated once at the largest size and the oracle
// runs once: a scan is causal, so the expected result for size n is the first n expected
// values. For each size the output is poisoned, the scan runs on the first n elements,
// the first n results are compared, and element n (if any) must still be poison (no
// write past the end).
#pragma once

#include "test_common.cuh"

namespace tally_test {

template <class Strategy, class Selector, bool Exclusive, class T, class Op>
void run_device_scan(const T* in, T* out, std::int64_t n, const T& init, Op op) {
  const char* name = Exclusive ? "exclusive_scan" : "inclusive_scan";
  tally::detail::scan_with<Strategy, Selector, Exclusive, T>(
      name, "storage_bytes", in, out, n, tally::detail::make_seed<T, Exclusive>(init), op,
      tally::options{});
}

template <class Strategy, class Selector, bool Exclusive, class T, class Op>
void check_device_sizes(const std::vector<std::int64_t>& sizes, bool in_place) {
  if (sizes.empty()) return;
  const std::int64_t max_n = *std::max_element(sizes.begin(), sizes.end());
  const auto h = random_vector<T, Op>(static_cast<std::size_t>(max_n), max_n * 3 + Exclusive);
  const T init = test_init<T, Op>();
  const Op op{};
  const auto want = reference_scan(h, Exclusive, init, op);
  device_buffer<T> in(h), out(static_cast<std::size_t>(max_n));
  for (const std::int64_t n : sizes) {
    out.poison();
    run_device_scan<Strategy, Selector, Exclusive>(in.data(), out.data(), n, init, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const std::size_t count = static_cast<std::size_t>(n < max_n ? n + 1 : n);
    const auto got = out.download(count);
    ASSERT_TRUE(matches(got, want, static_cast<std::size_t>(n)))
        << (Exclusive ? "exclusive" : "inclusive") << " scan of n = " << n;
    if (n < max_n) {
      ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)]))
          << "element n = " << n << " was written";
    }
  }
  if (in_place) {
    // in == out: a few sizes (one tile, several tiles, the largest)
    device_buffer<T> work(static_cast<std::size_t>(max_n));
    for (const std::int64_t n : {std::int64_t{1}, sizes[sizes.size() / 2], max_n}) {
      work.upload(h);
      run_device_scan<Strategy, Selector, Exclusive>(work.data(), work.data(), n, init, op);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(matches(work.download(static_cast<std::size_t>(n)), want, static_cast<std::size_t>(n)))
          << "in-place " << (Exclusive ? "exclusive" : "inclusive") << " scan of n = " << n;
    }
  }
}

// The warp_scans selector as the single-pass strategies use it: the same block
// algorithm, but their own tiles (single_pass::default_single_pass_tuning), so that the
// size lists below hit the single-pass tile edges.
struct single_pass_selector : tally::detail::warp_scans_selector {};

template <class Selector, class T>
constexpr std::int64_t tile_of() {
  if constexpr (std::is_same_v<Selector, single_pass_selector>) {
    return tally::detail::single_pass::tile_items<T>();
  } else {
    return tally::detail::default_tile<Selector, T>();
  }
}

// Every size from one tile to two tiles (a stride in quick mode).
template <class Selector, class T>
std::vector<std::int64_t> tile_sweep() {
  const std::int64_t tile = tile_of<Selector, T>();
  std::vector<std::int64_t> v;
  for (std::int64_t n = tile; n <= 2 * tile; n += quick() ? 37 : 1) v.push_back(n);
  return v;
}

// The standard size list; `deep` adds the sizes that need three levels of tile sums.
template <class Selector, class T>
std::vector<std::int64_t> standard_sizes(bool deep) {
  const std::int64_t tile = tile_of<Selector, T>();
  auto v = sizes(tile, std::int64_t{1} << 20);
  if (deep && !quick()) {
    v.push_back(tile * (tile + 1) + 1);  // tiles - 1 > tile: the sums need two more levels
    v.push_back(std::int64_t{1} << 24);
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
  }
  return v;
}

// All type x operator x {inclusive, exclusive} for one strategy and selector.
// int32 plus and mat2 (the non-commutative product) also run the deep sizes and in place.
template <class Strategy, class Selector>
void check_all_types() {
  using tally::maximum;
  using tally::plus;
  {
    SCOPED_TRACE("int32 plus");
    check_device_sizes<Strategy, Selector, false, std::int32_t, plus>(standard_sizes<Selector, std::int32_t>(true), true);
    check_device_sizes<Strategy, Selector, true, std::int32_t, plus>(standard_sizes<Selector, std::int32_t>(true), true);
  }
  {
    SCOPED_TRACE("int32 maximum");
    check_device_sizes<Strategy, Selector, false, std::int32_t, maximum>(standard_sizes<Selector, std::int32_t>(false), false);
    check_device_sizes<Strategy, Selector, true, std::int32_t, maximum>(standard_sizes<Selector, std::int32_t>(false), false);
  }
  {
    SCOPED_TRACE("uint64 plus");
    check_device_sizes<Strategy, Selector, false, std::uint64_t, plus>(standard_sizes<Selector, std::uint64_t>(false), false);
    check_device_sizes<Strategy, Selector, true, std::uint64_t, plus>(standard_sizes<Selector, std::uint64_t>(false), true);
  }
  {
    SCOPED_TRACE("uint64 maximum");
    check_device_sizes<Strategy, Selector, false, std::uint64_t, maximum>(standard_sizes<Selector, std::uint64_t>(false), false);
    check_device_sizes<Strategy, Selector, true, std::uint64_t, maximum>(standard_sizes<Selector, std::uint64_t>(false), false);
  }
  {
    SCOPED_TRACE("float plus");
    check_device_sizes<Strategy, Selector, false, float, plus>(standard_sizes<Selector, float>(false), false);
    check_device_sizes<Strategy, Selector, true, float, plus>(standard_sizes<Selector, float>(false), false);
  }
  {
    SCOPED_TRACE("float maximum");
    check_device_sizes<Strategy, Selector, false, float, maximum>(standard_sizes<Selector, float>(false), false);
    check_device_sizes<Strategy, Selector, true, float, maximum>(standard_sizes<Selector, float>(false), false);
  }
  {
    SCOPED_TRACE("double plus");
    check_device_sizes<Strategy, Selector, false, double, plus>(standard_sizes<Selector, double>(false), false);
    check_device_sizes<Strategy, Selector, true, double, plus>(standard_sizes<Selector, double>(false), true);
  }
  {
    SCOPED_TRACE("double maximum");
    check_device_sizes<Strategy, Selector, false, double, maximum>(standard_sizes<Selector, double>(false), false);
    check_device_sizes<Strategy, Selector, true, double, maximum>(standard_sizes<Selector, double>(false), false);
  }
  {
    SCOPED_TRACE("mat2 product (non-commutative, no identity)");
    check_device_sizes<Strategy, Selector, false, mat2, mat2_product>(standard_sizes<Selector, mat2>(true), true);
    check_device_sizes<Strategy, Selector, true, mat2, mat2_product>(standard_sizes<Selector, mat2>(true), true);
  }
}

// Every size from one tile to two tiles, for int32 plus (inclusive) and the mat2 product
// (exclusive), under the given strategy.
template <class Strategy, class Selector>
void check_tile_sweep() {
  check_device_sizes<Strategy, Selector, false, std::int32_t, tally::plus>(tile_sweep<Selector, std::int32_t>(), false);
  check_device_sizes<Strategy, Selector, true, mat2, mat2_product>(tile_sweep<Selector, mat2>(), false);
}

using reduce_then_scan = tally::detail::reduce_then_scan::strategy;
using scan_then_propagate = tally::detail::scan_then_propagate::strategy;

}  // namespace tally_test

// The tests of one selector: both strategies, all types, and the tile sweeps.
#define TALLY_DEVICE_TESTS(Name, Selector)                                                       \
  TEST(DeviceScan, Name##_ReduceThenScan) {                                                      \
    tally_test::check_all_types<tally_test::reduce_then_scan, Selector>();                      \
  }                                                                                              \
  TEST(DeviceScan, Name##_ScanThenPropagate) {                                                   \
    tally_test::check_all_types<tally_test::scan_then_propagate, Selector>();                   \
  }                                                                                              \
  TEST(DeviceScan, Name##_ReduceThenScan_TileSweep) {                                            \
    tally_test::check_tile_sweep<tally_test::reduce_then_scan, Selector>();                     \
  }                                                                                              \
  TEST(DeviceScan, Name##_ScanThenPropagate_TileSweep) {                                         \
    tally_test::check_tile_sweep<tally_test::scan_then_propagate, Selector>();                  \
  }
