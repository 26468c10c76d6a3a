// bench/lookback_tuning.cu -- tally-lookback-tuning: the measurements behind the
// single-pass tuning (docs/performance.md). For int32 and double sums it times variants
// of the decoupled look-back kernel (tile shape, look-back window, polls before sleeping,
// deterministic mode) and the chained scan, beside a device-to-device copy of the same
// bytes and CUB's InclusiveSum, in one process: CUDA events, warm-up, median of 15.
// Every variant's output is checked against a host scan at 64 positions.
//
//   tally-lookback-tuning [log2 sizes...]      default: 12 16 20 24 28
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <tally/tally.cuh>

namespace {

namespace sp = tally::detail::single_pass;

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

double median_us(const std::function<void()>& call, int reps = 15) {
  cudaEvent_t a, b;
  check(cudaEventCreate(&a), "event");
  check(cudaEventCreate(&b), "event");
  for (int i = 0; i < 3; ++i) call();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(a), "record");
    call();
    check(cudaEventRecord(b), "record");
    check(cudaEventSynchronize(b), "sync");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, a, b), "elapsed");
    t.push_back(ms * 1000.0);
  }
  check(cudaEventDestroy(a), "event");
  check(cudaEventDestroy(b), "event");
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

template <class T>
struct bench_type {
  std::int64_t n;
  std::vector<T> host;
  std::vector<T> expected;  // the inclusive sum, computed in T
  T* in = nullptr;
  T* out = nullptr;
  unsigned char* state = nullptr;
  std::int64_t capacity = 0;
  double copy_us = 0;

  explicit bench_type(std::int64_t count) : n(count), host(count), expected(count) {
    std::mt19937_64 g(12345);
    for (auto& x : host) x = static_cast<T>(static_cast<int>(g() % 200) - 99);
    T running = 0;
    for (std::int64_t i = 0; i < n; ++i) expected[i] = running = running + host[i];
    check(cudaMalloc(&in, n * sizeof(T)), "malloc");
    check(cudaMalloc(&out, n * sizeof(T)), "malloc");
    check(cudaMemcpy(in, host.data(), n * sizeof(T), cudaMemcpyHostToDevice), "upload");
    capacity = (n + 255) / 256 + 1024;  // more tiles than any variant uses
    const std::size_t bytes = sp::state_bytes<T>(capacity);
    check(cudaMalloc(&state, bytes), "malloc");
    check(cudaMemset(state, 0, bytes), "memset");
    copy_us = median_us([&] {
      check(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice), "copy");
    });
  }
  ~bench_type() {
    cudaFree(in);
    cudaFree(out);
    cudaFree(state);
  }

  bool correct() {
    std::mt19937_64 g(99);
    for (int k = 0; k < 64; ++k) {
      const std::int64_t i = k == 0 ? n - 1 : static_cast<std::int64_t>(g() % n);
      T v;
      check(cudaMemcpy(&v, out + i, sizeof(T), cudaMemcpyDeviceToHost), "check");
      if (v != expected[i]) return false;
    }
    return true;
  }

  void row(const char* type, const std::string& name, double us, bool ok) {
    std::printf("%-7s 2^%-3d %-44s %10.2f us  %6.1f%% of copy  %s\n", type,
                static_cast<int>(std::log2(static_cast<double>(n))), name.c_str(), us,
                100.0 * copy_us / us, ok ? "" : "WRONG");
  }

  template <class Protocol, int Threads, int Rows, int Vec>
  void variant(const char* type, const std::string& name, bool deterministic) {
    constexpr sp::single_pass_tuning tune{Threads, Rows, Vec};
    const std::int64_t tiles = (n + tune.tile_items() - 1) / tune.tile_items();
    check(cudaMemset(out, 0, n * sizeof(T)), "clear");
    const double us = median_us([&] {
      sp::launch<Protocol, tune, false>("tuning", static_cast<const T*>(in), out, n, tiles,
                                        tally::detail::seed_value<T, false>{}, tally::plus{},
                                        sp::tile_state<T>::at(state, capacity), deterministic,
                                        sp::no_stall{}, sp::one_line{}, nullptr);
    });
    check(cudaDeviceSynchronize(), "variant");
    row(type, deterministic ? name + deterministic_window<Protocol>() : name, us, correct());
  }

  // the deterministic look-back's window and held tiles for T (single_pass/decoupled_lookback.cuh:
  // they depend on the width of a descriptor)
  template <class Protocol>
  static std::string deterministic_window() {
    if constexpr (Protocol::has_deterministic_mode) {
      constexpr int window = 32 * Protocol::template deterministic_slots<T>;
      constexpr int held = Protocol::template deterministic_held_tiles<T>;
      return " w" + std::to_string(window) + (held > 0 ? " held " + std::to_string(held) : "");
    } else {
      return "";
    }
  }

  void cub_row(const char* type) {
    std::size_t bytes = 0;
    check(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, static_cast<int>(n)), "cub");
    void* temp = nullptr;
    check(cudaMalloc(&temp, bytes), "malloc");
    const double us = median_us([&] {
      check(cub::DeviceScan::InclusiveSum(temp, bytes, in, out, static_cast<int>(n)), "cub");
    });
    row(type, "cub::DeviceScan::InclusiveSum", us, correct());
    cudaFree(temp);
  }
};

