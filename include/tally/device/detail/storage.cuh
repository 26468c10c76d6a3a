// tally/device/detail/storage.cuh -- temporary storage of the multi-pass strategies.
//
// Both multi-pass strategies need the same thing: at each level of the recursion, one
// accumulator per tile but the last (the last tile's total is never anybody's prefix),
// then the same again for the scan of those sums, until one tile holds them all.
//   bytes(n) = sum over levels of round_up((tiles_l - 1) * sizeof(Acc), 256),
//   tiles_0 = ceil(n / tile), tiles_{l+1} = ceil((tiles_l - 1) / tile), while tiles_l > 1.
// A call with caller storage aligns the caller's pointer up to 256 bytes itself, so the
// public *_storage_bytes functions add 256 bytes of slack to any non-zero need.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>

#include <cuda_runtime.h>

#include "tally/core/macros.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/tuning.cuh"

namespace tally::detail {

inline constexpr std::size_t storage_alignment = 256;

constexpr std::size_t round_up_storage(std::size_t bytes) {
  return (bytes + storage_alignment - 1) / storage_alignment * storage_alignment;
}

TALLY_HOST_DEVICE constexpr std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The bytes of tile sums over all levels (without the alignment slack).
template <class Acc>
constexpr std::size_t tile_sums_bytes(std::int64_t n, std::int64_t tile) {
  std::size_t total = 0;
  for (std::int64_t tiles = ceil_div(n, tile); tiles > 1; tiles = ceil_div(tiles - 1, tile)) {
    total += round_up_storage(static_cast<std::size_t>(tiles - 1) * sizeof(Acc));
  }
  return total;
}

// What a caller must provide: the sums plus the slack for aligning its pointer.
template <class Acc>
constexpr std::size_t required_storage_bytes(std::int64_t n, std::int64_t tile) {
  const std::size_t sums = tile_sums_bytes<Acc>(n, tile);
  return sums == 0 ? 0 : sums + storage_alignment;
}

// This thread's stream-capture mode set to relaxed while the object lives (and restored
// after it, also when a later call throws), for the one-time setup that the first tally
// call of a process on a device does (tally's memory pool below; the reductions' finish
// words, reduce_common.cuh): that call may be inside a CUDA graph capture, where the
// global and thread-local modes refuse such calls as "potentially unsafe"
// (cudaErrorStreamCaptureUnsupported, which also invalidates the capture). The setup
// enqueues nothing on the captured stream.
class relaxed_capture_mode {
 public:
  explicit relaxed_capture_mode(const char* function) {
    TALLY_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode_), function);
  }
  ~relaxed_capture_mode() { (void)cudaThreadExchangeStreamCaptureMode(&mode_); }
  relaxed_capture_mode(const relaxed_capture_mode&) = delete;
  relaxed_capture_mode& operator=(const relaxed_capture_mode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;  // then the one to restore
};

// The memory pool that calls without caller storage allocate from, one per device,
// created on first use. tally uses a pool of its own rather than the device's default
// pool: the default pool's release threshold is 0, so it hands freed memory back to the
// driver at every synchronisation and the next call pays for a fresh allocation, which
// costs several times a mid-sized scan (docs/performance.md, "What each path earns").
// This pool keeps up to
// `scratch_pool_keep_bytes` of freed memory for the next call, without changing the
// behaviour of the process's default pool.
inline constexpr std::uint64_t scratch_pool_keep_bytes = std::uint64_t{64} << 20;

inline cudaMemPool_t scratch_pool(const char* function) {
  constexpr int max_devices = 64;
  static std::mutex mutex;
  static cudaMemPool_t pools[max_devices] = {};
  int device = 0;
  TALLY_CUDA_CHECK(cudaGetDevice(&device), function);
  if (device < 0 || device >= max_devices) {
    throw tally::error(static_cast<int>(cudaErrorInvalidDevice),
                       std::string("tally::") + function + ": device ordinal " +
                           std::to_string(device) + " is beyond the 64 tally supports");
  }
  const std::lock_guard<std::mutex> lock(mutex);
  if (pools[device] == nullptr) {
    // (the first call that needs the pool may be inside a graph capture: a call without
    // caller storage allocates from it there too)
    const relaxed_capture_mode relaxed(function);
    cudaMemPoolProps props{};
    props.allocType = cudaMemAllocationTypePinned;
    props.location.type = cudaMemLocationTypeDevice;
    props.location.id = device;
    cudaMemPool_t pool = nullptr;
    TALLY_CUDA_CHECK(cudaMemPoolCreate(&pool, &props), function);
    std::uint64_t keep = scratch_pool_keep_bytes;
    TALLY_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep),
                     function);
    pools[device] = pool;
  }
  return pools[device];
}

// Throws std::invalid_argument where caller storage (caller_data != nullptr) holds fewer
// than `needed` bytes; `query` names the storage query that says how many.
inline void check_caller_storage(const char* function, const char* query, const void* caller_data,
                                 std::size_t caller_bytes, std::size_t needed) {
  if (caller_data != nullptr && caller_bytes < needed) {
    throw_invalid(function, "options.storage",
                  "is too small: " + std::to_string(caller_bytes) + " bytes given, " +
                      std::to_string(needed) + " needed (see tally::" + query + ")");
  }
}

// The temporary storage of one call: the caller's (no allocation; too small throws
// std::invalid_argument) or a stream-ordered allocation from scratch_pool() freed, stream-ordered, when this
// object goes out of scope (also when a later launch throws).
class scoped_storage {
 public:
  scoped_storage(const char* function, const char* query, void* caller_data,
                 std::size_t caller_bytes, std::size_t needed, cudaStream_t stream)
      : stream_(stream) {
    if (needed == 0) return;
    if (caller_data != nullptr) {
      check_caller_storage(function, query, caller_data, caller_bytes, needed);
      base_ = caller_data;
    } else {
      TALLY_CUDA_CHECK(
          cudaMallocFromPoolAsync(&allocated_, needed, scratch_pool(function), stream), function);
      base_ = allocated_;
    }
  }
  ~scoped_storage() {
    // Never throws from a destructor; a failure here shows up in the next CUDA call.
    if (allocated_ != nullptr) (void)cudaFreeAsync(allocated_, stream_);
  }
  scoped_storage(const scoped_storage&) = delete;
  scoped_storage& operator=(const scoped_storage&) = delete;

  // The storage aligned up to storage_alignment (nullptr if none was needed).
  unsigned char* aligned() const {
    if (base_ == nullptr) return nullptr;
    const auto p = reinterpret_cast<std::uintptr_t>(base_);
    return reinterpret_cast<unsigned char*>((p + storage_alignment - 1) / storage_alignment *
                                            storage_alignment);
  }

 private:
  cudaStream_t stream_;
  void* base_ = nullptr;
  void* allocated_ = nullptr;
};

// The seed of an exclusive scan as a kernel argument; empty for inclusive scans (whose
// accumulator need not be default constructible or have a value to pass).
template <class Acc, bool Exclusive>
struct seed_value {
  Acc value;
};
template <class Acc>
struct seed_value<Acc, false> {};

// seed_value from a value, dropped for inclusive scans.
template <class Acc, bool Exclusive>
seed_value<Acc, Exclusive> make_seed(const Acc& value) {
  if constexpr (Exclusive) {
    return seed_value<Acc, true>{value};
  } else {
    (void)value;
    return seed_value<Acc, false>{};
  }
}

inline unsigned grid_for(std::int64_t tiles) {
  return static_cast<unsigned>(tiles < max_grid_blocks ? tiles : max_grid_blocks);
}

}  // namespace tally::detail
