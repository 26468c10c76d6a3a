// tests/device/select/test_select.cu -- the device selection family (tally/device/select.cuh)
// against the CPU's sequential oracle: every form, DESIGN's sizes, selectivities from none
// to all, runs of 1 to 2^20 items, in place, iterators, misaligned pointers, other types,
// a non-commutative reduce_by_key. (Stalls, n > 2^32, graphs and bad arguments:
// test_select_contract.cu.)
#include <gtest/gtest.h>

#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "select_common.cuh"

namespace tally_test {
namespace {

namespace seq = tally::cpu::sequential;

std::vector<std::int64_t> compaction_sizes() {
  return sizes(count_tile, quick() ? (std::int64_t{1} << 17) : (std::int64_t{1} << 22));
}

// ---- the worked example --------------------------------------------------------------------
TEST(Select, WorkedExample) {
  const std::vector<int> a{1, 3, 2, 4, 8, 6, 5, 4, 9, 7, 3};
  device_buffer<int> in(a), out(a.size());
  out.poison();
  const std::int64_t kept = tally::copy_if(in.data(), out.data(), 11, is_odd{});
  ASSERT_EQ(kept, 6);
  const auto got = out.download();
  EXPECT_EQ(std::vector<int>(got.begin(), got.begin() + 6), (std::vector<int>{1, 3, 5, 9, 7, 3}));
}

// ---- compaction: every selectivity, every size ---------------------------------------------
TEST(Select, CopyIfSelectivities) {
  const auto ns = compaction_sizes();
  const std::int64_t max_n = ns.back();
  const auto h = random_u32(static_cast<std::size_t>(max_n), 1);
  device_buffer<std::uint32_t> in(h), out(static_cast<std::size_t>(max_n) + 1);
  device_count_slot count;
  for (unsigned percent : {0u, 1u, 10u, 50u, 90u, 99u, 100u}) {
    const keep_percent pred{percent};
    for (const std::int64_t n : ns) {
      SCOPED_TRACE("keep " + std::to_string(percent) + "% n = " + std::to_string(n));
      std::vector<std::uint32_t> want;
      seq::copy_if(h.begin(), h.begin() + n, std::back_inserter(want), pred);
      out.poison();
      count.poison();
      tally::copy_if(in.data(), out.data(), n, pred, tally::count_to(count.data()));
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const std::int64_t c = count.read();
      ASSERT_TRUE(same_prefix(out.download(static_cast<std::size_t>(n) + 1), want,
                              static_cast<std::size_t>(c)));
    }
  }
}

// The other compactions and count_if, at a few selectivities.
TEST(Select, StencilFlaggedRemoveCount) {
  const auto ns = compaction_sizes();
  const std::int64_t max_n = ns.back();
  const auto h = random_u32(static_cast<std::size_t>(max_n), 2);
  const auto s = random_u32(static_cast<std::size_t>(max_n), 3);
  device_buffer<std::uint32_t> in(h), stencil(s), out(static_cast<std::size_t>(max_n) + 1);
  for (unsigned percent : {0u, 30u, 100u}) {
    const keep_percent pred{percent};
    std::vector<std::uint8_t> f(static_cast<std::size_t>(max_n));
    for (std::size_t i = 0; i < f.size(); ++i) f[i] = pred(s[i]) ? static_cast<std::uint8_t>(1 + i % 7) : 0;
    device_buffer<std::uint8_t> flags(f);
    for (const std::int64_t n : ns) {
      SCOPED_TRACE("keep " + std::to_string(percent) + "% n = " + std::to_string(n));
      std::vector<std::uint32_t> want;
      seq::copy_if(h.begin(), h.begin() + n, s.begin(), std::back_inserter(want), pred);
      out.poison();
      std::int64_t c = tally::copy_if(in.data(), stencil.data(), out.data(), n, pred);
      ASSERT_TRUE(same_prefix(out.download(static_cast<std::size_t>(n) + 1), want, static_cast<std::size_t>(c)))
          << "copy_if with stencil";
      out.poison();
      c = tally::copy_flagged(in.data(), flags.data(), out.data(), n);
      ASSERT_TRUE(same_prefix(out.download(static_cast<std::size_t>(n) + 1), want, static_cast<std::size_t>(c)))
          << "copy_flagged";
      want.clear();
      seq::remove_if(h.begin(), h.begin() + n, std::back_inserter(want), pred);
      out.poison();
      c = tally::remove_if(in.data(), out.data(), n, pred);
      ASSERT_TRUE(same_prefix(out.download(static_cast<std::size_t>(n) + 1), want, static_cast<std::size_t>(c)))
          << "remove_if";
      ASSERT_EQ(tally::count_if(in.data(), n, pred), seq::count_if(h.begin(), h.begin() + n, pred));
    }
  }
}

// In place: out == in, for copy_if, copy_flagged, remove_if and unique.
TEST(Select, InPlace) {
  const std::int64_t max_n = quick() ? 100003 : 5000011;
  const auto h = random_u32(static_cast<std::size_t>(max_n), 4);
  const auto r = random_runs(static_cast<std::size_t>(max_n), 5, 5);
  std::vector<std::uint8_t> f(h.size());
  for (std::size_t i = 0; i < f.size(); ++i) f[i] = keep_percent{60}(h[i] + 1) ? 1 : 0;
  device_buffer<std::uint8_t> flags(f);
  device_buffer<std::uint32_t> work(h.size());
  for (const std::int64_t n : {std::int64_t{1}, count_tile + 5, max_n}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const keep_percent pred{50};
    std::vector<std::uint32_t> want;
    seq::copy_if(h.begin(), h.begin() + n, std::back_inserter(want), pred);
    work.upload(h);
    std::int64_t c = tally::copy_if(work.data(), work.data(), n, pred);
    ASSERT_EQ(c, static_cast<std::int64_t>(want.size())) << "copy_if";
    ASSERT_EQ(work.download(want.size()), want) << "copy_if";
    want.clear();
    seq::copy_flagged(h.begin(), h.begin() + n, f.begin(), std::back_inserter(want));
    work.upload(h);
    c = tally::copy_flagged(work.data(), flags.data(), work.data(), n);
    ASSERT_EQ(c, static_cast<std::int64_t>(want.size())) << "copy_flagged";
    ASSERT_EQ(work.download(want.size()), want) << "copy_flagged";
    want.clear();
    seq::remove_if(h.begin(), h.begin() + n, std::back_inserter(want), pred);
    work.upload(h);
    c = tally::remove_if(work.data(), work.data(), n, pred);
    ASSERT_EQ(c, static_cast<std::int64_t>(want.size())) << "remove_if";
    ASSERT_EQ(work.download(want.size()), want) << "remove_if";
    want.clear();
    seq::unique(r.begin(), r.begin() + n, std::back_inserter(want));
    work.upload(r);
    c = tally::unique(work.data(), work.data(), n);
    ASSERT_EQ(c, static_cast<std::int64_t>(want.size())) << "unique";
    ASSERT_EQ(work.download(want.size()), want) << "unique";
  }
}

// ---- other element types, iterators, misaligned pointers --------------------------------------
struct triple {
  std::int32_t a, b, c;
  __host__ __device__ bool operator==(const triple& o) const { return a == o.a && b == o.b && c == o.c; }
};
struct triple_pred {
  __host__ __device__ bool operator()(const triple& t) const { return keep_percent{40}(t.a ^ t.c); }
};

template <class T, class Pred>
void check_type(const std::vector<T>& h, Pred pred, const char* what) {
  SCOPED_TRACE(what);
  device_buffer<T> in(h), out(h.size() + 1);
  for (const std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{33}, count_tile - 1,
                               count_tile * 5 + 3, static_cast<std::int64_t>(h.size())}) {
    std::vector<T> want;
    seq::copy_if(h.begin(), h.begin() + n, std::back_inserter(want), pred);
    out.poison();
    const std::int64_t c = tally::copy_if(in.data(), out.data(), n, pred);
    ASSERT_TRUE(same_prefix(out.download(static_cast<std::size_t>(n) + 1), want, static_cast<std::size_t>(c)))
        << "n = " << n;
  }
}

struct float_pred {
  __host__ __device__ bool operator()(float x) const { return x > 12500.0f; }
};

TEST(Select, ElementTypes) {
  const std::size_t n = quick() ? 70001 : 1000003;
  const auto u = random_u32(n, 6);
  std::vector<float> f(n);
  std::vector<double> d(n);
  std::vector<std::int8_t> b(n);
  std::vector<triple> t(n);
  for (std::size_t i = 0; i < n; ++i) {
    f[i] = static_cast<float>(u[i] % 100000) * 0.25f;
    d[i] = static_cast<double>(u[i]) * 0.5;
    b[i] = static_cast<std::int8_t>(u[i]);
    t[i] = triple{static_cast<std::int32_t>(u[i]), static_cast<std::int32_t>(i), static_cast<std::int32_t>(u[i] >> 3)};
  }
  check_type(f, float_pred{}, "float");
  check_type(d, keep_percent{50}, "double");
  check_type(b, is_odd{}, "int8");
  check_type(t, triple_pred{}, "12-byte struct");
}

struct is_multiple_of_3 {
  __host__ __device__ bool operator()(std::int64_t x) const { return x % 3 == 0; }
};
struct square_mod {
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return (i * i) % 1000; }
};

