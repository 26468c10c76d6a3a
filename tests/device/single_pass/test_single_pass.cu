// tests/device/single_pass/test_single_pass.cu -- what is particular to the single-pass scans
// (device/single_pass/{tile_pipeline,pipelined,decoupled_lookback,chained,tile_state}.cuh):
//   - pointers at any alignment (the 16-byte vector path and the scalar path);
//   - iterator inputs (a fused map), converting inputs and outputs;
//   - accumulators of every descriptor format: 2, 8-byte structs, 12 and 64 bytes,
//     non-commutative;
//   - the stall test: chosen tiles and blocks are delayed by spinning on the clock, the
//     results must not change (no dependence on launch order or timing);
//   - determinism: options.deterministic gives the same float bits in every run, and the
//     same bits as the chained scan (the same left fold of tile aggregates);
//   - the tile state: many calls of changing sizes on one stream (epochs), two streams at
//     once, caller storage, graph capture and replay, the clearing epoch;
//   - the small-n path (smaller tiles, tile = blockIdx.x in a cooperative launch): where
//     it is taken, its sizes, determinism, stalls, state, storage and graphs;
//   - the default tiles by block (tile = blockIdx.x where the whole grid fits at once):
//     the edge of the grid the device holds, stalls, the clearing epoch;
//   - the pipelined kernel of large scans (single_pass/pipelined.cuh): its tile edges, stalls,
//     determinism through the public scans, the clearing epoch.
// The type x operator x size matrix is in test_device_decoupled_lookback.cu and
// test_device_chained.cu.
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include "test_common.cuh"

namespace {

using namespace tally_test;
namespace sp = tally::detail::single_pass;
using lookback_protocol = tally::detail::decoupled_lookback::protocol;
// what the public scans run the pipelined kernel with (fewer held windows: single_pass/decoupled_lookback.cuh)
using pipelined_lookback = tally::detail::decoupled_lookback::pipelined_protocol;
using chained_protocol = tally::detail::chained::protocol;
using tally::scan_strategy;

const scan_strategy single_pass_strategies[] = {scan_strategy::decoupled_lookback,
                                                scan_strategy::chained};

tally::options with_strategy(scan_strategy s, bool deterministic = false) {
  tally::options o;
  o.strategy = s;
  o.deterministic = deterministic;
  return o;
}

// The public scans with a single-pass options.strategy: decoupled_lookback (and automatic)
// through tally::inclusive_scan, chained through the same driver with the chained
// protocol. (tally::textbook would do both, but compiles every strategy x block pair.)
template <class In, class Out, class Op>
void sp_inclusive_scan(In in, Out out, std::int64_t n, Op op, const tally::options& o = {}) {
  if (o.strategy != scan_strategy::chained) return tally::inclusive_scan(in, out, n, op, o);
  using acc_t = tally::inclusive_accumulator_t<Op, tally::input_value_t<In>>;
  tally::detail::scan_with<tally::detail::chained::strategy, tally::detail::warp_scans_selector,
                           false, acc_t>("inclusive_scan", "inclusive_scan_storage_bytes", in, out,
                                         n, tally::detail::seed_value<acc_t, false>{}, op, o);
}
template <class In, class Out, class Init, class Op>
void sp_exclusive_scan(In in, Out out, std::int64_t n, Init init, Op op,
                       const tally::options& o = {}) {
  if (o.strategy != scan_strategy::chained) return tally::exclusive_scan(in, out, n, init, op, o);
  using acc_t = tally::exclusive_accumulator_t<Op, Init, tally::input_value_t<In>>;
  tally::detail::scan_with<tally::detail::chained::strategy, tally::detail::warp_scans_selector,
                           true, acc_t>("exclusive_scan", "exclusive_scan_storage_bytes", in, out,
                                        n, tally::detail::seed_value<acc_t, true>{static_cast<acc_t>(init)},
                                        op, o);
}
// Both single-pass strategies need the same caller storage.
template <class In, class Op = tally::plus>
std::size_t sp_inclusive_storage_bytes(std::int64_t n, const tally::options& = {}) {
  return tally::inclusive_scan_storage_bytes<In, Op>(n);
}

std::string name_of(scan_strategy s) {
  return s == scan_strategy::chained ? "chained" : "decoupled_lookback";
}

// ---- host oracle for any type and operator ---------------------------------------------
template <class T, class Op>
std::vector<T> host_scan(const std::vector<T>& in, bool exclusive, const T& init, Op op) {
  std::vector<T> out(in.size());
  if (in.empty()) return out;
  T running = exclusive ? init : in[0];
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (exclusive) {
      out[i] = running;
      running = op(running, in[i]);
    } else {
      if (i > 0) running = op(running, in[i]);
      out[i] = running;
    }
  }
  return out;
}


// ---- test types of every descriptor format ----------------------------------------------
// 8 bytes, not arithmetic: affine maps x -> a x + b under composition (16-byte descriptor,
// vector path since it is 8 bytes).
struct affine32 {
  std::uint32_t a, b;
};
bool operator==(const affine32& l, const affine32& r) { return l.a == r.a && l.b == r.b; }
std::ostream& operator<<(std::ostream& os, const affine32& f) { return os << "(" << f.a << "," << f.b << ")"; }
struct compose32 {
  TALLY_HOST_DEVICE affine32 operator()(const affine32& f, const affine32& g) const {
    return {g.a * f.a, g.a * f.b + g.b};
  }
};

// 16 bytes: affine maps of uint64 (four tagged quarters, single_pass/tile_state.cuh format 16; the
// pipelined kernel from 4 MiB, one value a 16-byte vector).
struct affine64 {
  std::uint64_t a, b;
};
bool operator==(const affine64& l, const affine64& r) { return l.a == r.a && l.b == r.b; }
std::ostream& operator<<(std::ostream& os, const affine64& f) { return os << "(" << f.a << "," << f.b << ")"; }
struct compose64 {
  TALLY_HOST_DEVICE affine64 operator()(const affine64& f, const affine64& g) const {
    return {g.a * f.a, g.a * f.b + g.b};
  }
};
// K floating-point values summed componentwise: not exact, so options.deterministic
// applies (two doubles: 16 bytes; three floats or doubles: 12 or 24, the wide tiles).
template <class F, int K>
struct floats {
  F x[K];
};
struct floats_plus {
  template <class F, int K>
  TALLY_HOST_DEVICE floats<F, K> operator()(const floats<F, K>& p, const floats<F, K>& q) const {
    floats<F, K> r;
    for (int k = 0; k < K; ++k) r.x[k] = p.x[k] + q.x[k];
    return r;
  }
};

// 12 bytes: an affine map and a count (four tagged quarters, scalar path).
struct affine_count {
  std::uint32_t a, b, count;
};
bool operator==(const affine_count& l, const affine_count& r) {
  return l.a == r.a && l.b == r.b && l.count == r.count;
}
std::ostream& operator<<(std::ostream& os, const affine_count& f) {
  return os << "(" << f.a << "," << f.b << "," << f.count << ")";
}
struct compose_count {
  TALLY_HOST_DEVICE affine_count operator()(const affine_count& f, const affine_count& g) const {
    return {g.a * f.a, g.a * f.b + g.b, f.count + g.count};
  }
};

// 64 bytes: 4x4 matrices of uint32 (wrap-around, exact) under the product (sixteen tagged
// quarters, format 16's widest).
struct mat4 {
  std::uint32_t m[16];
};
bool operator==(const mat4& l, const mat4& r) { return std::memcmp(l.m, r.m, sizeof l.m) == 0; }
std::ostream& operator<<(std::ostream& os, const mat4& x) { return os << "[" << x.m[0] << " ... " << x.m[15] << "]"; }
struct mat4_product {
  TALLY_HOST_DEVICE mat4 operator()(const mat4& a, const mat4& b) const {
    mat4 r;
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        std::uint32_t s = 0;
        for (int k = 0; k < 4; ++k) s += a.m[4 * i + k] * b.m[4 * k + j];
        r.m[4 * i + j] = s;
      }
    return r;
  }
};

// M affine maps of uint32 side by side, composed map by map, with an optional count (not
// commutative, exact): the wide values of the pipelined kernel (single_pass/pipelined.cuh,
// wide_tiles) in each access width: 20 and 36 bytes (4-byte accesses), 24 (8-byte), 32 and
// 48 (16-byte; 32 bytes with bank conflicts).
template <int M, bool Count>
struct affine_maps {
  std::uint32_t a[M], b[M];
  std::uint32_t count[Count ? 1 : 0];
};
template <int M, bool Count>
bool operator==(const affine_maps<M, Count>& l, const affine_maps<M, Count>& r) {
  return std::memcmp(&l, &r, sizeof l) == 0;
}
template <int M, bool Count>
std::ostream& operator<<(std::ostream& os, const affine_maps<M, Count>& f) {
  return os << "(" << f.a[0] << "," << f.b[0] << " ... " << f.a[M - 1] << "," << f.b[M - 1] << ")";
}
struct compose_maps {
  template <int M, bool Count>
  TALLY_HOST_DEVICE affine_maps<M, Count> operator()(const affine_maps<M, Count>& f,
                                                     const affine_maps<M, Count>& g) const {
    affine_maps<M, Count> r;
    for (int i = 0; i < M; ++i) {
      r.a[i] = g.a[i] * f.a[i];
      r.b[i] = g.a[i] * f.b[i] + g.b[i];
    }
    if constexpr (Count) r.count[0] = f.count[0] + g.count[0];
    return r;
  }
};
using maps20 = affine_maps<2, true>;
using maps24 = affine_maps<3, false>;
using maps32 = affine_maps<4, false>;
using maps36 = affine_maps<4, true>;
using maps48 = affine_maps<6, false>;
using maps72 = affine_maps<9, false>;  // past 64 bytes: the three arrays of format 32
static_assert(sizeof(maps20) == 20 && sizeof(maps24) == 24 && sizeof(maps32) == 32 && sizeof(maps36) == 36 &&
              sizeof(maps48) == 48 && sizeof(maps72) == 72);

// 2 bytes: int16 sums wrapping in uint16 (8-byte descriptor, scalar path).
struct plus_u16 {
  TALLY_HOST_DEVICE std::uint16_t operator()(std::uint16_t a, std::uint16_t b) const {
    return static_cast<std::uint16_t>(a + b);
  }
};

template <class T, class Op>
void check_type(const char* label, std::uint64_t salt) {
  SCOPED_TRACE(label);
  const std::int64_t tile = sp::tile_items<T>();
  const std::vector<std::int64_t> ns = {1, tile - 1, tile, tile + 1, 3 * tile + 17, 40 * tile + 3,
                                        quick() ? 300 * tile + 1 : 2000 * tile + 1};
  const std::int64_t max_n = ns.back();
  const auto h = bytes_random<T>(static_cast<std::size_t>(max_n), salt);
  const T init = bytes_random<T>(1, salt + 1)[0];
  const Op op{};
  const auto want_i = host_scan(h, false, init, op);
  const auto want_e = host_scan(h, true, init, op);
  device_buffer<T> in(h), out(static_cast<std::size_t>(max_n));
  for (auto s : single_pass_strategies) {
    for (const std::int64_t n : ns) {
      SCOPED_TRACE(name_of(s) + " n = " + std::to_string(n));
      out.poison();
      sp_inclusive_scan(in.data(), out.data(), n, op, with_strategy(s));
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      auto got = out.download(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i], want_i[i]) << "inclusive, element " << i;
      }
      out.poison();
      sp_exclusive_scan(in.data(), out.data(), n, init, op, with_strategy(s));
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      got = out.download(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[i], want_e[i]) << "exclusive, element " << i;
      }
    }
  }
}

