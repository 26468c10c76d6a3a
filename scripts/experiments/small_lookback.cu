// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o small_lookback scripts/experiments/small_lookback.cu
// run: ./small_lookback [reps] (session 57; docs/perf-notes.md, "The small-n look-back's polls").
//
// Issue 4 asks for at most 1.2x the copy's time for n <= 2^16; the small-n path (tiles of 8
// KiB by block, single_pass_scan.cuh) takes 1.45-1.6x at 2^16. After its loads and local
// scans, a tile publishes its aggregate and its look-back warp reads the descriptors of the
// 32 tiles before it, waits for the values (a round trip through L2), and reads all 32 again
// if any was not there yet: every tile of the grid publishes at about the same moment, so
// the first read often comes too early, and the second costs a whole round trip more. And
// the 64 tiles of 2^16 8-byte values need two windows of 32, one after the other.
//
// Variants, every one the library's by-block kernel with the small-n tiles (or half of
// them), by its protocol:
//   - the library's look-back (a window of 32 tiles), and a window of 64 (2 a lane);
//   - `multipoll`: the same walk, but each poll is `Polls` reads of the window issued
//     `GapNs` apart before the first is waited for, the first complete one taken: a poll
//     that comes too early costs the gap, not a round trip.
// Beside the copy of the same bytes, CUB's DeviceScan and tally's public scan, interleaved.
// Every output is checked whole first (int32 / int64 inclusive sums of small integers,
// exact).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "tally/tally.cuh"
#include "timing.cuh"

namespace SP = tally::detail::single_pass;
namespace LB = tally::detail::decoupled_lookback;

// A descriptor's raw words (tile_state.cuh, formats 4 and 8: one 8-byte word, or a 16-byte
// one with the tag in both halves), and what they say.
template <class Acc, class Descriptors>
__device__ void raw_load(const Descriptors& d, std::int64_t t, unsigned long long (&w)[2]) {
  if constexpr (sizeof(Acc) <= 4) {
    w[0] = SP::load_relaxed(d.words + t * Descriptors::stride);
    w[1] = 0;
  } else {
    SP::load_relaxed_16(d.words + t * Descriptors::stride, w[0], w[1]);
  }
}
template <class Acc>
__device__ SP::tile_status decode(const unsigned long long (&w)[2], unsigned epoch, Acc& value) {
  static_assert(sizeof(Acc) == 4 || sizeof(Acc) == 8, "formats 4 and 8 only");
  if constexpr (sizeof(Acc) == 4) {
    const auto bits = static_cast<unsigned>(w[0]);
    memcpy(&value, &bits, 4);
    return SP::status_of(static_cast<unsigned>(w[0] >> 32), epoch);
  } else {
    const unsigned bits[2] = {static_cast<unsigned>(w[0]), static_cast<unsigned>(w[1])};
    memcpy(&value, bits, 8);
    const auto tag = static_cast<unsigned>(w[0] >> 32);
    if (tag != static_cast<unsigned>(w[1] >> 32)) return SP::status_invalid;  // torn
    return SP::status_of(tag, epoch);
  }
}

// The look-back of the library's basic_protocol (not deterministic: any association) for
// plus only, with the polls in flight together. Lane l reads tiles first + l * Slots + s.
// The windows are walked backwards until one holds an inclusive tile; each window's tiles
// from its latest inclusive one on are added (plus is commutative and exact on integers).
template <int Slots, int Polls, int GapNs>
struct multipoll_protocol {
  static constexpr bool has_deterministic_mode = false;

