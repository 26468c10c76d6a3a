// tests/device/select/test_select_contract.cu -- the selection family's contract beyond
// the results of test_select.cu: delayed tiles (the stall test of the scans), n > 2^32,
// the count on the device under graph capture, streams, determinism, bad arguments.
#include <gtest/gtest.h>

#include <thrust/iterator/counting_iterator.h>

#include "select_common.cuh"

namespace tally_test {
namespace {

namespace seq = tally::cpu::sequential;
namespace sel = tally::detail::select;

// ---- stalls ------------------------------------------------------------------------------------
// Chosen tiles and blocks are delayed right after their ticket (test_common.cuh, stall):
// their successors must wait for their descriptors, not read stale ones.
TEST(SelectContract, Stalls) {
  const std::int64_t tiles = quick() ? 64 : 1024;
  const std::int64_t n = tiles * count_tile - 11;
  const auto h = random_u32(static_cast<std::size_t>(n), 21);
  const keep_percent pred{50};
  std::vector<std::uint32_t> want;
  seq::copy_if(h.begin(), h.end(), std::back_inserter(want), pred);
  device_buffer<std::uint32_t> in(h), out(h.size() + 1);
  device_count_slot count;

  const std::int64_t rn = tiles * program_tile<sel::keyed<std::uint32_t, sel::short_count_t>> - 3;
  const auto k = random_runs(static_cast<std::size_t>(rn), 9, 22);
  const auto v = random_u32(static_cast<std::size_t>(rn), 23);
  std::vector<std::uint32_t> wk, wv;
  seq::reduce_by_key(k.begin(), k.end(), v.begin(), std::back_inserter(wk), std::back_inserter(wv));
  device_buffer<std::uint32_t> keys(k), values(v), keys_out(k.size() + 1), values_out(k.size() + 1);

  for (const stall& s : stall_cases(tiles, static_cast<unsigned>(tiles - 1))) {
    SCOPED_TRACE(describe(s));
    out.poison();
    sel::compact("copy_if", in.data(), out.data(), n, sel::by_value<keep_percent>{pred}, count.data(),
                 tally::options{}, s);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(same_prefix(out.download(), want, static_cast<std::size_t>(count.read()))) << "copy_if";

    keys_out.poison();
    values_out.poison();
    sel::reduce_by_key<std::uint32_t>("reduce_by_key", keys.data(), values.data(), keys_out.data(),
                                      values_out.data(), rn, tally::plus{}, tally::equal_to{},
                                      count.data(), tally::options{}, s);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto c = static_cast<std::size_t>(count.read());
    ASSERT_TRUE(same_prefix(keys_out.download(), wk, c)) << "reduce_by_key keys";
    ASSERT_TRUE(same_prefix(values_out.download(), wv, c)) << "reduce_by_key values";
  }
}

// ---- 64-bit n ----------------------------------------------------------------------------------
struct byte_of {
  __host__ __device__ std::int8_t operator()(std::int64_t i) const {
    return static_cast<std::int8_t>((static_cast<std::uint64_t>(i) * 2654435761ull) >> 13);
  }
};
struct low_bits_zero {
  __host__ __device__ bool operator()(std::int8_t x) const { return (x & 3) == 0; }
};

// copy_if of more than 2^32 int8 items, in place: counts and positions past 2^32.
TEST(SelectContract, MoreThan2To32Items) {
  if (quick()) GTEST_SKIP() << "4 GiB of items: not in quick mode";
  const std::int64_t n = (std::int64_t{1} << 32) + 12345;
  std::vector<std::int8_t> h(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) h[static_cast<std::size_t>(i)] = byte_of{}(i);
  device_buffer<std::int8_t> work(h);
  const std::int64_t c = tally::copy_if(work.data(), work.data(), n, low_bits_zero{});
  std::int64_t kept = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (low_bits_zero{}(h[static_cast<std::size_t>(i)])) h[static_cast<std::size_t>(kept++)] = h[static_cast<std::size_t>(i)];
  }
  ASSERT_EQ(c, kept);
  ASSERT_GT(c, std::int64_t{1} << 30);
  const auto got = work.download(static_cast<std::size_t>(c));
  for (std::int64_t i = 0; i < c; ++i) {
    ASSERT_EQ(got[static_cast<std::size_t>(i)], h[static_cast<std::size_t>(i)]) << "element " << i;
  }
}

// ---- the count on the device, graphs, streams ----------------------------------------------
TEST(SelectContract, GraphCaptureAndStreams) {
  const std::int64_t n = 3 * count_tile + 17;
  const auto h = random_u32(static_cast<std::size_t>(n), 24);
  const keep_percent pred{30};
  std::vector<std::uint32_t> want;
  seq::copy_if(h.begin(), h.end(), std::back_inserter(want), pred);
  device_buffer<std::uint32_t> in(h), out(h.size() + 1);
  device_count_slot count;
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  // the host form waits for its count: refused while capturing
  cudaGraph_t graph = nullptr;
  TALLY_TEST_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
  const std::string message =
      invalid_argument_message([&] { (void)tally::copy_if(in.data(), out.data(), n, pred, o); });
  TALLY_TEST_CUDA(cudaStreamEndCapture(stream, &graph));
  if (graph != nullptr) TALLY_TEST_CUDA(cudaGraphDestroy(graph));
  EXPECT_NE(message.find("count_to"), std::string::npos) << message;
  // the count_to form is captured and replayed
  replay_captured(
      stream, cudaStreamCaptureModeThreadLocal,
      [&] { tally::copy_if(in.data(), out.data(), n, pred, tally::count_to(count.data()), o); },
      [&](int) {
        out.poison();
        count.poison();
      },
      [&](int replay) {
        ASSERT_TRUE(same_prefix(out.download(), want, static_cast<std::size_t>(count.read())))
            << "replay " << replay;
      });
  // on a non-blocking stream, the host form
  out.poison();
  const std::int64_t c = tally::copy_if(in.data(), out.data(), n, pred, o);
  ASSERT_TRUE(same_prefix(out.download(), want, static_cast<std::size_t>(c)));
  // n == 0 writes a zero count
  count.poison();
  tally::copy_if(in.data(), out.data(), 0, pred, tally::count_to(count.data()), o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_EQ(count.read(), 0);
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// reduce_by_key of floats with options.deterministic: the same bits in every run.
TEST(SelectContract, DeterministicReduceByKey) {
  const std::int64_t n = quick() ? 300007 : 20000003;
  const auto k = random_runs(static_cast<std::size_t>(n), std::int64_t{1} << 16, 25);
  std::vector<float> v(static_cast<std::size_t>(n));
  auto g = rng(26);
  for (auto& x : v) x = std::uniform_real_distribution<float>(-1.0f, 1.0f)(g);
  device_buffer<std::uint32_t> keys(k), keys_out(k.size());
  device_buffer<float> values(v), sums(v.size());
  tally::options o;
  o.deterministic = true;
  std::vector<float> first;
  for (int run = 0; run < 3; ++run) {
    const std::int64_t c = tally::reduce_by_key(keys.data(), values.data(), keys_out.data(), sums.data(), n,
                                                tally::plus{}, tally::equal_to{}, o);
    const auto got = sums.download(static_cast<std::size_t>(c));
    if (run == 0) {
      first = got;
      // and close to the sums in double
      std::vector<std::uint32_t> wk;
      std::vector<double> wd;
      std::vector<double> vd(v.begin(), v.end());
      seq::reduce_by_key(k.begin(), k.end(), vd.begin(), std::back_inserter(wk), std::back_inserter(wd));
      ASSERT_EQ(static_cast<std::size_t>(c), wd.size());
      for (std::size_t i = 0; i < wd.size(); ++i) {
        ASSERT_NEAR(got[i], wd[i], 1e-3 * (1.0 + std::abs(wd[i]))) << "run " << i;
      }
    } else {
      ASSERT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)), 0) << "run " << run;
    }
  }
}