TEST(SinglePass, EveryDescriptorFormat) {
  check_type<std::uint16_t, plus_u16>("uint16 plus (2 bytes)", 11);
  check_type<affine32, compose32>("affine32 compose (8-byte struct, non-commutative)", 12);
  check_type<affine_count, compose_count>("affine+count (12 bytes, non-commutative)", 13);
  check_type<affine64, compose64>("affine64 compose (16 bytes, non-commutative)", 15);
  check_type<maps20, compose_maps>("2 affine maps and a count (20 bytes, non-commutative)", 16);
  check_type<mat4, mat4_product>("mat4 product (64 bytes, non-commutative)", 14);
  check_type<maps72, compose_maps>("9 affine maps (72 bytes, non-commutative)", 17);
  static_assert(sp::descriptor_format<affine32> == 8 && sp::descriptor_format<affine_count> == 16 &&
                    sp::descriptor_format<affine64> == 16 && sp::descriptor_format<maps20> == 16 &&
                    sp::descriptor_format<mat4> == 16 && sp::descriptor_format<maps72> == 32,
                "the formats the cases above are meant to cover");
  static_assert(sp::tile_descriptors<affine_count>::quarters == 4 && sp::tile_descriptors<maps20>::quarters == 6 &&
                    sp::tile_descriptors<mat4>::quarters == 16,
                "format 16's counts of quarters the cases above cover");
}

// ---- alignment ----------------------------------------------------------------------------
template <class T>
void check_offsets() {
  // misaligned pointers keep the tile in registers, aligned ones stage it: the tile edges
  // and many tiles
  const std::int64_t tile = sp::tile_items<T>();
  const std::int64_t max_n = 37 * tile + 5;
  const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(max_n + 2), 21);
  device_buffer<T> in(h), out(static_cast<std::size_t>(max_n + 2));
  for (const std::int64_t n : {tile - 1, tile + 1, 2 * tile + 1, max_n}) {
    for (auto s : single_pass_strategies) {
      SCOPED_TRACE("n = " + std::to_string(n));
      for (int in_offset : {0, 1}) {
        for (int out_offset : {0, 1}) {
          SCOPED_TRACE(name_of(s) + " in + " + std::to_string(in_offset) + ", out + " +
                       std::to_string(out_offset));
          const std::vector<T> slice(h.begin() + in_offset, h.begin() + in_offset + n);
          const auto want = reference_scan(slice, false, T(0), tally::plus{});
          out.poison();
          sp_inclusive_scan(in.data() + in_offset, out.data() + out_offset, n, tally::plus{},
                                with_strategy(s));
          TALLY_TEST_CUDA(cudaDeviceSynchronize());
          const auto got = out.download(static_cast<std::size_t>(n + 2));
          ASSERT_TRUE(matches(std::vector<T>(got.begin() + out_offset, got.begin() + out_offset + n), want,
                              static_cast<std::size_t>(n)));
          // nothing written before or after
          if (out_offset == 1) ASSERT_TRUE(device_buffer<T>::is_poison(got[0]));
          ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n + out_offset)]));
        }
      }
      // in place at an odd address
      device_buffer<T> work(h);
      const std::vector<T> slice(h.begin() + 1, h.begin() + 1 + n);
      sp_exclusive_scan(work.data() + 1, work.data() + 1, n, T(3), tally::plus{}, with_strategy(s));
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = work.download();
      ASSERT_TRUE(matches(std::vector<T>(got.begin() + 1, got.begin() + 1 + n),
                          reference_scan(slice, true, T(3), tally::plus{}), static_cast<std::size_t>(n)))
          << name_of(s) << " in place, misaligned";
      ASSERT_EQ(got[0], h[0]);
    }
  }
}

TEST(SinglePass, MisalignedPointers) {
  {
    SCOPED_TRACE("int32");
    check_offsets<std::int32_t>();
  }
  {
    SCOPED_TRACE("float");
    check_offsets<float>();
  }
  {
    SCOPED_TRACE("double");
    check_offsets<double>();
  }
}

// ---- iterators and conversions --------------------------------------------------------------
struct square_mod {
  __host__ __device__ std::int64_t operator()(std::int64_t i) const { return (i * i) % 1000 - 500; }
};

TEST(SinglePass, IteratorInputAndConversions) {
  const std::int64_t n = quick() ? 100003 : 3000017;
  for (auto s : single_pass_strategies) {
    SCOPED_TRACE(name_of(s));
    // a map fused into the scan: x_i = (i^2 mod 1000) - 500, summed in int64
    auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), square_mod{});
    device_buffer<std::int64_t> out(static_cast<std::size_t>(n));
    out.poison();
    sp_inclusive_scan(in, out.data(), n, tally::plus{}, with_strategy(s));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    auto got = out.download();
    std::int64_t running = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      running += square_mod{}(i);
      ASSERT_EQ(got[static_cast<std::size_t>(i)], running) << "element " << i;
    }
    // int8 input, exclusive with an int64 init: the accumulator is int64 (P2322), the
    // output int64; a sum of int8 that overflows int32 would fail here
    std::vector<std::int8_t> h(static_cast<std::size_t>(n));
    auto g = rng(31);
    for (auto& x : h) x = static_cast<std::int8_t>(100 + g() % 28);
    device_buffer<std::int8_t> small(h);
    const std::int64_t init = std::int64_t{3} << 33;
    out.poison();
    sp_exclusive_scan(small.data(), out.data(), n, init, tally::plus{}, with_strategy(s));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    got = out.download();
    running = init;
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[static_cast<std::size_t>(i)], running) << "element " << i;
      running += h[static_cast<std::size_t>(i)];
    }
  }
}

// ---- the stall test ---------------------------------------------------------------------------
// Delays three chosen tiles and one chosen block (by blockIdx) by spinning on the clock
// for `cycles`, right after the block drew its ticket. The successors of a delayed tile
// must wait for it rather than read stale descriptors; delaying blockIdx 0 or the last
// blockIdx changes nothing else, since tile order is ticket order, not blockIdx order.
template <class Protocol, bool Exclusive, class T, class Op>
void run_with_stall(const T* in, T* out, std::int64_t n, const T& init, Op op, bool deterministic,
                    stall hook) {
  tally::options o;
  o.deterministic = deterministic;
  sp::scan<Protocol, Exclusive, T, sp::default_single_pass_tuning<T>()>(
      "stall test", "storage_bytes", in, out, n, tally::detail::make_seed<T, Exclusive>(init), op, o,
      hook);
}

template <class Protocol>
void check_stalls(const char* label) {
  SCOPED_TRACE(label);
  const std::int64_t tile = sp::tile_items<std::int32_t>();
  const std::int64_t tiles = quick() ? 64 : 2048;
  const std::int64_t n = tiles * tile - 7;
  const auto h = random_vector<std::int32_t, tally::plus>(static_cast<std::size_t>(n), 41);
  const auto want = reference_scan(h, false, 0, tally::plus{});
  const auto hm = random_vector<mat2, mat2_product>(static_cast<std::size_t>(n / 4), 42);
  const mat2 init = test_init<mat2, mat2_product>();
  const auto want_m = reference_scan(hm, true, init, mat2_product{});
  device_buffer<std::int32_t> in(h), out(static_cast<std::size_t>(n));
  device_buffer<mat2> in_m(hm), out_m(hm.size());
  for (const stall& s : stall_cases(tiles, static_cast<unsigned>(tiles - 1))) {  // the last block
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(describe(s) + (deterministic ? " deterministic" : ""));
      out.poison();
      run_with_stall<Protocol, false>(in.data(), out.data(), n, 0, tally::plus{}, deterministic, s);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(matches(out.download(), want, static_cast<std::size_t>(n)));
      out_m.poison();
      stall sm = s;  // the matrix scan has a quarter of the tiles of int32's
      run_with_stall<Protocol, true>(in_m.data(), out_m.data(), static_cast<std::int64_t>(hm.size()),
                                     init, mat2_product{}, deterministic, sm);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(matches(out_m.download(), want_m, hm.size()));
    }
  }
}

TEST(SinglePass, StallTest) {
  check_stalls<lookback_protocol>("decoupled look-back");
  check_stalls<chained_protocol>("chained");
}

// ---- determinism ------------------------------------------------------------------------------
// Floats (float or double) of random sign and magnitudes 2^-12 .. 2^12 (double: 2^-40 ..
// 2^40): every association rounds differently, so a look-back that combined in a
// timing-dependent order would show.
template <class T = float>
std::vector<T> mixed_floats(std::size_t n, std::uint64_t salt) {
  const int spread = sizeof(T) == 4 ? 12 : 40;
  auto g = rng(salt);
  std::vector<T> v(n);
  for (auto& x : v) {
    const double mag = std::ldexp(std::uniform_real_distribution<double>(1.0, 2.0)(g),
                                  std::uniform_int_distribution<int>(-spread, spread)(g));
    x = static_cast<T>((g() & 1) ? mag : -mag);
  }
  return v;
}

// A sum scan of in (exclusive: from 0.5) with options o, downloaded.
template <class T>
std::vector<T> float_sum_scan(const device_buffer<T>& in, device_buffer<T>& out, std::int64_t n,
                              bool exclusive, const tally::options& o) {
  out.poison();
  if (exclusive) {
    sp_exclusive_scan(in.data(), out.data(), n, T(0.5), tally::plus{}, o);
  } else {
    sp_inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
  }
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  return out.download();
}

// The largest error of a sum scan of h against a long double one, relative to the prefix
// of |x| (plus 1).
template <class T>
double worst_relative_error(const std::vector<T>& h, const std::vector<T>& got, bool exclusive) {
  long double running = exclusive ? 0.5L : 0.0L, scale = 0.0L, worst = 0.0L;
  for (std::size_t i = 0; i < h.size(); ++i) {
    if (!exclusive) running += h[i];
    scale += std::fabs(static_cast<long double>(h[i]));
    worst = std::max(worst, std::fabs(got[i] - running) / (scale + 1.0L));
    if (exclusive) running += h[i];
  }
  return static_cast<double>(worst);
}

TEST(SinglePass, DeterministicFloatBits) {
  const std::int64_t n = quick() ? (std::int64_t{1} << 20) + 3 : (std::int64_t{1} << 24) + 3;
  const auto h = mixed_floats(static_cast<std::size_t>(n), 51);
  device_buffer<float> in(h), out(static_cast<std::size_t>(n));
  for (bool exclusive : {false, true}) {
    SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
    const auto chained = float_sum_scan(in, out, n, exclusive, with_strategy(scan_strategy::chained));
    const int runs = quick() ? 2 : 5;
    for (int run = 0; run < runs; ++run) {
      const auto got =
          float_sum_scan(in, out, n, exclusive, with_strategy(scan_strategy::decoupled_lookback, true));
      // identical bits: compare as bytes (NaN-safe)
      ASSERT_EQ(std::memcmp(got.data(), chained.data(), got.size() * sizeof(float)), 0)
          << "run " << run << ": deterministic look-back differs from the chained scan's fold";
    }
    // the default (timing-dependent association) is still a correct scan
    const auto fast =
        float_sum_scan(in, out, n, exclusive, with_strategy(scan_strategy::decoupled_lookback, false));
    EXPECT_LT(worst_relative_error(h, fast, exclusive), 1e-4);
  }
}