  template <bool Deterministic, class Descriptors, class Acc, class Op>
  __device__ static Acc exclusive_prefix(const Descriptors& d, unsigned epoch, std::int64_t tile,
                                         const Acc& aggregate, Op&) {
    static_assert(!Deterministic, "an experiment of the plain look-back");
    const int lane = tally::warp::lane_id();
    if (lane == 0) d.store(tile, SP::make_tag(epoch, SP::status_aggregate), aggregate);
    constexpr int window = 32 * Slots;
    Acc sum{};  // the windows passed, reduced
    std::int64_t first = tile - window;
    for (;;) {
      Acc value[Slots];
      bool inclusive[Slots];
      for (;;) {
        // every round's raw words first, so that no round waits for the one before it
        unsigned long long w[Polls][Slots][2];
#pragma unroll
        for (int p = 0; p < Polls; ++p) {
#pragma unroll
          for (int s = 0; s < Slots; ++s) {
            const std::int64_t t = first + lane * Slots + s;
            raw_load<Acc>(d, t < 0 ? 0 : t, w[p][s]);
          }
          if (p + 1 < Polls) __nanosleep(GapNs);
        }
        int pick = -1;
#pragma unroll
        for (int p = 0; p < Polls; ++p) {
          bool valid = true;
#pragma unroll
          for (int s = 0; s < Slots; ++s) {
            Acc v;
            valid = valid && decode(w[p][s], epoch, v) != SP::status_invalid;
          }
          if (__all_sync(0xffffffffu, valid) && pick < 0) pick = p;
        }
        if (pick >= 0) {
#pragma unroll
          for (int p = 0; p < Polls; ++p) {
            if (p == pick) {
#pragma unroll
              for (int s = 0; s < Slots; ++s) inclusive[s] = decode(w[p][s], epoch, value[s]) == SP::status_inclusive;
            }
          }
          break;
        }
      }
      bool any = false;
#pragma unroll
      for (int s = 0; s < Slots; ++s) any = any || inclusive[s];
      const unsigned inclusive_lanes = __ballot_sync(0xffffffffu, any);
      const int from_lane = inclusive_lanes != 0 ? 31 - __clz(inclusive_lanes) : 0;
      int my_slot = 0;
#pragma unroll
      for (int s = 0; s < Slots; ++s) my_slot = inclusive[s] ? s : my_slot;
      const int from_slot = __shfl_sync(0xffffffffu, my_slot, from_lane);
      Acc part{};
#pragma unroll
      for (int s = 0; s < Slots; ++s) {
        const bool counted = inclusive_lanes == 0 || lane > from_lane || (lane == from_lane && s >= from_slot);
        if (counted) part += value[s];
      }
#pragma unroll
      for (int o = 16; o > 0; o /= 2) part += __shfl_xor_sync(0xffffffffu, part, o);
      sum += part;
      if (inclusive_lanes != 0) return sum;
      first -= window;
    }
  }
};

void* cub_storage = nullptr;
std::size_t cub_storage_bytes = 0;

template <class T>
void cub_scan(const T* in, T* out, long long n) {
  std::size_t bytes = 0;
  CK(cub::DeviceScan::InclusiveSum(nullptr, bytes, in, out, n));
  if (bytes > cub_storage_bytes) {
    if (cub_storage != nullptr) CK(cudaFree(cub_storage));
    CK(cudaMalloc(&cub_storage, bytes));
    cub_storage_bytes = bytes;
  }
  bytes = cub_storage_bytes;
  CK(cub::DeviceScan::InclusiveSum(cub_storage, bytes, in, out, n));
}

// The by-block kernel with tiles of Tune and protocol P (single_pass::scan, ByBlock).
template <class P, SP::single_pass_tuning Tune, class T>
void by_block(const T* in, T* out, long long n) {
  SP::scan<P, false, T, Tune, true>("small_lookback", "", in, out, n, tally::detail::make_seed<T, false>(T{}),
                                    tally::plus{}, tally::options{});
}

// The small-n tiles with one row a thread instead of two (4 KiB).
template <class T>
constexpr SP::single_pass_tuning half_tiles() {
  constexpr auto small = SP::small_single_pass_tuning<T>();
  return {small.block_threads, 1, small.vec};
}

template <class T>
struct variant {
  std::string name;
  std::function<void(const T*, T*, long long)> run;
  bool is_scan;
};

