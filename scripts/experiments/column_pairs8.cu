// Built by hand, not by CMake: nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr
// -diag-suppress 177 -Iinclude -Iscripts/experiments -o column_pairs8
// scripts/experiments/column_pairs8.cu; run: ./column_pairs8 [reps] (session 51;
// docs/perf-notes.md, "Two columns of 8-byte values along axis 0").
//
// Batched scans of (rows, 2) along axis 0: for 4-byte types segmented.cuh scans the rows
// as ONE scan of 8-byte column pairs (column_pairs); 8-byte types take the strided
// kernel, which the session 51 benchmark measured at 3.26x the copy for (2^20, 2) int64
// and double (int32 1.67x). This times, beside the copy, the public batched call against
// the public single-pass scan of 16-byte column pairs (what column_pairs would do for
// 8-byte types with one slice), inclusive and exclusive, every output checked whole.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/tally.cuh"
#include "tally/device/detail/pipelined_scan.cuh"
#include "timing.cuh"

namespace SG = tally::detail::segmented;
namespace P = tally::detail::pipelined;
namespace S = tally::detail::single_pass;
namespace DL = tally::detail::decoupled_lookback;

// the second set: the pipelined kernel's plain tiles over 16-byte elements (one element a
// 16-byte vector), which the public scans do not take (4- and 8-byte types only)
template <class T, bool Excl, class Op, int Rows = 9>
void pipelined_scan(const T* in, T* out, long long n, T seed, Op op) {
  using program = P::plain_tiles<Excl, T, Op, 256, Rows, 2>;
  constexpr P::pipelined_tuning tune{256, Rows, 2};
  tally::options o;
  S::with_call_state<T, P::tuning<T, tune>()>("pairs", "pairs", n, o, 0,
      [&](std::int64_t tiles, S::tile_state<T> state) {
        const program p{in, out, n, tally::detail::make_seed<T, Excl>(seed), op};
        P::launch<DL::pipelined_protocol, false>("pairs", p, tiles, state, S::no_stall{}, o.stream, false);
      }, true);
}

template <class T, bool Excl>
void run(long long rows, int reps) {
  const long long n = rows * 2;
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  std::vector<T> h(n);
  for (long long i = 0; i < n; ++i) h[i] = (T)((int)(i % 7) - 3);
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  using pair_t = SG::column_pair<T>;
  const SG::column_pair_op<tally::plus> pair_op{tally::plus{}};
  const auto batched = [&] {
    if constexpr (Excl) tally::exclusive_scan_batched(in, out, rows, 2, 0, T{5}, tally::plus{});
    else tally::inclusive_scan_batched(in, out, rows, 2, 0, tally::plus{});
  };
  const auto pairs = [&] {
    const auto* pi = reinterpret_cast<const pair_t*>(in);
    auto* po = reinterpret_cast<pair_t*>(out);
    if constexpr (Excl) tally::exclusive_scan(pi, po, rows, pair_t{{T{5}, T{5}}}, pair_op);
    else tally::inclusive_scan(pi, po, rows, pair_op);
  };
  const auto piped = [&] {
    pipelined_scan<pair_t, Excl>(reinterpret_cast<const pair_t*>(in), reinterpret_cast<pair_t*>(out), rows,
                                 pair_t{{T{5}, T{5}}}, pair_op);
  };
  const char* tn = std::is_same_v<T, int> ? "int32" : std::is_same_v<T, long long> ? "int64" : "double";
  bool ok = true;
  for (auto f : {std::function<void()>(batched), std::function<void()>(pairs), std::function<void()>(piped)}) {
    CK(cudaMemset(out, 0, n * sizeof(T)));
    f();
    CK(cudaDeviceSynchronize());
    std::vector<T> o(n);
    CK(cudaMemcpy(o.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    T s[2] = {Excl ? T{5} : T{0}, Excl ? T{5} : T{0}};
    for (long long i = 0; i < n && ok; ++i) {
      T& acc = s[i % 2];
      T want;
      if (Excl) { want = acc; acc += h[i]; } else { acc += h[i]; want = acc; }
      if (o[i] != want) { ok = false; std::printf("CHECK FAILED %s rows %lld at %lld\n", tn, rows, i); }
    }
  }
  const std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); }, batched, pairs, piped};
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%-6s %s (%lld, 2) axis 0 p%d: copy %7.1f us | batched %7.1f us %.3fx | pair scan %7.1f us %.3fx | pipelined pairs %7.1f us %.3fx%s\n", tn,
                Excl ? "excl" : "incl", rows, pass, t[0], t[1], t[1] / t[0], t[2], t[2] / t[0], t[3], t[3] / t[0], ok ? "" : "  WRONG");
  }
  std::fflush(stdout);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  for (long long rows : {1ll << 16, 1ll << 20, 1ll << 23, 1ll << 26}) {
    run<long long, false>(rows, reps);
    run<double, false>(rows, reps);
  }
  run<long long, true>(1ll << 20, reps);
  run<int, false>(1ll << 20, reps);  // the 4-byte path as it is (pairs of 8 bytes) for scale
  return 0;
}
