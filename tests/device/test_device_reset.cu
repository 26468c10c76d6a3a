// tests/device/test_device_reset.cu -- tally calls after cudaDeviceReset.
//
// tally keeps state from one call to the next (device/detail/context.cuh): the reduce's
// finish-word rings and the pinned slot through which tally::reduce returns its value
// belong to the CUDA context they were allocated in, and cudaDeviceReset frees them with
// it; the per-stream tile states (from tally's memory pool) and the pipelined kernels'
// shared-memory limits outlive a reset. A reduce that wrote into a ring the reset freed
// would fail with an illegal address, which also poisons the new context. This test runs
// every kind of call that keeps state before and after resets.
// An executable of its own: a reset takes every other test's device state with it.
#include <condition_variable>
#include <cstdint>
#include <iostream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "test_common.cuh"
#include "test_reduce_common.cuh"  // hold_stream_kernel
#include "tally/device/reduce.cuh"
#include "tally/device/scan.cuh"
#include "tally/device/segmented.cuh"

namespace {

using namespace tally_test;
using tally_reduce_test::hold_stream_kernel;

// Small integers: every float sum below is exact, so float results compare with ==.
std::vector<std::int32_t> small_values(std::size_t n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<std::int32_t> h(n);
  for (auto& x : h) x = static_cast<std::int32_t>(g() % 7) - 3;
  return h;
}

std::int64_t sum_of(const std::vector<std::int32_t>& h) {
  std::int64_t s = 0;
  for (const auto x : h) s += x;
  return s;
}

// Every kind of call that uses context-bound state, on `stream`, each result checked:
// the value reduce (pinned slot; int32: the packed finish word from the ring; float: the
// descriptor finish), reduce_into (the ring), a scan of 2^20 (single-pass) and one of
// 2^24 int32 = 64 MiB (the pipelined kernel, 64 KiB of dynamic shared memory), and a
// segmented reduce of long segments (the ranges kernel, dynamic shared memory).
void every_kind_of_call(cudaStream_t stream, std::uint64_t salt, const char* when) {
  SCOPED_TRACE(when);
  tally::options o;
  o.stream = stream;
  const std::size_t n = std::size_t{1} << 20;
  const auto h = small_values(n, salt);
  const std::int64_t total = sum_of(h);
  std::vector<float> hf(h.begin(), h.end());
  device_buffer<std::int32_t> in(h), out(n), one(1);
  device_buffer<float> in_f(hf);

  EXPECT_EQ(tally::reduce(in.data(), static_cast<std::int64_t>(n), std::int32_t{0}, tally::plus{}, o), total);
  EXPECT_EQ(tally::reduce(in_f.data(), static_cast<std::int64_t>(n), 0.0f, tally::plus{}, o),
            static_cast<float>(total));

  one.poison();
  tally::reduce_into(in.data(), static_cast<std::int64_t>(n), one.data(), std::int32_t{0}, tally::plus{}, o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_EQ(one.download()[0], total);

  out.poison();
  tally::inclusive_scan(in.data(), out.data(), static_cast<std::int64_t>(n), tally::plus{}, o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_TRUE(matches(out.download(), reference_scan(h, false, std::int32_t{0}, tally::plus{}), n));

  const std::size_t big = std::size_t{1} << 24;
  const auto hb = small_values(big, salt + 1);
  device_buffer<std::int32_t> in_b(hb), out_b(big);
  out_b.poison();
  tally::inclusive_scan(in_b.data(), out_b.data(), static_cast<std::int64_t>(big), tally::plus{}, o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  EXPECT_TRUE(matches(out_b.download(), reference_scan(hb, false, std::int32_t{0}, tally::plus{}), big));

  // 8 segments of 2^17 (long ones: the ranges kernel)
  const int segments = 8;
  std::vector<std::int64_t> offsets(segments + 1);
  for (int k = 0; k <= segments; ++k) offsets[k] = static_cast<std::int64_t>(k) * static_cast<std::int64_t>(n / segments);
  device_buffer<std::int64_t> d_offsets(offsets);
  device_buffer<std::int32_t> sums(segments);
  sums.poison();
  tally::segmented_reduce(in.data(), static_cast<std::int64_t>(n), d_offsets.data(), segments, sums.data(),
                          std::int32_t{0}, tally::plus{}, o);
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  const auto got = sums.download();
  for (int k = 0; k < segments; ++k) {
    std::int32_t want = 0;
    for (std::int64_t i = offsets[k]; i < offsets[k + 1]; ++i) want += h[static_cast<std::size_t>(i)];
    EXPECT_EQ(got[static_cast<std::size_t>(k)], want) << "segment " << k;
  }
  TALLY_TEST_CUDA(cudaGetLastError());
}

// Calls on the default stream and on a stream of their own, then a reset, twice over.
TEST(DeviceReset, CallsAfterAResetWork) {
  for (int round = 0; round < 3; ++round) {
    const std::string when = "after " + std::to_string(round) + " resets";
    every_kind_of_call(nullptr, 10 + static_cast<std::uint64_t>(round), (when + ", default stream").c_str());
    cudaStream_t stream;
    TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    every_kind_of_call(stream, 20 + static_cast<std::uint64_t>(round), (when + ", own stream").c_str());
    TALLY_TEST_CUDA(cudaStreamDestroy(stream));
    TALLY_TEST_CUDA(cudaDeviceReset());
  }
}

// A thread whose reduce slot a reset freed: its next reduce gets a new slot, and when the
// thread exits it must not free the old address, which may by then be one of the
// program's own pinned buffers (checked: every buffer allocated after the reset is still
// pinned after the thread has exited, and holds what was written). Whether an address
// came back is printed; when none did, the second half of this test cannot tell the
// difference.
TEST(DeviceReset, AThreadsSlotAfterAReset) {
  const std::size_t n = 1000;
  const auto h = small_values(n, 5);
  std::int32_t* in = nullptr;
  TALLY_TEST_CUDA(cudaMalloc(&in, n * sizeof(std::int32_t)));
  TALLY_TEST_CUDA(cudaMemcpy(in, h.data(), n * sizeof(std::int32_t), cudaMemcpyHostToDevice));

  std::int64_t before = 0, after = 0;
  const void* slot = nullptr;  // the worker's slot after the first reset
  int stage = 0;               // 1: first reduce done; 2: reset done; 3: second reduce done; 4: may exit
  std::mutex m;
  std::condition_variable cv;
  const auto advance_to = [&](int s) {
    const std::lock_guard<std::mutex> lock(m);
    stage = s;
    cv.notify_all();
  };
  const auto wait_for = [&](int s) {
    std::unique_lock<std::mutex> lock(m);
    cv.wait(lock, [&] { return stage >= s; });
  };
  std::thread worker([&] {
    before = tally::reduce(static_cast<const std::int32_t*>(in), static_cast<std::int64_t>(n), std::int32_t{0});
    advance_to(1);
    wait_for(2);
    // the reset freed `in` too: a fresh input
    std::int32_t* again = nullptr;
    if (cudaMalloc(&again, n * sizeof(std::int32_t)) == cudaSuccess &&
        cudaMemcpy(again, h.data(), n * sizeof(std::int32_t), cudaMemcpyHostToDevice) == cudaSuccess) {
      after = tally::reduce(static_cast<const std::int32_t*>(again), static_cast<std::int64_t>(n), std::int32_t{0});
      (void)cudaFree(again);
    }
    slot = tally::detail::reduction::host_result_slot<std::int32_t>("reduce").slot;
    advance_to(3);
    wait_for(4);
  });
  wait_for(1);
  EXPECT_EQ(before, sum_of(h));
  // reduce returns when its value is there, possibly before its kernel has exited
  // (reduce.cuh, "reduce's wait"): the device must be idle before a reset.
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  TALLY_TEST_CUDA(cudaDeviceReset());
  advance_to(2);
  wait_for(3);
  EXPECT_EQ(after, sum_of(h));
  TALLY_TEST_CUDA(cudaDeviceSynchronize());

  // Now the worker holds a slot of the new context; a second reset frees it, and the
  // program allocates pinned buffers (one of them may land on the slot's old address)
  // before the worker exits.
  TALLY_TEST_CUDA(cudaDeviceReset());
  std::vector<std::int32_t*> pinned(64, nullptr);
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    TALLY_TEST_CUDA(cudaHostAlloc(&pinned[i], sizeof(std::int32_t), cudaHostAllocMapped | cudaHostAllocPortable));
    *pinned[i] = static_cast<std::int32_t>(i) + 1000;
  }
  bool reused = false;
  for (const auto* p : pinned) reused = reused || static_cast<const void*>(p) == slot;
  std::cout << "[device reset] the worker's freed slot address " << (reused ? "came back" : "did not come back")
            << " among the program's 64 pinned buffers" << std::endl;
  advance_to(4);
  worker.join();
  for (std::size_t i = 0; i < pinned.size(); ++i) {
    cudaPointerAttributes a{};
    TALLY_TEST_CUDA(cudaPointerGetAttributes(&a, pinned[i]));
    EXPECT_EQ(a.type, cudaMemoryTypeHost) << "buffer " << i << " is no longer pinned";
    EXPECT_EQ(*pinned[i], static_cast<std::int32_t>(i) + 1000);
    TALLY_TEST_CUDA(cudaFreeHost(pinned[i]));
  }
  TALLY_TEST_CUDA(cudaGetLastError());
}

// tally::reduce waits for its value as the program asked the device to wait
// (cudaSetDeviceFlags; reduce_common.cuh, wait_for_result): it synchronises the stream under
// cudaDeviceScheduleBlockingSync, spins under spin and auto, and yields between reads under
// yield. Each scheduling is set on a fresh context (after a reset), read back, and a reduce
// of int32 (the packed finish), of float (the descriptor finish) and of a one-block input
// must return the right values, also behind a 20 ms kernel on the same stream. The
// device's flags go back to auto at the end.
TEST(DeviceReset, ReduceUnderEachScheduling) {
  const unsigned int schedules[] = {cudaDeviceScheduleBlockingSync, cudaDeviceScheduleYield,
                                    cudaDeviceScheduleSpin, cudaDeviceScheduleAuto};
  const std::size_t n = std::size_t{1} << 20;
  const auto h = small_values(n, 31);
  const std::int64_t total = sum_of(h);
  std::vector<float> hf(h.begin(), h.end());
  std::int64_t head = 0;
  for (std::size_t i = 0; i < 1000; ++i) head += h[i];
  for (const unsigned int schedule : schedules) {
    SCOPED_TRACE("schedule flag " + std::to_string(schedule));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    TALLY_TEST_CUDA(cudaDeviceReset());
    TALLY_TEST_CUDA(cudaSetDeviceFlags(schedule));
    TALLY_TEST_CUDA(cudaFree(nullptr));  // the context, with these flags
    unsigned int flags = 0;
    TALLY_TEST_CUDA(cudaGetDeviceFlags(&flags));
    ASSERT_EQ(flags & cudaDeviceScheduleMask, schedule);
    {
      device_buffer<std::int32_t> in(h);
      device_buffer<float> in_f(hf);
      cudaStream_t stream;
      TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
      tally::options o;
      o.stream = stream;
      for (int round = 0; round < 2; ++round) {
        if (round == 1) hold_stream_kernel<<<1, 1, 0, stream>>>(20'000'000ull);
        EXPECT_EQ(tally::reduce(in.data(), static_cast<std::int64_t>(n), std::int32_t{0}, tally::plus{}, o), total);
        if (round == 1) hold_stream_kernel<<<1, 1, 0, stream>>>(20'000'000ull);
        EXPECT_EQ(tally::reduce(in_f.data(), static_cast<std::int64_t>(n), 0.0f, tally::plus{}, o),
                  static_cast<float>(total));
        EXPECT_EQ(tally::reduce(in.data(), std::int64_t{1000}, std::int64_t{0}, tally::plus{}, o), head);
      }
      TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
      TALLY_TEST_CUDA(cudaStreamDestroy(stream));
    }
  }
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  TALLY_TEST_CUDA(cudaDeviceReset());
  TALLY_TEST_CUDA(cudaSetDeviceFlags(cudaDeviceScheduleAuto));
  TALLY_TEST_CUDA(cudaGetLastError());
}

}  // namespace
