// What the experiments on batched scans along a middle axis share (pipelined_columns.cu,
// column_groups.cu, column_words.cu): a double oracle, the tolerance of a float result,
// the inputs, and an (outer, len, inner) case in device memory checked variant by
// variant. Built by hand with them, not by CMake.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <type_traits>
#include <vector>

#include "timing.cuh"

// the scan along the middle axis in double (exact for the integer inputs used)
template <class T>
std::vector<double> oracle(const std::vector<T>& h, std::int64_t outer, std::int64_t len, std::int64_t inner,
                           bool exclusive, double init) {
  std::vector<double> want(h.size());
  std::vector<double> acc(static_cast<std::size_t>(inner));
  for (std::int64_t o = 0; o < outer; ++o) {
    std::fill(acc.begin(), acc.end(), init);
    for (std::int64_t r = 0; r < len; ++r)
      for (std::int64_t c = 0; c < inner; ++c) {
        const std::int64_t i = (o * len + r) * inner + c;
        if (exclusive) { want[i] = acc[c]; acc[c] += static_cast<double>(h[i]); }
        else { acc[c] += static_cast<double>(h[i]); want[i] = acc[c]; }
      }
  }
  return want;
}

// integers exactly; floats within a bound that grows with the line's length
template <class T>
bool close(T got, double want, std::int64_t len) {
  if constexpr (std::is_integral_v<T>) return static_cast<double>(got) == want;
  else {
    const double eps = std::is_same_v<T, float> ? 6e-8 : 1.2e-16;
    return std::fabs(static_cast<double>(got) - want) <=
           (64 + 8 * std::log2(double(len) + 1)) * eps * std::max(1.0, std::fabs(want)) * 8;
  }
}

// small integers, or floats with few bits (sums of them stay near exact; doubles in
// 128ths, whose sums are exact: a line of 2.2 x 10^7 97ths of a double strayed past
// close()'s bound, session 56)
template <class T>
void input(std::vector<T>& h) {
  for (std::size_t i = 0; i < h.size(); ++i) {
    if constexpr (std::is_integral_v<T>) h[i] = static_cast<T>((i * 7 + 3) % 13) - 6;
    else h[i] = static_cast<T>(((i * 2654435761u) >> 7) % 1000) / static_cast<T>(std::is_same_v<T, double> ? 128 : 97);
  }
}

// C columns of T as ONE element (a row of a (rows, C) array), aligned as T (12, 20, 24 ...
// bytes have no power-of-two alignment of their own size), and their sum column by column:
// narrow_rows.cu, wide_values.cu, wide_pipelined.cu.
template <class T, int C>
struct group {
  T column[C];
};
struct group_plus {
  template <class T, int C>
  __host__ __device__ group<T, C> operator()(const group<T, C>& a, const group<T, C>& b) const {
    group<T, C> r;
    for (int c = 0; c < C; ++c) r.column[c] = a.column[c] + b.column[c];
    return r;
  }
};

// One (outer, len, inner) case: the input on the host and in device memory, and an output.
template <class T>
struct column_case {
  std::int64_t outer, len, inner, n;
  std::vector<T> h;
  T* in = nullptr;
  T* out = nullptr;
  column_case(std::int64_t outer_, std::int64_t len_, std::int64_t inner_)
      : outer(outer_), len(len_), inner(inner_), n(outer_ * len_ * inner_), h(static_cast<std::size_t>(n)) {
    input(h);
    CK(cudaMalloc(&in, n * sizeof(T)));
    CK(cudaMalloc(&out, n * sizeof(T)));
    CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
  }
  ~column_case() {
    cudaFree(in);
    cudaFree(out);
  }
  column_case(const column_case&) = delete;
  column_case& operator=(const column_case&) = delete;

  // run(variant, in, out, init) for each of `variants` into a poisoned output, each
  // result against the oracle; stops the program at the first wrong element
  template <bool Exclusive, class Run>
  void check(const char* name, const std::vector<int>& variants, Run run) const {
    const T init = static_cast<T>(Exclusive ? 5 : 0);
    const auto want = oracle(h, outer, len, inner, Exclusive, static_cast<double>(init));
    std::vector<T> got(h.size());
    for (const int v : variants) {
      CK(cudaMemset(out, 0xff, n * sizeof(T)));
      run(v, in, out, init);
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(got.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
      for (std::size_t i = 0; i < h.size(); ++i) {
        if (!close(got[i], want[i], len)) {
          std::printf("MISMATCH %s %s variant %d (%lld, %lld, %lld) at %zu: %g vs %g\n", name,
                      Exclusive ? "excl" : "incl", v, (long long)outer, (long long)len, (long long)inner, i,
                      (double)got[i], want[i]);
          std::exit(1);
        }
      }
    }
  }

  // check<false>, then check<true>, with run(std::bool_constant<Exclusive>, variant, in,
  // out, init); then one "ok" line for the case
  template <class Run>
  void check_both(const char* name, const std::vector<int>& variants, Run run) const {
    check<false>(name, variants, [&](int v, const T* i, T* o, T init) { run(std::false_type{}, v, i, o, init); });
    check<true>(name, variants, [&](int v, const T* i, T* o, T init) { run(std::true_type{}, v, i, o, init); });
    std::printf("ok %-7s (%lld, %lld, %lld)\n", name, (long long)outer, (long long)len, (long long)inner);
  }
};
