// GPU segmented scans on the pipelined kernel (device/segmented/pipelined.cuh): by
// head flags, by keys, by CSR offsets and by equal lengths (the batched scans along the
// last axis).
//
// The public calls take this path only from segmented_pipelined::min_bytes of values on
// (32 MiB), so the tests of test_segmented.cu never reach its tile edges; here it runs
// directly at every edge (one tile, a partial last tile, more tiles than the device holds
// blocks, so that blocks take several tiles and the stage ring wraps), for both protocols,
// 4- and 8-byte values, a non-commutative operator of each size (affine maps composed in
// order: an operand taken in the wrong order, or a prefix from the wrong tile, changes
// the result), inclusive and exclusive, in place, and with heads at tile and warp edges
// (flags of random density and of one head per tile, and lengths 1, 3, 5, a tile +- 1,
// one segment longer than many tiles; keys of 1, 4 and 8 bytes, whose heads at a tile's
// first element need the key before the tile, and a custom equality; CSR offsets of
// several length patterns, 32- and 64-bit, not covering the whole array). One public call
// per form checks the dispatch.
// Results are compared exactly with tally::cpu::sequential.
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "test_affine.cuh"
#include "test_common.cuh"

namespace {

using namespace tally_test;
using namespace tally_test::affine;
namespace seq = tally::cpu::sequential;
namespace sp = tally::detail::segmented_pipelined;
using i64 = std::int64_t;
using lookback_protocol = tally::detail::decoupled_lookback::protocol;
using chained_protocol = tally::detail::chained::protocol;
// Keys compare through the device-callable equality the public key forms use.
using key_equal = tally::detail::segmented::device_equal_to<void>;

template <class T>
std::vector<T> values(std::size_t n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<T> h(n);
  for (auto& x : h) {
    if constexpr (requires { x.a; }) {
      x.a = static_cast<decltype(x.a)>(g() | 1u);
      x.b = static_cast<decltype(x.b)>(g());
    } else {
      x = static_cast<T>(static_cast<int>(g() % 7) - 3);  // small integers: exact sums
    }
  }
  return h;
}

template <class T>
T init_of() {
  if constexpr (requires { T{}.a; }) {
    return T{3, 5};
  } else {
    return static_cast<T>(2);
  }
}

// Runs the path directly with a protocol, inclusive or exclusive.
template <class Protocol, bool Exclusive, class T, class Heads, class Op>
void run(const T* in, T* out, i64 n, Heads heads, const T& init, Op op, bool deterministic = false) {
  tally::options o;
  o.deterministic = deterministic;
  sp::scan<Protocol, Exclusive>("segmented pipelined test", in, out, n, heads, init, op, o);
}

// Poisons `out`, runs the path (inclusive or exclusive) and returns out's first n + 1
// elements (the one past n must still be poison). A CUDA error throws (the test fails),
// as device_buffer's download does.
template <class Protocol, class T, class Heads, class Op>
std::vector<T> poison_run_download(bool exclusive, const T* in, device_buffer<T>& out, i64 n, Heads heads,
                                   const T& init, Op op) {
  out.poison();
  if (exclusive) {
    run<Protocol, true>(in, out.data(), n, heads, init, op);
  } else {
    run<Protocol, false>(in, out.data(), n, heads, init, op);
  }
  const cudaError_t status = cudaDeviceSynchronize();
  if (status != cudaSuccess) throw std::runtime_error(std::string("test: ") + cudaGetErrorString(status));
  return out.download(static_cast<std::size_t>(n + 1));
}

// Every n of `ns` (<= h.size()), both protocols, inclusive and exclusive, against the
// sequential scan by flags; `out` is poisoned, and the element past n must stay so.
template <class T, class Heads, class Op>
void check_sizes(const char* label, const std::vector<T>& h, const std::vector<unsigned char>& flags,
                 Heads heads, const std::vector<i64>& ns, Op op) {
  SCOPED_TRACE(label);
  const T init = init_of<T>();
  std::vector<T> want_i(h.size()), want_e(h.size());
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size() + 1);
  for (const i64 n : ns) {
    // the reference of the first n elements (element 0 starts a segment whatever its flag)
    seq::inclusive_scan_by_flags(h.begin(), h.begin() + n, flags.begin(), want_i.begin(), op);
    seq::exclusive_scan_by_flags(h.begin(), h.begin() + n, flags.begin(), want_e.begin(), init, op);
    for (const bool exclusive : {false, true}) {
      const auto& want = exclusive ? want_e : want_i;
      auto check = [&](auto protocol, const char* name) {
        const auto got =
            poison_run_download<decltype(protocol)>(exclusive, in.data(), out, n, heads, init, op);
        for (i64 i = 0; i < n; ++i) {
          const auto k = static_cast<std::size_t>(i);
          ASSERT_TRUE(got[k] == want[k]) << name << (exclusive ? " exclusive" : " inclusive") << ", n = " << n
                                         << ": element " << i << " is " << show(got[k]) << ", want "
                                         << show(want[k]);
        }
        ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)])) << "n = " << n;
      };
      check(lookback_protocol{}, "look-back");
      check(chained_protocol{}, "chained");
    }
  }
}