template <class T, int Vec>
void run_type(const char* type, std::int64_t n) {
  bench_type<T> b(n);
  using namespace tally::detail;
  b.row(type, "copy (cudaMemcpyAsync D2D)", b.copy_us, true);
  b.cub_row(type);
  using decoupled_lookback::basic_protocol;
  using decoupled_lookback::delays;
  // the polling delays (initial, between polls; ns), at 256 threads x 4 rows, window 32
  b.template variant<basic_protocol<1, 4, delays<0, 0>>, 256, 4, Vec>(type, "lookback 256x4 w32 delay 0/0", false);
  b.template variant<basic_protocol<1, 4, delays<600, 300>>, 256, 4, Vec>(type, "lookback 256x4 w32 delay 600/300", false);
  b.template variant<basic_protocol<1, 4, delays<1200, 600>>, 256, 4, Vec>(type, "lookback 256x4 w32 delay 1200/600", false);
  b.template variant<basic_protocol<1, 4, delays<2000, 1000>>, 256, 4, Vec>(type, "lookback 256x4 w32 delay 2000/1000", false);
  // the tile shape, delays 1200/600
  b.template variant<basic_protocol<1, 4, delays<1200, 600>>, 128, 6, Vec>(type, "lookback 128x6 w32 delay 1200/600", false);
  b.template variant<basic_protocol<1, 4, delays<1200, 600>>, 256, 6, Vec>(type, "lookback 256x6 w32 delay 1200/600", false);
  b.template variant<basic_protocol<1, 4, delays<1200, 600>>, 256, 8, Vec>(type, "lookback 256x8 w32 delay 1200/600", false);
  // the window
  b.template variant<basic_protocol<4, 4, delays<1200, 600>>, 256, 4, Vec>(type, "lookback 256x4 w128 delay 1200/600", false);
  // deterministic mode (the name ends with its window and held tiles for the type: int32
  // has a window of 32 x DeterministicSlotsPerLane, double one of 32 and 512 tiles held)
  b.template variant<basic_protocol<1, 4, delays<1200, 600>>, 256, 4, Vec>(type, "deterministic 256x4 delay 1200/600", true);
  b.template variant<basic_protocol<1, 4, delays<600, 300>>, 256, 4, Vec>(type, "deterministic 256x4 delay 600/300", true);
  b.template variant<basic_protocol<1, 4, delays<1200, 600>>, 256, 8, Vec>(type, "deterministic 256x8 delay 1200/600", true);
  if constexpr (sizeof(T) == 4) {  // a wider window (one-word descriptors)
    b.template variant<basic_protocol<1, 8, delays<1200, 600>>, 256, 4, Vec>(type, "deterministic 256x4 delay 1200/600", true);
  } else {  // fewer held tiles (wider descriptors)
    b.template variant<basic_protocol<1, 4, delays<1200, 600>, 256, 128>, 256, 4, Vec>(type, "deterministic 256x4 delay 1200/600", true);
  }
  if (n <= (std::int64_t{1} << 24)) {
    b.template variant<chained::protocol, 256, 4, Vec>(type, "chained 256x4 rows", false);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> logs;
  for (int i = 1; i < argc; ++i) logs.push_back(std::atoi(argv[i]));
  if (logs.empty()) logs = {12, 16, 20, 24, 28};
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "properties");
  std::printf("tally-lookback-tuning on %s\n", prop.name);
  for (int lg : logs) run_type<std::int32_t, 4>("int32", std::int64_t{1} << lg);
  for (int lg : logs) run_type<double, 2>("double", std::int64_t{1} << (lg - 1));
  return 0;
}