// Doubles: a descriptor of two words, so the deterministic look-back holds the windows it
// passes (single_pass/decoupled_lookback.cuh) and folds them afterwards. The same bits as the chained
// scan in every run at sizes that run the tiles by block (more tiles than one window),
// the ticket kernels and the pipelined kernel.
TEST(SinglePass, DeterministicDoubleBits) {
  // 100 tiles by block; 1000 tiles, more than an sm_90 GPU (132 SMs) holds at once (3
  // blocks of the deterministic kernel per SM) and below the pipelined kernel's 32 MiB
  const std::int64_t tile = sp::tile_items<double>();
  std::vector<std::int64_t> ns = {100 * tile + 3, 1000 * tile - 5};
  if (!quick()) ns.push_back(tally::detail::pipelined::min_bytes / 8 + 7);
  for (const std::int64_t n : ns) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto h = mixed_floats<double>(static_cast<std::size_t>(n), 55);
    device_buffer<double> in(h), out(static_cast<std::size_t>(n));
    for (bool exclusive : {false, true}) {
      SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
      const auto chained =
          float_sum_scan(in, out, n, exclusive, with_strategy(scan_strategy::chained));
      for (int run = 0; run < (quick() ? 2 : 5); ++run) {
        const auto got = float_sum_scan(in, out, n, exclusive,
                                        with_strategy(scan_strategy::decoupled_lookback, true));
        ASSERT_EQ(std::memcmp(got.data(), chained.data(), got.size() * sizeof(double)), 0)
            << "run " << run << ": deterministic look-back differs from the chained scan's fold";
      }
      EXPECT_LT(worst_relative_error(h, chained, exclusive), 1e-12);
    }
  }
}

// The stall test of the ticket kernels in deterministic mode for doubles, with the
// library's protocol and with one that holds only two windows (64 tiles), so that tiles
// far behind a stalled one fill their held windows and wait at the oldest.
TEST(SinglePass, DeterministicDoubleStallTest) {
  using few_held = tally::detail::decoupled_lookback::basic_protocol<
      1, 4, tally::detail::decoupled_lookback::delays<1200, 600>, 256, 64>;
  const std::int64_t tiles = quick() ? 400 : 2048;
  const std::int64_t n = tiles * sp::tile_items<double>() - 7;
  const auto h = random_vector<double, tally::plus>(static_cast<std::size_t>(n), 57);
  const auto want = reference_scan(h, false, 0.0, tally::plus{});
  device_buffer<double> in(h), out(static_cast<std::size_t>(n));
  for (const stall& s : stall_cases(tiles, static_cast<unsigned>(tiles - 1))) {
    SCOPED_TRACE(describe(s));
    out.poison();
    run_with_stall<lookback_protocol, false>(in.data(), out.data(), n, 0.0, tally::plus{}, true, s);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out.download(), want, static_cast<std::size_t>(n))) << "the library's";
    out.poison();
    run_with_stall<few_held, false>(in.data(), out.data(), n, 0.0, tally::plus{}, true, s);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out.download(), want, static_cast<std::size_t>(n))) << "two held windows";
  }
}

// ---- the pipelined scan of large inputs (single_pass/pipelined.cuh) --------------------------------------
// The public scans take it only from pipelined::min_bytes of data on, so the size lists
// above never reach its tile edges; here it runs directly, at every edge (one tile, a
// partial last tile, more tiles than the device holds blocks), for both protocols, 4- and
// 8-byte values and a non-commutative 8-byte operator, inclusive and exclusive, and in
// place.
namespace pl = tally::detail::pipelined;

template <class Protocol, bool Exclusive, class T, class Op, class Hook = sp::no_stall>
void pipelined_scan(const T* in, T* out, std::int64_t n, const T& init, Op op,
                    const tally::options& o, Hook hook = {}) {
  pl::scan<Protocol, Exclusive, T>("pipelined test", "storage_bytes", in, out, n,
                                   tally::detail::make_seed<T, Exclusive>(init), op, o, hook);
}

template <class T, class Op>
void check_pipelined_tiles(const char* label, std::uint64_t salt, bool sweep) {
  SCOPED_TRACE(label);
  constexpr std::int64_t tile = pl::tile_items<T>();
  // 1400 tiles: more than the blocks an sm_90 GPU (132 SMs) holds at once (3 per SM), so
  // blocks take several tiles each and the ring wraps many times
  const std::int64_t top = 1400 * tile + 3;
  std::vector<std::int64_t> ns = {1, 2, 31, 32 * 4 + 1, tile - 1, tile, tile + 1, 2 * tile - 1,
                                  2 * tile + 1, 3 * tile + 17, 40 * tile + 3, top};
  if (sweep) {
    for (std::int64_t n = tile + 2; n < 2 * tile; n += quick() ? 37 : 1) ns.push_back(n);
  }
  std::vector<T> h;
  T init;
  if constexpr (std::is_arithmetic_v<T>) {
    h = random_vector<T, Op>(static_cast<std::size_t>(top), salt);
    init = test_init<T, Op>();
  } else {
    h = bytes_random<T>(static_cast<std::size_t>(top), salt);
    init = bytes_random<T>(1, salt + 1)[0];
  }
  const Op op{};
  const auto want_i = reference_scan(h, false, init, op);
  const auto want_e = reference_scan(h, true, init, op);
  device_buffer<T> in(h), out(static_cast<std::size_t>(top + 1));
  const tally::options o;
  for (const std::int64_t n : ns) {
    for (bool exclusive : {false, true}) {
      const auto& want = exclusive ? want_e : want_i;
      auto check = [&](auto protocol, const char* name) {
        using P = decltype(protocol);
        out.poison();
        if (exclusive) {
          pipelined_scan<P, true>(in.data(), out.data(), n, init, op, o);
        } else {
          pipelined_scan<P, false>(in.data(), out.data(), n, init, op, o);
        }
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        const auto got = out.download(static_cast<std::size_t>(n + 1));
        ASSERT_TRUE(matches(got, want, static_cast<std::size_t>(n)))
            << name << (exclusive ? " exclusive" : " inclusive") << ", n = " << n;
        ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)])) << "n = " << n;
      };
      check(pipelined_lookback{}, "look-back");
      if (n < 100 * tile) check(chained_protocol{}, "chained");  // one round trip per tile
    }
  }
  // in place
  device_buffer<T> work(h);
  pipelined_scan<pipelined_lookback, true>(work.data(), work.data(), top, init, op, o);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(matches(work.download(), want_e, static_cast<std::size_t>(top))) << "in place";
}

TEST(SinglePass, PipelinedTiles) {
  check_pipelined_tiles<std::int32_t, tally::plus>("int32 plus", 121, true);
  check_pipelined_tiles<std::int32_t, tally::maximum>("int32 maximum", 122, false);
  check_pipelined_tiles<std::int64_t, tally::plus>("int64 plus", 123, true);
  check_pipelined_tiles<std::uint64_t, tally::minimum>("uint64 minimum", 124, false);
  check_pipelined_tiles<affine32, compose32>("affine32 compose (non-commutative)", 125, true);
  check_pipelined_tiles<affine64, compose64>("affine64 compose (16 bytes, non-commutative)", 126, true);
}

// The wide tiles (values of 12 to 64 bytes but 16: a lane a run of consecutive values, the
// partial last tile loaded and stored by the warps' lanes together): every tile edge for
// 12 and 24 bytes, the other widths at the edges alone.
TEST(SinglePass, PipelinedWideTiles) {
  static_assert(pl::wide_v<affine_count> && pl::wide_v<maps20> && pl::wide_v<maps24> && pl::wide_v<maps32> &&
                    pl::wide_v<maps36> && pl::wide_v<maps48> && pl::wide_v<mat4> && !pl::wide_v<affine64>,
                "the widths the cases below are meant to cover");
  check_pipelined_tiles<affine_count, compose_count>("affine+count (12 bytes)", 127, true);
  check_pipelined_tiles<maps20, compose_maps>("2 maps + count (20 bytes)", 128, false);
  check_pipelined_tiles<maps24, compose_maps>("3 maps (24 bytes)", 129, true);
  check_pipelined_tiles<maps32, compose_maps>("4 maps (32 bytes)", 130, false);
  check_pipelined_tiles<maps36, compose_maps>("4 maps + count (36 bytes)", 131, false);
  check_pipelined_tiles<maps48, compose_maps>("6 maps (48 bytes)", 132, false);
  check_pipelined_tiles<mat4, mat4_product>("mat4 product (64 bytes)", 133, false);
}

// The stall test (above) for the pipelined kernel: its producer calls the hook right
// after drawing a tile's ticket, before the tile's copy starts.
TEST(SinglePass, PipelinedStallTest) {
  using T = std::int32_t;
  const std::int64_t tiles = quick() ? 300 : 2000;
  const std::int64_t n = tiles * pl::tile_items<T>() - 7;
  const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(n), 141);
  const auto want = reference_scan(h, false, 0, tally::plus{});
  const auto hd = random_vector<double, tally::plus>(static_cast<std::size_t>(n / 2), 142);
  const auto want_d = reference_scan(hd, true, 0.5, tally::plus{});
  device_buffer<T> in(h), out(static_cast<std::size_t>(n));
  device_buffer<double> in_d(hd), out_d(hd.size());
  const auto hw = bytes_random<affine64>(static_cast<std::size_t>(tiles * pl::tile_items<affine64>() - 5), 143);
  const auto want_w = reference_scan(hw, false, affine64{}, compose64{});
  device_buffer<affine64> in_w(hw), out_w(hw.size());
  for (const stall& s : stall_cases(tiles, 7u)) {
    for (bool deterministic : {false, true}) {
      SCOPED_TRACE(describe(s) + (deterministic ? " deterministic" : ""));
      tally::options o;
      o.deterministic = deterministic;
      for (auto protocol : {0, 1}) {
        out.poison();
        if (protocol == 0) {
          pipelined_scan<pipelined_lookback, false>(in.data(), out.data(), n, 0, tally::plus{}, o, s);
        } else {
          pipelined_scan<chained_protocol, false>(in.data(), out.data(), n, 0, tally::plus{}, o, s);
        }
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        ASSERT_TRUE(matches(out.download(), want, static_cast<std::size_t>(n))) << "protocol " << protocol;
      }
      out_d.poison();
      pipelined_scan<pipelined_lookback, true>(in_d.data(), out_d.data(),
                                               static_cast<std::int64_t>(hd.size()), 0.5,
                                               tally::plus{}, o, s);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(matches(out_d.download(), want_d, hd.size()));
      // 16-byte values (their four-quarter descriptors; not exact, so the deterministic
      // look-back holds their windows)
      out_w.poison();
      pipelined_scan<pipelined_lookback, false>(in_w.data(), out_w.data(), static_cast<std::int64_t>(hw.size()),
                                                affine64{}, compose64{}, o, s);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(matches(out_w.download(), want_w, hw.size())) << "affine64";
    }
  }
}

// The public scans at the size where they switch to the pipelined kernel, and determinism
// there: the deterministic look-back gives the chained scan's bits in every run (both run
// the pipelined kernel, whose tiles and association are the same).
TEST(SinglePass, PipelinedThroughThePublicScans) {
  const std::int64_t n = pl::min_bytes / 4 + 7;
  const auto h = mixed_floats(static_cast<std::size_t>(n), 131);
  device_buffer<float> in(h), out(static_cast<std::size_t>(n));
  for (bool exclusive : {false, true}) {
    SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
    const auto chained = float_sum_scan(in, out, n, exclusive, with_strategy(scan_strategy::chained));
    for (int run = 0; run < 2; ++run) {
      const auto got =
          float_sum_scan(in, out, n, exclusive, with_strategy(scan_strategy::decoupled_lookback, true));
      ASSERT_EQ(std::memcmp(got.data(), chained.data(), got.size() * sizeof(float)), 0) << "run " << run;
    }
    EXPECT_LT(worst_relative_error(h, chained, exclusive), 1e-4);
  }
  // int32 exactly, both strategies
  const auto hi = random_vector<std::int32_t, tally::plus>(static_cast<std::size_t>(n), 132);
  const auto want = reference_scan(hi, false, 0, tally::plus{});
  device_buffer<std::int32_t> ini(hi), outi(static_cast<std::size_t>(n));
  for (auto s : single_pass_strategies) {
    outi.poison();
    sp_inclusive_scan(ini.data(), outi.data(), n, tally::plus{}, with_strategy(s));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(outi.download(), want, static_cast<std::size_t>(n))) << name_of(s);
  }
}

