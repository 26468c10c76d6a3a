// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// -diag-suppress 177 -Iinclude -o pipelined_tiles scripts/experiments/pipelined_tiles.cu;
// run: ./pipelined_tiles [reps] (session 44; docs/perf-notes.md, "the H200's ceiling and
// 9-row tiles for the pipelined scan").
//
// The pipelined scan's tiles: the 8-row tiles of sessions 11-43 (with the library's
// look-back protocol, 512 held tiles) against the 9-row tiles of session 44 (with
// decoupled_lookback::pipelined_protocol, 256 held tiles: what the public scans run),
// and the 9-row kernel without its wait ("nowait": each tile's own aggregate as its
// prefix, wrong on purpose: the ceiling), beside the copy, CUB and the public scan. Every
// type, inclusive and exclusive (seed 5), deterministic float and double, from the
// kernel's first size (32 MiB) to 1-2 GiB. Inputs i mod 7 - 3: every sum is exact, so every
// output but nowait's is checked whole, deterministic ones included. Session 44 ran the
// same comparison on an H200 only (9 rows 1.1-2.2 points ahead from 2^24 on); sessions
// 12-14 measured 9 rows 1.4-1.9 points behind 8 rows at 2^26 on an H100, with the
// look-back of then: this program is the measurement an H100 session owes.
// Rows are timed interleaved: each sample runs every row once, behind a spin kernel.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>
#include <algorithm>
#include <cub/cub.cuh>
#include "tally/tally.cuh"
#include "tally/device/detail/pipelined_scan.cuh"
#include "timing.cuh"  // CK, spin
#include "nowait.cuh"  // nowait_protocol

namespace P = tally::detail::pipelined;
namespace S = tally::detail::single_pass;
namespace DL = tally::detail::decoupled_lookback;

// one scan on tiles of 256 threads x Rows x 16 bytes, two stages, with Protocol
template <class T, bool Excl, bool Det, int Rows, class Protocol>
void tiles_scan(const T* in, T* out, long long n) {
  using program = P::plain_tiles<Excl, T, tally::plus, 256, Rows, 2>;
  constexpr P::pipelined_tuning tune{256, Rows, 2};
  tally::options o;
  S::with_call_state<T, P::tuning<T, tune>()>("tiles", "tiles", n, o, 0,
      [&](std::int64_t tiles, S::tile_state<T> state) {
        const program p{in, out, n, tally::detail::make_seed<T, Excl>(T{5}), {}};
        P::launch<Protocol, Det>("tiles", p, tiles, state, S::no_stall{}, o.stream, false);
      }, true);
}

template <class T, bool Excl, bool Det>
void run(int lg, int reps) {
  const long long n = 1ll << lg;
  T *in, *out; CK(cudaMalloc(&in, n * sizeof(T))); CK(cudaMalloc(&out, n * sizeof(T)));
  std::vector<T> h(n); for (long long i = 0; i < n; ++i) h[i] = (T)((int)(i % 7) - 3);
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  void* cubtmp = nullptr; size_t cubbytes = 0;
  if constexpr (Excl) cub::DeviceScan::ExclusiveScan(cubtmp, cubbytes, in, out, cuda::std::plus<>{}, T{5}, (int)n);
  else cub::DeviceScan::InclusiveSum(cubtmp, cubbytes, in, out, (int)n);
  CK(cudaMalloc(&cubtmp, cubbytes));
  tally::options od; od.deterministic = Det;
  enum class want { copy, scan, anything };
  struct row { std::string name; std::function<void()> f; want check; };
  std::vector<row> rows = {
    {"copy", [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); }, want::copy},
    {"cub", [&] { if constexpr (Excl) cub::DeviceScan::ExclusiveScan(cubtmp, cubbytes, in, out, cuda::std::plus<>{}, T{5}, (int)n, 0); else cub::DeviceScan::InclusiveSum(cubtmp, cubbytes, in, out, (int)n, 0); }, want::scan},
    {"public", [&] { if constexpr (Excl) tally::exclusive_scan(in, out, n, T{5}, tally::plus{}, od); else tally::inclusive_scan(in, out, n, tally::plus{}, od); }, want::scan},
    {"8 rows", [&] { tiles_scan<T, Excl, Det, 8, DL::protocol>(in, out, n); }, want::scan},
    {"9 rows", [&] { tiles_scan<T, Excl, Det, 9, DL::pipelined_protocol>(in, out, n); }, want::scan},
    {"9 rows nowait", [&] { tiles_scan<T, Excl, false, 9, nowait_protocol>(in, out, n); }, want::anything},
  };
  const char* tn = std::is_same_v<T, int> ? "int32" : std::is_same_v<T, float> ? "float" : std::is_same_v<T, long long> ? "int64" : "double";
  const std::string group = std::string(tn) + (Excl ? " excl" : " incl") + (Det ? " det" : "");
  for (auto& r : rows) {
    CK(cudaMemset(out, 0, n * sizeof(T))); r.f(); CK(cudaDeviceSynchronize());
    if (r.check == want::anything) continue;
    std::vector<T> o(n); CK(cudaMemcpy(o.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    T s = Excl ? T{5} : T{0};
    for (long long i = 0; i < n; ++i) {
      T expected = h[i];
      if (r.check == want::scan) {
        if (Excl) { expected = s; s += h[i]; } else { s += h[i]; expected = s; }
      }
      if (o[i] != expected) { printf("CHECK FAILED %s %s 2^%d at %lld\n", group.c_str(), r.name.c_str(), lg, i); break; }
    }
  }
  std::vector<std::function<void()>> calls;
  for (auto& r : rows) calls.push_back(r.f);
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<double> med = interleaved_us(calls, reps);
    for (size_t r = 0; r < rows.size(); ++r)
      printf("%-16s 2^%d pass %d  %-14s %9.1f us  %6.2f%% of copy  %5.3fx CUB\n", group.c_str(), lg, pass,
             rows[r].name.c_str(), med[r], 100.0 * med[0] / med[r], med[1] / med[r]);
  }
  CK(cudaFree(in)); CK(cudaFree(out)); CK(cudaFree(cubtmp));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 15;
  int dev; CK(cudaGetDevice(&dev)); cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, dev));
  printf("GPU %s, %d SMs\n", p.name, p.multiProcessorCount);
  for (int lg : {23, 25, 27, 28}) run<int, false, false>(lg, reps);
  for (int lg : {23, 28}) run<int, true, false>(lg, reps);
  for (int lg : {23, 28}) run<float, false, false>(lg, reps);
  for (int lg : {23, 28}) run<float, false, true>(lg, reps);
  for (int lg : {22, 24, 27}) run<long long, false, false>(lg, reps);
  for (int lg : {22, 24, 27}) run<double, false, false>(lg, reps);
  for (int lg : {22, 27}) run<double, true, false>(lg, reps);
  for (int lg : {22, 27}) run<double, false, true>(lg, reps);
  return 0;
}
