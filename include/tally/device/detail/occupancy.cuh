// tally/device/detail/occupancy.cuh -- what the device holds at once.
//
//   current_device        the current device's ordinal (checked against the 64 that
//                         tally's per-device caches hold)
//   resident_grid         how many blocks of a kernel the device runs at once (with its
//                         dynamic shared memory)
//   multiprocessors       the device's SM count (the single-pass reduce's grid)
//   co_resident_blocks    how many blocks a cooperative launch of any small kernel may
//                         take with the guarantee that all of them run at once
//                         (single_pass/tile_pipeline.cuh's small-n path)
//   co_resident_grid      the same for one kernel: its resident grid, or 0 where the
//                         device cannot launch cooperatively (single_pass/tile_pipeline.cuh's
//                         tiles by block)
#pragma once

#include <atomic>
#include <cstddef>
#include <string>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/device/detail/cuda_check.cuh"

namespace tally::detail {

inline int current_device(const char* function) {
  int device = 0;
  TALLY_CUDA_CHECK(cudaGetDevice(&device), function);
  if (device < 0 || device >= 64) {
    throw tally::error(static_cast<int>(cudaErrorInvalidDevice),
                       std::string("tally::") + function + ": device ordinal " +
                           std::to_string(device) + " is beyond the 64 tally supports");
  }
  return device;
}

// The current device's number of SMs, cached per device.
inline int multiprocessors(const char* function) {
  static std::atomic<int> cache[64] = {};
  const int device = current_device(function);
  int sms = cache[device].load(std::memory_order_relaxed);
  if (sms > 0) return sms;
  TALLY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), function);
  sms = sms > 0 ? sms : 1;
  cache[device].store(sms, std::memory_order_relaxed);
  return sms;
}

// The number of blocks of `Kernel` (launched with `threads` threads and `dynamic_shared`
// bytes of dynamic shared memory) that the current device runs at once: SMs x occupancy,
// cached per device. A kernel with dynamic shared memory is allowed that much on the
// device first (cudaFuncSetAttribute, once per device, as the attribute is: without it
// a kernel gets at most 48 KiB of shared memory, static and dynamic together). A device
// that cannot hold one block is an error (tally::error), not a grid of 0 blocks. The
// reductions that use a fixed number of threads (Brent's lemma) launch this many, so
// their grid, and with it the order of their float additions, depends only on the device
// and the build: identical from run to run. The pipelined scan launches this many
// persistent blocks (single_pass/pipelined.cuh).
template <auto Kernel>
int resident_grid(int threads, const char* function, std::size_t dynamic_shared = 0) {
  static std::atomic<int> cache[64] = {};
  const int device = current_device(function);
  int blocks = cache[device].load(std::memory_order_relaxed);
  if (blocks > 0) return blocks;
  if (dynamic_shared > 0) {
    TALLY_CUDA_CHECK(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          static_cast<int>(dynamic_shared)),
                     function);
  }
  int per_sm = 0;
  TALLY_CUDA_CHECK(
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, threads, dynamic_shared),
      function);
  if (per_sm < 1) {
    throw tally::error(static_cast<int>(cudaErrorInvalidConfiguration),
                       std::string("tally::") + function +
                           ": the device cannot hold one block of the kernel this call needs");
  }
  blocks = multiprocessors(function) * per_sm;
  cache[device].store(blocks, std::memory_order_relaxed);
  return blocks;
}

// The number of blocks a cooperative launch of the small-n scan kernel may take on the
// current device: its SM count (0 where the device cannot launch cooperatively). That
// kernel fits at least once on any SM (256 threads, under 1 KiB of static shared memory,
// and __launch_bounds__(256) keeps its registers within an SM's), so a cooperative grid
// of at most this many blocks is always accepted, and the CUDA runtime then guarantees
// that all its blocks are resident at the same time. Cached per device.
inline int co_resident_blocks(const char* function) {
  static std::atomic<int> cache[64] = {};  // 0: not asked yet; -1: cannot
  const int device = current_device(function);
  int blocks = cache[device].load(std::memory_order_relaxed);
  if (blocks != 0) return blocks > 0 ? blocks : 0;
  int cooperative = 0;
  TALLY_CUDA_CHECK(cudaDeviceGetAttribute(&cooperative, cudaDevAttrCooperativeLaunch, device),
                   function);
  blocks = cooperative != 0 ? multiprocessors(function) : -1;
  cache[device].store(blocks, std::memory_order_relaxed);
  return blocks > 0 ? blocks : 0;
}

// The largest grid of `Kernel` (launched with `threads` threads and no dynamic shared
// memory) that a cooperative launch takes: resident_grid, which is the bound the runtime
// checks such a launch against; 0 where the device cannot launch cooperatively.
template <auto Kernel>
int co_resident_grid(int threads, const char* function) {
  return co_resident_blocks(function) > 0 ? resident_grid<Kernel>(threads, function) : 0;
}

}  // namespace tally::detail