TEST(Select, IteratorsAndMisalignedPointers) {
  const std::int64_t n = quick() ? 100003 : 3000017;
  // a map fused into the input
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), square_mod{});
  std::vector<std::int64_t> h(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) h[static_cast<std::size_t>(i)] = square_mod{}(i);
  std::vector<std::int64_t> want;
  seq::copy_if(h.begin(), h.end(), std::back_inserter(want), is_multiple_of_3{});
  device_buffer<std::int64_t> out(h.size() + 1);
  out.poison();
  std::int64_t c = tally::copy_if(in, out.data(), n, is_multiple_of_3{});
  ASSERT_TRUE(same_prefix(out.download(), want, static_cast<std::size_t>(c))) << "transform iterator";
  // pointers one and three elements past an aligned address
  const auto u = random_u32(static_cast<std::size_t>(n) + 8, 7);
  device_buffer<std::uint32_t> din(u), dout(u.size());
  want.clear();
  std::vector<std::uint32_t> want32;
  seq::copy_if(u.begin() + 1, u.begin() + 1 + n, std::back_inserter(want32), keep_percent{50});
  dout.poison();
  c = tally::copy_if(din.data() + 1, dout.data() + 3, n, keep_percent{50});
  auto got = dout.download();
  ASSERT_TRUE(same_prefix(std::vector<std::uint32_t>(got.begin() + 3, got.end()), want32,
                          static_cast<std::size_t>(c)))
      << "misaligned";
}

