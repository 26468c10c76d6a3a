// Built by hand, not by CMake: nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr
// -diag-suppress 177 -Iinclude -Iscripts/experiments -o heads_prefetch
// scripts/experiments/heads_prefetch.cu; run: ./heads_prefetch [reps] (session 51;
// docs/perf-notes.md, "The heads kernel's reads, one chunk ahead").
//
// The head bitmap's heads kernel (segmented_scan.cuh, heads_bitmap_kernel<32>, taken at
// segments shorter than 8) reads its offsets 4-6 us slower than a plain read of the same
// bytes at segments of 4 (session 50). Each of its warps loads one chunk of 1024 offsets
// (4 KiB), builds the chunk's words and exits: nothing of the next chunk is in flight
// while a warp builds, and the grid of 2048 blocks runs in about 4 waves. The variant here
// keeps a resident grid whose warps stride over the chunks, and copies the NEXT chunk into
// the warp's second 4 KiB buffer with cp.async before it builds the current one (the same
// swizzled rows and the library's set_span_bits). Timed, interleaved, against the library
// kernel alone, the same kernel without the prefetch, a plain read of the offsets (the
// floor), and clear + kernel + the scan kernel against clear + library kernel + the scan
// kernel. Every bitmap compared word for word with build_bitmap's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "tally/tally.cuh"
#include "tally/device/detail/segmented_pipelined.cuh"
#include "timing.cuh"

namespace PL = tally::detail::pipelined;
namespace SP = tally::detail::segmented_pipelined;
namespace SP1 = tally::detail::single_pass;
namespace SG = tally::detail::segmented;
namespace DL = tally::detail::decoupled_lookback;

__device__ __forceinline__ void cp16(void* to, const void* from) {
  const auto s = static_cast<unsigned>(__cvta_generic_to_shared(to));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(from) : "memory");
}

// 16-byte aligned int offsets; chunks of 1024 offsets; the rest (fewer than 1024) one a thread.
template <bool Prefetch>
__global__ void __launch_bounds__(256) heads_prefetch_kernel(const int* offsets, long long S, long long n,
                                                             std::uint32_t* words) {
  tally::detail::allow_dependent_launch();
  extern __shared__ int4 dynamic[];  // 64 KiB: a warp's two buffers of 32 runs x 8 columns
  auto stage = reinterpret_cast<int4 (*)[2][256]>(dynamic);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const long long warps = (long long)gridDim.x * 8;
  const long long chunks = S / 1024;
  const auto issue = [&](long long c, int buf) {
    const int4* g = reinterpret_cast<const int4*>(offsets + c * 1024);
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const int k = 32 * q + lane, r = k / 8;
      cp16(&stage[warp][buf][r * 8 + ((k % 8) ^ (r % 8))], g + k);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
  };
  bool cleared = false;
  long long c = blockIdx.x * 8LL + warp;
  int buf = 0;
  if (c < chunks) issue(c, 0);
  for (; c < chunks; c += warps) {
    const long long next = c + warps;
    const bool ahead = Prefetch && next < chunks;
    if (ahead) {
      issue(next, buf ^ 1);
      asm volatile("cp.async.wait_group 1;" ::: "memory");
    } else {
      asm volatile("cp.async.wait_group 0;" ::: "memory");
    }
    __syncwarp();  // every lane's copies of chunk c have landed
    int4* rows = stage[warp][buf];
    int p[32];
#pragma unroll
    for (int q = 0; q < 8; ++q) {
      const int4 v = rows[lane * 8 + (q ^ (lane % 8))];
      p[4 * q] = v.x, p[4 * q + 1] = v.y, p[4 * q + 2] = v.z, p[4 * q + 3] = v.w;
    }
    if (!cleared) {
      tally::detail::wait_for_prerequisite_grid();
      cleared = true;
    }
    SG::set_span_bits(rows, p, n, words);
    __syncwarp();  // every lane is done with this buffer before a copy refills it
    if (!Prefetch && next < chunks) issue(next, buf ^ 1);
    buf ^= 1;
  }
  if (!cleared) tally::detail::wait_for_prerequisite_grid();
  for (long long k = chunks * 1024 + blockIdx.x * 256LL + threadIdx.x; k < S; k += (long long)gridDim.x * 256) {
    const long long v = offsets[k];
    if (v >= 0 && v < n) atomicOr(words + v / 32, 1u << (v % 32));
  }
}

// a plain read of the offsets (the floor): 16-byte loads strided over the grid, summed
__global__ void __launch_bounds__(256) read_floor(const int4* p, long long vectors, int* sink) {
  int s = 0;
  for (long long i = blockIdx.x * 256LL + threadIdx.x; i < vectors; i += (long long)gridDim.x * 256) {
    const int4 v = p[i];
    s += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (s == 0x7654321) *sink = s;
}

int blocks_per_sm(const void* k) {
  int b = 0;
  CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 65536));
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, k, 256, 65536));
  return b;
}

