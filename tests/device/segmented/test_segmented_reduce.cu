// GPU segmented reduce by long ranges (device/segmented/ranges_reduce.cuh).
//
// The public segmented_reduce takes this kernel from 2^24 values on, or where segments
// average 8 KiB or more, so the tests of test_segmented.cu reach it only with long
// segments. Here it runs directly with ranges forced to 1, 3 and max_sub_tiles sub-tiles
// (and the automatic choice), so that on inputs of up to 2^20 values a range holds many
// sub-tiles, many ranges look back over one another (more ranges than the device holds
// blocks at once with 1-sub-tile ranges), and segments cross sub-tiles and ranges at
// every kind of edge: lengths 1, 5, 32, 1000, a sub-tile +- 1, a range +- 1, random
// lengths with empty segments, one segment of all values, segments not covering the
// whole array (offsets[0] > 0 and values past offsets[S]); 4- and 8-byte values, a
// non-commutative operator of each size (affine maps composed in order), init reaching
// every result (maximum with an init above many values), 32- and 64-bit offsets, both
// protocols, the deterministic look-back. The commutative operators with an identity
// (plus, maximum) take the pieces of fold_pieces in every range whose segments average
// 2 KiB or more (lengths 1000 in ranges of 48 sub-tiles, a sub-tile and longer; the
// input's partial last vector in a row of its own or in a staged sub-tile) and the
// sub-tiles elsewhere; the affine maps always take the sub-tiles. Each call writes into a
// buffer one longer than the segments, whose last element must stay poison. Results are compared exactly with tally::cpu::sequential.
#include <cstdint>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "test_affine.cuh"
#include "test_common.cuh"

