// tally/device/single_pass/one_block.cuh -- the one-block scan: a small scan in ONE block,
// one launch, no tile state, no look-back.
//
// At small n a scan is latency: nearly all of a small copy's time is an empty kernel's
// launch, and a second tile adds a look-back's round trip between blocks. A block of up
// to 1024 threads holding one 16-byte vector each covers up to 4096 4-byte (2048 8-byte)
// values with no second block to wait for (docs/performance.md, "What each path earns").
//
//   1. thread t loads vector t (items t*V .. t*V + V - 1, V = 16 / sizeof(Acc)) with one
//      16-byte load: a warp reads 512 contiguous bytes, coalesced; the thread holding the
//      last, partial vector and any thread past the end read element by element and pad
//      with a copy of the last element (every block scan in tally is causal: padding only
//      reaches results past the end, which are not stored; no identity needed);
//   2. the block scans its items (block/warp_scans.cuh: serial in each thread, warp
//      shuffles, one warp over the warp totals; two barriers);
//   3. thread t stores its vector back (element by element past the end).
// In place (in == out) is safe: every load of the block happens before the scan's first
// barrier, every store after it.
// The association is fixed by n (the block size is chosen from n), so float results are
// the same bits in every run: options.deterministic needs nothing more.
#pragma once

#include <cstdint>
#include <cstring>

#include <cuda_runtime.h>

#include "tally/block/warp_scans.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"           // seed_value
#include "tally/device/single_pass/tile_pipeline.cuh"  // acc_pointers, aligned_16

namespace tally::detail::one_block {

template <class Acc>
inline constexpr int vector_items = 16 / static_cast<int>(sizeof(Acc));
inline constexpr int max_threads = 1024;

// The most elements the one-block scan takes.
template <class Acc>
constexpr std::int64_t max_items() {
  return std::int64_t{max_threads} * vector_items<Acc>;
}

// Whether it takes a scan of n >= 1 elements: 16-byte aligned pointers to 4- or 8-byte
// values (the accumulator type itself), at most max_items of them.
template <class Acc, class In, class Out>
bool takes(In in, Out out, std::int64_t n) {
  if constexpr (single_pass::acc_pointers<Acc, In, Out>()) {
    return n <= max_items<Acc>() && single_pass::aligned_16(in) && single_pass::aligned_16(out);
  } else {
    (void)in, (void)out, (void)n;
    return false;
  }
}

template <int Threads, bool Exclusive, class Acc, class Op>
__global__ void __launch_bounds__(Threads)
    one_block_scan_kernel(const Acc* in, Acc* out, int n, seed_value<Acc, Exclusive> seed, Op op) {
  constexpr int V = vector_items<Acc>;
  using scan = block::block_scan_warp_scans<Acc, Threads, V>;
  __shared__ typename scan::TempStorage temp;

  const int first = static_cast<int>(threadIdx.x) * V;
  const bool whole = first + V <= n;  // this thread's vector lies inside [0, n)
  Acc items[V];
  // 1. the loads
  if (whole) {
    const uint4 v = reinterpret_cast<const uint4*>(in)[threadIdx.x];
    std::memcpy(items, &v, sizeof(v));
  } else {
    const Acc last = in[n - 1];
#pragma unroll
    for (int k = 0; k < V; ++k) items[k] = first + k < n ? in[first + k] : last;
  }
  // 2. the block scan (its barriers also separate every load above from every store below)
  if constexpr (Exclusive) {
    scan(temp).exclusive_scan_items(items, seed.value, op);
  } else {
    scan(temp).inclusive_scan_items(items, op);
  }
  // 3. the stores
  if (whole) {
    uint4 v;
    std::memcpy(&v, items, sizeof(v));
    reinterpret_cast<uint4*>(out)[threadIdx.x] = v;
  } else {
#pragma unroll
    for (int k = 0; k < V; ++k) {
      if (first + k < n) out[first + k] = items[k];
    }
  }
}

// One launch of the smallest block (256, 512 or 1024 threads) that holds n elements as
// vectors: the fewer threads, the less the warp level has to do. Requires takes(in, out,
// n) and n >= 1.
template <bool Exclusive, class Acc, class In, class Out, class Op>
void scan(const char* function, In in, Out out, std::int64_t n, seed_value<Acc, Exclusive> seed,
          Op op, cudaStream_t stream) {
  const std::int64_t vectors = (n + vector_items<Acc> - 1) / vector_items<Acc>;
  const auto launch = [&](auto kernel, int threads) {
    kernel<<<1, threads, 0, stream>>>(in, out, static_cast<int>(n), seed, op);
    TALLY_CUDA_CHECK_LAUNCH("one_block_scan_kernel", function);
  };
  if (vectors <= 256) {
    launch(one_block_scan_kernel<256, Exclusive, Acc, Op>, 256);
  } else if (vectors <= 512) {
    launch(one_block_scan_kernel<512, Exclusive, Acc, Op>, 512);
  } else {
    launch(one_block_scan_kernel<max_threads, Exclusive, Acc, Op>, max_threads);
  }
}

}  // namespace tally::detail::one_block
