// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// -diag-suppress 177 -Iinclude -o ceiling scripts/experiments/ceiling.cu; run: ./ceiling [reps]
// (session 43; docs/perf-notes.md, "what the copy kernels and a scan without its wait reach
// at 2^28"). The first program of this folder that times its rows interleaved: each sample
// runs every row once, behind a spin kernel, so that all rows see the same machine state.
//
// How far above cudaMemcpyAsync can a kernel that reads and writes n int32 go on this GPU?
// Issue 4's 1.25x CUB needs the scan at about 101.7% of the copy on an H100. Rows at 2^24,
// 2^26 and 2^28: the copy, CUB, tally's public scan, the pipelined kernel with a protocol
// that never waits ("nowait": each tile's own aggregate as its prefix, wrong results on
// purpose: the ceiling of the design), three look-back variants (poll pause 0, a window of
// 64 tiles, both), copy kernels of 16-byte vectors, and rings of bulk (TMA) copies. Every
// row but nowait is checked whole. Not yet run on an H200, where the public scan reaches 93%
// of the copy and issue 4's 95% is missed: its nowait row there says how much of that the
// look-back costs.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>
#include <algorithm>
#include <cub/cub.cuh>
#include "tally/tally.cuh"
#include "tally/device/detail/pipelined_scan.cuh"
#include "timing.cuh"  // CK, spin
#include "nowait.cuh"  // nowait_protocol

// 16-byte vectors, U a thread in flight (all loads, then all stores), grid-stride; Streaming:
// the loads and stores with the evict-first hints (__ldcs / __stcs)
template <int U, bool Streaming>
__global__ void __launch_bounds__(256) vcopy(const int4* __restrict__ in, int4* __restrict__ out, long long nv) {
  long long stride = (long long)gridDim.x * blockDim.x * U;
  for (long long i = (long long)blockIdx.x * blockDim.x * U + threadIdx.x; i < nv; i += stride) {
    int4 v[U];
#pragma unroll
    for (int u = 0; u < U; ++u)
      if (i + u * blockDim.x < nv) v[u] = Streaming ? __ldcs(in + i + u * blockDim.x) : in[i + u * blockDim.x];
#pragma unroll
    for (int u = 0; u < U; ++u) {
      if (i + u * blockDim.x >= nv) continue;
      if constexpr (Streaming) {
        __stcs(out + i + u * blockDim.x, v[u]);
      } else {
        out[i + u * blockDim.x] = v[u];
      }
    }
  }
}

__device__ __forceinline__ unsigned sa(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }
// one thread per block: a ring of S stages of B bytes; chunk k of the block is chunk
// blockIdx.x + k * gridDim.x of the array (assumed whole chunks)
template <int S, int B>
__global__ void __launch_bounds__(32) bulkcopy(const char* in, char* out, long long chunks) {
  extern __shared__ __align__(128) unsigned char ring[];
  __shared__ unsigned long long full[S];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < S; ++s) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(sa(&full[s])));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  long long cnt = 0;
  if (blockIdx.x < chunks) cnt = (chunks - blockIdx.x + gridDim.x - 1) / gridDim.x;
  auto chunk = [&](long long k) { return (blockIdx.x + k * gridDim.x) * (long long)B; };
  auto load = [&](long long k) {
    int s = (int)(k % S);
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(sa(&full[s])), "r"(B) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                 ::"r"(sa(ring + (size_t)s * B)), "l"(in + chunk(k)), "r"(B), "r"(sa(&full[s])) : "memory");
  };
  for (long long k = 0; k < S && k < cnt; ++k) load(k);
  for (long long k = 0; k < cnt; ++k) {
    int s = (int)(k % S);
    unsigned parity = (unsigned)((k / S) & 1);
    asm volatile("{\n .reg .pred p;\n W: mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n @!p bra W;\n}"
                 ::"r"(sa(&full[s])), "r"(parity) : "memory");
    asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;" ::"l"(out + chunk(k)),
                 "r"(sa(ring + (size_t)s * B)), "r"(B) : "memory");
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
    if (k >= 1 && k - 1 + S < cnt) {
      asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
      load(k - 1 + S);
    }
  }
  asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
}