// The tile edges of a program with these heads.
template <class T, class Heads>
std::vector<i64> edges(i64 top) {
  constexpr i64 tile = sp::segmented_tiles<false, T, tally::plus, Heads>::L::tile_items;
  if (quick()) return {1, 32 * 4 + 1, tile + 1, 3 * tile + 17, top};  // (compute-sanitizer)
  return {1, 2, 31, 32 * 4 + 1, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1, 3 * tile + 17,
          40 * tile + 3, top};
}

// 1400 tiles of 8 rows (about 1244 of equal lengths' 9): more than the blocks an sm_90
// GPU (132 SMs) holds at once (3 per SM).
template <class T>
i64 top_size() {
  return 1400 * sp::segmented_tiles<false, T, tally::plus, sp::equal_lengths, 256, 8>::L::tile_items + 3;
}

template <class T, class Op>
void check_flags(std::uint64_t salt, Op op) {
  const i64 top = top_size<T>();
  const auto h = values<T>(static_cast<std::size_t>(top), salt);
  const auto ns = edges<T, sp::staged_flags>(top);
  constexpr i64 tile = sp::segmented_tiles<false, T, Op, sp::staged_flags>::L::tile_items;
  auto g = rng(salt + 1);
  // densities: about one head in 3, in 200 (several per warp, a few per tile), one head
  // at the first element of every tile (warp 0's first head at 0, the other warps none),
  // none at all (one segment over every tile)
  const std::vector<int> densities = quick() ? std::vector<int>{200, -1} : std::vector<int>{3, 200, -1, 0};
  for (const int density : densities) {
    std::vector<unsigned char> f(static_cast<std::size_t>(top));
    for (i64 i = 0; i < top; ++i) {
      const auto k = static_cast<std::size_t>(i);
      if (density > 0) {
        f[k] = g() % static_cast<unsigned>(density) == 0 ? static_cast<unsigned char>(1 + g() % 255) : 0;
      } else {
        f[k] = density < 0 && i % tile == 0 ? 1 : 0;
      }
    }
    const device_buffer<unsigned char> flags(f);
    const std::string label = "flags, one head in " + std::to_string(density);
    check_sizes(label.c_str(), h, f, sp::staged_flags{flags.data()}, ns, op);
  }
}

template <class T, class Op>
void check_lengths(std::uint64_t salt, Op op) {
  const i64 top = top_size<T>();
  const auto h = values<T>(static_cast<std::size_t>(top), salt);
  const auto ns = edges<T, sp::equal_lengths>(top);
  constexpr i64 tile = sp::segmented_tiles<false, T, Op, sp::equal_lengths>::L::tile_items;
  const std::vector<i64> lengths =
      quick() ? std::vector<i64>{3, tile + 1} : std::vector<i64>{1, 3, 5, 32 * 4 + 1, tile - 1, tile + 1, 7 * tile + 5};
  for (const i64 len : lengths) {
    std::vector<unsigned char> f(static_cast<std::size_t>(top));
    for (i64 i = 0; i < top; ++i) f[static_cast<std::size_t>(i)] = i % len == 0 ? 1 : 0;
    const std::string label = "segments of " + std::to_string(len);
    check_sizes(label.c_str(), h, f, sp::equal_lengths{len}, ns, op);
  }
}