// Values through the public scans from the size where they switch to the pipelined
// kernel (min_bytes_for): exactly for a non-commutative operator with both strategies.
template <class T, class Op>
void check_public_pipelined(const char* label, std::uint64_t salt, const T& init) {
  SCOPED_TRACE(label);
  const std::int64_t n = pl::min_bytes_for<T> / static_cast<std::int64_t>(sizeof(T)) + 7;
  const auto h = bytes_random<T>(static_cast<std::size_t>(n), salt);
  const auto want_i = reference_scan(h, false, init, Op{});
  const auto want_e = reference_scan(h, true, init, Op{});
  device_buffer<T> in(h), out(static_cast<std::size_t>(n + 1));
  for (auto s : single_pass_strategies) {
    out.poison();
    sp_inclusive_scan(in.data(), out.data(), n, Op{}, with_strategy(s));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out.download(), want_i, static_cast<std::size_t>(n))) << name_of(s) << " inclusive";
    out.poison();
    sp_exclusive_scan(in.data(), out.data(), n, init, Op{}, with_strategy(s));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = out.download();
    ASSERT_TRUE(matches(got, want_e, static_cast<std::size_t>(n))) << name_of(s) << " exclusive";
    ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)]));
  }
}

// Sums of K floating-point values a element from min_bytes_for on: the same bits in every
// run with options.deterministic, and the chained scan's bits (both run the pipelined
// kernel, whose tiles and association are the same); near the exact sums.
template <class F, int K>
void check_deterministic_public(std::uint64_t salt) {
  using V = floats<F, K>;
  const std::int64_t n = pl::min_bytes_for<V> / static_cast<std::int64_t>(sizeof(V)) + 7;
  std::vector<V> h(static_cast<std::size_t>(n));
  auto g = rng(salt);
  for (auto& v : h) {
    v.x[0] = static_cast<F>(std::ldexp(static_cast<double>(g() % 2001) - 1000, -7));  // exact sums
    for (int k = 1; k < K; ++k) v.x[k] = static_cast<F>(static_cast<double>(g() % 1000) * 0.1);
  }
  device_buffer<V> in(h), out(static_cast<std::size_t>(n));
  out.poison();
  sp_inclusive_scan(in.data(), out.data(), n, floats_plus{}, with_strategy(scan_strategy::chained));
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto chained = out.download();
  for (int run = 0; run < 2; ++run) {
    out.poison();
    sp_inclusive_scan(in.data(), out.data(), n, floats_plus{},
                          with_strategy(scan_strategy::decoupled_lookback, true));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = out.download();
    ASSERT_EQ(std::memcmp(got.data(), chained.data(), got.size() * sizeof(V)), 0) << "run " << run;
  }
  double exact = 0, rest = 0, worst = 0;
  for (std::size_t i = 0; i < h.size(); ++i) {
    exact += static_cast<double>(h[i].x[0]);
    rest += static_cast<double>(h[i].x[K - 1]);
    worst = std::max(worst, std::fabs(static_cast<double>(chained[i].x[0]) - exact));
    worst = std::max(worst, std::fabs(static_cast<double>(chained[i].x[K - 1]) - rest) / (1.0 + rest));
  }
  // (the first components' sums are exact: multiples of 2^-7 far below the mantissa's range)
  const double bound = std::is_same_v<F, float> ? 1e-2 : 1e-3;
  EXPECT_LT(worst, bound);
}

TEST(SinglePass, SixteenByteValuesThroughThePublicScans) {
  static_assert(pl::stages_v<affine64> && !pl::wide_v<affine64>, "16-byte values: plain_tiles' lane runs");
  check_public_pipelined<affine64, compose64>("affine64 compose", 151, affine64{3, 5});
  check_deterministic_public<double, 2>(152);
}

// Values of 12 to 64 bytes (the wide tiles) through the public scans, from 4 MiB.
TEST(SinglePass, WideValuesThroughThePublicScans) {
  check_public_pipelined<affine_count, compose_count>("affine+count (12 bytes)", 153, affine_count{3, 5, 1});
  check_public_pipelined<maps24, compose_maps>("3 maps (24 bytes)", 154, bytes_random<maps24>(1, 155)[0]);
  check_public_pipelined<mat4, mat4_product>("mat4 product (64 bytes)", 156, bytes_random<mat4>(1, 157)[0]);
  check_deterministic_public<float, 3>(158);
  check_deterministic_public<double, 3>(159);
}

// The descriptors of 9-64-byte values (single_pass/tile_state.cuh, format 16: 4 to 16 quarters, each
// the tag and 32 bits of the value). One thread stores an aggregate, an inclusive value, an
// aggregate overwritten by the inclusive value, an aggregate then cleared, and a torn
// descriptor (its last 16-byte word from another write); then reads them in their epoch
// and in the next (stale: invalid).
template <class T>
__global__ void quarter_descriptors_round_trip(sp::tile_descriptors<T> d, unsigned epoch, const T* stored,
                                               T* read, unsigned* statuses) {
  d.store(0, sp::make_tag(epoch, sp::status_aggregate), stored[0]);
  d.store(1, sp::make_tag(epoch, sp::status_inclusive), stored[1]);
  d.store(2, sp::make_tag(epoch, sp::status_aggregate), stored[0]);
  d.store(2, sp::make_tag(epoch, sp::status_inclusive), stored[1]);
  d.store(3, sp::make_tag(epoch, sp::status_aggregate), stored[0]);
  d.clear(3);
  d.store(4, sp::make_tag(epoch, sp::status_aggregate), stored[0]);
  const unsigned long long inclusive_tag = static_cast<unsigned long long>(sp::make_tag(epoch, sp::status_inclusive))
                                           << 32;
  sp::store_relaxed_16(d.words + 4 * d.stride + (d.quarters - 2), inclusive_tag | 1u, inclusive_tag | 2u);
  for (int t = 0; t < 5; ++t) {
    statuses[t] = d.load(t, epoch, read[t]);
    T stale{};
    statuses[5 + t] = d.load(t, epoch + 1, stale);
  }
}

template <class T>
void check_quarter_descriptors(const char* label, std::uint64_t salt) {
  SCOPED_TRACE(label);
  static_assert(sp::descriptor_format<T> == 16, "9-64-byte values take format 16");
  const std::int64_t capacity = 5;
  static_assert(sp::tile_descriptors<T>::bytes_per_tile == 128, "one descriptor a 128-byte line");
  device_buffer<unsigned char> memory(sp::state_bytes<T>(capacity));
  TALLY_TEST_CUDA(cudaMemset(memory.data(), 0x5A, sp::state_bytes<T>(capacity)));  // garbage
  const auto d = sp::tile_state<T>::at(memory.data(), capacity).descriptors;
  const std::vector<T> stored = bytes_random<T>(2, salt);
  device_buffer<T> in(stored), read(5);
  device_buffer<unsigned> statuses(10);
  const unsigned epoch = 54321;
  quarter_descriptors_round_trip<<<1, 1>>>(d, epoch, in.data(), read.data(), statuses.data());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto r = read.download();
  const auto s = statuses.download();
  EXPECT_EQ(s[0], sp::status_aggregate);
  EXPECT_EQ(r[0], stored[0]);
  EXPECT_EQ(s[1], sp::status_inclusive);
  EXPECT_EQ(r[1], stored[1]);
  EXPECT_EQ(s[2], sp::status_inclusive);
  EXPECT_EQ(r[2], stored[1]);
  EXPECT_EQ(s[3], sp::status_invalid);  // cleared
  EXPECT_EQ(s[4], sp::status_invalid);  // torn: two writes' quarters
  for (int t = 0; t < 5; ++t) EXPECT_EQ(s[5 + t], sp::status_invalid) << "tile " << t << " read in a later epoch";
}

TEST(SinglePass, QuarterDescriptors) {
  check_quarter_descriptors<affine64>("affine64 (16 bytes)", 161);
  check_quarter_descriptors<affine_count>("affine+count (12 bytes)", 162);
  check_quarter_descriptors<maps20>("2 affine maps and a count (20 bytes)", 163);
  check_quarter_descriptors<maps48>("6 affine maps (48 bytes)", 164);
  check_quarter_descriptors<mat4>("mat4 (64 bytes)", 165);
}

// ---- the tile state ---------------------------------------------------------------------------
// Many calls of changing sizes on one stream: each call reuses the descriptors of the
// previous ones; stale descriptors must read as invalid (epochs).
TEST(SinglePass, StateReusedAcrossCalls) {
  const std::int64_t tile = sp::tile_items<std::int32_t>();
  const std::int64_t max_n = 300 * tile;
  const auto h = random_vector<std::int32_t, tally::plus>(static_cast<std::size_t>(max_n), 61);
  const auto want = reference_scan(h, false, 0, tally::plus{});
  device_buffer<std::int32_t> in(h), out(static_cast<std::size_t>(max_n));
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  auto g = rng(62);
  for (int call = 0; call < (quick() ? 20 : 200); ++call) {
    const std::int64_t n = call % 3 == 0 ? max_n : std::uniform_int_distribution<std::int64_t>(1, max_n)(g);
    tally::options o;
    o.stream = stream;
    o.strategy = call % 5 == 4 ? scan_strategy::chained : scan_strategy::decoupled_lookback;
    o.deterministic = call % 2 == 1;
    out.poison();
    sp_inclusive_scan(in.data(), out.data(), n, tally::plus{}, o);
    TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
    ASSERT_TRUE(matches(out.download(static_cast<std::size_t>(n)), want, static_cast<std::size_t>(n)))
        << "call " << call << ", n = " << n;
  }
  // back to back without synchronising: the next call's tickets start at zero because
  // the previous call's last ticket reset the counter (stream order)
  std::vector<device_buffer<std::int32_t>*> outs;
  for (int i = 0; i < 8; ++i) outs.push_back(new device_buffer<std::int32_t>(static_cast<std::size_t>(max_n)));
  for (int i = 0; i < 8; ++i) {
    tally::options o;
    o.stream = stream;
    outs[i]->poison();
    sp_inclusive_scan(in.data(), outs[i]->data(), max_n - i * tile, tally::plus{}, o);
  }
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  for (int i = 0; i < 8; ++i) {
    const auto n = static_cast<std::size_t>(max_n - i * tile);
    EXPECT_TRUE(matches(outs[i]->download(n), want, n)) << "back-to-back call " << i;
    delete outs[i];
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// Two streams at once: each has its own state.
TEST(SinglePass, ConcurrentStreams) {
  const std::int64_t n = quick() ? 1 << 20 : 1 << 25;
  const auto ha = random_vector<std::int32_t, tally::plus>(static_cast<std::size_t>(n), 71);
  const auto hb = random_vector<std::int32_t, tally::plus>(static_cast<std::size_t>(n), 72);
  device_buffer<std::int32_t> a(ha), b(hb), out_a(static_cast<std::size_t>(n)), out_b(static_cast<std::size_t>(n));
  cudaStream_t sa, sb;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  tally::options oa, ob;
  oa.stream = sa;
  ob.stream = sb;
  for (int round = 0; round < 3; ++round) {
    out_a.poison();
    out_b.poison();
    for (int k = 0; k < 4; ++k) {
      sp_inclusive_scan(a.data(), out_a.data(), n, tally::plus{}, oa);
      sp_inclusive_scan(b.data(), out_b.data(), n, tally::plus{}, ob);
    }
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out_a.download(), reference_scan(ha, false, 0, tally::plus{}), static_cast<std::size_t>(n)));
    ASSERT_TRUE(matches(out_b.download(), reference_scan(hb, false, 0, tally::plus{}), static_cast<std::size_t>(n)));
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(sa));
  TALLY_TEST_CUDA(cudaStreamDestroy(sb));
}

