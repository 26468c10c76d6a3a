// tests/device/test_device_api.cu -- the public API of device/scan.cuh and device/textbook.cuh:
// the production call's options, every options.strategy x options.block of the textbook
// entry, the accumulator rule, iterator inputs, streams, caller storage (no allocation), bad
// arguments (host memory too), and one scan of more than 2^32 elements.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "test_common.cuh"

namespace {

using namespace tally_test;
using tally::block_scan;
using tally::scan_strategy;

const block_scan all_blocks[] = {block_scan::automatic,   block_scan::kogge_stone,
                                 block_scan::kogge_stone_double_buffered,
                                 block_scan::brent_kung,  block_scan::brent_kung_conflict_free,
                                 block_scan::coarsened,   block_scan::warp_scans,
                                 block_scan::blelloch,    block_scan::brent_kung_divergent};
const scan_strategy all_strategies[] = {scan_strategy::automatic, scan_strategy::reduce_then_scan,
                                        scan_strategy::scan_then_propagate, scan_strategy::chained,
                                        scan_strategy::decoupled_lookback};

// The single-pass strategies take only automatic or warp_scans as the block algorithm;
// other pairs throw std::invalid_argument. automatic with another block algorithm runs
// reduce_then_scan.
bool offered(scan_strategy s, block_scan b) {
  const bool single_pass = s == scan_strategy::chained || s == scan_strategy::decoupled_lookback;
  return !single_pass || b == block_scan::automatic || b == block_scan::warp_scans;
}

// What tally::inclusive_scan (the production plans) takes.
bool production(scan_strategy s, block_scan b) {
  return (s == scan_strategy::automatic || s == scan_strategy::decoupled_lookback) &&
         (b == block_scan::automatic || b == block_scan::warp_scans);
}

// Every strategy x block through the public functions (int32 plus).
TEST(DeviceApi, EveryStrategyAndBlock) {
  const std::int64_t max_n = quick() ? 70000 : 300000;
  const auto h = random_vector<int, tally::plus>(max_n, 1);
  const auto want_i = reference_scan(h, false, 0, tally::plus{});
  const auto want_e = reference_scan(h, true, 1000, tally::plus{});
  device_buffer<int> in(h), out(max_n);
  for (auto s : all_strategies) {
    for (auto b : all_blocks) {
      tally::options o;
      o.strategy = s;
      o.block = b;
      if (!production(s, b)) {
        const auto m = invalid_argument_message(
            [&] { tally::inclusive_scan(in.data(), out.data(), max_n, tally::plus{}, o); });
        EXPECT_NE(m.find("tally::textbook::inclusive_scan"), std::string::npos) << m;
      }
      if (!offered(s, b)) {
        EXPECT_THROW(tally::textbook::inclusive_scan(in.data(), out.data(), max_n, tally::plus{}, o),
                     std::invalid_argument);
        continue;
      }
      for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{5000}, max_n}) {
        SCOPED_TRACE("strategy " + std::to_string(int(s)) + " block " + std::to_string(int(b)) +
                     " n " + std::to_string(n));
        out.poison();
        tally::textbook::inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        ASSERT_TRUE(matches(out.download(n), want_i, n));
        out.poison();
        tally::textbook::exclusive_scan(in.data(), out.data(), n, 1000, tally::plus{}, o);
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        ASSERT_TRUE(matches(out.download(n), want_e, n));
        if (production(s, b)) {
          out.poison();
          tally::inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
          TALLY_TEST_CUDA(cudaDeviceSynchronize());
          ASSERT_TRUE(matches(out.download(n), want_i, n));
          out.poison();
          tally::exclusive_scan(in.data(), out.data(), n, 1000, tally::plus{}, o);
          TALLY_TEST_CUDA(cudaDeviceSynchronize());
          ASSERT_TRUE(matches(out.download(n), want_e, n));
        }
      }
    }
  }
}

