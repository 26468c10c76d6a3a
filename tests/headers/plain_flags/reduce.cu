// tests/headers/plain_flags/reduce.cu -- the reductions compiled without nvcc's experimental
// flags: reduce, reduce_into, transform_reduce, argmin, argmax, max_segment_sum and every
// algorithm of tally::reduction, under commutative and non-commutative operators.
#include <cstdint>
#include <limits>
#include <vector>

#include "plain_flags.cuh"
#include "tally/tally.cuh"

namespace {

using tally_plain::buffer;
using tally_plain::small_values;

constexpr std::int64_t n = 100000;  // several blocks of every reduction

template <class T>
T sum_of(const std::vector<T>& v) {
  T s = 0;
  for (const T& x : v) s += x;
  return s;
}

TEST(PlainFlagsReduce, Reduce) {
  const auto h = small_values<std::int32_t>(n);
  buffer<std::int32_t> in(h);
  EXPECT_EQ(tally::reduce(in.data(), n, 0), sum_of(h));
  EXPECT_EQ(tally::reduce(in.data(), n, std::int64_t{0}), sum_of(h));
  EXPECT_EQ(tally::reduce(in.data(), n, std::numeric_limits<std::int32_t>::lowest(),
                          tally::maximum{}),
            3);
  const auto hf = small_values<float>(n);
  buffer<float> inf(hf);
  EXPECT_EQ(tally::reduce(inf.data(), n, 0.0f, tally::minimum{}), -3.0f);
  const auto hd = small_values<double>(n);
  buffer<double> ind(hd);
  EXPECT_EQ(tally::reduce(ind.data(), n, 0.0), sum_of(hd));
}

TEST(PlainFlagsReduce, ReduceInto) {
  const auto h = small_values<std::int64_t>(n);
  buffer<std::int64_t> in(h), out(1);
  tally::reduce_into(in.data(), n, out.data(), std::int64_t{0});
  EXPECT_EQ(out.download()[0], sum_of(h));
  tally::reduce_into(in.data(), n, out.data(), std::int64_t{0}, tally::maximum{});
  EXPECT_EQ(out.download()[0], 3);
}

struct square {
  TALLY_HOST_DEVICE std::int64_t operator()(std::int32_t x) const {
    return std::int64_t{x} * x;
  }
};

TEST(PlainFlagsReduce, TransformReduce) {
  const auto h = small_values<std::int32_t>(n);
  std::int64_t expected = 0;
  for (auto x : h) expected += std::int64_t{x} * x;
  buffer<std::int32_t> in(h);
  EXPECT_EQ(tally::transform_reduce(in.data(), n, std::int64_t{0}, tally::plus{}, square{}),
            expected);
  EXPECT_EQ(tally::reduce(tally::make_transform_iterator(in.data(), square{}), n, std::int64_t{0}),
            expected);
}

TEST(PlainFlagsReduce, ArgMinMax) {
  auto h = small_values<float>(n);
  h[777] = -10.0f;
  h[4242] = 10.0f;
  buffer<float> in(h);
  const auto lo = tally::argmin(in.data(), n);
  EXPECT_EQ(lo.index, 777);
  EXPECT_EQ(lo.value, -10.0f);
  const auto hi = tally::argmax(in.data(), n);
  EXPECT_EQ(hi.index, 4242);
  EXPECT_EQ(hi.value, 10.0f);
}

TEST(PlainFlagsReduce, MaxSegmentSum) {
  // -3 -2 -1 0 1 2 3 repeated: the best segment is 1 2 3 (every later segment that starts
  // with 1 gives back the six in the next -3 -2 -1)
  buffer<std::int32_t> in(small_values<std::int32_t>(n));
  EXPECT_EQ(tally::max_segment_sum(in.data(), n), 6);
}

template <class T, class Op>
void check_algorithms(Op op, T init, T expected) {
  namespace r = tally::reduction;
  buffer<T> in(small_values<T>(n)), out(1);
  r::tree(in.data(), n, out.data(), init, op);
  EXPECT_EQ(out.download()[0], expected) << "tree";
  r::block(in.data(), n, out.data(), init, op);
  EXPECT_EQ(out.download()[0], expected) << "block";
  r::chunked(in.data(), n, out.data(), init, op);
  EXPECT_EQ(out.download()[0], expected) << "chunked";
  r::chunked_consecutive(in.data(), n, out.data(), init, op);
  EXPECT_EQ(out.download()[0], expected) << "chunked_consecutive";
  r::single_pass(in.data(), n, out.data(), init, op);
  EXPECT_EQ(out.download()[0], expected) << "single_pass";
  if constexpr (r::supports_atomic_v<Op, T>) {
    r::atomic(in.data(), n, out.data(), init, op);
    EXPECT_EQ(out.download()[0], expected) << "atomic";
  }
  for (const r::algorithm a : r::all_algorithms) {
    if (a == r::algorithm::atomic && !r::supports_atomic_v<Op, T>) continue;
    r::run(a, in.data(), n, out.data(), init, op);
    EXPECT_EQ(out.download()[0], expected) << r::algorithm_name(a);
  }
}

TEST(PlainFlagsReduce, CourseAlgorithms) {
  const auto h = small_values<std::int32_t>(n);
  check_algorithms<std::int32_t>(tally::plus{}, 0, sum_of(h));
  check_algorithms<std::int32_t>(tally::maximum{}, std::numeric_limits<std::int32_t>::lowest(), 3);
}

// A non-commutative operator: the reductions that keep the order.
struct last_nonzero {
  TALLY_HOST_DEVICE std::int32_t operator()(std::int32_t a, std::int32_t b) const {
    return b != 0 ? b : a;
  }
};

TEST(PlainFlagsReduce, NonCommutative) {
  namespace r = tally::reduction;
  auto h = small_values<std::int32_t>(n);
  h[n - 1] = 0;
  h[n - 2] = 0;
  const std::int32_t expected = h[n - 3];
  buffer<std::int32_t> in(h), out(1);
  EXPECT_EQ(tally::reduce(in.data(), n, 0, last_nonzero{}), expected);
  r::tree(in.data(), n, out.data(), 0, last_nonzero{});
  EXPECT_EQ(out.download()[0], expected);
  r::chunked(in.data(), n, out.data(), 0, last_nonzero{});
  EXPECT_EQ(out.download()[0], expected);
}

}  // namespace