void run(const char* name, long long n, const std::vector<int>& ho, int reps) {
  const long long segs = (long long)ho.size() - 1;
  int *in, *out, *offs, *sink;
  std::uint32_t *words, *words2;
  CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&out, n * 4)); CK(cudaMalloc(&offs, (segs + 1) * 4 + 64));
  CK(cudaMalloc(&sink, 4));
  CK(cudaMalloc(&words, SG::bitmap_bytes(n))); CK(cudaMalloc(&words2, SG::bitmap_bytes(n)));
  std::vector<int> h(n);
  for (long long i = 0; i < n; ++i) h[i] = std::rand() % 7 - 3;
  CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(offs, ho.data(), (segs + 1) * 4, cudaMemcpyHostToDevice));
  using H = SP::offsets_bitmap<const int*>;
  using program = SP::segmented_tiles<false, int, tally::plus, H, 256, SP::mode_rows<DL::protocol, false, H, int>, 2>;
  const auto scan_over = [&](std::uint32_t* w) {
    tally::options o;
    tally::detail::segmented_offsets::with_pair_state<int>("ab", n, program::L::tile_items, o, [&](std::int64_t tiles, auto state) {
      PL::launch<DL::protocol, false>("ab", program{in, out, n, H{offs, segs, w}, 0, tally::plus{}}, tiles, state,
                                      SP1::no_stall{}, 0, true);
    });
  };
  int sms = 0;
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int resident = sms * blocks_per_sm((const void*)heads_prefetch_kernel<true>);
  blocks_per_sm((const void*)heads_prefetch_kernel<false>);
  const long long lib_blocks = std::min<long long>((segs + 8191) / 8192, 4096);
  const auto clear = [&](std::uint32_t* w) {
    tally::detail::launch_clear("ab", w, SG::bitmap_bytes(n), cudaStream_t{0});
  };
  const auto lib_heads = [&](std::uint32_t* w) {
    tally::detail::launch_dependent("ab", "heads", dim3((unsigned)lib_blocks), dim3(256), 0, cudaStream_t{0},
                                    SG::heads_bitmap_kernel<32, false, const int*>, (const int*)offs, segs, n, w);
  };
  const auto new_heads = [&](std::uint32_t* w, bool prefetch, long long grid) {
    const long long blocks = std::max<long long>(1, std::min<long long>(grid, (segs + 8191) / 8192));
    if (prefetch) {
      tally::detail::launch_dependent("ab", "heads", dim3((unsigned)blocks), dim3(256), 65536, cudaStream_t{0},
                                      heads_prefetch_kernel<true>, (const int*)offs, segs, n, w);
    } else {
      tally::detail::launch_dependent("ab", "heads", dim3((unsigned)blocks), dim3(256), 65536, cudaStream_t{0},
                                      heads_prefetch_kernel<false>, (const int*)offs, segs, n, w);
    }
  };
  std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice, 0)); },      // 0 copy
      [&] { read_floor<<<sms * 8, 256>>>((const int4*)offs, segs / 4, sink); },      // 1 floor
      [&] { lib_heads(words); },                                                      // 2
      [&] { new_heads(words2, false, resident); },                                   // 3
      [&] { new_heads(words2, true, resident); },                                    // 4
      [&] { new_heads(words2, true, 2 * resident); },                                // 5
      [&] { new_heads(words2, true, lib_blocks); },                                  // 6
      [&] { SG::build_bitmap("ab", (const int*)offs, segs, n, words, cudaStream_t{0}); },  // 7
      [&] { clear(words2); new_heads(words2, true, resident); },                     // 8
      [&] { tally::inclusive_segmented_scan(in, out, n, offs, segs); },              // 9 public
      [&] { clear(words2); new_heads(words2, true, resident); scan_over(words2); },  // 10
  };
  bool ok = true;
  {
    const long long nw = (n + 31) / 32;
    std::vector<std::uint32_t> a(nw), b(nw);
    fs[7]();
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(a.data(), words, nw * 4, cudaMemcpyDeviceToHost));
    for (int v : {3, 4, 5, 6}) {
      clear(words2);
      fs[v]();
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(b.data(), words2, nw * 4, cudaMemcpyDeviceToHost));
      if (a != b) { ok = false; std::printf("WRONG BITMAP %s variant %d\n", name, v); }
    }
    std::vector<int> want(n), got(n);
    CK(cudaMemset(out, 0x55, n * 4)); fs[9](); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(want.data(), out, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemset(out, 0x55, n * 4)); CK(cudaMemset(words2, 0xa5, SG::bitmap_bytes(n))); fs[10](); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    if (got != want) { ok = false; std::printf("WRONG SCAN %s\n", name); }
  }
  for (int pass = 0; pass < 2; ++pass) {
    auto t = interleaved_us(fs, reps);
    std::printf("%-22s p%d copy %6.1f | floor %5.1f | heads: lib %5.1f (%lld blk), grid-stride %5.1f, prefetch %5.1f (%d blk) "
                "%5.1f (x2) %5.1f (lib grid) | clear+heads: lib %5.1f new %5.1f | call: public %.3fx new %.3fx%s\n",
                name, pass, t[0], t[1], t[2], lib_blocks, t[3], t[4], resident, t[5], t[6], t[7], t[8], t[9] / t[0],
                t[10] / t[0], ok ? "" : "  (WRONG above)");
  }
  std::fflush(stdout);
  CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(offs)); CK(cudaFree(words)); CK(cudaFree(words2)); CK(cudaFree(sink));
}

std::vector<int> uniform(long long from, long long to, long long len) {
  std::vector<int> o;
  for (long long x = from; x < to; x += len) o.push_back((int)x);
  o.push_back((int)to);
  return o;
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  const long long n = 1ll << 26;
  for (long long len : {1ll, 2ll, 4ll, 7ll}) run(("len " + std::to_string(len)).c_str(), n, uniform(0, n, len), reps);
  std::mt19937_64 g(11);
  {
    std::vector<int> o{0};
    while (o.back() < n) o.push_back((int)std::min<long long>(n, o.back() + (long long)(g() % 9)));
    run("len U[0,8]", n, o, reps);
  }
  run("n 100003 len 3", 100003, uniform(0, 100003, 3), reps);
  run("2^28 len 4", 1ll << 28, uniform(0, 1ll << 28, 4), 9);
  return 0;
}