// ---- partitions --------------------------------------------------------------------------------
TEST(Select, Partitions) {
  const auto ns = compaction_sizes();
  const std::int64_t max_n = ns.back();
  const auto h = random_u32(static_cast<std::size_t>(max_n), 8);
  device_buffer<std::uint32_t> in(h), out(static_cast<std::size_t>(max_n) + 1),
      second(static_cast<std::size_t>(max_n) + 1), rest(static_cast<std::size_t>(max_n) + 1);
  for (unsigned percent : {0u, 50u, 100u}) {
    const keep_percent pred{percent};
    const keep_percent pred2{50};
    for (const std::int64_t n : ns) {
      SCOPED_TRACE("keep " + std::to_string(percent) + "% n = " + std::to_string(n));
      std::vector<std::uint32_t> want(static_cast<std::size_t>(n));
      const auto split = seq::partition(h.begin(), h.begin() + n, want.begin(), pred);
      out.poison();
      const std::int64_t s = tally::partition(in.data(), out.data(), n, pred);
      ASSERT_EQ(s, split - want.begin());
      ASSERT_TRUE(same_prefix(out.download(static_cast<std::size_t>(n) + 1), want, static_cast<std::size_t>(n)));

      std::vector<std::uint32_t> w1, w2, w3;
      const tally::three_way_result wc = seq::partition_three_way(
          h.begin(), h.begin() + n, std::back_inserter(w1), std::back_inserter(w2),
          std::back_inserter(w3), pred, pred2);
      out.poison();
      second.poison();
      rest.poison();
      const tally::three_way_result c = tally::partition_three_way(
          in.data(), out.data(), second.data(), rest.data(), n, pred, pred2);
      ASSERT_EQ(c, wc);
      ASSERT_TRUE(same_prefix(out.download(static_cast<std::size_t>(n) + 1), w1, static_cast<std::size_t>(c.first)));
      ASSERT_TRUE(same_prefix(second.download(static_cast<std::size_t>(n) + 1), w2, static_cast<std::size_t>(c.second)));
      ASSERT_TRUE(same_prefix(rest.download(static_cast<std::size_t>(n) + 1), w3, static_cast<std::size_t>(c.rest)));
    }
  }
}