// Captured into a CUDA graph, with and without caller storage, and replayed on other
// input: correct every time.
TEST(SinglePass, GraphCaptureAndReplay) {
  const std::int64_t n = 50 * sp::tile_items<std::int32_t>() + 9;
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  device_buffer<std::int32_t> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
  for (bool caller_storage : {true, false}) {
    SCOPED_TRACE(caller_storage ? "caller storage" : "no caller storage");
    tally::options o;
    o.stream = stream;
    const std::size_t bytes = sp_inclusive_storage_bytes<const std::int32_t*>(n, o);
    ASSERT_GT(bytes, 0u);
    device_buffer<unsigned char> storage(bytes);
    if (caller_storage) o.storage = {storage.data(), bytes};
    std::vector<std::int32_t> h;
    replay_captured(
        stream, cudaStreamCaptureModeThreadLocal,
        [&] { sp_inclusive_scan(in.data(), out.data(), n, tally::plus{}, o); },
        [&](int replay) {
          h = random_vector<std::int32_t, tally::plus>(static_cast<std::size_t>(n), 80 + replay);
          in.upload(h);
          out.poison();
        },
        [&](int replay) {
          ASSERT_TRUE(matches(out.download(), reference_scan(h, false, 0, tally::plus{}),
                              static_cast<std::size_t>(n)))
              << "replay " << replay;
        });
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// The clearing epoch: a call whose epoch is 2^29 - 1 (mod 2^29) zeroes every descriptor
// past its own tiles, and still scans correctly; the header moves to the next epoch with
// no tickets drawn. `run(in, out, n, state)` runs one int32 inclusive sum of `tiles` tiles
// of `tile` items with a kernel under test.
template <class Run>
void check_clearing(std::int64_t tiles, std::int64_t tile, std::uint64_t salt, Run run) {
  using T = std::int32_t;
  const std::int64_t capacity = 4096, n = tiles * tile - 3;
  const std::size_t bytes = sp::state_bytes<T>(capacity);
  device_buffer<unsigned char> state_memory(bytes);
  TALLY_TEST_CUDA(cudaMemset(state_memory.data(), 0x5A, bytes));  // stale garbage everywhere
  const unsigned epoch = sp::clearing_period_mask;                   // 2^29 - 1
  const unsigned long long header = static_cast<unsigned long long>(epoch) << 32;
  TALLY_TEST_CUDA(cudaMemcpy(state_memory.data(), &header, sizeof header, cudaMemcpyHostToDevice));
  const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(n), salt);
  device_buffer<T> in(h), out(static_cast<std::size_t>(n));
  out.poison();
  run(static_cast<const T*>(in.data()), out.data(), n, sp::tile_state<T>::at(state_memory.data(), capacity));
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(matches(out.download(), reference_scan(h, false, 0, tally::plus{}), static_cast<std::size_t>(n)));
  unsigned long long header_after = 0;
  TALLY_TEST_CUDA(cudaMemcpy(&header_after, state_memory.data(), sizeof header_after, cudaMemcpyDeviceToHost));
  EXPECT_EQ(header_after, static_cast<unsigned long long>(epoch + 1) << 32);
  // tile t's descriptor is the word t * stride (single_pass/tile_state.cuh); the words between are unused
  const std::int64_t stride = sp::tile_descriptors<T>::stride;
  std::vector<unsigned long long> words(static_cast<std::size_t>(capacity * stride));
  TALLY_TEST_CUDA(cudaMemcpy(words.data(), state_memory.data() + tally::detail::storage_alignment,
                             words.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  for (std::int64_t t = 0; t < capacity; ++t) {
    const unsigned long long word = words[static_cast<std::size_t>(t * stride)];
    const auto tag = static_cast<unsigned>(word >> 32);
    if (t < tiles) {
      ASSERT_EQ(sp::status_of(tag, epoch), sp::status_inclusive) << "descriptor " << t;
    } else {
      ASSERT_EQ(word, 0ull) << "descriptor " << t << " not cleared";
    }
  }
}

// The descriptors of (head, 8-byte value) pairs (single_pass/tile_state.cuh, format 9: the head in the
// status). One thread stores an aggregate without a head, one with a head, an inclusive
// value, and clears a fourth; then reads all four in the epoch they were written in, and
// in the next (stale: invalid).
template <class P>
__global__ void pair_descriptors_round_trip(sp::tile_descriptors<P> d, unsigned epoch, const P* stored,
                                            P* read, unsigned* statuses) {
  d.store(0, sp::make_tag(epoch, sp::status_aggregate), stored[0]);
  d.store(1, sp::make_tag(epoch, sp::status_aggregate), stored[1]);
  d.store(2, sp::make_tag(epoch, sp::status_inclusive), stored[2]);
  d.store(3, sp::make_tag(epoch, sp::status_aggregate), stored[0]);
  d.clear(3);
  for (int t = 0; t < 4; ++t) {
    statuses[t] = d.load(t, epoch, read[t]);
    P stale{};
    statuses[4 + t] = d.load(t, epoch + 1, stale);
  }
}

template <class T>
void check_pair_descriptors(T a, T b, T c) {
  using P = tally::flagged<T>;
  static_assert(sp::descriptor_format<P> == 9, "pairs of 8-byte values take format 9");
  const std::int64_t capacity = 4;
  device_buffer<unsigned char> memory(sp::state_bytes<P>(capacity));
  TALLY_TEST_CUDA(cudaMemset(memory.data(), 0x5A, sp::state_bytes<P>(capacity)));  // garbage
  const auto d = sp::tile_state<P>::at(memory.data(), capacity).descriptors;
  const std::vector<P> stored = {P{false, a}, P{true, b}, P{true, c}};
  device_buffer<P> in(stored), read(4);
  device_buffer<unsigned> statuses(8);
  const unsigned epoch = 12345;
  pair_descriptors_round_trip<<<1, 1>>>(d, epoch, in.data(), read.data(), statuses.data());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto r = read.download();
  const auto s = statuses.download();
  EXPECT_EQ(s[0], sp::status_aggregate);
  EXPECT_FALSE(r[0].head);
  EXPECT_EQ(r[0].value, a);
  EXPECT_EQ(s[1], sp::status_aggregate);
  EXPECT_TRUE(r[1].head);
  EXPECT_EQ(r[1].value, b);
  EXPECT_EQ(s[2], sp::status_inclusive);
  EXPECT_TRUE(r[2].head);
  EXPECT_EQ(r[2].value, c);
  EXPECT_EQ(s[3], sp::status_invalid);  // cleared
  for (int t = 0; t < 4; ++t) EXPECT_EQ(s[4 + t], sp::status_invalid) << "tile " << t << " read in a later epoch";
}

TEST(SinglePass, PairDescriptorsCarryTheHeadInTheStatus) {
  check_pair_descriptors<double>(-1.5, 2.0e300, 3.25);
  check_pair_descriptors<std::int64_t>(-(std::int64_t{1} << 62), 7, std::int64_t{1} << 40);
}

// For the one-block-per-tile kernel with tiles of tuning Tune (ByBlock: the small-n path's).
template <sp::single_pass_tuning Tune, bool ByBlock>
void check_clearing_epoch(std::int64_t tiles, std::uint64_t salt) {
  using T = std::int32_t;
  check_clearing(tiles, Tune.tile_items(), salt,
                 [&](const T* in, T* out, std::int64_t n, sp::tile_state<T> state) {
                   sp::launch<lookback_protocol, Tune, false, ByBlock>(
                       "clearing test", in, out, n, tiles, tally::detail::seed_value<T, false>{},
                       tally::plus{}, state, false, sp::no_stall{}, sp::one_line{}, nullptr);
                 });
}

TEST(SinglePass, ClearingEpochZeroesStaleDescriptors) {
  check_clearing_epoch<sp::default_single_pass_tuning<std::int32_t>(), false>(100, 91);
}

// The same for the pipelined kernel (its producers clear, one share per block), with
// more tiles than the device holds blocks.
TEST(SinglePass, ClearingEpochZeroesStaleDescriptorsPipelined) {
  using T = std::int32_t;
  const std::int64_t tiles = 1000;
  check_clearing(tiles, pl::tile_items<T>(), 92,
                 [&](const T* in, T* out, std::int64_t n, sp::tile_state<T> state) {
                   constexpr auto tune = pl::default_tuning;
                   using program = pl::plain_tiles<false, T, tally::plus, tune.compute_threads,
                                                   tune.rows, tune.stages>;
                   pl::launch<pipelined_lookback, false>(
                       "clearing test",
                       program{in, out, n, tally::detail::seed_value<T, false>{}, tally::plus{}},
                       tiles, state, sp::no_stall{}, nullptr);
                 });
}

// ---- the small-n path ----------------------------------------------------------------------------
// 16-byte aligned pointers to 4- and 8-byte values and n of at most small_path_max_tiles
// smaller tiles: the look-back runs the smaller tiles with tile = blockIdx.x, in a
// cooperative launch (single_pass/tile_pipeline.cuh, "The small-n path").
template <class T>
constexpr sp::single_pass_tuning small_tune = sp::small_single_pass_tuning<T>();
template <class T>
constexpr std::int64_t small_tile = small_tune<T>.tile_items();
template <class T>
constexpr std::int64_t small_max = sp::small_path_max_tiles * small_tile<T>;

// The path is taken where it should be, and only there.
TEST(SinglePass, SmallPathTakesAlignedSmallScans) {
  device_buffer<std::int32_t> buf(static_cast<std::size_t>(small_max<std::int32_t> + 8));
  std::int32_t* p = buf.data();
  const std::int32_t* in = p;
  const int blocks = tally::detail::co_resident_blocks("test");
  ASSERT_GT(blocks, 0) << "this GPU cannot launch cooperatively";
  EXPECT_TRUE(sp::small_path_takes<std::int32_t>(in, p, 1, tally::options{}, "test"));
  EXPECT_TRUE(sp::small_path_takes<std::int32_t>(in, p, small_tile<std::int32_t> + 1, tally::options{}, "test"));
  EXPECT_EQ(sp::small_path_takes<std::int32_t>(in, p, small_max<std::int32_t>, tally::options{}, "test"),
            blocks >= sp::small_path_max_tiles);
  EXPECT_FALSE(sp::small_path_takes<std::int32_t>(in, p, small_max<std::int32_t> + 1, tally::options{}, "test"));
  EXPECT_FALSE(sp::small_path_takes<std::int32_t>(in + 1, p, 5000, tally::options{}, "test"));  // misaligned input
  EXPECT_FALSE(sp::small_path_takes<std::int32_t>(in, p + 1, 5000, tally::options{}, "test"));  // misaligned output
  EXPECT_FALSE(sp::small_path_takes<std::int64_t>(in, p, 5000, tally::options{}, "test"));      // a converting input
  auto it = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), square_mod{});
  EXPECT_FALSE(sp::small_path_takes<std::int64_t>(it, reinterpret_cast<std::int64_t*>(p), 5000, tally::options{}, "test"));
  // With caller storage, n within one default tile stays there (no state to zero);
  // beyond it, the small tiles are taken with caller storage too.
  constexpr std::int64_t large_tile = sp::tile_items<std::int32_t>();
  tally::options with_storage;
  with_storage.storage = {buf.data(), 16};
  EXPECT_FALSE(sp::small_path_takes<std::int32_t>(in, p, 5000, with_storage, "test"));
  EXPECT_FALSE(sp::small_path_takes<std::int32_t>(in, p, large_tile, with_storage, "test"));
  EXPECT_TRUE(sp::small_path_takes<std::int32_t>(in, p, 1000, with_storage, "test"));
  EXPECT_TRUE(sp::small_path_takes<std::int32_t>(in, p, large_tile + 1, with_storage, "test"));
  EXPECT_EQ(sp_inclusive_storage_bytes<const std::int32_t*>(5000), 0u);
  // the storage query covers the smaller tiles: the largest n of the path is 16 default
  // tiles but 64 small ones (a few tiles round up to the same bytes)
  constexpr std::int64_t top = small_max<std::int32_t>;
  const std::size_t small_bytes = sp::storage_bytes<std::int32_t, small_tune<std::int32_t>>(top);
  EXPECT_EQ(sp_inclusive_storage_bytes<const std::int32_t*>(top), small_bytes);
  EXPECT_GT(small_bytes, sp::storage_bytes<std::int32_t>(top));
  const std::size_t small_9000 = sp::storage_bytes<std::int32_t, small_tune<std::int32_t>>(9000);
  EXPECT_GE(sp_inclusive_storage_bytes<const std::int32_t*>(9000), small_9000);
}

// Every size class of the path against the oracle: one tile, its edges, many tiles, the
// largest n it takes and the first it does not; for int32 also every size from one tile
// to two; inclusive, exclusive and in place.
template <class T, class Op>
void check_small_sizes(const char* label, std::uint64_t salt, bool sweep) {
  SCOPED_TRACE(label);
  constexpr std::int64_t tile = small_tile<T>;
  constexpr std::int64_t max_n = small_max<T>;
  std::vector<std::int64_t> ns = {1,        2,           tile - 1,     tile,      tile + 1,
                                  2 * tile + 1, 3 * tile + 17, 17 * tile, max_n - 1, max_n,
                                  max_n + 1};
  if (sweep) {
    for (std::int64_t n = tile + 2; n < 2 * tile; n += quick() ? 37 : 1) ns.push_back(n);
  }
  const std::int64_t top = max_n + 1;
  const auto h = random_vector<T, Op>(static_cast<std::size_t>(top), salt);
  const T init = test_init<T, Op>();
  const Op op{};
  const auto want_i = reference_scan(h, false, init, op);
  const auto want_e = reference_scan(h, true, init, op);
  device_buffer<T> in(h), out(static_cast<std::size_t>(top));
  for (const std::int64_t n : ns) {
    const auto count = static_cast<std::size_t>(n < top ? n + 1 : n);
    out.poison();
    sp_inclusive_scan(in.data(), out.data(), n, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    auto got = out.download(count);
    ASSERT_TRUE(matches(got, want_i, static_cast<std::size_t>(n))) << "inclusive, n = " << n;
    if (n < top) ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)])) << "n = " << n;
    out.poison();
    sp_exclusive_scan(in.data(), out.data(), n, init, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    got = out.download(count);
    ASSERT_TRUE(matches(got, want_e, static_cast<std::size_t>(n))) << "exclusive, n = " << n;
    if (n < top) ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)])) << "n = " << n;
  }
  device_buffer<T> work(h);
  sp_inclusive_scan(work.data(), work.data(), max_n, op);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(matches(work.download(static_cast<std::size_t>(max_n)), want_i, static_cast<std::size_t>(max_n)))
      << "in place";
}

