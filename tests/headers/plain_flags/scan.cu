// tests/headers/plain_flags/scan.cu -- tally::inclusive_scan and exclusive_scan compiled without
// nvcc's experimental flags: int32 under plus and maximum, a transform iterator as input,
// and each strategy of tally::textbook. (Every GPU test compiles with the same flags and
// nvcc's warnings as errors; this unit is the small one that says so on its own.)
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

// One textbook strategy x block algorithm, inclusive and exclusive, on int32 under plus.
void check_textbook(tally::scan_strategy strategy, tally::block_scan block) {
  const std::vector<std::int32_t> h = small_values<std::int32_t>(n);
  buffer<std::int32_t> in(h), out(n);
  tally::options o;
  o.strategy = strategy;
  o.block = block;
  tally::textbook::inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
  EXPECT_EQ(out.download(), expected_inclusive(h, tally::plus{}));
  tally::textbook::exclusive_scan(in.data(), out.data(), n, 5, tally::plus{}, o);
  EXPECT_EQ(out.download(), expected_exclusive(h, 5, tally::plus{}));
}

TEST(PlainFlagsScan, Textbook) {
  using tally::block_scan;
  using tally::scan_strategy;
  check_textbook(scan_strategy::chained, block_scan::warp_scans);
  check_textbook(scan_strategy::decoupled_lookback, block_scan::warp_scans);
  check_textbook(scan_strategy::reduce_then_scan, block_scan::brent_kung);
  check_textbook(scan_strategy::scan_then_propagate, block_scan::kogge_stone);
}

}  // namespace