// ---- runs: unique, unique_by_key, run_length_encode, non_trivial_runs ------------------------
// An equality that sees only the upper bits: runs of "equal" items hold different values,
// so the forms must keep the FIRST item of each run.
struct same_high_bits {
  __host__ __device__ bool operator()(std::uint32_t a, std::uint32_t b) const { return (a >> 1) == (b >> 1); }
};

TEST(Select, Runs) {
  const std::int64_t max_n = quick() ? (std::int64_t{1} << 17) : (std::int64_t{1} << 22);
  const auto ns = sizes(run_tile, max_n);
  const std::vector<std::int64_t> run_lengths =
      quick() ? std::vector<std::int64_t>{1, 4, 5000}
              : std::vector<std::int64_t>{1, 2, 4, 64, 4096, std::int64_t{1} << 20};
  const std::size_t cap = static_cast<std::size_t>(max_n) + 1;
  device_buffer<std::uint32_t> unique_out(cap), values_out(cap);
  device_buffer<std::int64_t> counts_out(cap), offsets_out(cap);
  device_buffer<std::int32_t> lengths_out(cap);
  for (const std::int64_t max_run : run_lengths) {
    const auto h = random_runs(static_cast<std::size_t>(max_n), max_run, 9 + static_cast<std::uint64_t>(max_run));
    const auto v = random_u32(static_cast<std::size_t>(max_n), 10);
    device_buffer<std::uint32_t> in(h), values(v);
    for (const std::int64_t n : ns) {
      SCOPED_TRACE("runs up to " + std::to_string(max_run) + ", n = " + std::to_string(n));
      const auto first = h.begin(), last = h.begin() + n;
      std::vector<std::uint32_t> wu;
      seq::unique(first, last, std::back_inserter(wu), same_high_bits{});
      unique_out.poison();
      std::int64_t c = tally::unique(in.data(), unique_out.data(), n, same_high_bits{});
      ASSERT_TRUE(same_prefix(unique_out.download(static_cast<std::size_t>(n) + 1), wu, static_cast<std::size_t>(c)))
          << "unique";

      std::vector<std::uint32_t> wk, wv;
      seq::unique_by_key(first, last, v.begin(), std::back_inserter(wk), std::back_inserter(wv));
      unique_out.poison();
      values_out.poison();
      c = tally::unique_by_key(in.data(), values.data(), unique_out.data(), values_out.data(), n);
      ASSERT_TRUE(same_prefix(unique_out.download(static_cast<std::size_t>(n) + 1), wk, static_cast<std::size_t>(c)))
          << "unique_by_key keys";
      ASSERT_TRUE(same_prefix(values_out.download(static_cast<std::size_t>(n) + 1), wv, static_cast<std::size_t>(c)))
          << "unique_by_key values";

      std::vector<std::uint32_t> ru;
      std::vector<std::int64_t> rc;
      seq::run_length_encode(first, last, std::back_inserter(ru), std::back_inserter(rc), same_high_bits{});
      unique_out.poison();
      counts_out.poison();
      c = tally::run_length_encode(in.data(), unique_out.data(), counts_out.data(), n, same_high_bits{});
      ASSERT_TRUE(same_prefix(unique_out.download(static_cast<std::size_t>(n) + 1), ru, static_cast<std::size_t>(c)))
          << "run_length_encode items";
      ASSERT_TRUE(same_prefix(counts_out.download(static_cast<std::size_t>(n) + 1), rc, static_cast<std::size_t>(c)))
          << "run_length_encode counts";

      std::vector<std::int64_t> wo;
      std::vector<std::int32_t> wl;
      seq::non_trivial_runs(first, last, std::back_inserter(wo), std::back_inserter(wl));
      offsets_out.poison();
      lengths_out.poison();
      c = tally::non_trivial_runs(in.data(), offsets_out.data(), lengths_out.data(), n);
      ASSERT_TRUE(same_prefix(offsets_out.download(static_cast<std::size_t>(n) + 1), wo, static_cast<std::size_t>(c)))
          << "non_trivial_runs offsets";
      ASSERT_TRUE(same_prefix(lengths_out.download(static_cast<std::size_t>(n) + 1), wl, static_cast<std::size_t>(c)))
          << "non_trivial_runs lengths";
    }
  }
}

