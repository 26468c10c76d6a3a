// Built by hand, not by CMake: nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr
// -diag-suppress 177 -Iinclude -o owned_bitmap scripts/experiments/owned_bitmap.cu; run:
// ./owned_bitmap [reps] [2: the second set] (session 50; docs/perf-notes.md, "What the head bitmap's pass
// costs at short segments"). A prototype for a next session, not library code: the head
// bitmap with no clear. Warp c takes offsets [1024 c, 1024 c + 1024) and OWNS the bitmap words from that
// of its first offset (word 0 for c = 0) to that of warp c + 1's first offset (the end of
// the bitmap for the last warp): it writes every one of them once with a plain store,
// zero words included, with the bits of its own offsets and of earlier offsets that fall
// in its first word (a look back, 32 offsets a step). Non-decreasing offsets make the
// owned ranges tile the bitmap, so no word is written twice and none is left unwritten.
// Timed against the library's build_bitmap (clear + heads kernel) alone and under the
// scan kernel, n = 2^26 int32 values and int32 offsets; every bitmap compared word for
// word with the library's, every scan output with the public call's.
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

__global__ void __launch_bounds__(256) owned_bitmap_kernel(const int* offsets, long long S, long long n,
                                                           std::uint32_t* words) {
  tally::detail::allow_dependent_launch();
  constexpr unsigned full = 0xffffffffu;
  const long long nwords = (n + 31) / 32;
  const int lane = threadIdx.x % 32;
  const long long warps = (long long)gridDim.x * 8;
  // the warp's 4 KiB: its 1024 offsets (32 runs of 32, swizzled), then, once each lane
  // holds its run, the 1024 words being built
  __shared__ int4 rows_all[8][256];
  int4* rows = rows_all[threadIdx.x / 32];
  std::uint32_t* win = reinterpret_cast<std::uint32_t*>(rows);
  const auto word_of = [&](long long o) { o = o < 0 ? 0 : (o > n ? n : o); return o >> 5; };
  const long long chunks = (S + 1023) / 1024;
  for (long long c = (long long)blockIdx.x * 8 + threadIdx.x / 32; c < chunks; c += warps) {
    const long long K = c * 1024;
    const long long lo = c == 0 ? 0 : word_of(offsets[K]);
    const long long hi = K + 1024 >= S ? nwords : word_of(offsets[K + 1024]);
    // the lane's run: offsets K + 32 lane .. + 31 (count `valid`), through shared memory
    int p[32];
    const int valid = (int)std::min<long long>(32, std::max<long long>(0, S - K - 32 * lane));
    if (K + 1024 <= S) {
      const int4* g = reinterpret_cast<const int4*>(offsets + K);
      int4 x[8];
#pragma unroll
      for (int q = 0; q < 8; ++q) x[q] = g[32 * q + lane];
      __syncwarp();
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const int k = 32 * q + lane, r = k / 8;
        rows[r * 8 + ((k % 8) ^ (r % 8))] = x[q];
      }
      __syncwarp();
#pragma unroll
      for (int q = 0; q < 8; ++q) {
        const int4 v = rows[lane * 8 + (q ^ (lane % 8))];
        p[4 * q] = v.x; p[4 * q + 1] = v.y; p[4 * q + 2] = v.z; p[4 * q + 3] = v.w;
      }
    } else {
#pragma unroll
      for (int i = 0; i < 32; ++i) p[i] = i < valid ? offsets[K + 32 * lane + i] : 0;
    }
    for (long long ws = lo; ws < hi; ws += 1024) {
      const int span = (int)std::min<long long>(1024, hi - ws);
      __syncwarp();
      for (int i = lane; i < span; i += 32) win[i] = 0u;
      __syncwarp();
      // the lane's offsets in [ws, ws + span): bits gathered a word at a time
      long long word = -1;
      std::uint32_t bits = 0;
#pragma unroll
      for (int i = 0; i < 32; ++i) {
        if (i < valid && p[i] >= 0 && p[i] < n) {
          const long long w = p[i] >> 5;
          if (w != word) {
            if (word >= ws && word < ws + span && bits) atomicOr(win + (word - ws), bits);
            word = w;
            bits = 0;
          }
          bits |= 1u << (p[i] & 31);
        }
      }
      if (word >= ws && word < ws + span && bits) atomicOr(win + (word - ws), bits);
      // earlier warps' offsets in the first owned word
      if (ws == lo && c > 0) {
        for (long long back = K; back > 0; back -= 32) {
          const long long j = back - 32 + lane;
          bool in = false;
          if (j >= 0) {
            const long long o = offsets[j];
            if (o >= 0 && o < n && (o >> 5) == lo) {
              atomicOr(win, 1u << (o & 31));
              in = true;
            }
          }
          if (!__shfl_sync(full, in, 0)) break;  // the lowest was below the word: the rest are too
        }
      }
      __syncwarp();
      for (int i = lane; i < span; i += 32) words[ws + i] = win[i];
    }
  }
}

