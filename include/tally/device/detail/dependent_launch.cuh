// tally/device/detail/dependent_launch.cuh -- a kernel launched behind the clear of its
// state, the two launches overlapped (programmatic dependent launch, sm_90).
//
// Why. A kernel whose state lives in caller storage (options.storage), which holds
// anything, needs that state zeroed before it touches it. A cudaMemsetAsync does it, but
// then the kernel behind it is launched only once the memset has finished, and the
// launch's latency comes on top, a large share of a small scan or reduce
// (docs/performance.md, "What each path earns"). Here:
//   - clear_kernel zeroes the state, and lets the next kernel launch at once
//     (griddepcontrol.launch_dependents, at its start);
//   - the kernel is launched with programmatic stream serialization
//     (cudaLaunchAttributeProgrammaticStreamSerialization): its blocks may start while
//     the clear still runs, and wait (wait_for_prerequisite_grid: griddepcontrol.wait)
//     before their first access to the state, until the clear has completed and its
//     stores are visible.
//
// What the kernel may read before its wait: what the stream's work BEFORE the clear wrote
// (its input). The clear is launched as any kernel, so it starts only after that work has
// completed, and the kernel's blocks start only after every block of the clear has
// started. Only the state must wait. In a kernel launched without the attribute,
// griddepcontrol.wait returns at once, so the kernels that take this launch also run
// correctly when launched the plain way.
//
// The launch_dependents trigger says only "the next kernel may be scheduled now"; it
// publishes nothing: griddepcontrol.wait waits for the clear grid's completion and the
// flush of its memory operations, whenever the trigger was given.
//
// A chain of three: the offsets forms of the segmented scans on the pipelined kernel
// (segmented/pipelined.cuh) clear the head bitmap, build it (heads_bitmap_kernel,
// segmented/pairs_scan.cuh) and scan, each launch a programmatic dependent of the one before.
// The bitmap kernel triggers at its start and waits before its first store; the scan
// waits at its start, for the bitmap grid. Every thread of the bitmap kernel waits for
// the clear before it ends, so the bitmap grid completes only after the clear has
// completed and its stores are visible: the scan's one wait covers both.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include <cuda_runtime.h>

#include "tally/core/macros.hpp"
#include "tally/device/arch/grid_dependency.cuh"
#include "tally/device/detail/cuda_check.cuh"

namespace tally::detail {

// Zeroes `words` Word-sized words at p (Word: unsigned long long; a template so that the
// header defines it in every translation unit that includes it). Lets the dependent
// kernel launch first thing: a state's clear is a few kilobytes, shorter than the
// dependent launch's latency, and the bitmap kernel that follows the head bitmap's clear
// loads its offsets meanwhile.
template <class Word>
__global__ void clear_kernel(Word* p, std::int64_t words) {
  allow_dependent_launch();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride) {
    p[i] = Word{0};
  }
}

inline constexpr int clear_threads = 256;
// A grid-stride clear: enough blocks for the states (a few kilobytes: one or a few
// blocks), and up to 1024 for the head bitmap of the segmented scans (n / 8 bytes, 8 MiB
// at 2^26 elements: segmented/pairs_scan.cuh's build_bitmap).
inline constexpr std::int64_t clear_max_blocks = 1024;

// Zeroes `bytes` (a multiple of 8) at `state` (8-byte aligned) on `stream`, with a kernel
// that lets the next one launch at once (launch_dependent below).
inline void launch_clear(const char* function, void* state, std::size_t bytes, cudaStream_t stream) {
  const auto words = static_cast<std::int64_t>(bytes / 8);
  std::int64_t blocks = (words + clear_threads - 1) / clear_threads;
  if (blocks < 1) blocks = 1;
  if (blocks > clear_max_blocks) blocks = clear_max_blocks;
  clear_kernel<unsigned long long><<<static_cast<unsigned>(blocks), clear_threads, 0, stream>>>(
      static_cast<unsigned long long*>(state), words);
  TALLY_CUDA_CHECK_LAUNCH("clear_kernel", function);
}

// Launches `kernel` with (grid, block, shared) on `stream` and one launch attribute, or
// none where `attribute` is null (cudaLaunchKernelEx); a failed launch throws here,
// naming `what`. Also single_pass/tile_pipeline.cuh's cooperative launch of the tiles by block.
template <class... Params, class... Args>
void launch_with_attribute(const char* function, const char* what, dim3 grid, dim3 block,
                           std::size_t shared, cudaStream_t stream, const cudaLaunchAttribute* attribute,
                           void (*kernel)(Params...), Args&&... args) {
  cudaLaunchAttribute attributes[1] = {};
  if (attribute != nullptr) attributes[0] = *attribute;
  cudaLaunchConfig_t config = {};
  config.gridDim = grid;
  config.blockDim = block;
  config.dynamicSmemBytes = shared;
  config.stream = stream;
  config.attrs = attributes;
  config.numAttrs = attribute != nullptr ? 1 : 0;
  const cudaError_t status = cudaLaunchKernelEx(&config, kernel, std::forward<Args>(args)...);
  if (status != cudaSuccess) (void)cudaGetLastError();  // reported here, not by a later check
  cuda_check(status, function, what);
}

// Launches `kernel` with (grid, block, shared) on `stream` as a programmatic dependent of
// the kernel before it in the stream: its blocks may start once every block of that one
// has started or triggered (griddepcontrol.launch_dependents), and it calls
// wait_for_prerequisite_grid before it touches what that kernel writes. `what` names the
// kernel in errors.
template <class... Params, class... Args>
void launch_dependent(const char* function, const char* what, dim3 grid, dim3 block, std::size_t shared,
                      cudaStream_t stream, void (*kernel)(Params...), Args&&... args) {
  cudaLaunchAttribute dependent = {};
  dependent.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  dependent.val.programmaticStreamSerializationAllowed = 1;
  launch_with_attribute(function, what, grid, block, shared, stream, &dependent, kernel,
                        std::forward<Args>(args)...);
}

// Zeroes `bytes` (a multiple of 8) at `state` (8-byte aligned), then launches `kernel`
// with (grid, block, shared) on `stream` as a programmatic dependent of the clear; the
// kernel calls wait_for_prerequisite_grid before it touches the state. `what` names the
// kernel in errors.
template <class... Params, class... Args>
void launch_after_clear(const char* function, const char* what, void* state, std::size_t bytes,
                        dim3 grid, dim3 block, std::size_t shared, cudaStream_t stream,
                        void (*kernel)(Params...), Args&&... args) {
  launch_clear(function, state, bytes, stream);
  launch_dependent(function, what, grid, block, shared, stream, kernel, std::forward<Args>(args)...);
}

}  // namespace tally::detail