// ---- bad arguments -------------------------------------------------------------------------
TEST(SelectContract, BadArguments) {
  device_buffer<std::uint32_t> a(100), b(100);
  device_count_slot count;
  const keep_percent pred{50};
  const auto mentions = [](const std::string& m, const char* function, const char* argument) {
    return m.find(function) != std::string::npos && m.find(argument) != std::string::npos;
  };
  std::string m = invalid_argument_message([&] { (void)tally::copy_if(a.data(), b.data(), -1, pred); });
  EXPECT_TRUE(mentions(m, "copy_if", "n")) << m;
  m = invalid_argument_message(
      [&] { (void)tally::copy_if(static_cast<const std::uint32_t*>(nullptr), b.data(), 10, pred); });
  EXPECT_TRUE(mentions(m, "copy_if", "in")) << m;
  m = invalid_argument_message([&] { (void)tally::unique(a.data(), static_cast<std::uint32_t*>(nullptr), 10); });
  EXPECT_TRUE(mentions(m, "unique", "out")) << m;
  m = invalid_argument_message(
      [&] { tally::copy_if(a.data(), b.data(), 10, pred, tally::count_to(static_cast<std::int64_t*>(nullptr))); });
  EXPECT_TRUE(mentions(m, "copy_if", "count")) << m;
  std::vector<std::uint32_t> host(100);
  m = invalid_argument_message([&] { (void)tally::remove_if(host.data(), b.data(), 100, pred); });
  EXPECT_TRUE(mentions(m, "remove_if", "in")) << m;
  m = invalid_argument_message([&] { (void)tally::partition(a.data(), a.data() + 10, 50, pred); });
  EXPECT_TRUE(mentions(m, "partition", "overlaps")) << m;
  m = invalid_argument_message([&] {
    (void)tally::reduce_by_key(a.data(), b.data(), a.data(), b.data() + 50, 100);
  });
  EXPECT_TRUE(mentions(m, "reduce_by_key", "keys_out")) << m;
  tally::options with_storage;
  with_storage.storage = {b.data(), 400};
  m = invalid_argument_message([&] { (void)tally::copy_if(a.data(), a.data(), 100, pred, with_storage); });
  EXPECT_TRUE(mentions(m, "copy_if", "options.storage")) << m;
  tally::options chained;
  chained.strategy = tally::scan_strategy::chained;
  m = invalid_argument_message([&] { (void)tally::run_length_encode(a.data(), b.data(), b.data(), 0, tally::equal_to{}, chained); });
  EXPECT_TRUE(mentions(m, "run_length_encode", "options.strategy")) << m;
  // n == 0 with null pointers is fine (nothing is read or written), and returns 0
  EXPECT_EQ(tally::copy_if(static_cast<const int*>(nullptr), static_cast<int*>(nullptr), 0, is_odd{}), 0);
}

}  // namespace
}  // namespace tally_test
