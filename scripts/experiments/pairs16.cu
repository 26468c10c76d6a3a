// Built by hand, not by CMake, twice: against include/ and against a copy of the tree
// before session 52 (its 16-byte descriptors in three arrays; `select_value` extended to 16
// bytes, which the pipelined kernel needs):
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -diag-suppress 177 -Iinclude
//        -Iscripts/experiments -o pairs16 scripts/experiments/pairs16.cu
// run: ./pairs16 [reps] (session 52; docs/perf-notes.md, "16-byte values on the pipelined
// kernel").
//
// Scans of 16-byte elements: the column pairs of (rows, 2) int64 and double along axis 0
// (segmented.cuh's column_pair). Times, beside a copy of the same bytes, in one process
// and interleaved:
//   batched    the public batched call (8-byte types: the strided kernel)
//   public     tally::inclusive_scan of the pairs (whatever the build's dispatch takes)
//   pipelined  the pipelined kernel's plain tiles over the pairs, launched directly, with
//              the public look-back protocol (the build's descriptors)
//   nowait     the same kernel with a look-back that never waits (wrong results on
//              purpose: nowait.cuh), the ceiling of the design
//   det        the public scan with options.deterministic (double only)
// Every output but nowait's is checked whole against the host.
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tally/tally.cuh"
#include "tally/device/detail/pipelined_scan.cuh"
#include "nowait.cuh"
#include "timing.cuh"

namespace SG = tally::detail::segmented;
namespace P = tally::detail::pipelined;
namespace S = tally::detail::single_pass;
namespace DL = tally::detail::decoupled_lookback;

template <class Protocol, class T, class Op, int Rows = 9>
void pipelined_scan(const T* in, T* out, long long n, Op op) {
  using program = P::plain_tiles<false, T, Op, 256, Rows, 2>;
  constexpr P::pipelined_tuning tune{256, Rows, 2};
  tally::options o;
  S::with_call_state<T, P::tuning<T, tune>()>(
      "pairs", "pairs", n, o, 0,
      [&](std::int64_t tiles, S::tile_state<T> state) {
        const program p{in, out, n, tally::detail::make_seed<T, false>(T{}), op};
        P::launch<Protocol, false>("pairs", p, tiles, state, S::no_stall{}, o.stream, false);
      },
      true);
}

template <class T>
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
  const auto* pi = reinterpret_cast<const pair_t*>(in);
  auto* po = reinterpret_cast<pair_t*>(out);
  std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); },
      [&] { tally::inclusive_scan_batched(in, out, rows, 2, 0, tally::plus{}); },
      [&] { tally::inclusive_scan(pi, po, rows, pair_op); },
      [&] { pipelined_scan<DL::pipelined_protocol>(pi, po, rows, pair_op); },
      [&] { pipelined_scan<nowait_protocol>(pi, po, rows, pair_op); }};
  const bool is_double = std::is_same_v<T, double>;
  if (is_double) {
    fs.push_back([&] {
      tally::options o;
      o.deterministic = true;
      tally::inclusive_scan(pi, po, rows, pair_op, o);
    });
  }
  const char* names[] = {"copy", "batched", "public", "pipelined", "nowait", "det"};
  const char* tn = std::is_same_v<T, long long> ? "int64" : "double";
  std::string wrong;
  for (std::size_t f = 1; f < fs.size(); ++f) {
    if (f == 4) continue;  // nowait: wrong on purpose
    CK(cudaMemset(out, 0, n * sizeof(T)));
    fs[f]();
    CK(cudaDeviceSynchronize());
    std::vector<T> o(n);
    CK(cudaMemcpy(o.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    T s[2] = {T{0}, T{0}};
    for (long long i = 0; i < n; ++i) {
      s[i % 2] += h[i];
      if (o[i] != s[i % 2]) {
        wrong += std::string(" WRONG:") + names[f];
        break;
      }
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%-6s (%lld, 2) p%d: copy %8.1f us", tn, rows, pass, t[0]);
    for (std::size_t f = 1; f < t.size(); ++f) std::printf(" | %s %.3fx", names[f], t[f] / t[0]);
    std::printf("%s\n", wrong.c_str());
  }
  std::fflush(stdout);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

// The second set (`./pairs16 REPS rows`): the pipelined kernel's rows for 16-byte values,
// 7, 8 and 9 (the library's), with and without the wait; the int64 pairs only, every
// output with the wait checked.
void rows_sweep(long long rows, int reps) {
  using T = long long;
  using pair_t = SG::column_pair<T>;
  const long long n = rows * 2;
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  std::vector<T> h(n);
  for (long long i = 0; i < n; ++i) h[i] = (T)((int)(i % 7) - 3);
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  const SG::column_pair_op<tally::plus> op{tally::plus{}};
  const auto* pi = reinterpret_cast<const pair_t*>(in);
  auto* po = reinterpret_cast<pair_t*>(out);
  const std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); },
      [&] { pipelined_scan<DL::pipelined_protocol, pair_t, decltype(op), 7>(pi, po, rows, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, pair_t, decltype(op), 8>(pi, po, rows, op); },
      [&] { pipelined_scan<DL::pipelined_protocol, pair_t, decltype(op), 9>(pi, po, rows, op); },
      [&] { pipelined_scan<nowait_protocol, pair_t, decltype(op), 7>(pi, po, rows, op); },
      [&] { pipelined_scan<nowait_protocol, pair_t, decltype(op), 8>(pi, po, rows, op); },
      [&] { pipelined_scan<nowait_protocol, pair_t, decltype(op), 9>(pi, po, rows, op); }};
  const char* names[] = {"copy", "7 rows", "8 rows", "9 rows", "nowait 7", "nowait 8", "nowait 9"};
  std::string wrong;
  for (std::size_t f = 1; f <= 3; ++f) {
    CK(cudaMemset(out, 0, n * sizeof(T)));
    fs[f]();
    CK(cudaDeviceSynchronize());
    std::vector<T> o(n);
    CK(cudaMemcpy(o.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    T acc[2] = {0, 0};
    for (long long i = 0; i < n; ++i) {
      acc[i % 2] += h[i];
      if (o[i] != acc[i % 2]) {
        wrong += std::string(" WRONG:") + names[f];
        break;
      }
    }
  }
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("int64 (%lld, 2) rows sweep p%d: copy %8.1f us", rows, pass, t[0]);
    for (std::size_t f = 1; f < t.size(); ++f) std::printf(" | %s %.3fx", names[f], t[f] / t[0]);
    std::printf("%s\n", wrong.c_str());
  }
  std::fflush(stdout);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  if (argc > 2 && std::string(argv[2]) == "rows") {
    for (long long rows : {1ll << 21, 1ll << 23, 1ll << 26}) rows_sweep(rows, reps);
    return 0;
  }
  for (long long rows : {1ll << 16, 1ll << 20, 1ll << 21, 1ll << 23, 1ll << 26}) {
    run<long long>(rows, reps);
    run<double>(rows, reps);
  }
  return 0;
}
