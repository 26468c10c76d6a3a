// tests/headers/plain_flags/segmented.cu -- the segmented scans and the segmented reduce
// compiled without nvcc's experimental flags: by flags, by keys (the default
// std::equal_to<> included), by offsets and segmented_reduce, on aligned pointers (the tile
// kernels) and on an iterator (the pair scan).
#include <cstdint>
#include <vector>

#include "plain_flags.cuh"
#include "tally/tally.cuh"

namespace {

using tally_plain::buffer;
using tally_plain::small_values;

constexpr std::int64_t n = 10000;
constexpr std::int64_t segment = 37;  // segments of 37 elements (the last one shorter)

// out[i] = the sum of in over [segment start, i] (inclusive) or [segment start, i)
// (exclusive, from init).
template <class T>
std::vector<T> expected_segmented(const std::vector<T>& in, bool exclusive, T init) {
  std::vector<T> out(in.size());
  T acc = init;
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (i % segment == 0) acc = init;
    if (exclusive) {
      out[i] = acc;
      acc += in[i];
    } else {
      acc = (i % segment == 0) ? in[i] : acc + in[i];
      out[i] = acc;
    }
  }
  return out;
}

std::vector<std::uint8_t> head_flags() {
  std::vector<std::uint8_t> f(n);
  for (std::int64_t i = 0; i < n; ++i) f[i] = i % segment == 0;
  return f;
}
std::vector<std::int32_t> keys() {
  std::vector<std::int32_t> k(n);
  for (std::int64_t i = 0; i < n; ++i) k[i] = static_cast<std::int32_t>(i / segment);
  return k;
}
std::vector<std::int64_t> offsets() {
  std::vector<std::int64_t> o;
  for (std::int64_t i = 0; i < n; i += segment) o.push_back(i);
  o.push_back(n);
  return o;
}

struct negate {
  TALLY_HOST_DEVICE std::int32_t operator()(std::int32_t x) const { return -x; }
};

template <class T>
void check_flags_keys_offsets() {
  const auto h = small_values<T>(n);
  const auto inclusive = expected_segmented<T>(h, false, T(0));
  const auto exclusive = expected_segmented<T>(h, true, T(1));
  buffer<T> in(h), out(n);
  buffer<std::uint8_t> flags(head_flags());
  buffer<std::int32_t> k(keys());
  const auto ho = offsets();
  buffer<std::int64_t> o(ho);
  const auto segments = static_cast<std::int64_t>(ho.size()) - 1;

  tally::inclusive_scan_by_flags(in.data(), flags.data(), out.data(), n);
  EXPECT_EQ(out.download(), inclusive) << "inclusive_scan_by_flags";
  tally::exclusive_scan_by_flags(in.data(), flags.data(), out.data(), n, T(1));
  EXPECT_EQ(out.download(), exclusive) << "exclusive_scan_by_flags";
  tally::inclusive_scan_by_key(k.data(), in.data(), out.data(), n);
  EXPECT_EQ(out.download(), inclusive) << "inclusive_scan_by_key";
  tally::exclusive_scan_by_key(k.data(), in.data(), out.data(), n, T(1));
  EXPECT_EQ(out.download(), exclusive) << "exclusive_scan_by_key";
  tally::inclusive_segmented_scan(in.data(), out.data(), n, o.data(), segments);
  EXPECT_EQ(out.download(), inclusive) << "inclusive_segmented_scan";
  tally::exclusive_segmented_scan(in.data(), out.data(), n, o.data(), segments, T(1));
  EXPECT_EQ(out.download(), exclusive) << "exclusive_segmented_scan";

  buffer<T> sums(segments);
  tally::segmented_reduce(in.data(), n, o.data(), segments, sums.data(), T(0));
  std::vector<T> expected_sums(segments, T(0));
  for (std::int64_t i = 0; i < n; ++i) expected_sums[i / segment] += h[i];
  EXPECT_EQ(sums.download(), expected_sums) << "segmented_reduce";
}

TEST(PlainFlagsSegmented, Int32) { check_flags_keys_offsets<std::int32_t>(); }

// An iterator input: the pair scan (and, for the offsets forms, the head bitmap).
TEST(PlainFlagsSegmented, Iterator) {
  const auto h = small_values<std::int32_t>(n);
  std::vector<std::int32_t> negated(h);
  for (auto& x : negated) x = -x;
  const auto inclusive = expected_segmented<std::int32_t>(negated, false, 0);
  buffer<std::int32_t> in(h), out(n);
  buffer<std::uint8_t> flags(head_flags());
  buffer<std::int32_t> k(keys());
  const auto ho = offsets();
  buffer<std::int64_t> o(ho);
  const auto segments = static_cast<std::int64_t>(ho.size()) - 1;
  const auto it = tally::make_transform_iterator(in.data(), negate{});
  tally::inclusive_scan_by_flags(it, flags.data(), out.data(), n);
  EXPECT_EQ(out.download(), inclusive);
  tally::inclusive_scan_by_key(k.data(), it, out.data(), n);
  EXPECT_EQ(out.download(), inclusive);
  tally::inclusive_segmented_scan(it, out.data(), n, o.data(), segments);
  EXPECT_EQ(out.download(), inclusive);
}

}  // namespace
