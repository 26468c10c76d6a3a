// tests/device/test_reduce_noncommutative.cu -- every in-order reduction of tally::reduction
// (tree, block, chunked -- which takes the consecutive cut for these operators --,
// chunked_consecutive, single_pass) with non-commutative operators: affine-map
// composition, the 2x2 matrix product, the MSSP 4-tuple operator (through a transform
// iterator) and argmin with ties (through indexed_iterator); every size from one tile to
// two tiles for the consecutive paths; and algorithm::atomic refusing them.
#include "test_support.hpp"
#include "test_reduce_common.cuh"

namespace {

using namespace tally_reduce_test;
using tally::test::affine;
using tally::test::compose;

const algorithm in_order[] = {algorithm::tree, algorithm::block, algorithm::chunked,
                              algorithm::chunked_consecutive, algorithm::single_pass};

template <class T, class Op>
void check_operator(algorithm a, const std::vector<std::int64_t>& sz, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<T> h(static_cast<std::size_t>(sz.back()));
  for (auto& x : h) x = random_element<T>(g);
  const T init = random_element<T>(g);
  device_buffer<T> in(h), out(1);
  const T* d = in.data();
  T acc = init;
  std::size_t i = 0;
  for (std::int64_t n : sz) {
    for (; i < static_cast<std::size_t>(n); ++i) acc = Op{}(acc, h[i]);
    out.poison();
    tally::reduction::run(a, d, n, out.data(), init, Op{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_EQ(out.download()[0], acc) << tally::reduction::algorithm_name(a) << ", n = " << n
                                      << " (seed " << seed() << ")";
  }
}

TEST(ReduceNonCommutative, AffineCompose) {
  for (algorithm a : in_order) {
    check_operator<affine, compose>(a, reduce_sizes<affine>(std::int64_t{1} << 22), 2000);
  }
}

TEST(ReduceNonCommutative, Mat2Product) {
  for (algorithm a : in_order) {
    check_operator<mat2, mat2_product>(a, reduce_sizes<mat2>(std::int64_t{1} << 22), 2001);
  }
}

// Every size from one tile to two tiles of the consecutive cut (mat2: 16 bytes, 4 items
// per thread, a 1024-element tile), for the two algorithms that use it for mat2.
TEST(ReduceNonCommutative, TileSweep) {
  constexpr std::int64_t tile = std::int64_t{tally::detail::reduction::reduce_tuning::threads} *
                                tally::detail::reduction::consecutive_items<mat2>();
  std::vector<std::int64_t> sz;
  for (std::int64_t n = tile; n <= 2 * tile; n += quick() ? 37 : 1) sz.push_back(n);
  // and many tiles per block (the blocks' shares of tiles are uneven)
  sz.push_back((quick() ? 20 : 1000) * tile + 7);
  check_operator<mat2, mat2_product>(algorithm::single_pass, sz, 2002);
  check_operator<mat2, mat2_product>(algorithm::chunked_consecutive, sz, 2003);
}

// MSSP: map to 4-tuples (a transform iterator), reduce with the non-commutative operator.
TEST(ReduceNonCommutative, MaxSegmentSum) {
  const auto sz = reduce_sizes<tally::mssp_value<std::int64_t>>(std::int64_t{1} << 22);
  const auto h = exact_input<std::int32_t>(static_cast<std::size_t>(sz.back()), 2100, false);
  device_buffer<std::int32_t> in(h);
  device_buffer<tally::mssp_value<std::int64_t>> out(1);
  auto mapped = tally::make_transform_iterator(static_cast<const std::int32_t*>(in.data()),
                                               tally::mssp_map<std::int64_t>{});
  const tally::mssp_value<std::int64_t> init{0, 0, 0, 0};
  for (algorithm a : in_order) {
    tally::mssp_value<std::int64_t> acc = init;
    std::size_t i = 0;
    for (std::int64_t n : sz) {
      for (; i < static_cast<std::size_t>(n); ++i) acc = tally::mssp_op{}(acc, tally::mssp_map<std::int64_t>{}(h[i]));
      out.poison();
      tally::reduction::run(a, mapped, n, out.data(), init, tally::mssp_op{});
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = out.download()[0];
      ASSERT_TRUE(got == acc) << tally::reduction::algorithm_name(a) << ", n = " << n << ": mss "
                              << got.mss << " (expected " << acc.mss << "), ts " << got.ts
                              << " (expected " << acc.ts << ")";
    }
  }
}

// argmin through every in-order algorithm: values with many ties, the first index wins.
TEST(ReduceNonCommutative, ArgMinTies) {
  const auto sz = reduce_sizes<tally::indexed<std::int32_t>>(std::int64_t{1} << 22);
  auto g = rng(2200);
  std::vector<std::int32_t> h(static_cast<std::size_t>(sz.back()));
  for (auto& x : h) x = std::uniform_int_distribution<std::int32_t>(-5, 5)(g);
  device_buffer<std::int32_t> in(h);
  using pair_t = tally::indexed<std::int32_t, std::int64_t>;
  device_buffer<pair_t> out(1);
  const tally::indexed_iterator<const std::int32_t*> first(in.data());
  const pair_t none{0, -1};
  for (algorithm a : in_order) {
    for (std::int64_t n : sz) {
      out.poison();
      tally::reduction::run(a, first, n, out.data(), none, tally::arg_min{});
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = out.download()[0];
      std::int64_t want = -1;
      if (n > 0) want = std::min_element(h.begin(), h.begin() + n) - h.begin();
      ASSERT_EQ(got.index, want) << tally::reduction::algorithm_name(a) << ", n = " << n;
      if (n > 0) ASSERT_EQ(got.value, h[static_cast<std::size_t>(want)]);
    }
  }
}

TEST(ReduceNonCommutative, AtomicRefuses) {
  device_buffer<mat2> in(4), out(1);
  EXPECT_THROW(tally::reduction::run(algorithm::atomic, static_cast<const mat2*>(in.data()), 4,
                                     out.data(), mat2{{1, 0, 0, 1}}, mat2_product{}),
               std::invalid_argument);
  static_assert(!tally::reduction::supports_atomic_v<mat2_product, mat2>);
  static_assert(!tally::reduction::supports_atomic_v<tally::maximum, float>);
  static_assert(tally::reduction::supports_atomic_v<tally::plus, float>);
  static_assert(tally::reduction::supports_atomic_v<tally::maximum, std::uint64_t>);
}

}  // namespace