namespace {

using namespace tally_test;
using namespace tally_test::affine;
namespace seq = tally::cpu::sequential;
namespace sr = tally::detail::segmented_reduce;
using i64 = std::int64_t;
using lookback_protocol = tally::detail::decoupled_lookback::protocol;
using chained_protocol = tally::detail::chained::protocol;

template <class T>
std::vector<T> values(std::size_t n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<T> h(n);
  for (auto& x : h) {
    if constexpr (requires { x.a; }) {
      x.a = static_cast<decltype(x.a)>(g() | 1u);
      x.b = static_cast<decltype(x.b)>(g());
    } else {
      x = static_cast<T>(static_cast<int>(g() % 201) - 100);  // small integers: exact sums
    }
  }
  return h;
}

// Segment lengths covering n - lead - tail values, by pattern.
std::vector<i64> lengths(int pattern, i64 total, i64 sub_tile, i64 range, std::mt19937_64& g) {
  std::vector<i64> lens;
  for (i64 at = 0; at < total;) {
    i64 len = 1;
    switch (pattern) {
      case 0: len = 1; break;
      case 1: len = 5; break;
      case 2: len = 32; break;
      case 3: len = 1000; break;
      case 4: len = sub_tile + (g() % 3) - 1; break;
      case 5: len = range + (g() % 3) - 1; break;
      case 6: len = g() % 4 == 0 ? 0 : static_cast<i64>(g() % 3000); break;  // empty ones too
      case 7: len = total; break;
      default: break;
    }
    len = len < total - at ? len : total - at;
    lens.push_back(len);
    at += len;
  }
  if (pattern == 6) lens.push_back(0);  // an empty last segment
  return lens;
}

template <class Offset, class T, class Protocol, class Op>
void check(const std::vector<T>& h, const device_buffer<T>& in, i64 n, int pattern, i64 lead, i64 range,
           T init, Op op, bool deterministic, std::mt19937_64& g) {
  constexpr i64 sub_tile = sr::sub_tile_items<T>();
  const i64 tail = lead > 0 ? 3 : 0;
  if (lead + tail > n) return;
  const auto lens = lengths(pattern, n - lead - tail, sub_tile, range > 0 ? range : 8 * sub_tile, g);
  std::vector<Offset> off{static_cast<Offset>(lead)};
  for (const i64 len : lens) off.push_back(static_cast<Offset>(off.back() + len));
  const i64 segments = static_cast<i64>(lens.size());
  if (segments == 0) return;
  const device_buffer<Offset> offsets(off);
  device_buffer<T> out(static_cast<std::size_t>(segments) + 1);
  out.poison();
  tally::options o;
  o.deterministic = deterministic;
  sr::run<Protocol>("test", in.data(), out.data(), n, static_cast<const Offset*>(offsets.data()), segments,
                    init, op, o, range);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  std::vector<T> want(static_cast<std::size_t>(segments));
  seq::segmented_reduce(h.begin(), off.begin(), off.end(), want.begin(), init, op);
  const auto got = out.download();
  std::ostringstream what;
  what << "n = " << n << ", pattern " << pattern << " (" << segments << " segments), offsets[0] = " << lead
       << ", range = " << range << (deterministic ? ", deterministic" : "");
  ASSERT_TRUE(device_buffer<T>::is_poison(got.back())) << what.str() << ": wrote past the segments";
  for (i64 k = 0; k < segments; ++k) {
    ASSERT_TRUE(got[static_cast<std::size_t>(k)] == want[static_cast<std::size_t>(k)])
        << what.str() << ": segment " << k << " = [" << off[static_cast<std::size_t>(k)] << ", "
        << off[static_cast<std::size_t>(k) + 1] << "): got " << show(got[static_cast<std::size_t>(k)])
        << ", want " << show(want[static_cast<std::size_t>(k)]);
  }
}

template <class T, class Offset = std::int32_t, class Protocol = lookback_protocol, class Op>
void check_all(std::uint64_t salt, T init, Op op, bool deterministic = false) {
  constexpr i64 sub_tile = sr::sub_tile_items<T>();
  const i64 top = quick() ? (i64{1} << 17) + 5 : (i64{1} << 20) + 3;
  const auto h = values<T>(static_cast<std::size_t>(top), salt);
  const device_buffer<T> in(h);
  auto g = rng(salt + 1);
  // (quick, for compute-sanitizer: a few calls that still cross sub-tiles and ranges)
  const std::vector<i64> sizes = quick() ? std::vector<i64>{sub_tile + 1, top}
                                         : std::vector<i64>{1, sub_tile - 1, sub_tile + 1, 3 * sub_tile, top};
  const std::vector<i64> ranges = quick() ? std::vector<i64>{sub_tile, 3 * sub_tile}
                                          : std::vector<i64>{0, sub_tile, 3 * sub_tile, sr::max_sub_tiles * sub_tile};
  const std::vector<int> patterns = quick() ? std::vector<int>{4, 6} : std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7};
  const std::vector<i64> leads = quick() ? std::vector<i64>{7} : std::vector<i64>{0, 7};
  for (const i64 n : sizes) {
    for (const i64 range : ranges) {
      for (const int pattern : patterns) {
        for (const i64 lead : leads) {
          check<Offset, T, Protocol>(h, in, n, pattern, lead, range, init, op, deterministic, g);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(SegmentedReduceRanges, Int32Plus) { check_all<std::int32_t>(501, std::int32_t{7}, tally::plus{}); }
TEST(SegmentedReduceRanges, Int32PlusInt64Offsets) {
  check_all<std::int32_t, std::int64_t>(502, std::int32_t{7}, tally::plus{});
}
TEST(SegmentedReduceRanges, FloatPlusDeterministic) { check_all<float>(503, 7.0f, tally::plus{}, true); }
TEST(SegmentedReduceRanges, DoublePlus) { check_all<double>(504, 7.0, tally::plus{}); }
// init -50 above the values of many short segments: those give init, the others their maximum
TEST(SegmentedReduceRanges, Int32MaximumWithInit) { check_all<std::int32_t>(505, std::int32_t{-50}, tally::maximum{}); }
TEST(SegmentedReduceRanges, NonCommutative4Byte) { check_all<affine16>(506, affine16{3, 5}, compose16{}); }
TEST(SegmentedReduceRanges, NonCommutative8Byte) {
  check_all<affine32, std::uint32_t>(507, affine32{3, 5}, compose32{});
}
TEST(SegmentedReduceRanges, ChainedProtocol) {
  check_all<std::int32_t, std::int32_t, chained_protocol>(508, std::int32_t{7}, tally::plus{});
}

// The public call takes the ranges where segments are long, and below 2^24 values the
// tile kernel where they are short: both give the sequential results.
TEST(SegmentedReduceRanges, PublicDispatch) {
  using T = std::int32_t;
  const i64 n = quick() ? (i64{1} << 17) : (i64{1} << 20);
  const auto h = values<T>(static_cast<std::size_t>(n), 509);
  const device_buffer<T> in(h);
  // (tiles below a mean of 8 KiB, ranges from it: 2048 values of 4 bytes)
  for (const i64 len : {i64{40}, i64{1500}, i64{2048}, i64{5000}, n}) {
    std::vector<std::int32_t> off{0};
    while (off.back() < n) off.push_back(static_cast<std::int32_t>(off.back() + len < n ? off.back() + len : n));
    const i64 segments = static_cast<i64>(off.size()) - 1;
    const device_buffer<std::int32_t> offsets(off);
    device_buffer<T> out(static_cast<std::size_t>(segments));
    tally::segmented_reduce(in.data(), n, offsets.data(), segments, out.data(), T{7});
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    std::vector<T> want(static_cast<std::size_t>(segments));
    seq::segmented_reduce(h.begin(), off.begin(), off.end(), want.begin(), T{7}, tally::plus{});
    EXPECT_EQ(out.download(), want) << "segments of " << len;
  }
}

TEST(SegmentedReduceRanges, BadRange) {
  using T = std::int32_t;
  const device_buffer<T> in(std::vector<T>(16, 1));
  const device_buffer<std::int32_t> offsets(std::vector<std::int32_t>{0, 16});
  device_buffer<T> out(1);
  for (const i64 range : {i64{-1}, i64{1000}, (sr::max_sub_tiles + 1) * sr::sub_tile_items<T>()}) {
    EXPECT_THROW(sr::run<lookback_protocol>("test", in.data(), out.data(), 16,
                                            static_cast<const std::int32_t*>(offsets.data()), 1, T{0},
                                            tally::plus{}, tally::options{}, range),
                 std::invalid_argument)
        << range;
  }
}

}  // namespace