long long grid_cap = 132 * 8;  // blocks at most (the second set also tries 4096)

void owned_bitmap(const int* offs, long long S, long long n, std::uint32_t* words) {
  const long long chunks = (S + 1023) / 1024;
  const long long blocks = std::min<long long>((chunks + 7) / 8, grid_cap);
  owned_bitmap_kernel<<<(unsigned)blocks, 256>>>(offs, S, n, words);
}

void run(const char* name, long long n, const std::vector<int>& ho, int reps) {
  const long long segs = (long long)ho.size() - 1;
  int *in, *out, *offs; std::uint32_t *words, *words2;
  CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&out, n * 4)); CK(cudaMalloc(&offs, (segs + 1) * 4 + 64));
  CK(cudaMalloc(&words, SG::bitmap_bytes(n))); CK(cudaMalloc(&words2, SG::bitmap_bytes(n)));
  std::vector<int> h(n); for (long long i = 0; i < n; ++i) h[i] = std::rand() % 7 - 3;
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
  std::vector<std::function<void()>> fs = {
    [&] { CK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice, 0)); },
    [&] { tally::inclusive_segmented_scan(in, out, n, offs, segs); },
    [&] { SG::build_bitmap("ab", (const int*)offs, segs, n, words, cudaStream_t{0}); },
    [&] { owned_bitmap(offs, segs, n, words2); },
    [&] { owned_bitmap(offs, segs, n, words2); scan_over(words2); }};
  // checks: the bitmaps word for word (garbage in words2 first), the scan outputs
  bool ok = true;
  {
    const long long nw = (n + 31) / 32;
    CK(cudaMemset(words2, 0xa5, SG::bitmap_bytes(n)));
    fs[2](); fs[3](); CK(cudaDeviceSynchronize());
    std::vector<std::uint32_t> a(nw), b(nw);
    CK(cudaMemcpy(a.data(), words, nw * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), words2, nw * 4, cudaMemcpyDeviceToHost));
    long long bad = 0, at = -1;
    for (long long i = 0; i < nw; ++i) if (a[i] != b[i]) { if (at < 0) at = i; ++bad; }
    if (bad) { ok = false; std::printf("WRONG BITMAP %s: %lld words, first %lld (%08x vs %08x)\n", name, bad, at, b[at], a[at]); }
    std::vector<int> want(n), got(n);
    CK(cudaMemset(out, 0x55, n * 4)); fs[1](); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(want.data(), out, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemset(out, 0x55, n * 4)); CK(cudaMemset(words2, 0xa5, SG::bitmap_bytes(n))); fs[4](); CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    if (got != want) { ok = false; std::printf("WRONG SCAN %s\n", name); }
  }
  for (int pass = 0; pass < 2; ++pass) {
    auto t = interleaved_us(fs, reps);
    std::printf("%-28s p%d copy %6.1f us | public %.3fx | build_bitmap %5.1f us | owned %5.1f us | owned + scan %.3fx%s\n", name, pass,
                t[0], t[1] / t[0], t[2], t[3], t[4] / t[0], ok ? "" : "  (WRONG above)");
  }
  std::fflush(stdout);
  CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(offs)); CK(cudaFree(words)); CK(cudaFree(words2));
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
  if (argc > 2 && std::atoi(argv[2]) == 2) {  // the second set: grids of 1056 and 4096 blocks, and 2^28
    for (long long cap : {132ll * 8, 4096ll}) {
      grid_cap = cap;
      for (long long len : {1ll, 4ll}) run(("len " + std::to_string(len) + ", grid " + std::to_string(cap)).c_str(), n, uniform(0, n, len), reps);
    }
    grid_cap = 132 * 8;
    run("2^28 len 4", 1ll << 28, uniform(0, 1ll << 28, 4), 9);
    return 0;
  }
  for (long long len : {1ll, 2ll, 4ll, 8ll, 32ll}) run(("len " + std::to_string(len)).c_str(), n, uniform(0, n, len), reps);
  std::mt19937_64 g(11);
  {
    std::vector<int> o{0}; while (o.back() < n) o.push_back((int)std::min<long long>(n, o.back() + (long long)(g() % 9)));
    run("len U[0,8]", n, o, reps);
  }
  {  // dense, then one long segment (half of n), then dense; inside [37, n - 11); 300000 empty ones at one place
    auto o = uniform(37, n / 4, 3);
    o.pop_back();
    for (int i = 0; i < 300000; ++i) o.push_back((int)(n / 4));
    auto b = uniform(3 * n / 4, n - 11, 5);
    o.insert(o.end(), b.begin(), b.end());
    run("dense, gap n/2, dense", n, o, reps);
  }
  run("n 100003 len 3", 100003, uniform(0, 100003, 3), reps);
  run("n 1000 len 1 (one warp)", 1000, uniform(0, 1000, 1), reps);
  return 0;
}