// Defaults (no op, no options), in place.
// The naive O(n^2) scan (a teaching baseline): textbook only, block automatic only; in
// place through temporary storage. (Its sizes and types: test_device_baselines.cu.)
TEST(DeviceApi, NaiveStrategy) {
  const std::int64_t max_n = 5000;
  const auto h = random_vector<int, tally::plus>(max_n, 2);
  const auto want_i = reference_scan(h, false, 0, tally::plus{});
  const auto want_e = reference_scan(h, true, 1000, tally::plus{});
  device_buffer<int> in(h), out(max_n);
  tally::options o;
  o.strategy = scan_strategy::naive;
  for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{33}, max_n}) {
    SCOPED_TRACE("n " + std::to_string(n));
    out.poison();
    tally::textbook::inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out.download(n), want_i, n));
    out.poison();
    tally::textbook::exclusive_scan(in.data(), out.data(), n, 1000, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out.download(n), want_e, n));
  }
  out.upload(h);
  tally::textbook::inclusive_scan(out.data(), out.data(), max_n, tally::plus{}, o);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(matches(out.download(max_n), want_i, max_n)) << "in place";
  EXPECT_EQ((tally::textbook::inclusive_scan_storage_bytes<const int*, tally::plus>(0, o)), 0u);
  EXPECT_GE((tally::textbook::inclusive_scan_storage_bytes<const int*, tally::plus>(max_n, o)),
            max_n * sizeof(int));
  std::string m = invalid_argument_message(
      [&] { tally::inclusive_scan(in.data(), out.data(), max_n, tally::plus{}, o); });
  EXPECT_NE(m.find("tally::textbook::inclusive_scan"), std::string::npos) << m;
  o.block = block_scan::kogge_stone;
  m = invalid_argument_message(
      [&] { tally::textbook::exclusive_scan(in.data(), out.data(), max_n, 0, tally::plus{}, o); });
  EXPECT_NE(m.find("'options.block'"), std::string::npos) << m;
}

TEST(DeviceApi, DefaultsInPlace) {
  const std::int64_t n = 123457;
  const auto h = random_vector<int, tally::plus>(n, 2);
  device_buffer<int> buf(h);
  tally::inclusive_scan(buf.data(), buf.data(), n);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(matches(buf.download(), reference_scan(h, false, 0, tally::plus{}), n));
  buf.upload(h);
  tally::exclusive_scan(buf.data(), buf.data(), n, 17);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(matches(buf.download(), reference_scan(h, true, 17, tally::plus{}), n));
}

// The accumulator rule: int32 inputs, an int64 seed -> the sum runs in int64 (it would
// overflow int32), and is stored into int64.
TEST(DeviceApi, ExclusiveAccumulatesInInitType) {
  const std::int64_t n = 200000;
  auto g = rng(3);
  std::vector<std::int32_t> h(n);
  for (auto& x : h) x = static_cast<std::int32_t>(std::uniform_int_distribution<int>(1 << 29, 1 << 30)(g));
  std::vector<std::int64_t> want(n);
  tally::cpu::sequential::exclusive_scan(h.begin(), h.end(), want.begin(), std::int64_t{5});
  device_buffer<std::int32_t> in(h);
  device_buffer<std::int64_t> out(n);
  for (auto s : all_strategies) {
    tally::options o;
    o.strategy = s;
    out.poison();
    tally::textbook::exclusive_scan(in.data(), out.data(), n, std::int64_t{5}, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(out.download(), want) << "strategy " << int(s);
  }
  static_assert(std::is_same_v<tally::exclusive_accumulator_t<tally::plus, std::int64_t, std::int32_t>,
                               std::int64_t>);
}

// Iterator inputs: a counting iterator, and a transform iterator (a fused map).
struct square {
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return i * i % 1000; }
};

TEST(DeviceApi, IteratorInputs) {
  const std::int64_t n = 1000003;
  thrust::counting_iterator<std::int64_t> first(0);
  device_buffer<std::int64_t> out(n);
  for (auto s : all_strategies) {
    tally::options o;
    o.strategy = s;
    out.poison();
    tally::textbook::inclusive_scan(first, out.data(), n, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    auto got = out.download();
    for (std::int64_t i = 0; i < n; i += 997) ASSERT_EQ(got[i], i * (i + 1) / 2) << i;
    ASSERT_EQ(got[n - 1], (n - 1) * n / 2);

    auto mapped = thrust::make_transform_iterator(first, square{});
    out.poison();
    tally::textbook::exclusive_scan(mapped, out.data(), n, std::int64_t{-3}, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    got = out.download();
    std::int64_t acc = -3;
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i], acc) << i;
      acc += i * i % 1000;
    }
  }
}