// Keys equal in runs (a new key where a random draw says so: one head in `density`),
// compared with ==; and keys compared modulo 10 (a custom equality: keys 3 and 13 are
// one segment). The reference: flags where the keys' equality says a head starts.
struct equal_mod10 {
  template <class K>
  TALLY_HOST_DEVICE bool operator()(const K& a, const K& b) const {
    return a % 10 == b % 10;
  }
};

template <class T, class Key, class Equal, class Op>
void check_keys(std::uint64_t salt, Equal equal, Op op) {
  using heads_t = sp::staged_keys<Key, Equal>;
  // 1400 tiles of this program's size (fewer rows than the other forms); under
  // compute-sanitizer (quick) 450, still more than an sm_90 GPU (132 SMs) holds blocks
  // (396)
  constexpr i64 tile = sp::segmented_tiles<false, T, Op, heads_t>::L::tile_items;
  const i64 top = (quick() ? 450 : 1400) * tile + 3;
  const auto h = values<T>(static_cast<std::size_t>(top), salt);
  const auto ns = edges<T, heads_t>(top);
  auto g = rng(salt + 1);
  const std::vector<int> densities = quick() ? std::vector<int>{5} : std::vector<int>{2, 5, 300, -1};
  for (const int density : densities) {
    std::vector<Key> k(static_cast<std::size_t>(top));
    Key current = 0;
    for (i64 i = 0; i < top; ++i) {
      // density -1: a new key at every tile's first element and nowhere else
      const bool change = density > 0 ? g() % static_cast<unsigned>(density) == 0 : i % tile == 0;
      if (change) current = static_cast<Key>(current + 1 + static_cast<Key>(g() % 30));
      k[static_cast<std::size_t>(i)] = current;
    }
    std::vector<unsigned char> f(static_cast<std::size_t>(top));
    for (i64 i = 1; i < top; ++i) {
      const auto j = static_cast<std::size_t>(i);
      f[j] = equal(k[j - 1], k[j]) ? 0 : 1;
    }
    const device_buffer<Key> keys(k);
    const std::string label = std::to_string(sizeof(Key)) + "-byte keys, a new one in " + std::to_string(density);
    check_sizes(label.c_str(), h, f, heads_t{keys.data(), equal}, ns, op);
  }
}