template <class T>
void run_type(const char* type, const std::vector<int>& log2s, int reps) {
  using lookback = LB::protocol;
  using window64 = LB::basic_protocol<2, 4, LB::delays<1200, 600>>;
  const std::vector<variant<T>> vs = {
      {"copy", [](const T* in, T* out, long long n) { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); }, false},
      {"CUB", [](const T* in, T* out, long long n) { cub_scan(in, out, n); }, true},
      {"tally public", [](const T* in, T* out, long long n) { tally::inclusive_scan(in, out, n); }, true},
      {"small, w32", [](const T* in, T* out, long long n) { by_block<lookback, SP::small_single_pass_tuning<T>()>(in, out, n); }, true},
      {"small, w64", [](const T* in, T* out, long long n) { by_block<window64, SP::small_single_pass_tuning<T>()>(in, out, n); }, true},
      {"small, mp w32 x2 150", [](const T* in, T* out, long long n) { by_block<multipoll_protocol<1, 2, 150>, SP::small_single_pass_tuning<T>()>(in, out, n); }, true},
      {"small, mp w32 x2 300", [](const T* in, T* out, long long n) { by_block<multipoll_protocol<1, 2, 300>, SP::small_single_pass_tuning<T>()>(in, out, n); }, true},
      {"small, mp w32 x3 100", [](const T* in, T* out, long long n) { by_block<multipoll_protocol<1, 3, 100>, SP::small_single_pass_tuning<T>()>(in, out, n); }, true},
      {"small, mp w64 x2 200", [](const T* in, T* out, long long n) { by_block<multipoll_protocol<2, 2, 200>, SP::small_single_pass_tuning<T>()>(in, out, n); }, true},
      {"half, w32", [](const T* in, T* out, long long n) { by_block<lookback, half_tiles<T>()>(in, out, n); }, true},
      {"half, mp w128 x2 200", [](const T* in, T* out, long long n) { by_block<multipoll_protocol<4, 2, 200>, half_tiles<T>()>(in, out, n); }, true},
  };
  for (int lg : log2s) {
    const long long n = 1ll << lg;
    std::vector<T> h(n), want(n), got(n);
    T acc{};
    for (long long i = 0; i < n; ++i) {
      h[i] = static_cast<T>((i * 7 + 3) % 11) - 5;
      acc += h[i];
      want[i] = acc;
    }
    T *in, *out;
    CK(cudaMalloc(&in, n * sizeof(T)));
    CK(cudaMalloc(&out, n * sizeof(T)));
    CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    for (const auto& v : vs) {
      if (!v.is_scan) continue;
      CK(cudaMemset(out, 0x5a, n * sizeof(T)));
      for (int k = 0; k < 3; ++k) v.run(in, out, n);  // warm, and a reused state
      CK(cudaDeviceSynchronize());
      CK(cudaMemcpy(got.data(), out, n * sizeof(T), cudaMemcpyDeviceToHost));
      for (long long i = 0; i < n; ++i) {
        if (got[i] != want[i]) {
          std::printf("WRONG %s n=2^%d %s at %lld\n", type, lg, v.name.c_str(), i);
          std::exit(1);
        }
      }
    }
    std::vector<std::function<void()>> fs;
    for (const auto& v : vs) fs.push_back([&, v] { v.run(in, out, n); });
    for (int pass = 0; pass < 2; ++pass) {
      const auto t = interleaved_us(fs, reps);
      for (std::size_t i = 0; i < vs.size(); ++i) {
        std::printf("%s 2^%d pass %d %-22s %7.3f us  %.3fx copy  %.3fx CUB\n", type, lg, pass,
                    vs[i].name.c_str(), t[i], t[i] / t[0], t[1] / t[i]);
      }
    }
    CK(cudaFree(in));
    CK(cudaFree(out));
  }
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 101;
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  std::printf("device: %s, %d SMs\n", p.name, p.multiProcessorCount);
  run_type<int>("int32", {13, 14, 15, 16, 17}, reps);
  run_type<long long>("int64", {13, 14, 15, 16}, reps);
  std::printf("all outputs right\n");
  return 0;
}