TEST(DeviceApi, BadArguments) {
  device_buffer<int> buf(16);
  int* p = buf.data();
  int* null = nullptr;
  auto m = invalid_argument_message([&] { tally::inclusive_scan(p, p, -1); });
  EXPECT_NE(m.find("tally::inclusive_scan"), std::string::npos) << m;
  EXPECT_NE(m.find("'n'"), std::string::npos) << m;
  m = invalid_argument_message([&] { tally::inclusive_scan(null, p, 16); });
  EXPECT_NE(m.find("tally::inclusive_scan"), std::string::npos) << m;
  EXPECT_NE(m.find("'in'"), std::string::npos) << m;
  m = invalid_argument_message([&] { tally::inclusive_scan(p, null, 16); });
  EXPECT_NE(m.find("'out'"), std::string::npos) << m;
  m = invalid_argument_message([&] { tally::exclusive_scan(p, p, -5, 0); });
  EXPECT_NE(m.find("tally::exclusive_scan"), std::string::npos) << m;
  EXPECT_NE(m.find("'n'"), std::string::npos) << m;
  m = invalid_argument_message([&] { tally::exclusive_scan(null, p, 3, 0); });
  EXPECT_NE(m.find("tally::exclusive_scan"), std::string::npos) << m;
  EXPECT_NE(m.find("'in'"), std::string::npos) << m;
  m = invalid_argument_message([&] { tally::exclusive_scan(p, null, 3, 0); });
  EXPECT_NE(m.find("'out'"), std::string::npos) << m;
  // n == 0 with null pointers is fine
  EXPECT_NO_THROW(tally::inclusive_scan(null, null, 0));
  EXPECT_NO_THROW(tally::exclusive_scan(null, null, 0, 1));
  // the single-pass strategies scan tiles with warp shuffles only
  for (auto s : {scan_strategy::chained, scan_strategy::decoupled_lookback}) {
    tally::options o;
    o.strategy = s;
    o.block = block_scan::brent_kung;
    m = invalid_argument_message([&] { tally::textbook::inclusive_scan(p, p, 16, tally::plus{}, o); });
    EXPECT_NE(m.find("options.block"), std::string::npos) << m;
  }
  {
    tally::options o;
    o.block = block_scan::kogge_stone;
    m = invalid_argument_message([&] { tally::inclusive_scan(p, p, 16, tally::plus{}, o); });
    EXPECT_NE(m.find("options.block"), std::string::npos) << m;
    EXPECT_NE(m.find("tally::textbook"), std::string::npos) << m;
  }
  {
    tally::options o;
    o.strategy = static_cast<scan_strategy>(99);
    m = invalid_argument_message([&] { tally::inclusive_scan(p, p, 16, tally::plus{}, o); });
    EXPECT_NE(m.find("options.strategy"), std::string::npos) << m;
    m = invalid_argument_message([&] { tally::textbook::inclusive_scan(p, p, 16, tally::plus{}, o); });
    EXPECT_NE(m.find("options.strategy"), std::string::npos) << m;
  }
  // host (pageable) memory: std::invalid_argument naming the argument, and the context stays
  // usable (no kernel read it). Skipped where the device reads pageable memory directly.
  int pageable_access = 0;
  TALLY_TEST_CUDA(cudaDeviceGetAttribute(&pageable_access, cudaDevAttrPageableMemoryAccess, 0));
  if (pageable_access == 0) {
    std::vector<int> host(64, 1);
    m = invalid_argument_message([&] { tally::inclusive_scan(host.data(), p, 64); });
    EXPECT_NE(m.find("'in'"), std::string::npos) << m;
    EXPECT_NE(m.find("host memory"), std::string::npos) << m;
    m = invalid_argument_message([&] { tally::exclusive_scan(p, host.data(), 64, 0); });
    EXPECT_NE(m.find("'out'"), std::string::npos) << m;
    m = invalid_argument_message([&] { (void)tally::reduce(host.data(), 64, 0); });
    EXPECT_NE(m.find("'in'"), std::string::npos) << m;
    m = invalid_argument_message([&] { tally::inclusive_scan_by_flags(p, host.data(), p, 64); });
    EXPECT_NE(m.find("'flags'"), std::string::npos) << m;
    device_buffer<int> d(64);
    EXPECT_NO_THROW(tally::inclusive_scan(d.data(), d.data(), 64));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
  }
  m = invalid_argument_message([&] { (void)tally::inclusive_scan_storage_bytes<int*>(-1); });
  EXPECT_NE(m.find("'n'"), std::string::npos) << m;
}

// The memory of tally's scratch pool in use at its high-water mark since the last reset,
// above what was in use at the reset (the single-pass strategies keep their per-stream
// tile state allocated from the pool, so "in use" is not zero between calls).
std::uint64_t pool_used_high(bool reset) {
  static std::uint64_t baseline = 0;
  cudaMemPool_t pool = tally::detail::scratch_pool("test");
  std::uint64_t v = 0;
  if (reset) {
    cudaMemPoolSetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &v);  // resets to the current use
    cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &baseline);
  }
  cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemHigh, &v);
  return v - baseline;
}

