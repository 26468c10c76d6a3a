// tests/headers/plain_flags/scan.cu -- tally::inclusive_scan and exclusive_scan compiled without
// nvcc's experimental flags: four value types under plus and maximum, a transform
// iterator as input, and every strategy x block algorithm through detail::scan_with.
#include <cstdint>
#include <limits>
#include <vector>

#include "plain_flags.cuh"
#include "tally/tally.cuh"

namespace {

using tally_plain::buffer;
using tally_plain::small_values;

constexpr std::int64_t n = 10000;  // a few tiles of every strategy

template <class T, class Op>
std::vector<T> expected_inclusive(const std::vector<T>& in, Op op) {
  std::vector<T> out(in.size());
  T acc = in[0];
  out[0] = acc;
  for (std::size_t i = 1; i < in.size(); ++i) out[i] = acc = op(acc, in[i]);
  return out;
}

template <class T, class Op>
std::vector<T> expected_exclusive(const std::vector<T>& in, T init, Op op) {
  std::vector<T> out(in.size());
  T acc = init;
  for (std::size_t i = 0; i < in.size(); ++i) {
    out[i] = acc;
    acc = op(acc, in[i]);
  }
  return out;
}

template <class T, class Op>
void check_scans(Op op, T init) {
  const std::vector<T> h = small_values<T>(n);
  buffer<T> in(h), out(n);
  tally::inclusive_scan(in.data(), out.data(), n, op);
  EXPECT_EQ(out.download(), expected_inclusive(h, op));
  tally::exclusive_scan(in.data(), out.data(), n, init, op);
  EXPECT_EQ(out.download(), expected_exclusive(h, init, op));
}

TEST(PlainFlagsScan, Int32) {
  check_scans<std::int32_t>(tally::plus{}, 0);
  check_scans<std::int32_t>(tally::maximum{}, std::numeric_limits<std::int32_t>::lowest());
}
TEST(PlainFlagsScan, Float) {
  check_scans<float>(tally::plus{}, 0.0f);
  check_scans<float>(tally::maximum{}, std::numeric_limits<float>::lowest());
}
TEST(PlainFlagsScan, Double) {
  check_scans<double>(tally::plus{}, 0.0);
  check_scans<double>(tally::maximum{}, std::numeric_limits<double>::lowest());
}
TEST(PlainFlagsScan, Int64) {
  check_scans<std::int64_t>(tally::plus{}, 0);
  check_scans<std::int64_t>(tally::maximum{}, std::numeric_limits<std::int64_t>::lowest());
}

struct twice {
  TALLY_HOST_DEVICE std::int64_t operator()(std::int32_t x) const { return std::int64_t{2} * x; }
};

TEST(PlainFlagsScan, TransformIterator) {
  const std::vector<std::int32_t> h = small_values<std::int32_t>(n);
  std::vector<std::int64_t> doubled(h.begin(), h.end());
  for (auto& x : doubled) x *= 2;
  buffer<std::int32_t> in(h);
  buffer<std::int64_t> out(n);
  tally::inclusive_scan(tally::make_transform_iterator(in.data(), twice{}), out.data(), n);
  EXPECT_EQ(out.download(), expected_inclusive(doubled, tally::plus{}));
}

// One strategy x block selector, inclusive and exclusive, on int32 under plus.
template <class Strategy, class Selector>
void check_pair() {
  const std::vector<std::int32_t> h = small_values<std::int32_t>(n);
  buffer<std::int32_t> in(h), out(n);
  const tally::options o{};
  tally::detail::scan_with<Strategy, Selector, false, std::int32_t>(
      "inclusive_scan", "inclusive_scan_storage_bytes", in.data(), out.data(), n,
      tally::detail::seed_value<std::int32_t, false>{}, tally::plus{}, o);
  EXPECT_EQ(out.download(), expected_inclusive(h, tally::plus{}));
  tally::detail::scan_with<Strategy, Selector, true, std::int32_t>(
      "exclusive_scan", "exclusive_scan_storage_bytes", in.data(), out.data(), n,
      tally::detail::seed_value<std::int32_t, true>{5}, tally::plus{}, o);
  EXPECT_EQ(out.download(), expected_exclusive(h, 5, tally::plus{}));
}

template <class Strategy>
void check_multi_pass() {
  namespace d = tally::detail;
  check_pair<Strategy, d::warp_scans_selector>();
  check_pair<Strategy, d::kogge_stone_selector>();
  check_pair<Strategy, d::kogge_stone_double_buffered_selector>();
  check_pair<Strategy, d::brent_kung_selector>();
  check_pair<Strategy, d::brent_kung_divergent_selector>();
  check_pair<Strategy, d::brent_kung_conflict_free_selector>();
  check_pair<Strategy, d::coarsened_selector>();
}

TEST(PlainFlagsScan, SinglePassStrategies) {
  namespace d = tally::detail;
  check_pair<d::decoupled_lookback::strategy, d::warp_scans_selector>();
  check_pair<d::chained::strategy, d::warp_scans_selector>();
}
TEST(PlainFlagsScan, ReduceThenScan) { check_multi_pass<tally::detail::reduce_then_scan::strategy>(); }
TEST(PlainFlagsScan, ScanThenPropagate) {
  check_multi_pass<tally::detail::scan_then_propagate::strategy>();
}

}  // namespace