TEST(SinglePass, SmallPathSizes) {
  check_small_sizes<std::int32_t, tally::plus>("int32 plus", 101, true);
  check_small_sizes<std::int32_t, tally::maximum>("int32 maximum", 102, false);
  check_small_sizes<float, tally::plus>("float plus", 103, false);
  check_small_sizes<std::int64_t, tally::plus>("int64 plus", 104, true);
  check_small_sizes<double, tally::plus>("double plus", 105, false);
  check_small_sizes<std::uint64_t, tally::maximum>("uint64 maximum", 106, false);
}

// ---- the one-block scan -------------------------------------------------------------------------
// 16-byte aligned pointers to 4- and 8-byte values and n of at most 1024 16-byte vectors:
// one block of 256, 512 or 1024 threads, a vector each, no state (single_pass/one_block.cuh).
namespace ob = tally::detail::one_block;

TEST(SinglePass, OneBlockTakesAlignedSmallScans) {
  device_buffer<std::int32_t> buf(8192);
  std::int32_t* p = buf.data();
  const std::int32_t* in = p;
  EXPECT_TRUE(ob::takes<std::int32_t>(in, p, 1));
  EXPECT_TRUE(ob::takes<std::int32_t>(in, p, 4096));
  EXPECT_FALSE(ob::takes<std::int32_t>(in, p, 4097));
  EXPECT_FALSE(ob::takes<std::int32_t>(in + 1, p, 100));  // misaligned input
  EXPECT_FALSE(ob::takes<std::int32_t>(in, p + 1, 100));  // misaligned output
  EXPECT_FALSE(ob::takes<std::int64_t>(in, p, 100));      // a converting input
  auto* q = reinterpret_cast<std::int64_t*>(p);
  EXPECT_TRUE(ob::takes<std::int64_t>(static_cast<const std::int64_t*>(q), q, 2048));
  EXPECT_FALSE(ob::takes<std::int64_t>(static_cast<const std::int64_t*>(q), q, 2049));
  auto it = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0), square_mod{});
  EXPECT_FALSE(ob::takes<std::int64_t>(it, q, 100));
}

// Each block size and its edges (256, 512 and 1024 threads of one vector each), partial last
// vectors and threads past the end, against the oracle, exactly (random bytes: wrapping
// sums, maxima, and a non-commutative 8-byte operator); inclusive, exclusive with init, in
// place; through the public scans, which take the one-block scan for all these n.
template <class T, class Op>
void check_one_block(const char* label, std::uint64_t salt) {
  SCOPED_TRACE(label);
  constexpr std::int64_t v = 16 / static_cast<std::int64_t>(sizeof(T));
  constexpr std::int64_t top = 1024 * v;
  std::vector<std::int64_t> ns = {1, 2, v - 1, v, v + 1, 31, 32, 33};
  for (const std::int64_t threads : {std::int64_t{256}, std::int64_t{512}, std::int64_t{1024}}) {
    for (const std::int64_t d : std::initializer_list<std::int64_t>{-v - 1, -v + 1, -1, 0, 1, v + 1}) {
      const std::int64_t n = threads * v + d;
      if (n >= 1 && n <= top + 1) ns.push_back(n);
    }
  }
  const auto h = bytes_random<T>(static_cast<std::size_t>(top + 1), salt);
  const T init = bytes_random<T>(1, salt + 1)[0];
  const Op op{};
  const auto want_i = host_scan(h, false, init, op);
  const auto want_e = host_scan(h, true, init, op);
  device_buffer<T> in(h), out(static_cast<std::size_t>(top + 2));
  for (const std::int64_t n : ns) {
    SCOPED_TRACE("n = " + std::to_string(n) + (ob::takes<T>(static_cast<const T*>(in.data()), out.data(), n)
                                                   ? " (one block)"
                                                   : " (past the one-block scan)"));
    for (const bool exclusive : {false, true}) {
      out.poison();
      if (exclusive) {
        sp_exclusive_scan(in.data(), out.data(), n, init, op);
      } else {
        sp_inclusive_scan(in.data(), out.data(), n, op);
      }
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const auto got = out.download(static_cast<std::size_t>(n + 1));
      const auto& want = exclusive ? want_e : want_i;
      for (std::int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(got[static_cast<std::size_t>(i)], want[static_cast<std::size_t>(i)])
            << (exclusive ? "exclusive" : "inclusive") << ", element " << i;
      }
      ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)])) << "written past n";
    }
  }
  for (const std::int64_t n : std::initializer_list<std::int64_t>{top - 3, top}) {
    device_buffer<T> work(h);
    sp_inclusive_scan(work.data(), work.data(), n, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = work.download(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[static_cast<std::size_t>(i)], want_i[static_cast<std::size_t>(i)])
          << "in place, n = " << n << ", element " << i;
    }
  }
}

TEST(SinglePass, OneBlockSizes) {
  check_one_block<std::uint32_t, tally::plus>("uint32 plus", 141);
  check_one_block<std::uint32_t, tally::maximum>("uint32 maximum", 142);
  check_one_block<std::uint64_t, tally::plus>("uint64 plus", 143);
  check_one_block<affine32, compose32>("affine32 compose (8 bytes, non-commutative)", 144);
}

// Floats on the one-block scan: within rounding of a double-precision scan, and the same
// bits in every run (its association is fixed by n), with and without
// options.deterministic.
TEST(SinglePass, OneBlockFloatBits) {
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{2045}, std::int64_t{4096}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto h = mixed_floats(static_cast<std::size_t>(n), 151);
    device_buffer<float> in(h), out(static_cast<std::size_t>(n));
    for (const bool exclusive : {false, true}) {
      SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
      const auto first = float_sum_scan(in, out, n, exclusive, tally::options{});
      EXPECT_LT(worst_relative_error(h, first, exclusive), 1e-5);
      for (int run = 0; run < 3; ++run) {
        const auto got = float_sum_scan(in, out, n, exclusive,
                                        with_strategy(scan_strategy::decoupled_lookback, run % 2 == 0));
        ASSERT_EQ(std::memcmp(got.data(), first.data(), got.size() * sizeof(float)), 0) << "run " << run;
      }
    }
  }
}

// options.deterministic on the path: the same bits in every run, and the same bits as the
// chained scan with the same tiles in the same (by-block) kernel: the same left fold of
// tile aggregates and the same association within a tile (a staged kernel of the same
// tiles associates within a warp differently, so it is not the reference here).
TEST(SinglePass, SmallPathDeterministicFloatBits) {
  for (const std::int64_t n : {40 * small_tile<float> + 5, small_max<float>}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto h = mixed_floats(static_cast<std::size_t>(n), 111);
    device_buffer<float> in(h), out(static_cast<std::size_t>(n));
    for (bool exclusive : {false, true}) {
      SCOPED_TRACE(exclusive ? "exclusive" : "inclusive");
      out.poison();
      tally::options o;
      if (exclusive) {
        sp::scan<chained_protocol, true, float, small_tune<float>, true>(
            "test", "storage_bytes", static_cast<const float*>(in.data()), out.data(), n,
            tally::detail::make_seed<float, true>(0.5f), tally::plus{}, o);
      } else {
        sp::scan<chained_protocol, false, float, small_tune<float>, true>(
            "test", "storage_bytes", static_cast<const float*>(in.data()), out.data(), n,
            tally::detail::seed_value<float, false>{}, tally::plus{}, o);
      }
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      const auto chained = out.download();
      for (int run = 0; run < (quick() ? 3 : 10); ++run) {
        out.poison();
        const tally::options d = with_strategy(scan_strategy::decoupled_lookback, true);
        if (exclusive) {
          sp_exclusive_scan(in.data(), out.data(), n, 0.5f, tally::plus{}, d);
        } else {
          sp_inclusive_scan(in.data(), out.data(), n, tally::plus{}, d);
        }
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        const auto got = out.download();
        ASSERT_EQ(std::memcmp(got.data(), chained.data(), got.size() * sizeof(float)), 0)
            << "run " << run << ": the deterministic small path differs from the chained fold";
      }
    }
  }
}

// Caller storage whose every 8-byte word reads as an inclusive descriptor of the epoch
// that the by-block kernel uses on a state that holds anything (single_pass/tile_state.cuh,
// unzeroed_state_epoch), with value bits 0x3f800001: a kernel that read a descriptor it
// had not cleared would take it for a finished predecessor. In the 4-byte format every
// descriptor word is such a word; in the 8-byte format both halves are, with equal tags.
constexpr unsigned long long fake_descriptor_word =
    (static_cast<unsigned long long>(sp::make_tag(sp::unzeroed_state_epoch, sp::status_inclusive)) << 32) |
    0x3f800001ull;