TEST(DeviceApi, CallerStorage) {
  const std::int64_t n = 5000000;
  const auto h = random_vector<int, tally::plus>(n, 4);
  device_buffer<int> in(h), out(n);
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (auto s : all_strategies) {
    for (auto b : all_blocks) {
      tally::options o;
      o.stream = stream;
      o.strategy = s;
      o.block = b;
      if (!offered(s, b)) continue;
      SCOPED_TRACE("strategy " + std::to_string(int(s)) + " block " + std::to_string(int(b)));
      EXPECT_EQ(tally::textbook::inclusive_scan_storage_bytes<const int*>(1, o), 0u);
      const std::size_t need_i = tally::textbook::inclusive_scan_storage_bytes<const int*>(n, o);
      const std::size_t need_e = tally::textbook::exclusive_scan_storage_bytes<const int*, int>(n, o);
      ASSERT_GT(need_i, 0u);
      device_buffer<unsigned char> storage(std::max(need_i, need_e) + 1);
      // too small
      o.storage = {storage.data(), need_i - 1};
      const auto m = invalid_argument_message([&] { tally::textbook::inclusive_scan(in.data(), out.data(), n, tally::plus{}, o); });
      EXPECT_NE(m.find("options.storage"), std::string::npos) << m;
      // enough, at an odd address: works and allocates nothing
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      pool_used_high(true);
      o.storage = {storage.data() + 1, need_i};
      out.poison();
      tally::textbook::inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
      TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
      EXPECT_EQ(pool_used_high(false), 0u) << "the call allocated";
      EXPECT_TRUE(matches(out.download(), reference_scan(h, false, 0, tally::plus{}), n));
      o.storage = {storage.data() + 1, need_e};
      out.poison();
      tally::textbook::exclusive_scan(in.data(), out.data(), n, 9, tally::plus{}, o);
      TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
      EXPECT_EQ(pool_used_high(false), 0u) << "the call allocated";
      EXPECT_TRUE(matches(out.download(), reference_scan(h, true, 9, tally::plus{}), n));
    }
  }
  // and without caller storage the pool is used (so the check above can fail): the
  // multi-pass strategies allocate their tile sums, the single-pass ones the stream's
  // tile state on its first use
  tally::options o;
  o.stream = stream;
  o.strategy = scan_strategy::reduce_then_scan;
  pool_used_high(true);
  tally::textbook::inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_GT(pool_used_high(false), 0u);
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// More than 2^32 elements: int8 inputs made on the fly by a transform iterator, an xor
// scan (accumulates in int, never overflows), results stored as uint8 (4.3 GB).
struct hash_int8 {
  __host__ __device__ std::int8_t operator()(std::int64_t i) const {
    return static_cast<std::int8_t>((static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull) >> 56);
  }
};

TEST(DeviceApi, MoreThan2To32Elements) {
  if (quick()) GTEST_SKIP() << "skipped in quick mode";
  const std::int64_t n = (std::int64_t{1} << 32) + (std::int64_t{1} << 20) + 7;
  std::size_t free_bytes = 0, total_bytes = 0;
  TALLY_TEST_CUDA(cudaMemGetInfo(&free_bytes, &total_bytes));
  if (free_bytes < static_cast<std::size_t>(n) + (std::size_t{1} << 30)) GTEST_SKIP() << "not enough GPU memory";
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), hash_int8{});
  device_buffer<std::uint8_t> out(static_cast<std::size_t>(n));
  out.poison();
  tally::inclusive_scan(in, out.data(), n, tally::bit_xor{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const std::size_t chunk = std::size_t{1} << 28;
  std::vector<std::uint8_t> got(chunk);
  int acc = 0;
  const hash_int8 f{};
  for (std::int64_t base = 0; base < n; base += static_cast<std::int64_t>(chunk)) {
    const std::size_t count = static_cast<std::size_t>(std::min<std::int64_t>(chunk, n - base));
    TALLY_TEST_CUDA(cudaMemcpy(got.data(), out.data() + base, count, cudaMemcpyDeviceToHost));
    for (std::size_t i = 0; i < count; ++i) {
      acc ^= f(base + static_cast<std::int64_t>(i));
      if (got[i] != static_cast<std::uint8_t>(acc)) {
        FAIL() << "element " << base + static_cast<std::int64_t>(i) << ": got " << int(got[i])
               << ", expected " << int(static_cast<std::uint8_t>(acc));
      }
    }
  }
}

}  // namespace