// ---- reduce_by_key -------------------------------------------------------------------------
struct widen {
  __host__ __device__ std::int64_t operator()(std::uint32_t x) const { return x; }
};

TEST(Select, ReduceByKey) {
  const std::int64_t max_n = quick() ? (std::int64_t{1} << 17) : (std::int64_t{1} << 22);
  const auto ns = sizes(program_tile<tally::detail::select::keyed<std::int64_t, tally::detail::select::short_count_t>>, max_n);
  const std::size_t cap = static_cast<std::size_t>(max_n) + 1;
  device_buffer<std::uint32_t> keys_out(cap);
  device_buffer<std::int64_t> sums_out(cap);
  device_buffer<mat2> products_out(cap);
  for (const std::int64_t max_run : quick() ? std::vector<std::int64_t>{1, 6, 70000}
                                            : std::vector<std::int64_t>{1, 6, 1000, std::int64_t{1} << 20}) {
    const auto k = random_runs(static_cast<std::size_t>(max_n), max_run, 11 + static_cast<std::uint64_t>(max_run));
    const auto v = random_u32(static_cast<std::size_t>(max_n), 12);
    const auto m = random_vector<mat2, mat2_product>(static_cast<std::size_t>(max_n), 13);
    device_buffer<std::uint32_t> keys(k), values(v);
    device_buffer<mat2> matrices(m);
    for (const std::int64_t n : ns) {
      SCOPED_TRACE("runs up to " + std::to_string(max_run) + ", n = " + std::to_string(n));
      // uint32 values summed from int64 (the accumulator is int64: P2322)
      std::vector<std::uint32_t> wk;
      std::vector<std::int64_t> ws;
      std::vector<std::int64_t> v64(v.begin(), v.begin() + n);
      seq::reduce_by_key(k.begin(), k.begin() + n, v64.begin(), std::back_inserter(wk), std::back_inserter(ws));
      keys_out.poison();
      sums_out.poison();
      auto wide = thrust::make_transform_iterator(values.data(), widen{});
      std::int64_t c = tally::reduce_by_key(keys.data(), wide, keys_out.data(), sums_out.data(), n);
      ASSERT_TRUE(same_prefix(keys_out.download(static_cast<std::size_t>(n) + 1), wk, static_cast<std::size_t>(c))) << "keys";
      ASSERT_TRUE(same_prefix(sums_out.download(static_cast<std::size_t>(n) + 1), ws, static_cast<std::size_t>(c))) << "sums";
      // a non-commutative operator: 2x2 matrix products in input order
      std::vector<std::uint32_t> mk;
      std::vector<mat2> mp;
      seq::reduce_by_key(k.begin(), k.begin() + n, m.begin(), std::back_inserter(mk), std::back_inserter(mp),
                         mat2_product{});
      keys_out.poison();
      products_out.poison();
      c = tally::reduce_by_key(keys.data(), matrices.data(), keys_out.data(), products_out.data(), n,
                               mat2_product{});
      ASSERT_TRUE(same_prefix(keys_out.download(static_cast<std::size_t>(n) + 1), mk, static_cast<std::size_t>(c))) << "keys";
      ASSERT_TRUE(same_prefix(products_out.download(static_cast<std::size_t>(n) + 1), mp, static_cast<std::size_t>(c)))
          << "products";
    }
  }
}

}  // namespace
}  // namespace tally_test
