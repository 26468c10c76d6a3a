// Built by hand, not by CMake, four times against a copy of include/ with two switches
// (session 51; docs/perf-notes.md, "L2 cache hints for the pipelined scan's streams"):
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr -diag-suppress 177
//        -I<copy of include> -Iscripts/experiments [-DTALLY_X_LOAD_EVICT_FIRST]
//        [-DTALLY_X_STORE_CS] -o cache_hints_X scripts/experiments/cache_hints.cu
// where the copy's pipelined_scan.cuh bulk_copy adds .L2::cache_hint with an evict_first
// policy (createpolicy.fractional, 1.0) under TALLY_X_LOAD_EVICT_FIRST, and its
// single_pass_scan.cuh store_vector stores 16-byte vectors with __stcs (st.global.cs)
// under TALLY_X_STORE_CS. Run: ./cache_hints_X [reps] [2: the second set, mid sizes].
// Each binary times, interleaved behind a spin kernel, a device-to-device copy and the
// public scan at the pipelined kernel's large sizes, every output checked whole first
// (inputs i mod 7 - 3: every sum exact).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>
#include "tally/tally.cuh"
#include "timing.cuh"

#if defined(TALLY_X_LOAD_EVICT_FIRST) && defined(TALLY_X_STORE_CS)
constexpr const char* variant = "loads evict_first + stores .cs";
#elif defined(TALLY_X_LOAD_EVICT_FIRST)
constexpr const char* variant = "loads evict_first";
#elif defined(TALLY_X_STORE_CS)
constexpr const char* variant = "stores .cs";
#else
constexpr const char* variant = "no hints";
#endif

template <class T, bool Excl, bool Det>
void run(int lg, int reps) {
  const long long n = 1ll << lg;
  T *in, *out;
  CK(cudaMalloc(&in, n * sizeof(T)));
  CK(cudaMalloc(&out, n * sizeof(T)));
  std::vector<T> h(n);
  for (long long i = 0; i < n; ++i) h[i] = (T)((int)(i % 7) - 3);
  CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  tally::options od;
  od.deterministic = Det;
  const auto scan = [&] {
    if constexpr (Excl) tally::exclusive_scan(in, out, n, T{5}, tally::plus{}, od);
    else tally::inclusive_scan(in, out, n, tally::plus{}, od);
  };
  const char* tn = std::is_same_v<T, int> ? "int32" : std::is_same_v<T, float> ? "float"
                 : std::is_same_v<T, long long> ? "int64" : "double";
  const std::string group = std::string(tn) + (Excl ? " excl" : " incl") + (Det ? " det" : "");
  {
    CK(cudaMemset(out, 0, n * sizeof(T)));
    scan();
    CK(cudaDeviceSynchronize());
    std::vector<T> o(n);
    CK(cudaMemcpy(o.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
    T s = Excl ? T{5} : T{0};
    for (long long i = 0; i < n; ++i) {
      T expected;
      if (Excl) { expected = s; s += h[i]; } else { s += h[i]; expected = s; }
      if (o[i] != expected) { std::printf("CHECK FAILED %s 2^%d at %lld\n", group.c_str(), lg, i); break; }
    }
  }
  const std::vector<std::function<void()>> calls = {
      [&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, 0)); }, scan};
  for (int pass = 0; pass < 2; ++pass) {
    const std::vector<double> med = interleaved_us(calls, reps);
    // and the scan behind itself (each sample: spin, scan), the copy behind itself
    const double scan_alone = interleaved_us({scan}, reps)[0];
    const double copy_alone = interleaved_us({calls[0]}, reps)[0];
    std::printf("%-32s %-16s 2^%d pass %d  copy %8.1f us  scan %8.1f us  %6.2f%% of copy | alone: copy %8.1f scan %8.1f us\n",
                variant, group.c_str(), lg, pass, med[0], med[1], 100.0 * med[0] / med[1], copy_alone, scan_alone);
  }
  std::fflush(stdout);
  CK(cudaFree(in));
  CK(cudaFree(out));
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 41;
  if (argc > 2) {  // the second set: the pipelined kernel's mid sizes
    for (int lg : {23, 24, 25, 26}) run<int, false, false>(lg, reps);
    for (int lg : {23, 24, 25}) run<float, false, false>(lg, reps);
    for (int lg : {22, 23, 24}) run<double, false, false>(lg, reps);
    run<int, false, false>(28, 15);
    return 0;
  }
  run<int, false, false>(28, reps);
  run<int, true, false>(28, reps);
  run<float, false, false>(28, reps);
  run<float, false, true>(28, reps);
  run<long long, false, false>(27, reps);
  run<double, false, false>(27, reps);
  run<int, false, false>(24, reps);
  return 0;
}