// CSR offsets over [lead, n - tail) of [0, n): the elements outside them must stay
// untouched (poisoned). Segment lengths by pattern: 1, 3, a tile + 1, random in [0, 40]
// with empty segments, random in [0, 3 tiles], one segment, random in [0, 6] (aligned:
// with 4-byte offsets the head bitmap's kernel stages each warp's runs of 32 offsets
// through shared memory; a partial last group of runs does not). Both protocols,
// inclusive and exclusive, 32- and 64-bit offsets, aligned and not, against the
// sequential scan by the flags the offsets give.
template <class T, class Offset, class Op>
void check_offsets(std::uint64_t salt, Op op) {
  using heads_t = sp::offsets_bitmap<const Offset*>;
  constexpr i64 tile = sp::segmented_tiles<false, T, Op, heads_t>::L::tile_items;
  const i64 top = top_size<T>();
  const auto h = values<T>(static_cast<std::size_t>(top), salt);
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size() + 1);
  const T init = init_of<T>();
  auto g = rng(salt + 1);
  const std::vector<int> patterns = quick() ? std::vector<int>{1, 3, 6, 8} : std::vector<int>{0, 1, 2, 3, 4, 5, 6, 8};
  for (const i64 n : edges<T, heads_t>(top)) {
    for (const int pattern : patterns) {
      for (const i64 lead : {i64{0}, i64{5}}) {
        const i64 tail = lead == 0 ? 0 : 3;
        if (lead + tail >= n) continue;
        std::vector<Offset> off = {static_cast<Offset>(lead)};
        for (i64 at = lead; at < n - tail;) {
          i64 len = 1;
          switch (pattern) {
            case 1: len = 3; break;
            case 2: len = tile + 1; break;
            case 3: len = static_cast<i64>(g() % 41); break;
            case 4: len = static_cast<i64>(g() % static_cast<unsigned>(3 * tile + 1)); break;
            case 5: len = n; break;
            case 6: len = static_cast<i64>(g() % 7); break;
            // short segments (mean about 6: the bitmap kernel's staged runs of 32) with one of
            // 40000 about every 8192: a warp's 1024 offsets then span more than its window of
            // 1024 words (32768 elements), and the bits past it go to global memory directly
            case 8: len = g() % 8192 == 0 ? 40000 : static_cast<i64>(g() % 3); break;
            default: break;
          }
          at = at + len < n - tail ? at + len : n - tail;
          off.push_back(static_cast<Offset>(at));
        }
        const i64 segments = static_cast<i64>(off.size()) - 1;
        std::vector<unsigned char> f(static_cast<std::size_t>(n));
        for (i64 k = 0; k < segments; ++k) {
          if (off[static_cast<std::size_t>(k)] < n) f[static_cast<std::size_t>(off[static_cast<std::size_t>(k)])] = 1;
        }
        std::vector<T> want(static_cast<std::size_t>(n));
        // the offsets one element after a 256-byte aligned start for every other pattern
        // (the head bitmap's kernel loads 16-byte vectors only from aligned offsets)
        const bool shifted = pattern % 2 == 1;
        std::vector<Offset> stored = off;
        if (shifted) stored.insert(stored.begin(), Offset{0});
        const device_buffer<Offset> offsets(stored);
        for (const bool exclusive : {false, true}) {
          if (exclusive) {
            seq::exclusive_scan_by_flags(h.begin(), h.begin() + n, f.begin(), want.begin(), init, op);
          } else {
            seq::inclusive_scan_by_flags(h.begin(), h.begin() + n, f.begin(), want.begin(), op);
          }
          auto check = [&](auto protocol, const char* name) {
            const heads_t heads{offsets.data() + (shifted ? 1 : 0), segments, nullptr};
            const auto got =
                poison_run_download<decltype(protocol)>(exclusive, in.data(), out, n, heads, init, op);
            for (i64 i = 0; i <= n; ++i) {
              const auto k = static_cast<std::size_t>(i);
              if (i >= lead && i < n - tail) {
                ASSERT_TRUE(got[k] == want[k])
                    << name << (exclusive ? " exclusive" : " inclusive") << ", pattern " << pattern << ", n = " << n
                    << ", lead " << lead << ": element " << i << " is " << show(got[k]) << ", want " << show(want[k]);
              } else {
                ASSERT_TRUE(device_buffer<T>::is_poison(got[k]))
                    << name << ", pattern " << pattern << ", n = " << n << ": element " << i << " outside the segments was written";
              }
            }
          };
          check(lookback_protocol{}, "look-back");
          check(chained_protocol{}, "chained");
        }
      }
    }
  }
}

TEST(SegmentedPipelined, OffsetsInt32) { check_offsets<std::int32_t, std::int32_t>(331, tally::plus{}); }
TEST(SegmentedPipelined, OffsetsDouble64BitOffsets) { check_offsets<double, std::int64_t>(332, tally::plus{}); }
TEST(SegmentedPipelined, OffsetsNonCommutative4Byte) { check_offsets<affine16, std::int64_t>(333, compose16{}); }
TEST(SegmentedPipelined, OffsetsNonCommutative8Byte) { check_offsets<affine32, std::uint32_t>(334, compose32{}); }

TEST(SegmentedPipelined, FlagsInt32) { check_flags<std::int32_t>(301, tally::plus{}); }
TEST(SegmentedPipelined, FlagsUInt64) { check_flags<std::uint64_t>(302, tally::plus{}); }
TEST(SegmentedPipelined, FlagsNonCommutative4Byte) { check_flags<affine16>(303, compose16{}); }
TEST(SegmentedPipelined, FlagsNonCommutative8Byte) { check_flags<affine32>(304, compose32{}); }
TEST(SegmentedPipelined, LengthsInt32) { check_lengths<std::int32_t>(305, tally::plus{}); }
TEST(SegmentedPipelined, LengthsDouble) { check_lengths<double>(306, tally::plus{}); }
TEST(SegmentedPipelined, LengthsNonCommutative4Byte) { check_lengths<affine16>(307, compose16{}); }
TEST(SegmentedPipelined, LengthsNonCommutative8Byte) { check_lengths<affine32>(308, compose32{}); }