__global__ void fill_words(unsigned long long* words, std::size_t count, unsigned long long value) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < count;
       i += std::size_t{gridDim.x} * blockDim.x) {
    words[i] = value;
  }
}

void fill_fake_descriptors(device_buffer<unsigned char>& storage) {
  fill_words<<<64, 256>>>(reinterpret_cast<unsigned long long*>(storage.data()), storage.size() / 8,
                          fake_descriptor_word);
  TALLY_TEST_CUDA(cudaGetLastError());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
}

// The stall test on a kernel that runs its tiles by block (tile = blockIdx.x; tiles of
// tuning Tune, exclusive, both modes): delayed blocks make their successors wait; with
// every block resident (cooperative launch) nothing hangs. For the small-n path and (below)
// the default tiles by block, one line or (tiles_per_line > 0: the batched scans' lines of
// whole tiles, single_pass/tile_pipeline.cuh "Lines") lines of tiles_per_line tiles, each scanned
// from init afresh, with the first and the last tile of a line delayed too.
// fake_storage: in caller storage filled with fake descriptors before every run
// (fill_fake_descriptors), which the kernel clears itself: a block delayed before it
// clears its descriptor (tile 0 below) shows whether the others wait for the clearing.
template <class T, sp::single_pass_tuning Tune>
void check_by_block_stalls(const char* label, std::int64_t tiles, std::uint64_t salt,
                           std::int64_t tiles_per_line = 0, bool fake_storage = false) {
  SCOPED_TRACE(label);
  const bool lines = tiles_per_line > 0;
  const std::int64_t n = lines ? tiles * Tune.tile_items() : tiles * Tune.tile_items() - 7;
  const std::int64_t len = lines ? tiles_per_line * Tune.tile_items() : n;
  const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(n), salt);
  const T init = test_init<T, tally::plus>();
  expected<T, tally::plus> want;
  for (std::int64_t first = 0; first < n; first += len) {
    const auto line = reference_scan(std::vector<T>(h.begin() + first, h.begin() + first + len), true,
                                     init, tally::plus{});
    want.values.insert(want.values.end(), line.values.begin(), line.values.end());
    want.scale.insert(want.scale.end(), line.scale.begin(), line.scale.end());
  }
  device_buffer<T> in(h), out(static_cast<std::size_t>(n));
  device_buffer<unsigned char> storage(fake_storage ? sp::storage_bytes<T, Tune>(n) : 0);
  std::vector<stall> stalls = stall_cases(tiles, static_cast<unsigned>(tiles - 1));
  if (lines) {
    stalls.push_back({tiles_per_line, 2 * tiles_per_line - 1, tiles_per_line + 1, ~0u, stalls[0].cycles});
  }
  for (const stall& s : stalls) {
    for (bool deterministic : {false, true}) {
      out.poison();
      tally::options o;
      o.deterministic = deterministic;
      if (fake_storage) {
        fill_fake_descriptors(storage);
        o.storage = {storage.data(), storage.size()};
      }
      const auto run = [&](auto lines_of) {
        sp::scan<lookback_protocol, true, T, Tune, true>(
            "stall test", "storage_bytes", static_cast<const T*>(in.data()), out.data(), n,
            tally::detail::make_seed<T, true>(init), tally::plus{}, o, s, 0, lines_of);
      };
      if (lines) {
        run(sp::tile_lines{static_cast<unsigned>(tiles_per_line)});
      } else {
        run(sp::one_line{});
      }
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(matches(out.download(), want, static_cast<std::size_t>(n)))
          << describe(s) << (deterministic ? " deterministic" : "");
    }
  }
}

TEST(SinglePass, SmallPathStallTest) {
  const std::int64_t tiles = sp::small_path_max_tiles;
  if (tally::detail::co_resident_blocks("test") < tiles) GTEST_SKIP() << "fewer SMs than tiles";
  check_by_block_stalls<std::int32_t, sp::small_single_pass_tuning<std::int32_t>()>("int32", tiles, 121);
  check_by_block_stalls<double, sp::small_single_pass_tuning<double>()>(
      "double (the deterministic kernel too)", tiles, 121);
}