int main(int argc, char** argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 15;
  int dev; CK(cudaGetDevice(&dev)); cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, dev));
  printf("GPU %s, %d SMs\n", p.name, p.multiProcessorCount);
  for (int lg : {24, 26, 28}) {
    long long n = 1ll << lg;
    int *in, *out; CK(cudaMalloc(&in, n * 4)); CK(cudaMalloc(&out, n * 4));
    std::vector<int> h(n); for (long long i = 0; i < n; ++i) h[i] = (int)(i % 7) - 3;
    CK(cudaMemcpy(in, h.data(), n * 4, cudaMemcpyHostToDevice));
    void* cubtmp = nullptr; size_t cubbytes = 0;
    cub::DeviceScan::InclusiveSum(cubtmp, cubbytes, in, out, (int)n);
    CK(cudaMalloc(&cubtmp, cubbytes));
    cudaStream_t st = 0;
    // what a row's output must be: the input (a copy), its inclusive sum, or anything (nowait)
    enum class want { copy, scan, anything };
    struct row { const char* name; std::function<void()> f; want check; };
    auto nowait = [&]() {
      tally::options o;
      tally::detail::pipelined::scan<nowait_protocol, false, int>("nowait", "nowait", in, out, n, {}, tally::plus{}, o);
    };
    std::vector<row> rows = {
      {"cudaMemcpyAsync", [&] { CK(cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice, st)); }, want::copy},
      {"cub InclusiveSum", [&] { cub::DeviceScan::InclusiveSum(cubtmp, cubbytes, in, out, (int)n, st); }, want::scan},
      {"tally inclusive_scan", [&] { tally::inclusive_scan(in, out, n); }, want::scan},
      {"pipelined nowait", nowait, want::anything},
      {"pipelined poll 0 ns", [&] { tally::options o; tally::detail::pipelined::scan<tally::detail::decoupled_lookback::basic_protocol<1, 4, tally::detail::decoupled_lookback::delays<1200, 0>>, false, int>("v", "v", in, out, n, {}, tally::plus{}, o); }, want::scan},
      {"pipelined window 64", [&] { tally::options o; tally::detail::pipelined::scan<tally::detail::decoupled_lookback::basic_protocol<2, 4, tally::detail::decoupled_lookback::delays<1200, 600>>, false, int>("v", "v", in, out, n, {}, tally::plus{}, o); }, want::scan},
      {"pipelined window 64 poll 0", [&] { tally::options o; tally::detail::pipelined::scan<tally::detail::decoupled_lookback::basic_protocol<2, 4, tally::detail::decoupled_lookback::delays<1200, 0>>, false, int>("v", "v", in, out, n, {}, tally::plus{}, o); }, want::scan},
      {"vcopy U4 cs 8/SM", [&] { vcopy<4, true><<<p.multiProcessorCount * 8, 256>>>((const int4*)in, (int4*)out, n / 4); }, want::copy},
      {"vcopy U4 plain 8/SM", [&] { vcopy<4, false><<<p.multiProcessorCount * 8, 256>>>((const int4*)in, (int4*)out, n / 4); }, want::copy},
      {"vcopy U8 plain 8/SM", [&] { vcopy<8, false><<<p.multiProcessorCount * 8, 256>>>((const int4*)in, (int4*)out, n / 4); }, want::copy},
      {"vcopy U4 plain 4/SM", [&] { vcopy<4, false><<<p.multiProcessorCount * 4, 256>>>((const int4*)in, (int4*)out, n / 4); }, want::copy},
      {"vcopy U2 plain 16/SM", [&] { vcopy<2, false><<<p.multiProcessorCount * 16, 256>>>((const int4*)in, (int4*)out, n / 4); }, want::copy},
      {"bulk 4x16K 3/SM", [&] { bulkcopy<4, 16384><<<p.multiProcessorCount * 3, 32, 4 * 16384>>>((const char*)in, (char*)out, n * 4 / 16384); }, want::copy},
      {"bulk 2x32K 3/SM", [&] { bulkcopy<2, 32768><<<p.multiProcessorCount * 3, 32, 2 * 32768>>>((const char*)in, (char*)out, n * 4 / 32768); }, want::copy},
      {"bulk 8x8K 3/SM", [&] { bulkcopy<8, 8192><<<p.multiProcessorCount * 3, 32, 8 * 8192>>>((const char*)in, (char*)out, n * 4 / 8192); }, want::copy},
      {"bulk 4x16K 2/SM", [&] { bulkcopy<4, 16384><<<p.multiProcessorCount * 2, 32, 4 * 16384>>>((const char*)in, (char*)out, n * 4 / 16384); }, want::copy},
      {"bulk 6x16K 2/SM", [&] { bulkcopy<6, 16384><<<p.multiProcessorCount * 2, 32, 6 * 16384>>>((const char*)in, (char*)out, n * 4 / 16384); }, want::copy},
    };
    for (const void* k : {(const void*)bulkcopy<4, 16384>, (const void*)bulkcopy<2, 32768>,
                          (const void*)bulkcopy<8, 8192>, (const void*)bulkcopy<6, 16384>}) {
      CK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 6 * 16384));
    }
    // check: the copies give the input, the scans its inclusive sum
    for (size_t r = 0; r < rows.size(); ++r) {
      CK(cudaMemset(out, 0, n * 4)); rows[r].f(); CK(cudaDeviceSynchronize());
      std::vector<int> o(n); CK(cudaMemcpy(o.data(), out, n * 4, cudaMemcpyDeviceToHost));
      if (rows[r].check == want::anything) continue;  // nowait: wrong on purpose
      int s = 0;
      for (long long i = 0; i < n; ++i) {
        s += h[i];
        if (o[i] != (rows[r].check == want::scan ? s : h[i])) {
          printf("CHECK FAILED %s at %lld\n", rows[r].name, i);
          break;
        }
      }
    }
    std::vector<std::function<void()>> calls;
    for (auto& r : rows) calls.push_back(r.f);
    for (int pass = 0; pass < 2; ++pass) {
      const std::vector<double> med = interleaved_us(calls, reps);
      for (size_t r = 0; r < rows.size(); ++r)
        printf("2^%d pass %d  %-24s %9.1f us  %6.2f%% of copy  %5.3fx CUB\n", lg, pass, rows[r].name, med[r],
               100.0 * med[0] / med[r], med[1] / med[r]);
    }
    CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(cubtmp));
  }
  return 0;
}