TEST(SegmentedPipelined, KeysInt32) { check_keys<std::int32_t, std::int32_t>(321, key_equal{}, tally::plus{}); }
TEST(SegmentedPipelined, KeysUInt8) { check_keys<std::int32_t, std::uint8_t>(322, key_equal{}, tally::plus{}); }
TEST(SegmentedPipelined, KeysInt64Double) { check_keys<double, std::int64_t>(323, key_equal{}, tally::plus{}); }
TEST(SegmentedPipelined, KeysInt64) { check_keys<std::int32_t, std::int64_t>(327, key_equal{}, tally::plus{}); }
TEST(SegmentedPipelined, KeysUInt8Int64Values) { check_keys<std::int64_t, std::uint8_t>(328, key_equal{}, tally::plus{}); }
TEST(SegmentedPipelined, KeysCustomEqual) { check_keys<std::int32_t, std::int32_t>(324, equal_mod10{}, tally::plus{}); }
TEST(SegmentedPipelined, KeysNonCommutative4Byte) { check_keys<affine16, std::int32_t>(325, key_equal{}, compose16{}); }
TEST(SegmentedPipelined, KeysNonCommutative8Byte) { check_keys<affine32, std::int16_t>(326, key_equal{}, compose32{}); }

// default_rows gives every staged program as many rows as leave room for 3 blocks an SM
// of 228 KiB of shared memory (sm_90): checked here with the occupancy API for each
// protocol's kernel with the rows scan gives it (mode_rows), the deterministic look-back's
// too where the values are not exact (its held windows take 4 KiB of static shared
// memory, and its tiles one row less where they need it). One byte more a stage than the
// rule allows, and a kernel falls to 2 blocks an SM and runs several points of the copy
// slower (docs/performance.md, "Plans and thresholds").
template <class Kernel>
void blocks_an_sm(Kernel kernel, int threads, int dynamic_bytes, int& blocks) {
  TALLY_TEST_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, dynamic_bytes));
  TALLY_TEST_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, dynamic_bytes));
}

template <class Protocol, bool Deterministic, class T, class Op, class Heads>
void expect_three_blocks_of(const std::string& label) {
  using program = sp::segmented_tiles<false, T, Op, Heads, 256, sp::mode_rows<Protocol, Deterministic, Heads, T>>;
  using hook = tally::detail::single_pass::no_stall;
  const int threads = program::tune.kernel_threads();
  const int bytes = static_cast<int>(program::tune.stages * program::stage_bytes);
  int blocks = 0;
  blocks_an_sm(tally::detail::pipelined::pipelined_kernel<Protocol, Deterministic, program, hook>, threads, bytes,
               blocks);
  EXPECT_EQ(blocks, 3) << label << " (" << program::L::rows << " rows)";
}

template <class T, class Op, class Heads>
void expect_three_blocks(const std::string& label) {
  expect_three_blocks_of<lookback_protocol, false, T, Op, Heads>(label);
  expect_three_blocks_of<chained_protocol, false, T, Op, Heads>(label + ", chained");
  if constexpr (!tally::detail::single_pass::exact_values<T>::value) {
    expect_three_blocks_of<lookback_protocol, true, T, Op, Heads>(label + ", deterministic");
  }
}

template <class T, class Op>
void expect_three_blocks_every_key(const std::string& values) {
  expect_three_blocks<T, Op, sp::staged_flags>(values + " values, flags");
  expect_three_blocks<T, Op, sp::staged_keys<std::uint8_t, key_equal>>(values + " values, 1-byte keys");
  expect_three_blocks<T, Op, sp::staged_keys<std::int16_t, key_equal>>(values + " values, 2-byte keys");
  expect_three_blocks<T, Op, sp::staged_keys<std::int32_t, key_equal>>(values + " values, 4-byte keys");
  expect_three_blocks<T, Op, sp::staged_keys<std::int64_t, key_equal>>(values + " values, 8-byte keys");
  expect_three_blocks<T, Op, sp::equal_lengths>(values + " values, equal lengths");
}

// Equal lengths stage the values alone: the plain scan's 9 rows, 8 where the deterministic
// kernel holds windows (floating values).
static_assert(sp::mode_rows<lookback_protocol, false, sp::equal_lengths, float> == 9 &&
                  sp::mode_rows<lookback_protocol, false, sp::equal_lengths, double> == 9 &&
                  sp::mode_rows<lookback_protocol, true, sp::equal_lengths, float> == 8 &&
                  sp::mode_rows<lookback_protocol, true, sp::equal_lengths, double> == 8,
              "the rule of default_rows for equal lengths");

