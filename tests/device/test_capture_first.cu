// tests/device/test_capture_first.cu -- the first tally calls of a process inside a CUDA graph
// capture. An executable of its own with one test, so that nothing of tally has run before
// in the process: a call without caller storage during a capture allocates from tally's
// memory pool, which the first such call creates (device/detail/storage.cuh,
// scratch_pool), and the runtime refuses to create a pool during a capture in the global
// and thread-local capture modes unless the creating thread relaxes its own mode. The
// graph tests of test_single_pass.cu cannot show this: other tests of their executable
// create the pool before them.
#include <cstdint>
#include <vector>

#include "test_common.cuh"
#include "tally/device/reduce.cuh"
#include "tally/device/scan.cuh"

namespace {

using namespace tally_test;

// A scan of many tiles (its state in a call-owned allocation from the pool) and an int32
// reduce_into, captured in the global mode, the strictest, as the process's first tally
// calls; the graph replayed on new input three times.
TEST(CaptureFirst, ScanAndReduceAreTheFirstCalls) {
  using T = std::int32_t;
  const std::int64_t n = (std::int64_t{1} << 20) + 9;
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  device_buffer<T> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n)), sum(1);
  tally::options o;
  o.stream = stream;
  std::vector<T> h;
  replay_captured(
      stream, cudaStreamCaptureModeGlobal,
      [&] {
        tally::inclusive_scan(static_cast<const T*>(in.data()), out.data(), n, tally::plus{}, o);
        tally::reduce_into(static_cast<const T*>(in.data()), n, sum.data(), T{0}, tally::plus{}, o);
      },
      [&](int replay) {
        h = random_vector<T, tally::plus>(static_cast<std::size_t>(n), 300 + replay);
        in.upload(h);
        out.poison();
        sum.poison();
      },
      [&](int replay) {
        const auto want = reference_scan(h, false, T{0}, tally::plus{});
        ASSERT_TRUE(matches(out.download(), want, static_cast<std::size_t>(n))) << "replay " << replay;
        T total = 0;
        for (const T x : h) total = static_cast<T>(static_cast<std::uint32_t>(total) + static_cast<std::uint32_t>(x));
        EXPECT_EQ(sum.download()[0], total) << "replay " << replay;
      });
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

}  // namespace
