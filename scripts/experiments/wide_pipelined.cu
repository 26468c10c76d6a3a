// Built by hand, not by CMake:
//   nvcc -std=c++20 -O3 -arch=sm_90 --expt-relaxed-constexpr --extended-lambda -diag-suppress 177
//        -Iinclude -Iscripts/experiments -o wide_pipelined scripts/experiments/wide_pipelined.cu
// run: ./wide_pipelined [reps] (session 56; docs/perf-notes.md, "Wide values on the pipelined kernel").
// With -DPOLLS (session 57; "Tagged quarters for values of 17 to 64 bytes"): 32-, 48- and
// 64-byte values at 4-64 MiB only, and variants 3 and 4 beside the others: the wide tiles
// under a look-back that pauses from its first tile (EagerTiles 0), for descriptors whose
// poll reads a whole 128-byte line a tile.
//
// Values of 12 to 64 bytes (C int32 columns as one element, the operator column by column)
// on the pipelined kernel's wide tiles (pipelined_scan.cuh, wide_tiles: a lane a run of
// consecutive values, the stage copied out as 16-byte vectors) against the tiles by ticket
// (single_pass_scan.cuh, the public path before), beside a copy of the same bytes,
// interleaved, from 256 KiB to 512 MiB: where the public scans should switch, and what
// the wide tiles reach; beside CUB's DeviceScan on the same values (added after the
// session's runs, for its last one). Every output is checked whole first, inclusive and
// exclusive with a seed, at sizes that end in a partial tile (columns_common.cuh).
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include <cub/device/device_scan.cuh>

#include "tally/tally.cuh"
#include "columns_common.cuh"
#include "timing.cuh"

namespace SP = tally::detail::single_pass;
namespace PL = tally::detail::pipelined;
using lookback = tally::detail::decoupled_lookback::protocol;
using pipelined_lookback = tally::detail::decoupled_lookback::pipelined_protocol;

// rows of C int32 columns as one element (columns_common.cuh)
template <int C>
using row = group<int, C>;

// CUB's temporary storage, grown on demand (allocated during the checks, before any timing)
void* cub_storage = nullptr;
std::size_t cub_storage_bytes = 0;

#ifdef POLLS
constexpr bool polls = true;
#else
constexpr bool polls = false;
#endif

// variant 0: the tiles by ticket; 1: the pipelined kernel's wide tiles; 2: CUB's
// DeviceScan (the peer: the same values and operator); 3, 4 (POLLS): the wide tiles with
// pauses from the first tile (1200 / 600 ns and 600 / 300 ns)
namespace DL = tally::detail::decoupled_lookback;
using paused = DL::basic_protocol<1, 4, DL::delays<1200, 600>, 0, 256, 2048>;
using paused_short = DL::basic_protocol<1, 4, DL::delays<600, 300>, 0, 256, 2048>;
template <bool Exclusive, int C>
void scan(int variant, const row<C>* in, row<C>* out, long long rows, int init) {
  using G = row<C>;
  G seed;
  for (int k = 0; k < C; ++k) seed.column[k] = init;
  const auto s = tally::detail::make_seed<G, Exclusive>(seed);
  if (variant == 2) {
    std::size_t bytes = 0;
    const auto call = [&](void* storage) {
      if constexpr (Exclusive) {
        CK(cub::DeviceScan::ExclusiveScan(storage, bytes, in, out, group_plus{}, seed, rows));
      } else {
        CK(cub::DeviceScan::InclusiveScan(storage, bytes, in, out, group_plus{}, rows));
      }
    };
    call(nullptr);
    if (bytes > cub_storage_bytes) {
      if (cub_storage != nullptr) CK(cudaFree(cub_storage));
      CK(cudaMalloc(&cub_storage, bytes));
      cub_storage_bytes = bytes;
    }
    bytes = cub_storage_bytes;
    call(cub_storage);
  } else if (variant == 0) {
    SP::scan<lookback, Exclusive, G>("wide_pipelined", "", in, out, rows, s, group_plus{}, tally::options{});
  } else if (variant == 1) {
    PL::scan<pipelined_lookback, Exclusive, G>("wide_pipelined", "", in, out, rows, s, group_plus{},
                                               tally::options{});
  } else if (variant == 3) {
    PL::scan<paused, Exclusive, G>("wide_pipelined", "", in, out, rows, s, group_plus{}, tally::options{});
  } else {
    PL::scan<paused_short, Exclusive, G>("wide_pipelined", "", in, out, rows, s, group_plus{}, tally::options{});
  }
}

template <int C>
void run(long long rows, int reps) {
  using G = row<C>;
  const column_case<int> c(1, rows, C);
  const std::vector<int> variants = polls ? std::vector<int>{0, 1, 2, 3, 4} : std::vector<int>{0, 1, 2};
  c.check_both("int32", variants, [&](auto excl, int v, const int* in, int* out, int init) {
    scan<decltype(excl)::value>(v, reinterpret_cast<const G*>(in), reinterpret_cast<G*>(out), rows, init);
  });
  const auto* gi = reinterpret_cast<const G*>(c.in);
  auto* go = reinterpret_cast<G*>(c.out);
  std::vector<std::function<void()>> fs = {
      [&] { CK(cudaMemcpyAsync(c.out, c.in, c.n * sizeof(int), cudaMemcpyDeviceToDevice, 0)); }};
  for (int v : variants) fs.push_back([&, v] { scan<false>(v, gi, go, rows, 0); });
  for (int pass = 0; pass < 2; ++pass) {
    const auto t = interleaved_us(fs, reps);
    std::printf("%2d bytes %8.2f MiB (K %2d) p%d: copy %7.1f us | by ticket %.3fx | wide tiles %.3fx | CUB %.3fx",
                C * 4, c.n * 4 / 1048576.0, PL::wide_run<G>(), pass, t[0], t[1] / t[0], t[2] / t[0], t[3] / t[0]);
    if (polls) std::printf(" | paused %.3fx | paused short %.3fx", t[4] / t[0], t[5] / t[0]);
    std::printf("\n");
  }
  std::fflush(stdout);
}

template <int C>
void sizes(int reps) {
  // about 256 KiB to 512 MiB (POLLS: 4-64 MiB), each a partial last tile (rows not a
  // multiple of 256 K)
  const std::vector<long long> all = {1ll << 18, 1ll << 20, 1ll << 22, 1ll << 23, 1ll << 24, 1ll << 26, 1ll << 29};
  const std::vector<long long> mid = {1ll << 22, 1ll << 23, 1ll << 24, 1ll << 25, 1ll << 26};
  for (long long bytes : polls ? mid : all) {
    run<C>(bytes / (4 * C) - 3, reps);
  }
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 15;
  if (!polls) {
    sizes<3>(reps);
    sizes<5>(reps);
    sizes<6>(reps);
    sizes<7>(reps);
  }
  sizes<8>(reps);
  sizes<12>(reps);
  sizes<16>(reps);
  return 0;
}