// The path shares the stream's tile state with the default tiles: back-to-back calls of
// both kinds without synchronising, caller storage of exactly the queried size (filled
// with garbage), and graph capture with and without caller storage.
TEST(SinglePass, SmallPathStateStorageAndGraphs) {
  using T = std::int32_t;
  const std::int64_t big = std::int64_t{1} << 20;
  const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(big), 131);
  const auto want = reference_scan(h, false, 0, tally::plus{});
  device_buffer<T> in(h);
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  {
    SCOPED_TRACE("back to back");
    const std::int64_t ns[] = {small_max<T>, 5 * small_tile<T> + 3, big, 2 * small_tile<T> + 1,
                               big - 1,      small_max<T> - 1,      3,   33 * small_tile<T>};
    std::vector<device_buffer<T>*> outs;
    for (const std::int64_t n : ns) outs.push_back(new device_buffer<T>(static_cast<std::size_t>(n)));
    for (std::size_t i = 0; i < outs.size(); ++i) outs[i]->poison();
    for (std::size_t i = 0; i < outs.size(); ++i) sp_inclusive_scan(in.data(), outs[i]->data(), ns[i], tally::plus{}, o);
    TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < outs.size(); ++i) {
      EXPECT_TRUE(matches(outs[i]->download(), want, static_cast<std::size_t>(ns[i]))) << "call " << i << ", n = " << ns[i];
      delete outs[i];
    }
  }
  const std::int64_t n = 9000;  // two default tiles, five small ones
  device_buffer<T> out(static_cast<std::size_t>(n));
  {
    SCOPED_TRACE("caller storage");
    const std::size_t bytes = sp_inclusive_storage_bytes<const T*>(n, o);
    device_buffer<unsigned char> storage(bytes);
    TALLY_TEST_CUDA(cudaMemset(storage.data(), 0x5A, bytes));
    tally::options with = o;
    with.storage = {storage.data(), bytes};
    for (int call = 0; call < 3; ++call) {
      out.poison();
      sp_inclusive_scan(in.data(), out.data(), n, tally::plus{}, with);
      TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
      ASSERT_TRUE(matches(out.download(), want, static_cast<std::size_t>(n))) << "call " << call;
    }
  }
  for (bool caller_storage : {true, false}) {
    SCOPED_TRACE(caller_storage ? "graph, caller storage" : "graph, no caller storage");
    const std::size_t bytes = sp_inclusive_storage_bytes<const T*>(n, o);
    device_buffer<unsigned char> storage(bytes);
    tally::options g = o;
    if (caller_storage) g.storage = {storage.data(), bytes};
    std::vector<T> hr;
    replay_captured(
        stream, cudaStreamCaptureModeThreadLocal,
        [&] { sp_inclusive_scan(in.data(), out.data(), n, tally::plus{}, g); },
        [&](int replay) {
          hr = random_vector<T, tally::plus>(static_cast<std::size_t>(n), 140 + replay);
          TALLY_TEST_CUDA(cudaMemcpy(in.data(), hr.data(), hr.size() * sizeof(T), cudaMemcpyHostToDevice));
          out.poison();
        },
        [&](int replay) {
          ASSERT_TRUE(matches(out.download(), reference_scan(hr, false, 0, tally::plus{}),
                              static_cast<std::size_t>(n)))
              << "replay " << replay;
        });
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// The clearing epoch in the path's kernel, whose blocks learn the epoch late (step 4).
TEST(SinglePass, SmallPathClearingEpoch) {
  check_clearing_epoch<small_tune<std::int32_t>, true>(40, 151);
}

// ---- tiles by block --------------------------------------------------------------------------
// The public look-back scans of 16-byte aligned pointers run the default tiles with tile =
// blockIdx.x wherever the device holds their whole grid at once, and the ticket kernels
// past that (single_pass/tile_pipeline.cuh, "Tiles by block"): both sides of that edge, stalls,
// the clearing epoch.
template <class T, bool Exclusive, class Hook = sp::no_stall>
std::int64_t by_block_tiles() {
  return sp::by_block_grid<lookback_protocol, sp::default_single_pass_tuning<T>(), false, Exclusive,
                           T, const T*, T*, tally::plus, Hook>("test");
}

// The largest grid the device runs by block, one tile less, one element more (the ticket
// kernels, where that is still below the pipelined kernel's sizes), in place, against the
// oracle; inclusive and exclusive.
template <class T>
void check_by_block_edge(const char* label, std::uint64_t salt) {
  SCOPED_TRACE(label);
  const std::int64_t tile = sp::tile_items<T>();
  const std::int64_t inclusive_edge = by_block_tiles<T, false>() * tile;
  const std::int64_t exclusive_edge = by_block_tiles<T, true>() * tile;
  ASSERT_GT(inclusive_edge, 0) << "this GPU cannot launch cooperatively";
  const std::int64_t pipelined_from = pl::min_bytes / static_cast<std::int64_t>(sizeof(T));
  std::vector<std::int64_t> ns = {inclusive_edge - tile + 3, inclusive_edge, exclusive_edge};
  for (const std::int64_t edge : {inclusive_edge, exclusive_edge}) {
    if (edge + 1 < pipelined_from) ns.push_back(edge + 1);
  }
  const std::int64_t top = *std::max_element(ns.begin(), ns.end());
  const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(top), salt);
  const T init = test_init<T, tally::plus>();
  const auto want_i = reference_scan(h, false, init, tally::plus{});
  const auto want_e = reference_scan(h, true, init, tally::plus{});
  device_buffer<T> in(h), out(static_cast<std::size_t>(top));
  for (const std::int64_t n : ns) {
    const auto count = static_cast<std::size_t>(n);
    out.poison();
    sp_inclusive_scan(static_cast<const T*>(in.data()), out.data(), n, tally::plus{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out.download(), want_i, count)) << "inclusive, n = " << n;
    out.poison();
    sp_exclusive_scan(static_cast<const T*>(in.data()), out.data(), n, init, tally::plus{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(matches(out.download(), want_e, count)) << "exclusive, n = " << n;
  }
  device_buffer<T> work(h);
  sp_inclusive_scan(work.data(), work.data(), inclusive_edge, tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(matches(work.download(static_cast<std::size_t>(inclusive_edge)), want_i,
                      static_cast<std::size_t>(inclusive_edge)))
      << "in place";
}

TEST(SinglePass, TilesByBlockEdge) {
  check_by_block_edge<std::int32_t>("int32", 161);
  check_by_block_edge<double>("double", 162);
}

// The stall test on the default tiles by block, with as many tiles as the device holds
// (the stalled kernel's own grid).
TEST(SinglePass, TilesByBlockStallTest) {
  const std::int64_t tiles32 = by_block_tiles<std::int32_t, true, stall>();
  const std::int64_t tiles64 = by_block_tiles<std::int64_t, true, stall>();
  ASSERT_GT(tiles32, 1) << "this GPU cannot launch cooperatively";
  check_by_block_stalls<std::int32_t, sp::default_single_pass_tuning<std::int32_t>()>("int32", tiles32, 171);
  check_by_block_stalls<std::int64_t, sp::default_single_pass_tuning<std::int64_t>()>("int64", tiles64, 172);
}

// The same on lines of whole tiles (the batched scans along the last axis, segmented.cuh):
// lines of 8 tiles, as many whole lines as the device holds at once in both modes;
// float, so that the deterministic kernel runs too.
TEST(SinglePass, TilesByBlockLinesStallTest) {
  constexpr std::int64_t tiles_per_line = 8;
  constexpr sp::single_pass_tuning tune = sp::default_single_pass_tuning<float>();
  const auto grid = [](auto deterministic) -> std::int64_t {
    return sp::by_block_grid<lookback_protocol, tune, decltype(deterministic)::value, true, float,
                             const float*, float*, tally::plus, stall, sp::tile_lines>("test");
  };
  const std::int64_t tiles =
      std::min(grid(std::false_type{}), grid(std::true_type{})) / tiles_per_line * tiles_per_line;
  ASSERT_GE(tiles, 2 * tiles_per_line) << "this GPU holds fewer than two lines of tiles at once";
  check_by_block_stalls<float, tune>("float, lines of 8 tiles", tiles, 173, tiles_per_line);
}

// ---- states that hold anything ---------------------------------------------------------------
// Caller storage is not zeroed by a memset where the by-block kernel clears it itself
// (single_pass/tile_pipeline.cuh, "States that hold anything"). The stall test in storage full of
// fake descriptors: the small path's tiles, and as many default tiles as the device holds.
TEST(SinglePass, UnzeroedStorageStallTest) {
  const std::int64_t small_tiles = sp::small_path_max_tiles;
  if (tally::detail::co_resident_blocks("test") >= small_tiles) {
    check_by_block_stalls<std::int32_t, sp::small_single_pass_tuning<std::int32_t>()>(
        "int32, small tiles", small_tiles, 191, 0, true);
  }
  const std::int64_t tiles32 = by_block_tiles<std::int32_t, true, stall>();
  // double: the grid that both modes' kernels hold at once
  constexpr sp::single_pass_tuning tune64 = sp::default_single_pass_tuning<double>();
  const auto grid64 = [&](auto deterministic) -> std::int64_t {
    return sp::by_block_grid<lookback_protocol, tune64, decltype(deterministic)::value, true, double,
                             const double*, double*, tally::plus, stall>("test");
  };
  const std::int64_t tiles64 = std::min(grid64(std::false_type{}), grid64(std::true_type{}));
  ASSERT_GT(tiles32, 1) << "this GPU cannot launch cooperatively";
  check_by_block_stalls<std::int32_t, sp::default_single_pass_tuning<std::int32_t>()>(
      "int32", tiles32, 192, 0, true);
  check_by_block_stalls<double, tune64>("double (the deterministic kernel too)", tiles64, 193, 0, true);
}

// The public scans in caller storage full of fake descriptors, three calls on other
// input each (the later calls also find the descriptors of the call before, which are
// of the same epoch), inclusive and exclusive, float deterministic too: correct every
// time; and the memset is skipped exactly where the kernel clears (the storage's first
// word, the header, which nothing else writes then, keeps its fake value).
template <class T>
void check_unzeroed_storage(const char* label, std::int64_t n, std::int64_t misalign,
                            bool kernel_clears, bool deterministic, std::uint64_t salt) {
  SCOPED_TRACE(label);
  SCOPED_TRACE("n = " + std::to_string(n));
  const T init = test_init<T, tally::plus>();
  tally::options o;
  o.deterministic = deterministic;
  const std::size_t bytes = sp_inclusive_storage_bytes<const T*>(n, o);
  ASSERT_GT(bytes, 0u);
  device_buffer<unsigned char> storage(bytes);
  o.storage = {storage.data(), bytes};
  device_buffer<T> in(static_cast<std::size_t>(n + misalign)), out(static_cast<std::size_t>(n + misalign));
  fill_fake_descriptors(storage);
  for (int call = 0; call < 3; ++call) {
    const auto h = random_vector<T, tally::plus>(static_cast<std::size_t>(n), salt + call);
    TALLY_TEST_CUDA(cudaMemcpy(in.data() + misalign, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    const bool exclusive = call == 1;
    out.poison();
    if (exclusive) {
      sp_exclusive_scan(static_cast<const T*>(in.data() + misalign), out.data() + misalign, n, init,
                            tally::plus{}, o);
    } else {
      sp_inclusive_scan(static_cast<const T*>(in.data() + misalign), out.data() + misalign, n,
                            tally::plus{}, o);
    }
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    auto got = out.download();
    got.erase(got.begin(), got.begin() + misalign);
    ASSERT_TRUE(matches(got, reference_scan(h, exclusive, init, tally::plus{}), static_cast<std::size_t>(n)))
        << "call " << call << (exclusive ? " (exclusive)" : " (inclusive)");
  }
  // The header is the first word at storage_alignment (scoped_storage::aligned; cudaMalloc
  // memory is aligned already).
  unsigned long long header = 0;
  TALLY_TEST_CUDA(cudaMemcpy(&header, storage.data(), sizeof header, cudaMemcpyDeviceToHost));
  EXPECT_EQ(header == fake_descriptor_word, kernel_clears)
      << (kernel_clears ? "the state was zeroed by a memset" : "the state was not zeroed");
}

TEST(SinglePass, UnzeroedStorage) {
  const std::int64_t small = small_tile<std::int32_t>;
  const std::int64_t tile32 = sp::tile_items<std::int32_t>(), tile64 = sp::tile_items<double>();
  if (tally::detail::co_resident_blocks("test") < 8) GTEST_SKIP() << "fewer than 8 blocks at once";
  check_unzeroed_storage<std::int32_t>("int32, small tiles", 5 * small + 3, 0, true, false, 201);
  check_unzeroed_storage<std::int32_t>("int32, default tiles", 41 * tile32 + 5, 0, true, false, 202);
  check_unzeroed_storage<float>("float deterministic", 41 * tile32 + 5, 0, true, true, 203);
  check_unzeroed_storage<double>("double, small tiles", 7 * small_tile<double> - 1, 0, true, false, 204);
  check_unzeroed_storage<double>("double deterministic", 33 * tile64 + 1, 0, true, true, 205);
  // the ticket kernels (a pointer offset by one element): a memset
  check_unzeroed_storage<std::int32_t>("int32, misaligned", 41 * tile32 + 5, 1, false, false, 206);
  // both sides of the largest grid by block (past it, the ticket kernels), where that is
  // still below the pipelined kernel's sizes
  const std::int64_t edge =
      std::min(by_block_tiles<std::int32_t, false>(), by_block_tiles<std::int32_t, true>()) * tile32;
  check_unzeroed_storage<std::int32_t>("int32, the largest grid by block", edge, 0, true, false, 207);
  if ((edge + 1) * static_cast<std::int64_t>(sizeof(std::int32_t)) < pl::min_bytes) {
    check_unzeroed_storage<std::int32_t>("int32, past it", edge + 1, 0, false, false, 208);
  }
  // the pipelined kernel (from pl::min_bytes): its state is zeroed before it runs, by
  // clear_kernel (this header check cannot tell that from a memset; KernelsAfterClearInAGraph
  // runs the pipelined kernel behind its clear)
  check_unzeroed_storage<std::int32_t>("int32, the pipelined kernel", pl::min_bytes / 4 + 5, 0, false,
                                       false, 209);
  check_unzeroed_storage<double>("double deterministic, the pipelined kernel", pl::min_bytes / 8 + 3, 0,
                                 false, true, 210);
}

// ---- a kernel launched behind the clear of its state (dependent_launch.cuh) ----------------
// The ticket kernels and the single-pass reduce in caller storage start while clear_kernel
// may still run, and wait (griddepcontrol.wait) before they touch the state. Here the clear
// is 64 MiB (tens of microseconds, so the dependent's blocks start long before it ends)
// and the dependent reads every word after its wait: none may be left over.
__global__ void count_uncleared_kernel(const unsigned long long* p, std::int64_t words,
                                       unsigned long long* uncleared) {
  tally::detail::wait_for_prerequisite_grid();
  unsigned long long mine = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride) {
    mine += p[i] != 0ull;
  }
  if (mine != 0) atomicAdd(uncleared, mine);
}

TEST(SinglePass, DependentKernelSeesTheWholeClear) {
  const std::int64_t words = std::int64_t{1} << 23;  // 64 MiB
  device_buffer<unsigned long long> state(static_cast<std::size_t>(words)), uncleared(1);
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  for (int run = 0; run < 3; ++run) {
    TALLY_TEST_CUDA(cudaMemset(state.data(), 0xff, static_cast<std::size_t>(words) * 8));
    TALLY_TEST_CUDA(cudaMemset(uncleared.data(), 0, 8));
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    tally::detail::launch_after_clear("test", "count_uncleared_kernel", state.data(),
                                      static_cast<std::size_t>(words) * 8, dim3(264), dim3(256), 0,
                                      stream, count_uncleared_kernel,
                                      static_cast<const unsigned long long*>(state.data()), words,
                                      uncleared.data());
    TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
    EXPECT_EQ(uncleared.download()[0], 0ull) << "run " << run;
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// A kernel behind the clear of its state in caller storage full of fake descriptors,
// captured into a graph (the clear and the dependent launch become two nodes with a
// programmatic edge) and replayed on fresh input: the ticket kernels (misalign = 1, a
// pointer offset by one element) and the pipelined kernel (n from pl::min_bytes).
void check_after_clear_in_a_graph(const char* label, std::int64_t n, std::int64_t misalign,
                                  std::uint64_t salt) {
  using T = std::int32_t;
  SCOPED_TRACE(label);
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  const std::size_t bytes = sp_inclusive_storage_bytes<const T*>(n, o);
  device_buffer<unsigned char> storage(bytes);
  o.storage = {storage.data(), bytes};
  device_buffer<T> in(static_cast<std::size_t>(n + misalign)), out(static_cast<std::size_t>(n + misalign));
  std::vector<T> h;
  replay_captured(
      stream, cudaStreamCaptureModeThreadLocal,
      [&] {
        sp_inclusive_scan(static_cast<const T*>(in.data() + misalign), out.data() + misalign, n,
                              tally::plus{}, o);
      },
      [&](int replay) {
        h = random_vector<T, tally::plus>(static_cast<std::size_t>(n), salt + replay);
        TALLY_TEST_CUDA(
            cudaMemcpy(in.data() + misalign, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
        fill_fake_descriptors(storage);
        out.poison();
      },
      [&](int replay) {
        auto got = out.download();
        got.erase(got.begin(), got.begin() + misalign);
        ASSERT_TRUE(matches(got, reference_scan(h, false, 0, tally::plus{}), static_cast<std::size_t>(n)))
            << "replay " << replay;
      });
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

TEST(SinglePass, KernelsAfterClearInAGraph) {
  check_after_clear_in_a_graph("the ticket kernels", 41 * sp::tile_items<std::int32_t>() + 5, 1, 260);
  check_after_clear_in_a_graph("the pipelined kernel", pl::min_bytes / 4 + 5, 0, 270);
}

TEST(SinglePass, TilesByBlockClearingEpoch) {
  check_clearing_epoch<sp::default_single_pass_tuning<std::int32_t>(), true>(100, 181);
}

// Bad arguments particular to the single-pass strategies (through tally::textbook, the
// entry that takes every strategy).
TEST(SinglePass, BlockAlgorithmMustBeWarpScans) {
  device_buffer<int> buf(16);
  for (auto s : single_pass_strategies) {
    tally::options o;
    o.strategy = s;
    o.block = tally::block_scan::kogge_stone;
    try {
      tally::textbook::inclusive_scan(buf.data(), buf.data(), 16, tally::plus{}, o);
      FAIL() << "no exception";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("options.block"), std::string::npos) << e.what();
    }
    o.block = tally::block_scan::warp_scans;
    EXPECT_NO_THROW(tally::textbook::inclusive_scan(buf.data(), buf.data(), 16, tally::plus{}, o));
  }
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
}

}  // namespace
