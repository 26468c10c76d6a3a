// Built by hand, not by CMake: nvcc -std=c++20 -arch=sm_90 -O3 --expt-relaxed-constexpr
// -diag-suppress 177 -Iinclude -o segmented_rows scripts/experiments/segmented_rows.cu;
// run: ./segmented_rows [reps] [1: the offsets rows too] (session 50; docs/perf-notes.md, "Nine rows for the
// segmented tiles of offsets and equal lengths").
//
// The segmented pipelined kernel by CSR offsets (the head bitmap) and by equal lengths in
// tiles of 8 rows (the library's default_rows for both) and of 9 (the plain scan's),
// called directly (segmented_pipelined::scan with Rows) beside the copy of the values,
// interleaved in one process; the blocks each kernel gets an SM (the occupancy API, as
// the library's launch asks); every output checked against the host.
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

namespace SP = tally::detail::segmented_pipelined;
namespace DL = tally::detail::decoupled_lookback;
namespace S1 = tally::detail::single_pass;

template <class Acc, class Heads, int Rows>
int blocks_an_sm() {
  using program = SP::segmented_tiles<false, Acc, tally::plus, Heads, 256, Rows, 2>;
  constexpr auto kernel = tally::detail::pipelined::pipelined_kernel<DL::protocol, false, program, S1::no_stall>;
  constexpr std::size_t ring = 2 * program::stage_bytes;
  CK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)ring));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, program::tune.kernel_threads(), ring));
  cudaFuncAttributes a;
  CK(cudaFuncGetAttributes(&a, kernel));
  std::printf("  %d rows: stage %u B, static %zu B, %d blocks an SM\n", Rows, program::stage_bytes,
              a.sharedSizeBytes, per_sm);
  return per_sm;
}

template <class Acc, int Rows, class Heads>
void call(const Acc* in, Acc* out, long long n, Heads h) {
  SP::scan<DL::protocol, false, Acc, tally::plus, Heads, Rows>("rows", in, out, n, h, Acc{}, tally::plus{},
                                                                tally::options{});
}

// want: the host's inclusive scan with heads at `heads` (sorted element indices)
template <class Acc>
std::vector<Acc> expected(const std::vector<Acc>& h, const std::vector<char>& head) {
  std::vector<Acc> w(h.size());
  Acc s{};
  for (std::size_t i = 0; i < h.size(); ++i) {
    s = head[i] || i == 0 ? h[i] : s + h[i];
    w[i] = s;
  }
  return w;
}

template <class Acc>
void run(const char* name, long long n, const std::vector<int>* offs, long long len, int reps) {
  Acc *in, *out;
  int* doffs = nullptr;
  CK(cudaMalloc(&in, n * sizeof(Acc)));
  CK(cudaMalloc(&out, n * sizeof(Acc)));
  std::vector<Acc> h(n);
  for (long long i = 0; i < n; ++i) h[i] = static_cast<Acc>(std::rand() % 7 - 3);
  CK(cudaMemcpy(in, h.data(), n * sizeof(Acc), cudaMemcpyHostToDevice));
  std::vector<char> head(n, 0);
  long long segs = 0;
  if (offs) {
    segs = (long long)offs->size() - 1;
    CK(cudaMalloc(&doffs, (segs + 1) * 4));
    CK(cudaMemcpy(doffs, offs->data(), (segs + 1) * 4, cudaMemcpyHostToDevice));
    for (long long k = 0; k < segs; ++k) if ((*offs)[k] < n) head[(*offs)[k]] = 1;
  } else {
    for (long long i = 0; i < n; i += len) head[i] = 1;
  }
  const std::vector<Acc> want = expected(h, head);
  using B = SP::offsets_bitmap<const int*>;
  std::vector<std::function<void()>> fs = {[&] { CK(cudaMemcpyAsync(out, in, n * sizeof(Acc), cudaMemcpyDeviceToDevice, 0)); }};
  if (offs) {
    fs.push_back([&] { call<Acc, 8>(in, out, n, B{doffs, segs, nullptr}); });
    fs.push_back([&] { call<Acc, 9>(in, out, n, B{doffs, segs, nullptr}); });
  } else {
    fs.push_back([&] { call<Acc, 8>(in, out, n, SP::equal_lengths{len}); });
    fs.push_back([&] { call<Acc, 9>(in, out, n, SP::equal_lengths{len}); });
  }
  bool ok = true;
  for (std::size_t v = 1; v < fs.size(); ++v) {
    CK(cudaMemset(out, 0xff, n * sizeof(Acc)));
    fs[v]();
    CK(cudaDeviceSynchronize());
    std::vector<Acc> got(n);
    CK(cudaMemcpy(got.data(), out, n * sizeof(Acc), cudaMemcpyDeviceToHost));
    long long wrong = 0, at = -1;
    for (long long i = 0; i < n; ++i) if (got[i] != want[i]) { if (at < 0) at = i; ++wrong; }
    if (wrong) { ok = false; std::printf("WRONG %s v%zu: %lld wrong, first at %lld\n", name, v, wrong, at); }
  }
  for (int pass = 0; pass < 2; ++pass) {
    auto t = interleaved_us(fs, reps);
    std::printf("%-34s p%d copy %6.1f us | 8 rows %.3fx | 9 rows %.3fx | 9/8 %.4f%s\n", name, pass, t[0],
                t[1] / t[0], t[2] / t[0], t[2] / t[1], ok ? "" : "  (WRONG above)");
  }
  std::fflush(stdout);
  CK(cudaFree(in)); CK(cudaFree(out)); if (doffs) CK(cudaFree(doffs));
}