TEST(SegmentedPipelined, ThreeBlocksAnSM) {
  int device = 0;
  TALLY_TEST_CUDA(cudaGetDevice(&device));
  int shared = 0;
  TALLY_TEST_CUDA(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  if (shared < 228 * 1024) GTEST_SKIP() << "the rule is for SMs of 228 KiB of shared memory (H100, H200)";
  expect_three_blocks_every_key<std::int32_t, tally::plus>("int32");
  expect_three_blocks_every_key<float, tally::plus>("float");
  expect_three_blocks_every_key<std::int64_t, tally::plus>("int64");
  expect_three_blocks_every_key<double, tally::plus>("double");
  expect_three_blocks_every_key<affine16, compose16>("affine16");
  expect_three_blocks_every_key<affine32, compose32>("affine32");
}

// In place, exclusive (the store shifts by one element: it must read the tile's own
// scanned values, not the output) and inclusive.
TEST(SegmentedPipelined, InPlace) {
  using T = std::int32_t;
  const i64 n = top_size<T>();
  const auto h = values<T>(static_cast<std::size_t>(n), 309);
  std::vector<unsigned char> f(static_cast<std::size_t>(n));
  auto g = rng(310);
  for (auto& x : f) x = g() % 50 == 0 ? 1 : 0;
  const device_buffer<unsigned char> flags(f);
  for (const bool exclusive : {false, true}) {
    std::vector<T> want(h.size());
    device_buffer<T> work(h);
    if (exclusive) {
      seq::exclusive_scan_by_flags(h.begin(), h.end(), f.begin(), want.begin(), T{2}, tally::plus{});
      run<lookback_protocol, true>(work.data(), work.data(), n, sp::staged_flags{flags.data()}, T{2},
                                   tally::plus{});
    } else {
      seq::inclusive_scan_by_flags(h.begin(), h.end(), f.begin(), want.begin(), tally::plus{});
      run<lookback_protocol, false>(work.data(), work.data(), n, sp::staged_flags{flags.data()}, T{2},
                                    tally::plus{});
    }
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = work.download(h.size());
    ASSERT_EQ(got, want) << (exclusive ? "exclusive" : "inclusive") << " in place";
  }
}

// The deterministic look-back gives the chained scan's bits for floats (both fold the
// same tiles in the same order), run after run.
TEST(SegmentedPipelined, DeterministicFloat) {
  const i64 n = top_size<float>();
  auto g = rng(311);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> h(static_cast<std::size_t>(n));
  for (auto& x : h) x = d(g);
  std::vector<unsigned char> f(static_cast<std::size_t>(n));
  for (auto& x : f) x = g() % 100000 == 0 ? 1 : 0;  // long segments: long float sums
  const device_buffer<float> in(h);
  const device_buffer<unsigned char> flags(f);
  device_buffer<float> out(h.size());
  run<chained_protocol, false>(in.data(), out.data(), n, sp::staged_flags{flags.data()}, 0.0f,
                               tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto chained = out.download(h.size());
  for (int r = 0; r < 3; ++r) {
    out.poison();
    run<lookback_protocol, false>(in.data(), out.data(), n, sp::staged_flags{flags.data()}, 0.0f,
                                  tally::plus{}, true);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = out.download(h.size());
    ASSERT_EQ(std::memcmp(got.data(), chained.data(), got.size() * sizeof(float)), 0) << "run " << r;
  }
}

// The deterministic kernel of doubles beside int32 keys takes 5 rows (its held windows
// take 4 KiB), the other kernels 6: every mode gives the host's sums (small integers:
// exact) at tile edges of both tile sizes, inclusive and exclusive, and the deterministic
// one the same bits run after run on random doubles.
TEST(SegmentedPipelined, DoubleKeysRowsByMode) {
  using T = double;
  using heads_t = sp::staged_keys<std::int32_t, key_equal>;
  constexpr int fast_rows = sp::mode_rows<lookback_protocol, false, heads_t, T>;
  constexpr int deterministic_rows = sp::mode_rows<lookback_protocol, true, heads_t, T>;
  static_assert(fast_rows == 6 && deterministic_rows == 5, "the rule of default_rows");
  constexpr i64 tile5 = sp::segmented_tiles<false, T, tally::plus, heads_t, 256, 5>::L::tile_items;
  constexpr i64 tile6 = sp::segmented_tiles<false, T, tally::plus, heads_t, 256, 6>::L::tile_items;
  const i64 top = (quick() ? 450 : 1400) * tile6 + 5;
  const auto h = values<T>(static_cast<std::size_t>(top), 335);
  std::vector<std::int32_t> k(static_cast<std::size_t>(top));
  auto g = rng(336);
  std::int32_t current = 0;
  for (auto& key : k) {
    if (g() % 20000 == 0) ++current;  // long segments: many tiles without a head
    key = current;
  }
  std::vector<unsigned char> f(static_cast<std::size_t>(top));
  for (std::size_t j = 1; j < f.size(); ++j) f[j] = k[j] != k[j - 1] ? 1 : 0;
  const device_buffer<std::int32_t> keys(k);
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size() + 1);
  const heads_t heads{keys.data(), key_equal{}};
  for (const i64 n : {tile5 + 1, 3 * tile5 - 1, tile6 + 1, 3 * tile6 - 1, top}) {
    for (const bool exclusive : {false, true}) {
      std::vector<T> want(static_cast<std::size_t>(n));
      if (exclusive) {
        seq::exclusive_scan_by_flags(h.begin(), h.begin() + n, f.begin(), want.begin(), T{2}, tally::plus{});
      } else {
        seq::inclusive_scan_by_flags(h.begin(), h.begin() + n, f.begin(), want.begin(), tally::plus{});
      }
      for (const bool deterministic : {false, true}) {
        out.poison();
        if (exclusive) {
          run<lookback_protocol, true>(in.data(), out.data(), n, heads, T{2}, tally::plus{}, deterministic);
        } else {
          run<lookback_protocol, false>(in.data(), out.data(), n, heads, T{2}, tally::plus{}, deterministic);
        }
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        auto got = out.download(static_cast<std::size_t>(n) + 1);
        ASSERT_TRUE(device_buffer<T>::is_poison(got.back())) << "n = " << n;
        got.pop_back();
        ASSERT_EQ(got, want) << "n = " << n << (exclusive ? ", exclusive" : ", inclusive")
                             << (deterministic ? ", deterministic" : "");
      }
    }
  }
  std::vector<T> r(h.size());
  std::uniform_real_distribution<T> d(-1.0, 1.0);
  for (auto& x : r) x = d(g);
  const device_buffer<T> random(r);
  std::vector<T> first;
  for (int run_index = 0; run_index < 3; ++run_index) {
    out.poison();
    run<lookback_protocol, false>(random.data(), out.data(), top, heads, T{0}, tally::plus{}, true);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = out.download(h.size());
    if (run_index == 0) {
      first = got;
    } else {
      ASSERT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(T)), 0) << "run " << run_index;
    }
  }
}