std::vector<int> uniform(long long n, long long len) {
  std::vector<int> o;
  for (long long x = 0; x < n; x += len) o.push_back((int)x);
  o.push_back((int)n);
  return o;
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 21;
  std::printf("offsets, int32:\n");
  blocks_an_sm<int, SP::offsets_bitmap<const int*>, 8>();
  blocks_an_sm<int, SP::offsets_bitmap<const int*>, 9>();
  std::printf("offsets, float:\n");
  blocks_an_sm<float, SP::offsets_bitmap<const int*>, 8>();
  blocks_an_sm<float, SP::offsets_bitmap<const int*>, 9>();
  std::printf("equal lengths, int32:\n");
  blocks_an_sm<int, SP::equal_lengths, 8>();
  blocks_an_sm<int, SP::equal_lengths, 9>();
  std::printf("equal lengths, double:\n");
  blocks_an_sm<double, SP::equal_lengths, 8>();
  blocks_an_sm<double, SP::equal_lengths, 9>();
  const long long n = 1ll << 26;
  const bool offsets = argc > 2 && std::atoi(argv[2]) != 0;
  if (offsets) for (long long len : {1ll, 4ll, 32ll, 1024ll, 65536ll, n}) {
    auto o = uniform(n, len);
    run<int>(("offsets int32 len " + std::to_string(len)).c_str(), n, &o, 0, reps);
  }
  if (offsets) {
    std::mt19937_64 g(7);
    std::vector<int> o{0};
    while (o.back() < n) o.push_back((int)std::min<long long>(n, o.back() + 1 + (long long)(g() % 2000)));
    run<int>("offsets int32 len U[1,2000]", n, &o, 0, reps);
  }
  if (offsets) for (long long len : {4ll, 1024ll}) {
    auto o = uniform(n, len);
    run<float>(("offsets float len " + std::to_string(len)).c_str(), n, &o, 0, reps);
  }
  for (long long len : {32ll, 1024ll, n}) run<int>(("equal lengths int32 len " + std::to_string(len)).c_str(), n, nullptr, len, reps);
  for (long long len : {4096ll, 1ll << 20}) {
    run<float>(("equal lengths float len " + std::to_string(len)).c_str(), n, nullptr, len, reps);
    run<long long>(("equal lengths int64 2^25 len " + std::to_string(len)).c_str(), n / 2, nullptr, len, reps);
    run<double>(("equal lengths double 2^25 len " + std::to_string(len)).c_str(), n / 2, nullptr, len, reps);
  }
  run<int>("equal lengths int32 2^23 len 2^20", 1ll << 23, nullptr, 1ll << 20, reps);
  run<int>("equal lengths int32 2^28 len 2^20", 1ll << 28, nullptr, 1ll << 20, 9);
  if (offsets) {
    auto o = uniform(1ll << 28, 4);
    run<int>("offsets int32 2^28 len 4", 1ll << 28, &o, 0, 9);
  }
  return 0;
}