// The offsets form in a CUDA graph: the bitmap's allocation, its clear, the bitmap kernel
// and the scan (the last two each the programmatic dependent of the kernel before it:
// dependent_launch.cuh) captured once, then replayed on fresh values and offsets. One
// graph per kernel the bitmap takes (by n / segments: shorter than 8, 8 to 31, 32 and
// longer), segment lengths random in [0, 2 n / segments), empty ones too.
TEST(SegmentedPipelined, OffsetsInAGraph) {
  using T = std::int32_t;
  const i64 n = sp::min_bytes / static_cast<i64>(sizeof(T)) + 1000;
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  device_buffer<T> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (const i64 mean : {i64{2}, i64{16}, i64{40}}) {
    const i64 segments = n / mean;
    device_buffer<std::int32_t> offsets(static_cast<std::size_t>(segments + 1));
    std::vector<T> h;
    std::vector<unsigned char> f;
    i64 end = 0;  // offsets[segments]
    replay_captured(
        stream, cudaStreamCaptureModeThreadLocal,
        [&] {
          tally::inclusive_segmented_scan(static_cast<const T*>(in.data()), out.data(), n, offsets.data(), segments,
                                          tally::plus{}, o);
        },
        [&](int replay) {
          const auto salt = 340 + static_cast<std::uint64_t>(mean * 4 + replay);
          h = values<T>(static_cast<std::size_t>(n), salt);
          auto g = rng(salt + 1);
          std::vector<std::int32_t> off(static_cast<std::size_t>(segments + 1));
          i64 at = 0;
          for (i64 k = 0; k <= segments; ++k) {
            off[static_cast<std::size_t>(k)] = static_cast<std::int32_t>(at);
            at += static_cast<i64>(g() % static_cast<std::uint64_t>(2 * mean));
            if (at > n) at = n;
          }
          end = off.back();
          f.assign(static_cast<std::size_t>(n), 0);
          for (i64 k = 0; k < segments; ++k) {
            const auto s = off[static_cast<std::size_t>(k)];
            if (s < n) f[static_cast<std::size_t>(s)] = 1;
          }
          TALLY_TEST_CUDA(cudaMemcpy(in.data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
          TALLY_TEST_CUDA(cudaMemcpy(offsets.data(), off.data(), off.size() * sizeof(std::int32_t),
                                     cudaMemcpyHostToDevice));
          out.poison();
        },
        [&](int replay) {
          std::vector<T> want(h.size());
          seq::inclusive_scan_by_flags(h.begin(), h.end(), f.begin(), want.begin(), tally::plus{});
          const auto got = out.download(h.size());
          for (i64 i = 0; i < n; ++i) {
            const auto k = static_cast<std::size_t>(i);
            if (i < end) {
              ASSERT_EQ(got[k], want[k]) << "segments of mean " << mean << ", replay " << replay << ", element " << i;
            } else {
              ASSERT_TRUE(device_buffer<T>::is_poison(got[k]))
                  << "segments of mean " << mean << ", replay " << replay << ": element " << i
                  << " past the segments was written";
            }
          }
        });
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// The public calls take this path from min_bytes of values on: one call of each form just
// above it (and the bytes of flags' other types: int flags keep the tile kernel).
TEST(SegmentedPipelined, PublicCalls) {
  using T = std::int32_t;
  const i64 n = sp::min_bytes / static_cast<i64>(sizeof(T)) + 1000;
  const auto h = values<T>(static_cast<std::size_t>(n), 312);
  std::vector<unsigned char> f(static_cast<std::size_t>(n));
  auto g = rng(313);
  for (auto& x : f) x = g() % 1000 == 0 ? 1 : 0;
  const device_buffer<T> in(h);
  const device_buffer<unsigned char> flags(f);
  device_buffer<T> out(h.size());
  std::vector<T> want(h.size());
  out.poison();
  tally::exclusive_scan_by_flags(static_cast<const T*>(in.data()), flags.data(), out.data(), n, T{4});
  seq::exclusive_scan_by_flags(h.begin(), h.end(), f.begin(), want.begin(), T{4}, tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_EQ(out.download(h.size()), want) << "exclusive_scan_by_flags";
  // keys: a new key where the flags have a head
  std::vector<std::int32_t> k(h.size());
  std::int32_t key = 0;
  for (std::size_t i = 0; i < k.size(); ++i) k[i] = key += (i > 0 && f[i] != 0) ? 1 : 0;
  const device_buffer<std::int32_t> keys(k);
  out.poison();
  tally::inclusive_scan_by_key(keys.data(), static_cast<const T*>(in.data()), out.data(), n);
  seq::inclusive_scan_by_flags(h.begin(), h.end(), f.begin(), want.begin(), tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_EQ(out.download(h.size()), want) << "inclusive_scan_by_key";
  // rows of 1000 along the last axis
  const i64 rows = n / 1000;
  const std::vector<i64> shape = {rows, 1000};
  out.poison();
  tally::inclusive_scan_batched(static_cast<const T*>(in.data()), out.data(), std::span<const i64>(shape), 1);
  seq::inclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 1, tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = out.download(static_cast<std::size_t>(rows * 1000));
  for (std::size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i], want[i]) << "inclusive_scan_batched (" << rows << ", 1000), element " << i;
  }
  // CSR offsets: the same heads as the flags
  std::vector<std::int64_t> off;
  for (i64 i = 0; i < n; ++i) {
    if (i == 0 || f[static_cast<std::size_t>(i)] != 0) off.push_back(i);
  }
  off.push_back(n);
  const device_buffer<std::int64_t> offsets(off);
  out.poison();
  tally::exclusive_segmented_scan(static_cast<const T*>(in.data()), out.data(), n, offsets.data(),
                                  static_cast<i64>(off.size()) - 1, T{4});
  seq::exclusive_scan_by_flags(h.begin(), h.end(), f.begin(), want.begin(), T{4}, tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_EQ(out.download(h.size()), want) << "exclusive_segmented_scan";
}

}  // namespace
