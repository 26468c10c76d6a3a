// tests/device/segmented/test_segmented.cu -- device/segmented.cuh: the segmented scans by head flags,
// by keys and by CSR offsets, the segmented reduction, and the batched scans (every line
// of a row-major N-d array along one axis), against the sequential CPU oracle
// tally::cpu::sequential (cpu/sequential_segmented.hpp; iterator ranges, so its argument
// order differs from the device calls).
//
// Every comparison is exact (bit for bit, or == where +0 and -0 may meet), which needs
// inputs whose results do not depend on the order of combination:
//   int32   non-zero values in [-100, 100]: a sum of 2^22 + 1 of them (+ init 7) fits.
//   int64   non-zero values below 2^40 in magnitude: sums of 2^22 + 1 fit in 2^63.
//   uint64  the full range; sums wrap modulo 2^64, which is defined and associative.
//   float   integer values in {-2, -1, 1, 2}. Any algorithm, whatever its association,
//           only ever adds a contiguous run of one segment (plus the init 7 once), so
//           every partial sum is an integer of magnitude <= 2 * (2^22 + 1) + 7 < 2^24:
//           exactly representable, every float addition is exact, hence associative,
//           and exact comparison with the sequential oracle is valid.
//   double  integer values in [-1000, 1000] (partial sums < 2^33 << 2^53): exact too.
//   mat2    2x2 uint32 matrices under the product (test_common.cuh): wraps mod 2^32,
//           exact, associative, NOT commutative and with no identity_of, so operand
//           order bugs show and exclusive scans get a non-identity init.
// (The determinism test is the exception: it needs rounding, so it uses non-integer
// floats, checks bitwise identity between runs and a tolerance against a double oracle.)
//
// Outputs are poisoned before each call (NaN bytes for floating point, 0xA5 otherwise);
// one element past the end must stay poison, and so must the elements outside
// [offsets[0], offsets[S]) of the offset forms (in place: they must keep the input).
// Failures report the first mismatching position.
//
// Segment lengths: all 1, all 4, all 32, all 1024 (the last one shorter), random (1 to
// 3000, mostly short), random with empty segments (offsets only: also empty ones at the
// start and the end), one segment of all n elements, and short random segments around one
// segment of 3/5 of n. Sizes: 0, 1, 2, 31, 33, 1000, the tile edges of the single-pass
// scan for 4-, 8- and 16-byte values (1023 ... 3*4096+5) and of the offsets forms' tile
// kernel (8192 4-byte, 4096 8-byte values: up to 16385), 2^20+3 and 2^22+1.
// TALLY_TEST_QUICK=1 (compute-sanitizer runs): fewer sizes with one layout each, fewer
// shapes and in-place cases, n <= 2^17.
#include <array>
#include <functional>
#include <iomanip>
#include <memory>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "test_common.cuh"

namespace {

using namespace tally_test;
namespace seq = tally::cpu::sequential;
using tally::block_scan;
using tally::scan_strategy;
using i64 = std::int64_t;

constexpr i64 quick_cap = i64{1} << 17;
constexpr i64 mid_size = (i64{1} << 20) + 3;
constexpr i64 big_size = (i64{1} << 22) + 1;

// ---- values -------------------------------------------------------------------------------

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, std::int32_t>) return "int32";
  else if constexpr (std::is_same_v<T, std::int64_t>) return "int64";
  else if constexpr (std::is_same_v<T, std::uint64_t>) return "uint64";
  else if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else return "mat2";
}

// A fast generator for the bulk of the inputs and layouts (splitmix64; mt19937_64 takes a
// good part of the host time of the large cases), seeded from the test seed and a salt.
struct fast_rng {
  using result_type = std::uint64_t;
  std::uint64_t state;
  explicit fast_rng(std::uint64_t salt) : state(rng(salt)()) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
};

// The exact inputs described at the top of the file.
template <class T>
T exact_value(fast_rng& g) {
  if constexpr (std::is_same_v<T, mat2>) {
    const std::uint64_t a = g(), b = g();
    return mat2{{static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(a >> 32),
                 static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32)}};
  } else if constexpr (std::is_same_v<T, float>) {
    const int v = static_cast<int>(g() % 4);  // -> -1, -2, 1, 2
    return static_cast<float>(v < 2 ? -(v + 1) : v - 1);
  } else if constexpr (std::is_same_v<T, double>) {
    int v = 0;
    while (v == 0) v = static_cast<int>(g() % 2001) - 1000;
    return static_cast<double>(v);
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    int v = 0;
    while (v == 0) v = static_cast<int>(g() % 201) - 100;
    return v;
  } else if constexpr (std::is_same_v<T, std::int64_t>) {
    i64 v = 0;
    while (v == 0) v = static_cast<i64>(g() % ((std::uint64_t{1} << 41) + 1)) - (i64{1} << 40);
    return v;
  } else {
    static_assert(std::is_same_v<T, std::uint64_t>);
    return static_cast<std::uint64_t>(g());
  }
}

template <class T>
std::vector<T> exact_values(std::size_t n, std::uint64_t salt) {
  fast_rng g(salt);
  std::vector<T> v(n);
  for (auto& x : v) x = exact_value<T>(g);
  return v;
}

// The operator and the exclusive init of each type: plus with 7 (not plus's identity), or
// the mat2 product with a random (non-identity) matrix.
template <class T>
using op_for = std::conditional_t<std::is_same_v<T, mat2>, mat2_product, tally::plus>;

template <class T>
T init_for() {
  if constexpr (std::is_same_v<T, mat2>) {
    return test_init<mat2, mat2_product>();
  } else {
    return static_cast<T>(7);
  }
}

// Keys equal when equal modulo 10 (keys are non-negative): the custom `equal` of the key forms.
struct equal_mod10 {
  TALLY_HOST_DEVICE bool operator()(int a, int b) const { return a % 10 == b % 10; }
};

// ---- comparison -----------------------------------------------------------------------------

template <class T>
T poison_value() {
  T x;
  std::memset(static_cast<void*>(&x), std::is_floating_point_v<T> ? 0xFF : 0xA5, sizeof x);
  return x;
}

template <class T>
bool same_value(const T& a, const T& b) {
  if (std::memcmp(&a, &b, sizeof(T)) == 0) return true;  // poison (NaN) == poison as well
  if constexpr (std::is_same_v<T, mat2>) {
    return false;
  } else {
    return a == b;  // +0.0 == -0.0
  }
}

template <class T>
std::string show(const T& x) {
  std::ostringstream s;
  if constexpr (std::is_floating_point_v<T>) s << std::setprecision(std::numeric_limits<T>::max_digits10);
  if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, mat2>) {
    s << x;
  } else {
    s << +x;  // (+: an integer, never a character)
  }
  if (device_buffer<T>::is_poison(x)) s << " (poison)";
  return s.str();
}

// Exact element-by-element comparison; reports the first mismatch and a few after it.
template <class T>
::testing::AssertionResult exact_match(const std::vector<T>& got, const std::vector<T>& want) {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "size " << got.size() << ", expected " << want.size();
  }
  std::size_t bad = 0;
  auto failure = ::testing::AssertionFailure();
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (same_value(got[i], want[i])) continue;
    if (bad == 0) {
      failure << "first mismatch at [" << i << "]: got " << show(got[i]) << ", expected "
              << show(want[i]);
    } else if (bad < 4) {
      failure << "\n  then [" << i << "]: got " << show(got[i]) << ", expected " << show(want[i]);
    }
    ++bad;
  }
  if (bad == 0) return ::testing::AssertionSuccess();
  return failure << "\n  " << bad << " of " << got.size() << " checked elements differ (seed "
                 << seed() << ")";
}

// ---- device helpers ------------------------------------------------------------------------

template <class T>
const T* cdata(const device_buffer<T>& b) {
  return b.data();
}

// Poisons only the first `count` elements (the ones a case checks), as
// device_buffer::poison does for the whole buffer.
template <class T>
void poison_prefix(device_buffer<T>& b, std::size_t count) {
  const int byte = std::is_floating_point_v<T> ? 0xFF : 0xA5;
  if (count > b.size()) throw std::runtime_error("test: poison_prefix beyond the buffer");
  if (count && (cudaMemset(b.data(), byte, count * sizeof(T)) != cudaSuccess ||
                cudaDeviceSynchronize() != cudaSuccess)) {
    throw std::runtime_error("test: poison failed");
  }
}

// Device copies of the per-case arrays (flags, keys, offsets): one grow-only buffer per
// slot and type, reused from case to case (a cudaMalloc/cudaFree pair per case adds up
// over thousands of cases). Every case waits for its calls before the next one reuses it.
// An empty array gives a null pointer (valid with no elements).
enum aux_slot { flags_slot, keys_slot, offsets_slot };

template <int Slot, class T>
const T* upload_aux(const std::vector<T>& h) {
  static std::unique_ptr<device_buffer<T>> buf;
  if (h.empty()) return nullptr;
  if (!buf || buf->size() < h.size()) {
    buf.reset();
    buf = std::make_unique<device_buffer<T>>(std::max(h.size(), std::size_t{1} << 16));
  }
  // cudaMemcpy from pageable memory may return before the copy lands, and it runs on the
  // legacy default stream, which does not order itself with non-blocking streams: wait.
  if (cudaMemcpy(buf->data(), h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess) {
    throw std::runtime_error("test: upload failed");
  }
  return buf->data();
}

// Waits for the call on `stream`, downloads `want.size()` elements of `out` (into a
// reused host vector) and compares them with `want`.
template <class T>
::testing::AssertionResult finish(cudaStream_t stream, const device_buffer<T>& out,
                                  const std::vector<T>& want, const std::string& what) {
  const cudaError_t e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) {
    return ::testing::AssertionFailure() << what << ": cudaStreamSynchronize: " << cudaGetErrorString(e);
  }
  static std::vector<T> got;
  got.resize(want.size());
  if (!got.empty() &&
      cudaMemcpy(got.data(), out.data(), got.size() * sizeof(T), cudaMemcpyDeviceToHost) != cudaSuccess) {
    return ::testing::AssertionFailure() << what << ": download failed";
  }
  auto r = exact_match(got, want);
  if (!r) r << "\n  in: " << what;
  return r;
}

// ---- segment layouts -------------------------------------------------------------------------

enum class dist { ones, fours, width32, width1024, random, random_with_empty, huge, long_mix, custom };

const char* dist_name(dist d) {
  switch (d) {
    case dist::ones: return "all length 1";
    case dist::fours: return "all length 4";
    case dist::width32: return "all length 32";
    case dist::width1024: return "all length 1024";
    case dist::random: return "random lengths";
    case dist::random_with_empty: return "random lengths with empty segments";
    case dist::huge: return "one segment";
    case dist::long_mix: return "short segments around one of 3/5 n";
    case dist::custom: return "custom";
  }
  return "?";
}

// Random lengths summing to `total`: mostly 1..8, some up to 100, a few up to 3000; with
// `empties`, a quarter of the segments are empty.
void append_random(std::vector<i64>& lens, i64 total, fast_rng& g, bool empties) {
  while (total > 0) {
    if (empties && g() % 4 == 0) {
      lens.push_back(0);
      continue;
    }
    const auto r = g() % 100;
    const auto len = static_cast<i64>(r < 50 ? 1 + g() % 8 : r < 85 ? 1 + g() % 100 : 1 + g() % 3000);
    lens.push_back(std::min(len, total));
    total -= lens.back();
  }
}

std::vector<i64> segment_lengths(dist d, i64 n, fast_rng& g) {
  std::vector<i64> lens;
  auto fixed = [&](i64 w) {
    for (i64 left = n; left > 0; left -= w) lens.push_back(std::min(w, left));
  };
  switch (d) {
    case dist::ones: fixed(1); break;
    case dist::fours: fixed(4); break;
    case dist::width32: fixed(32); break;
    case dist::width1024: fixed(1024); break;
    case dist::random: append_random(lens, n, g, false); break;
    case dist::random_with_empty:
      lens = {0, 0};  // empty segments at the start ...
      append_random(lens, n, g, true);
      lens.push_back(0);  // ... and at the end
      lens.push_back(0);
      break;
    case dist::huge:
      if (n > 0) lens.push_back(n);
      break;
    case dist::long_mix: {
      const i64 side = n / 5;
      append_random(lens, side, g, false);
      if (n - 2 * side > 0) lens.push_back(n - 2 * side);
      append_random(lens, side, g, false);
      break;
    }
    case dist::custom: break;
  }
  return lens;
}

// Head flags of segments of `lens` (no empty ones): a non-zero value of varying size at
// each head but the first; flags[0] is random (it is not read: element 0 always starts
// a segment).
template <class F>
std::vector<F> head_flags(const std::vector<i64>& lens, i64 n, fast_rng& g) {
  auto head = [&]() -> F {
    if constexpr (std::is_same_v<F, std::uint8_t>) {
      return static_cast<F>(1 + g() % 255);
    } else {
      constexpr std::array<int, 5> values{1, -1, 2, 1 << 30, -7};
      return static_cast<F>(values[g() % values.size()]);
    }
  };
  std::vector<F> flags(static_cast<std::size_t>(n), F{0});
  i64 at = 0;
  for (const i64 len : lens) {
    if (len <= 0) throw std::logic_error("test: head flags need non-empty segments");
    if (at > 0) flags[static_cast<std::size_t>(at)] = head();
    at += len;
  }
  if (at != n) throw std::logic_error("test: segment lengths do not sum to n");
  if (n > 0) flags[0] = g() % 2 ? head() : F{0};
  return flags;
}

// Keys of segments of `lens`: each segment draws a class in [0, 5) other than its
// predecessor's (so equal keys recur in non-adjacent segments, which must stay apart).
// With `mod10`, each element's key is its class + 10 * random: keys within a segment
// differ but are equal modulo 10 (only equal_mod10 sees the segments).
std::vector<int> segment_keys(const std::vector<i64>& lens, i64 n, fast_rng& g, bool mod10) {
  std::vector<int> keys;
  keys.reserve(static_cast<std::size_t>(n));
  int prev = -1;
  for (const i64 len : lens) {
    int c = prev;
    while (c == prev) c = static_cast<int>(g() % 5);
    prev = c;
    for (i64 j = 0; j < len; ++j) keys.push_back(mod10 ? c + 10 * static_cast<int>(g() % 100000) : c);
  }
  if (static_cast<i64>(keys.size()) != n) throw std::logic_error("test: segment lengths do not sum to n");
  return keys;
}

// CSR offsets of segments `lens` starting at `lead`.
template <class Off>
std::vector<Off> make_offsets(const std::vector<i64>& lens, i64 lead) {
  std::vector<Off> offs{static_cast<Off>(lead)};
  for (const i64 len : lens) offs.push_back(static_cast<Off>(offs.back() + len));
  return offs;
}

// ---- the segmented scan cases ------------------------------------------------------------------

enum class form { flags_u8, flags_int, keys, keys_mod10, offsets32, offsets64 };

constexpr bool is_offsets(form f) { return f == form::offsets32 || f == form::offsets64; }

const char* form_name(form f) {
  switch (f) {
    case form::flags_u8: return "by uint8 flags";
    case form::flags_int: return "by int flags";
    case form::keys: return "by int32 keys";
    case form::keys_mod10: return "by keys equal mod 10";
    case form::offsets32: return "by int32 offsets";
    case form::offsets64: return "by int64 offsets";
  }
  return "?";
}

// n elements; for the offset forms, segments cover [lead, n - tail) (`custom`: the given
// lengths from `lead`).
struct scan_case {
  i64 n;
  dist d;
  i64 lead = 0, tail = 0;
  std::vector<i64> lens = {};
};

std::string describe(form f, const scan_case& c, const std::vector<i64>& lens, bool exclusive, bool in_place) {
  std::ostringstream s;
  s << (exclusive ? "exclusive" : "inclusive") << " scan " << form_name(f) << ", n = " << c.n << ", "
    << dist_name(c.d) << " (" << lens.size() << " segments)";
  if (is_offsets(f)) {
    i64 end = c.lead;
    for (const i64 len : lens) end += len;
    s << ", offsets[0] = " << c.lead << ", offsets[S] = " << end;
  }
  if (in_place) s << ", in place";
  return s.str();
}

// One case: builds the layout, runs the device scan on the first n elements of `d_in`
// (or, in place, of `out`, which then first receives all of h), and compares the first
// n + 1 elements of `out` with the oracle. `out` has h.size() > max n elements.
template <form F, class T, class Op>
::testing::AssertionResult check_scan_case(const std::vector<T>& h, const T* d_in, device_buffer<T>& out,
                                           const scan_case& c, bool exclusive, const T& init, Op op,
                                           const tally::options& o = {}, bool in_place = false) {
  const i64 n = c.n;
  const std::size_t count = std::min(static_cast<std::size_t>(n) + 1, out.size());
  if (static_cast<std::size_t>(n) > h.size() || (in_place && h.size() != out.size())) {
    throw std::logic_error("test: buffers too small for the case");
  }
  fast_rng g(static_cast<std::uint64_t>(n) * 131 + static_cast<std::uint64_t>(c.d) * 7 +
               static_cast<std::uint64_t>(F) * 1000003 + (exclusive ? 1 : 0));
  const std::vector<i64> lens = c.d == dist::custom ? c.lens : segment_lengths(c.d, n - c.lead - c.tail, g);
  std::vector<T> want;
  if (in_place) {
    out.upload(h);
    want.assign(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(count));
  } else {
    poison_prefix(out, count);
    want.assign(count, poison_value<T>());
  }
  const T* in = in_place ? out.data() : d_in;
  T* dst = out.data();
  const auto first = h.begin();
  const auto last = h.begin() + static_cast<std::ptrdiff_t>(n);
  const std::string what = describe(F, c, lens, exclusive, in_place);

  if constexpr (F == form::flags_u8 || F == form::flags_int) {
    using flag_t = std::conditional_t<F == form::flags_u8, std::uint8_t, int>;
    const auto flags = head_flags<flag_t>(lens, n, g);
    const flag_t* d_flags = upload_aux<flags_slot>(flags);
    if (exclusive) {
      tally::exclusive_scan_by_flags(in, d_flags, dst, n, init, op, o);
      seq::exclusive_scan_by_flags(first, last, flags.begin(), want.begin(), init, op);
    } else {
      tally::inclusive_scan_by_flags(in, d_flags, dst, n, op, o);
      seq::inclusive_scan_by_flags(first, last, flags.begin(), want.begin(), op);
    }
    return finish(o.stream, out, want, what);
  } else if constexpr (F == form::keys || F == form::keys_mod10) {
    using equal_t = std::conditional_t<F == form::keys, std::equal_to<>, equal_mod10>;
    const auto keys = segment_keys(lens, n, g, F == form::keys_mod10);
    const int* d_keys = upload_aux<keys_slot>(keys);
    if (exclusive) {
      tally::exclusive_scan_by_key(d_keys, in, dst, n, init, op, equal_t{}, o);
      seq::exclusive_scan_by_key(keys.begin(), keys.end(), first, want.begin(), init, op, equal_t{});
    } else {
      tally::inclusive_scan_by_key(d_keys, in, dst, n, op, equal_t{}, o);
      seq::inclusive_scan_by_key(keys.begin(), keys.end(), first, want.begin(), op, equal_t{});
    }
    return finish(o.stream, out, want, what);
  } else {
    using offset_t = std::conditional_t<F == form::offsets32, std::int32_t, std::int64_t>;
    const auto offs = make_offsets<offset_t>(lens, c.lead);
    if (offs.back() > n) throw std::logic_error("test: offsets beyond n");
    const offset_t* d_offs = upload_aux<offsets_slot>(offs);
    const auto segments = static_cast<i64>(lens.size());
    if (exclusive) {
      tally::exclusive_segmented_scan(in, dst, n, d_offs, segments, init, op, o);
      seq::exclusive_segmented_scan(first, offs.begin(), offs.end(), want.begin(), init, op);
    } else {
      tally::inclusive_segmented_scan(in, dst, n, d_offs, segments, op, o);
      seq::inclusive_segmented_scan(first, offs.begin(), offs.end(), want.begin(), op);
    }
    return finish(o.stream, out, want, what);
  }
}

// Sizes up to a few tiles: the small ones and the single-pass tile edges for 4-byte
// (4096), 8-byte (2048, 3072) and 16-byte values.
std::vector<i64> edge_sizes() {
  if (quick()) return {0, 1, 2, 33, 1000, 2049, 3073, 4095, 4096, 4097, 8193};
  return {0,    1,    2,    31,   33,   1000, 1023, 1024, 1025, 2047, 2048, 2049,
          3071, 3072, 3073, 4095, 4096, 4097, 6143, 6145, 8191, 8192, 8193, 3 * 4096 + 5,
          16383, 16385};
}

// Every size x every layout (quick: one layout per size, rotating), then large cases;
// `big` adds random lengths at 2^22 + 1. The offset forms alternate between covering all
// of [0, n) and leaving elements before offsets[0] and after offsets[S].
std::vector<scan_case> scan_cases(bool offsets, bool big) {
  std::vector<dist> dists{dist::ones,   dist::fours, dist::width32, dist::width1024,
                          dist::random, dist::huge,  dist::long_mix};
  if (offsets) dists.push_back(dist::random_with_empty);
  std::vector<scan_case> v;
  std::size_t i = 0;
  for (const i64 n : edge_sizes()) {
    for (std::size_t j = 0; j < dists.size(); ++j, ++i) {
      if (quick() && j != i / dists.size() % dists.size()) continue;
      scan_case c{n, dists[j]};
      if (offsets && n >= 3 && i % 2 == 1) {
        c.lead = 1 + n / 10;
        c.tail = 1 + n / 13;
      }
      v.push_back(c);
    }
  }
  if (quick()) {
    v.push_back({quick_cap - 3, dist::long_mix, offsets ? 4097 : 0, offsets ? 33 : 0});
    v.push_back({quick_cap, dist::huge});
    return v;
  }
  v.push_back({mid_size, dist::random});
  v.push_back({mid_size, dist::long_mix, offsets ? 12345 : 0, offsets ? 4099 : 0});
  v.push_back({mid_size, dist::width32});
  v.push_back({mid_size, dist::ones});
  if (offsets) v.push_back({mid_size, dist::random_with_empty});
  v.push_back({big_size, dist::huge});
  if (big) v.push_back({big_size, dist::random});
  return v;
}

i64 max_n(const std::vector<scan_case>& cases) {
  i64 m = 0;
  for (const auto& c : cases) m = std::max(m, c.n);
  return m;
}

// Form F, type T: every case, inclusive and exclusive.
template <form F, class T>
void check_form(bool big) {
  SCOPED_TRACE(std::string(form_name(F)) + ", " + type_name<T>());
  const auto cases = scan_cases(is_offsets(F), big);
  const i64 m = max_n(cases);
  const auto h = exact_values<T>(static_cast<std::size_t>(m) + 1, static_cast<std::uint64_t>(F) * 17 + sizeof(T));
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  const T init = init_for<T>();
  for (const bool exclusive : {false, true}) {
    for (const auto& c : cases) {
      ASSERT_TRUE(check_scan_case<F>(h, cdata(in), out, c, exclusive, init, op_for<T>{}));
    }
  }
}

// In place (out == in): a few layouts and sizes, inclusive and exclusive.
template <form F, class T>
void check_form_in_place() {
  SCOPED_TRACE(std::string(form_name(F)) + ", " + type_name<T>() + ", in place");
  const i64 large = quick() ? quick_cap : big_size;
  const i64 mid = quick() ? quick_cap - 3 : mid_size;
  const bool offsets = is_offsets(F);
  const std::vector<scan_case> cases{{1, dist::ones},
                                     {1000, dist::random, offsets ? 10 : 0, offsets ? 20 : 0},
                                     {4097, dist::ones},
                                     {8193, dist::long_mix},
                                     {mid, dist::random, offsets ? 5000 : 0, offsets ? 7 : 0},
                                     {mid, dist::width32},
                                     {large, dist::huge}};
  const std::size_t quick_cases[] = {1, 3, 4, 6};  // quick mode: 1000, 4097, mid and large
  const auto h = exact_values<T>(static_cast<std::size_t>(large) + 1, 99 + static_cast<std::uint64_t>(F));
  device_buffer<T> work(h.size());
  const T init = init_for<T>();
  for (const bool exclusive : {false, true}) {
    for (std::size_t i = 0; i < cases.size(); ++i) {
      if (quick() && std::find(std::begin(quick_cases), std::end(quick_cases), i) == std::end(quick_cases)) continue;
      ASSERT_TRUE(check_scan_case<F>(h, static_cast<const T*>(nullptr), work, cases[i], exclusive, init,
                                     op_for<T>{}, {}, true));
    }
  }
}

// ---- flags -------------------------------------------------------------------------------------

TEST(SegmentedByFlags, Int32) { check_form<form::flags_u8, std::int32_t>(true); }
TEST(SegmentedByFlags, Float) { check_form<form::flags_u8, float>(true); }
TEST(SegmentedByFlags, UInt64) { check_form<form::flags_u8, std::uint64_t>(false); }
TEST(SegmentedByFlags, Double) { check_form<form::flags_u8, double>(false); }
TEST(SegmentedByFlags, Mat2) { check_form<form::flags_u8, mat2>(false); }
TEST(SegmentedByFlags, IntFlagsInt32) { check_form<form::flags_int, std::int32_t>(false); }
TEST(SegmentedByFlags, IntFlagsMat2) { check_form<form::flags_int, mat2>(false); }
TEST(SegmentedByFlags, InPlace) {
  check_form_in_place<form::flags_u8, std::int32_t>();
  check_form_in_place<form::flags_u8, mat2>();
}

// ---- keys --------------------------------------------------------------------------------------

TEST(SegmentedByKey, Int32) { check_form<form::keys, std::int32_t>(true); }
TEST(SegmentedByKey, Float) { check_form<form::keys, float>(false); }
TEST(SegmentedByKey, Int64) { check_form<form::keys, std::int64_t>(false); }
TEST(SegmentedByKey, Double) { check_form<form::keys, double>(false); }
TEST(SegmentedByKey, Mat2) { check_form<form::keys, mat2>(false); }
TEST(SegmentedByKey, CustomEqualInt32) { check_form<form::keys_mod10, std::int32_t>(false); }
TEST(SegmentedByKey, CustomEqualMat2) { check_form<form::keys_mod10, mat2>(false); }
TEST(SegmentedByKey, InPlace) {
  check_form_in_place<form::keys, std::int32_t>();
  check_form_in_place<form::keys, mat2>();
}

// ---- offsets -----------------------------------------------------------------------------------

TEST(SegmentedOffsets, Int32) { check_form<form::offsets32, std::int32_t>(true); }
TEST(SegmentedOffsets, Float) { check_form<form::offsets32, float>(true); }
TEST(SegmentedOffsets, UInt64) { check_form<form::offsets32, std::uint64_t>(false); }
TEST(SegmentedOffsets, Double) { check_form<form::offsets32, double>(false); }
TEST(SegmentedOffsets, Mat2) { check_form<form::offsets32, mat2>(false); }
TEST(SegmentedOffsets, Int64OffsetsInt32) { check_form<form::offsets64, std::int32_t>(true); }
TEST(SegmentedOffsets, Int64OffsetsDouble) { check_form<form::offsets64, double>(false); }
TEST(SegmentedOffsets, Int64OffsetsMat2) { check_form<form::offsets64, mat2>(false); }
TEST(SegmentedOffsets, InPlace) {
  check_form_in_place<form::offsets32, std::int32_t>();
  check_form_in_place<form::offsets64, mat2>();
}

// Hand-made layouts: offsets[0] > 0 and offsets[S] < n (the elements outside stay poison),
// empty segments at the start, in the middle and at the end, no segments at all.
template <form F, class T>
void check_offset_layouts() {
  SCOPED_TRACE(std::string(form_name(F)) + ", " + type_name<T>());
  const i64 large = quick() ? quick_cap - 3 : mid_size;
  const auto h = exact_values<T>(static_cast<std::size_t>(large) + 1, 4242);
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  auto custom = [](i64 n, i64 lead, std::vector<i64> lens) {
    return scan_case{n, dist::custom, lead, 0, std::move(lens)};
  };
  std::vector<scan_case> cases{
      custom(0, 0, {}),                       // n = 0, S = 0
      custom(1000, 0, {}),                    // S = 0: nothing written
      custom(1000, 500, {}),                  // S = 0 at offsets[0] = 500
      custom(1000, 1000, {0, 0}),             // offsets[0] = n, only empty segments
      custom(10, 3, {4}),                     // one segment inside
      custom(1000, 0, {0, 0, 0, 1000}),       // empty segments first
      custom(1000, 0, {1000, 0, 0, 0}),       // empty segments last
      custom(1000, 0, {300, 0, 0, 700}),      // empty segments in the middle
      custom(1000, 1, {0, 3, 0, 0, 5, 0, 990, 0}),  // all of them, offsets[0] = 1, offsets[S] = 999
      custom(9000, 4095, {0, 1, 4096, 0, 1}),       // offsets[0] one before a tile edge
      custom(9000, 4097, {4000, 0}),                // a segment across a tile edge, tail 903
      {4097, dist::random, 1, 1},
      {4097, dist::random_with_empty, 4095, 1},
      {8193, dist::huge, 4096, 4096},
      {8193, dist::long_mix, 17, 4100},
      {large, dist::random_with_empty, large / 3, large / 4},
      {large, dist::huge, 1, 1},
      {large, dist::ones, 4096 * 3, 2048}};
  for (const bool exclusive : {false, true}) {
    for (const auto& c : cases) {
      ASSERT_TRUE(check_scan_case<F>(h, cdata(in), out, c, exclusive, init_for<T>(), op_for<T>{}));
    }
  }
}

TEST(SegmentedOffsets, LeadTailAndEmptySegments) {
  check_offset_layouts<form::offsets32, std::int32_t>();
  check_offset_layouts<form::offsets64, mat2>();
  if (quick()) return;
  check_offset_layouts<form::offsets64, std::int32_t>();
  check_offset_layouts<form::offsets32, mat2>();
  check_offset_layouts<form::offsets32, float>();
}

// The offsets forms take one of two algorithms by the pointers (segmented.cuh): the tile
// kernel that finds its heads in the offsets (segmented/tile_heads.cuh: 16-byte aligned
// pointers to 4- and 8-byte values) or the head bitmap and the pair scan (anything else).
// Both run here on the same layouts, through aligned pointers and through pointers one
// element past alignment, with both single-pass protocols. The layouts aim at the tile
// kernel's search, head marking and gather: runs of empty segments longer than a tile
// (more offsets in one tile than its threads take in one pass), at a tile edge and inside
// a tile; segments that end on tile edges; offsets[0] and offsets[S] on tile edges.
template <class T>
void check_offsets_paths(scan_strategy strategy) {
  namespace so = tally::detail::segmented_offsets;
  const i64 tile = so::tile_items<T>();
  const std::vector<i64> empties(5000, 0);
  auto join = [](std::initializer_list<std::vector<i64>> parts) {
    std::vector<i64> v;
    for (const auto& p : parts) v.insert(v.end(), p.begin(), p.end());
    return v;
  };
  struct layout {
    i64 lead;
    std::vector<i64> lens;
    i64 tail;
  };
  const std::vector<layout> layouts{
      {0, join({{tile}, empties, {tile, 1, tile - 1}}), 0},             // empties at a tile edge
      {tile, join({empties, {1}, empties, {2 * tile - 1}, empties}), tile},  // offsets[0], offsets[S] on edges
      {5, join({{tile - 5, tile, 0, 0, 3 * tile + 7}}), 3},              // ends on tile edges
      {0, join({{3}, empties, {tile / 2}, empties, {1, 1, 2 * tile}}), 1},  // empties inside tiles
  };
  tally::options o;
  o.strategy = strategy;
  for (const auto& l : layouts) {
    i64 n = l.lead + l.tail;
    for (const i64 len : l.lens) n += len;
    const auto offs = make_offsets<std::int32_t>(l.lens, l.lead);
    const device_buffer<std::int32_t> d_offs(offs);
    const auto segments = static_cast<i64>(l.lens.size());
    const auto h = exact_values<T>(static_cast<std::size_t>(n) + 1, static_cast<std::uint64_t>(n));
    const device_buffer<T> in(h);
    device_buffer<T> out(h.size());
    device_buffer<T> sums(l.lens.size() + 1);
    for (const int shift : {0, 1}) {  // 0: the tile kernel; 1: the bitmap path
      const std::vector<T> x(h.begin() + shift, h.begin() + shift + n);
      std::ostringstream what;
      what << type_name<T>() << ", n = " << n << ", " << segments << " segments from " << l.lead
           << ", pointers " << (shift ? "one element past 16-byte alignment" : "aligned");
      for (const bool exclusive : {false, true}) {
        out.poison();
        std::vector<T> want(h.size() - shift, poison_value<T>());
        if (exclusive) {
          tally::exclusive_segmented_scan(cdata(in) + shift, out.data() + shift, n, cdata(d_offs), segments,
                                          init_for<T>(), op_for<T>{}, o);
          seq::exclusive_segmented_scan(x.begin(), offs.begin(), offs.end(), want.begin(), init_for<T>(), op_for<T>{});
        } else {
          tally::inclusive_segmented_scan(cdata(in) + shift, out.data() + shift, n, cdata(d_offs), segments,
                                          op_for<T>{}, o);
          seq::inclusive_segmented_scan(x.begin(), offs.begin(), offs.end(), want.begin(), op_for<T>{});
        }
        TALLY_TEST_CUDA(cudaDeviceSynchronize());
        const auto got = out.download();
        ASSERT_TRUE(exact_match(std::vector<T>(got.begin() + shift, got.end()), want))
            << (exclusive ? "exclusive" : "inclusive") << " scan, " << what.str();
      }
      sums.poison();
      std::vector<T> want_sums(l.lens.size() + 1, poison_value<T>());
      tally::segmented_reduce(cdata(in) + shift, n, cdata(d_offs), segments, sums.data(), init_for<T>(),
                              op_for<T>{}, o);
      seq::segmented_reduce(x.begin(), offs.begin(), offs.end(), want_sums.begin(), init_for<T>(), op_for<T>{});
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(exact_match(sums.download(), want_sums)) << "segmented_reduce, " << what.str();
    }
  }
}

TEST(SegmentedOffsets, TileKernelAndBitmapPath) {
  check_offsets_paths<std::int32_t>(scan_strategy::decoupled_lookback);
  check_offsets_paths<double>(scan_strategy::decoupled_lookback);
  if (quick()) return;
  check_offsets_paths<std::uint64_t>(scan_strategy::automatic);
  check_offsets_paths<float>(scan_strategy::automatic);
}

// ---- segmented reduce ------------------------------------------------------------------------

// One reduce case: one result per segment into a buffer of S + 1 elements, the last of
// which must stay poison. `all_empty`: 37 empty segments at n / 2.
template <class Off, class T, class Init, class Op>
::testing::AssertionResult check_reduce_case(const std::vector<T>& h, const T* d_in, const scan_case& c,
                                             const Init& init, Op op, bool all_empty = false,
                                             const tally::options& o = {}) {
  using acc_t = tally::exclusive_accumulator_t<Op, Init, T>;
  fast_rng g(static_cast<std::uint64_t>(c.n) * 977 + static_cast<std::uint64_t>(c.d));
  const i64 lead = all_empty ? c.n / 2 : c.lead;
  const std::vector<i64> lens = all_empty ? std::vector<i64>(37, 0)
                                : c.d == dist::custom ? c.lens
                                                      : segment_lengths(c.d, c.n - c.lead - c.tail, g);
  const auto offs = make_offsets<Off>(lens, lead);
  const auto segments = static_cast<i64>(lens.size());
  const Off* d_offs = upload_aux<offsets_slot>(offs);
  device_buffer<acc_t> d_out(lens.size() + 1);
  d_out.poison();
  std::vector<acc_t> want(lens.size() + 1, poison_value<acc_t>());
  tally::segmented_reduce(d_in, c.n, d_offs, segments, d_out.data(), init, op, o);
  seq::segmented_reduce(h.begin(), offs.begin(), offs.end(), want.begin(), init, op);
  std::ostringstream what;
  what << "segmented_reduce, n = " << c.n << ", " << (all_empty ? "only empty segments" : dist_name(c.d))
       << " (" << segments << " segments), offsets[0] = " << lead;
  return finish(o.stream, d_out, want, what.str());
}

std::vector<scan_case> reduce_cases(bool big) {
  auto v = scan_cases(true, big);
  std::vector<scan_case> extra{{0, dist::custom, 0, 0, {0, 0, 0}},
                               {1000, dist::custom, 0, 0, {}},
                               {1000, dist::custom, 10, 0, {0, 5, 0, 0, 900, 0}},
                               {9000, dist::custom, 1, 0, {4095, 0, 4097, 0, 1}}};
  v.insert(v.end(), extra.begin(), extra.end());
  return v;
}

template <class Off, class T, class Op>
void check_reduce(const std::vector<T>& h, const T& init, Op op) {
  const device_buffer<T> in(h);
  const auto cases = reduce_cases(sizeof(T) <= 4);
  for (const auto& c : cases) {
    if (static_cast<std::size_t>(c.n) > h.size()) continue;
    ASSERT_TRUE(check_reduce_case<Off>(h, cdata(in), c, init, op));
  }
  // only empty segments, at a few sizes: every result is init
  for (const i64 n : {i64{0}, i64{1}, i64{4097}, i64{100000}}) {
    ASSERT_TRUE(check_reduce_case<Off>(h, cdata(in), scan_case{n, dist::custom}, init, op, true));
  }
}

std::size_t reduce_max_n() { return static_cast<std::size_t>(max_n(reduce_cases(true))); }

TEST(SegmentedReduce, Int32Plus) {
  check_reduce<std::int32_t>(exact_values<std::int32_t>(reduce_max_n(), 51), std::int32_t{7}, tally::plus{});
}
TEST(SegmentedReduce, Int32PlusInt64Offsets) {
  check_reduce<std::int64_t>(exact_values<std::int32_t>(reduce_max_n(), 52), std::int32_t{7}, tally::plus{});
}
TEST(SegmentedReduce, FloatPlus) {
  check_reduce<std::int32_t>(exact_values<float>(reduce_max_n(), 53), 7.0f, tally::plus{});
}
TEST(SegmentedReduce, Mat2Product) {
  check_reduce<std::int32_t>(exact_values<mat2>(reduce_max_n(), 54), init_for<mat2>(), mat2_product{});
}
// Values in [-100, 100], init -50: segments whose values are all below -50 (the short
// ones, often) give init, the others their maximum.
TEST(SegmentedReduce, Int32MaximumWithInit) {
  check_reduce<std::int32_t>(exact_values<std::int32_t>(reduce_max_n(), 55), std::int32_t{-50}, tally::maximum{});
}

// ---- batched -------------------------------------------------------------------------------------

enum class batched_form { two_d, span };

// One batched case: `out` (poisoned, or holding h in place) gets the scan of the first
// element_count(shape) elements; one more element is checked to be untouched.
template <class T, class Op>
::testing::AssertionResult check_batched_case(const std::vector<T>& h, const T* d_in, device_buffer<T>& out,
                                              const std::vector<i64>& shape, int axis, bool exclusive,
                                              batched_form bf, const T& init, Op op,
                                              const tally::options& o = {}, bool in_place = false) {
  const i64 total = element_count(shape);
  const std::size_t count = std::min(static_cast<std::size_t>(total) + 1, out.size());
  if (static_cast<std::size_t>(total) > h.size() || (in_place && h.size() != out.size())) {
    throw std::logic_error("test: buffers too small for the case");
  }
  std::vector<T> want;
  if (in_place) {
    out.upload(h);
    want.assign(h.begin(), h.begin() + static_cast<std::ptrdiff_t>(count));
  } else {
    poison_prefix(out, count);
    want.assign(count, poison_value<T>());
  }
  const T* in = in_place ? out.data() : d_in;
  const std::span<const i64> s(shape);
  if (bf == batched_form::two_d) {
    if (exclusive) {
      tally::exclusive_scan_batched(in, out.data(), shape[0], shape[1], axis, init, op, o);
    } else {
      tally::inclusive_scan_batched(in, out.data(), shape[0], shape[1], axis, op, o);
    }
  } else {
    if (exclusive) {
      tally::exclusive_scan_batched(in, out.data(), s, axis, init, op, o);
    } else {
      tally::inclusive_scan_batched(in, out.data(), s, axis, op, o);
    }
  }
  if (exclusive) {
    seq::exclusive_scan_batched(h.begin(), want.begin(), s, axis, init, op);
  } else {
    seq::inclusive_scan_batched(h.begin(), want.begin(), s, axis, op);
  }
  std::ostringstream what;
  what << (exclusive ? "exclusive" : "inclusive") << " batched scan "
       << (bf == batched_form::two_d ? "(rows, cols) " : "(shape) ") << shape_string(shape)
       << " along axis " << axis << (in_place ? ", in place" : "");
  return finish(o.stream, out, want, what.str());
}

std::vector<std::vector<i64>> shapes_2d() {
  if (quick()) return {{1, 1}, {1 << 12, 32}, {32, 1 << 12}, {1000, 3}, {3, 1000}, {300, 257}};
  return {{1, 1},   {1000, 1},  {1, 1000}, {1 << 12, 32}, {32, 1 << 12}, {1000, 3},
          {3, 1000}, {300, 257}, {2, 5000}, {5000, 2},     {64, 4096}};
}

std::vector<std::vector<i64>> shapes_nd() {
  if (quick()) return {{3, 100, 7}, {2, 3, 4, 5}, {4097}, {2, 4097, 3}};
  return {{3, 100, 7}, {2, 3, 4, 5}, {5000}, {4097}, {1, 1, 1}, {4, 1, 300},
          {2, 4097, 3}, {3, 2, 4097}, {2, 1, 3, 1, 5}, {300, 257}};
}

template <class T>
void check_batched(bool in_place) {
  SCOPED_TRACE(std::string("batched ") + type_name<T>() + (in_place ? ", in place" : ""));
  i64 m = 0;
  for (const auto& s : shapes_2d()) m = std::max(m, element_count(s));
  for (const auto& s : shapes_nd()) m = std::max(m, element_count(s));
  const auto h = exact_values<T>(static_cast<std::size_t>(m) + 1, 777 + sizeof(T));
  const device_buffer<T> in(h);
  device_buffer<T> out(h.size());
  const T init = init_for<T>();
  for (const bool exclusive : {false, true}) {
    for (const auto& shape : shapes_2d()) {
      for (const int axis : {0, 1}) {
        ASSERT_TRUE(check_batched_case(h, cdata(in), out, shape, axis, exclusive, batched_form::two_d,
                                       init, op_for<T>{}, {}, in_place));
      }
    }
    for (const auto& shape : shapes_nd()) {
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        ASSERT_TRUE(check_batched_case(h, cdata(in), out, shape, axis, exclusive, batched_form::span,
                                       init, op_for<T>{}, {}, in_place));
      }
    }
  }
}

TEST(SegmentedBatched, Int32) { check_batched<std::int32_t>(false); }
TEST(SegmentedBatched, Float) { check_batched<float>(false); }
TEST(SegmentedBatched, Mat2) { check_batched<mat2>(false); }
TEST(SegmentedBatched, InPlace) {
  check_batched<std::int32_t>(true);
  check_batched<mat2>(true);
}

// The initializer_list overloads (a braced shape at the call).
TEST(SegmentedBatched, InitializerListShape) {
  const auto h = exact_values<mat2>(2 * 3 * 4 * 5 + 3 * 100 * 7 + 1, 31337);
  const device_buffer<mat2> in(h);
  device_buffer<mat2> out(h.size());
  const mat2 init = init_for<mat2>();
  for (int axis = 0; axis < 3; ++axis) {
    for (const bool exclusive : {false, true}) {
      const std::vector<i64> shape{3, 100, 7};
      const std::size_t total = 3 * 100 * 7;
      out.poison();
      std::vector<mat2> want(total + 1, poison_value<mat2>());
      if (exclusive) {
        tally::exclusive_scan_batched(cdata(in), out.data(), {3, 100, 7}, axis, init, mat2_product{});
        seq::exclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), axis, init, mat2_product{});
      } else {
        tally::inclusive_scan_batched(cdata(in), out.data(), {3, 100, 7}, axis, mat2_product{});
        seq::inclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), axis, mat2_product{});
      }
      ASSERT_TRUE(finish(nullptr, out, want, "{3, 100, 7} along axis " + std::to_string(axis)));
    }
  }
  for (int axis = 0; axis < 4; ++axis) {
    const std::vector<i64> shape{2, 3, 4, 5};
    out.poison();
    std::vector<mat2> want(2 * 3 * 4 * 5 + 1, poison_value<mat2>());
    tally::inclusive_scan_batched(cdata(in), out.data(), {2, 3, 4, 5}, axis, mat2_product{}, tally::options{});
    seq::inclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), axis, mat2_product{});
    ASSERT_TRUE(finish(nullptr, out, want, "{2, 3, 4, 5} along axis " + std::to_string(axis)));
  }
}

// A zero extent anywhere: no elements, nothing written, no error (even with null pointers).
TEST(SegmentedBatched, ZeroExtents) {
  device_buffer<std::int32_t> in(exact_values<std::int32_t>(64, 5)), out(64);
  const std::vector<std::vector<i64>> shapes{{0}, {0, 5}, {5, 0}, {7, 0, 3}, {2, 3, 0}};
  for (const auto& shape : shapes) {
    for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
      out.poison();
      const std::span<const i64> s(shape);
      tally::inclusive_scan_batched(cdata(in), out.data(), s, axis, tally::plus{}, tally::options{});
      tally::exclusive_scan_batched(cdata(in), out.data(), s, axis, 7, tally::plus{}, tally::options{});
      const int* null_in = nullptr;
      int* null_out = nullptr;
      EXPECT_NO_THROW(tally::inclusive_scan_batched(null_in, null_out, s, axis, tally::plus{}, tally::options{}))
          << shape_string(shape);
      if (shape.size() == 2) {
        tally::inclusive_scan_batched(cdata(in), out.data(), shape[0], shape[1], axis, tally::plus{},
                                      tally::options{});
        tally::exclusive_scan_batched(cdata(in), out.data(), shape[0], shape[1], axis, 7, tally::plus{},
                                      tally::options{});
      }
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(exact_match(out.download(), std::vector<std::int32_t>(64, poison_value<std::int32_t>())))
          << shape_string(shape) << " along axis " << axis;
    }
  }
}

// ---- options: determinism, streams, accepted strategies, defaults ---------------------------------

// Non-integer floats, so the association order matters: with options.deterministic the
// bits of the scans by flags and by offsets and of segmented_reduce must be the same in
// every run (5 runs; quick mode: 3, one layout). The results must also be within the usual
// float bound of a double-precision oracle: (32 + 4 log2 n) ulps of the segment's prefix
// of |x| (of its sum of |x| for the reduce).
TEST(SegmentedOptions, DeterministicFloat) {
  const i64 n = quick() ? quick_cap - 1 : (i64{1} << 20) + 7;
  fast_rng g(2024);
  std::vector<float> h(static_cast<std::size_t>(n));
  for (auto& x : h) x = std::uniform_real_distribution<float>(-1000.0f, 1000.0f)(g);
  std::vector<double> hd(h.begin(), h.end()), habs(h.size());
  for (std::size_t i = 0; i < h.size(); ++i) habs[i] = std::fabs(hd[i]);
  const device_buffer<float> in(h);
  device_buffer<float> out(h.size());
  tally::options o;
  o.deterministic = true;
  const float init = 0.3f;
  const double ulps = 32.0 + 4.0 * std::log2(static_cast<double>(n) + 1.0);
  const std::vector<dist> layouts = quick() ? std::vector<dist>{dist::long_mix}
                                            : std::vector<dist>{dist::long_mix, dist::random, dist::huge};
  const int runs = quick() ? 3 : 5;
  for (const dist d : layouts) {
    const auto lens = segment_lengths(d, n, g);
    const auto flags = head_flags<std::uint8_t>(lens, n, g);
    const auto offs = make_offsets<std::int32_t>(lens, 0);
    const device_buffer<std::uint8_t> d_flags(flags);
    const device_buffer<std::int32_t> d_offs(offs);
    for (const bool by_offsets : {false, true}) {
      for (const bool exclusive : {false, true}) {
        SCOPED_TRACE(std::string(dist_name(d)) + (by_offsets ? ", by offsets" : ", by flags") +
                     (exclusive ? ", exclusive" : ", inclusive"));
        std::vector<double> want(h.size()), scale(h.size());
        if (exclusive) {
          seq::exclusive_scan_by_flags(hd.begin(), hd.end(), flags.begin(), want.begin(), double{init}, tally::plus{});
          seq::exclusive_scan_by_flags(habs.begin(), habs.end(), flags.begin(), scale.begin(),
                                       std::fabs(double{init}), tally::plus{});
        } else {
          seq::inclusive_scan_by_flags(hd.begin(), hd.end(), flags.begin(), want.begin(), tally::plus{});
          seq::inclusive_scan_by_flags(habs.begin(), habs.end(), flags.begin(), scale.begin(), tally::plus{});
        }
        std::vector<float> first_run;
        for (int run = 0; run < runs; ++run) {
          out.poison();
          if (by_offsets && exclusive) {
            tally::exclusive_segmented_scan(cdata(in), out.data(), n, cdata(d_offs), static_cast<i64>(lens.size()),
                                            init, tally::plus{}, o);
          } else if (by_offsets) {
            tally::inclusive_segmented_scan(cdata(in), out.data(), n, cdata(d_offs), static_cast<i64>(lens.size()),
                                            tally::plus{}, o);
          } else if (exclusive) {
            tally::exclusive_scan_by_flags(cdata(in), cdata(d_flags), out.data(), n, init, tally::plus{}, o);
          } else {
            tally::inclusive_scan_by_flags(cdata(in), cdata(d_flags), out.data(), n, tally::plus{}, o);
          }
          TALLY_TEST_CUDA(cudaDeviceSynchronize());
          auto got = out.download();
          if (run == 0) {
            std::size_t bad = 0, at = 0;
            for (std::size_t i = 0; i < got.size(); ++i) {
              const double tol = ulps * std::numeric_limits<float>::epsilon() * scale[i];
              if (!(std::fabs(static_cast<double>(got[i]) - want[i]) <= tol) && bad++ == 0) at = i;
            }
            ASSERT_EQ(bad, 0u) << "first element beyond the tolerance at [" << at << "]: got "
                               << show(got[at]) << ", expected " << want[at] << " (seed " << seed() << ")";
            first_run = std::move(got);
          } else {
            std::size_t at = 0;
            while (at < got.size() && std::memcmp(&got[at], &first_run[at], sizeof(float)) == 0) ++at;
            ASSERT_EQ(at, got.size()) << "run " << run << " differs from run 0, first at [" << at << "]: "
                                      << show(got[at]) << " vs " << show(first_run[at]);
          }
        }
      }
    }
    // segmented_reduce: the same bits every run, within the bound of each segment's sum of |x|
    SCOPED_TRACE(std::string(dist_name(d)) + ", segmented_reduce");
    device_buffer<float> sums(lens.size());
    std::vector<float> first_sums;
    for (int run = 0; run < runs; ++run) {
      sums.poison();
      tally::segmented_reduce(cdata(in), n, cdata(d_offs), static_cast<i64>(lens.size()), sums.data(), init,
                              tally::plus{}, o);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      auto got = sums.download();
      if (run == 0) {
        for (std::size_t k = 0; k < lens.size(); ++k) {
          double want = init, scale = std::fabs(double{init});
          for (auto i = offs[k]; i < offs[k + 1]; ++i) {
            want += hd[static_cast<std::size_t>(i)];
            scale += habs[static_cast<std::size_t>(i)];
          }
          const double tol = ulps * std::numeric_limits<float>::epsilon() * scale;
          ASSERT_LE(std::fabs(static_cast<double>(got[k]) - want), tol)
              << "segment " << k << ": got " << show(got[k]) << ", expected " << want;
        }
        first_sums = std::move(got);
      } else {
        ASSERT_EQ(std::memcmp(got.data(), first_sums.data(), got.size() * sizeof(float)), 0)
            << "run " << run << " of segmented_reduce differs from run 0";
      }
    }
  }
}

// Every form on a non-blocking stream; only that stream is waited for.
TEST(SegmentedOptions, NonDefaultStream) {
  cudaStream_t stream;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  tally::options o;
  o.stream = stream;
  const i64 n = quick() ? quick_cap - 3 : mid_size;
  const auto h = exact_values<std::int32_t>(static_cast<std::size_t>(n) + 1, 8080);
  const device_buffer<std::int32_t> in(h);
  device_buffer<std::int32_t> out(h.size());
  const std::int32_t init = 7;
  const tally::plus op{};
  for (const bool exclusive : {false, true}) {
    for (const dist d : {dist::random, dist::long_mix}) {
      const scan_case c{n, d};
      const scan_case c_offsets{n, d, 100, 3000};
      EXPECT_TRUE(check_scan_case<form::flags_u8>(h, cdata(in), out, c, exclusive, init, op, o));
      EXPECT_TRUE(check_scan_case<form::flags_int>(h, cdata(in), out, c, exclusive, init, op, o));
      EXPECT_TRUE(check_scan_case<form::keys>(h, cdata(in), out, c, exclusive, init, op, o));
      EXPECT_TRUE(check_scan_case<form::keys_mod10>(h, cdata(in), out, c, exclusive, init, op, o));
      EXPECT_TRUE(check_scan_case<form::offsets32>(h, cdata(in), out, c_offsets, exclusive, init, op, o));
      EXPECT_TRUE(check_scan_case<form::offsets64>(h, cdata(in), out, c_offsets, exclusive, init, op, o));
      EXPECT_TRUE(check_reduce_case<std::int32_t>(h, cdata(in), c_offsets, init, op, false, o));
    }
    for (const auto& shape : std::vector<std::vector<i64>>{{300, 257}, {2, 5000}, {3, 100, 7}}) {
      for (int axis = 0; axis < static_cast<int>(shape.size()); ++axis) {
        EXPECT_TRUE(check_batched_case(h, cdata(in), out, shape, axis, exclusive,
                                       shape.size() == 2 ? batched_form::two_d : batched_form::span, init,
                                       op, o));
      }
    }
  }
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// The strategies and block algorithms the segmented forms accept, and deterministic mode
// with integers (exact either way).
TEST(SegmentedOptions, AcceptedStrategiesAndBlocks) {
  const i64 n = quick() ? 10000 : 50000;
  const auto h = exact_values<std::int32_t>(static_cast<std::size_t>(n) + 1, 606);
  const device_buffer<std::int32_t> in(h);
  device_buffer<std::int32_t> out(h.size());
  for (const auto s : {scan_strategy::automatic, scan_strategy::decoupled_lookback}) {
    for (const auto b : {block_scan::automatic, block_scan::warp_scans}) {
      for (const bool deterministic : {false, true}) {
        tally::options o;
        o.strategy = s;
        o.block = b;
        o.deterministic = deterministic;
        SCOPED_TRACE("strategy " + std::to_string(int(s)) + ", block " + std::to_string(int(b)) +
                     (deterministic ? ", deterministic" : ""));
        const scan_case c{n, dist::random};
        const scan_case c_offsets{n, dist::random_with_empty, 10, 10};
        for (const bool exclusive : {false, true}) {
          EXPECT_TRUE(check_scan_case<form::flags_u8>(h, cdata(in), out, c, exclusive, 7, tally::plus{}, o));
          EXPECT_TRUE(check_scan_case<form::keys>(h, cdata(in), out, c, exclusive, 7, tally::plus{}, o));
          EXPECT_TRUE(check_scan_case<form::offsets32>(h, cdata(in), out, c_offsets, exclusive, 7, tally::plus{}, o));
          EXPECT_TRUE(check_batched_case(h, cdata(in), out, {50, 200}, 0, exclusive, batched_form::two_d, 7,
                                         tally::plus{}, o));
        }
        EXPECT_TRUE(check_reduce_case<std::int32_t>(h, cdata(in), c_offsets, 7, tally::plus{}, false, o));
      }
    }
  }
}

// The default operator (plus), equal (==) and options.
TEST(SegmentedOptions, Defaults) {
  const i64 n = 5000;
  const auto h = exact_values<std::int32_t>(static_cast<std::size_t>(n), 909);
  const device_buffer<std::int32_t> in(h);
  device_buffer<std::int32_t> out(static_cast<std::size_t>(n));
  fast_rng g(909);
  const auto lens = segment_lengths(dist::random, n, g);
  const auto flags = head_flags<std::uint8_t>(lens, n, g);
  const auto keys = segment_keys(lens, n, g, false);
  const auto offs = make_offsets<std::int32_t>(lens, 0);
  const device_buffer<std::uint8_t> d_flags(flags);
  const device_buffer<int> d_keys(keys);
  const device_buffer<std::int32_t> d_offs(offs);
  const auto segments = static_cast<i64>(lens.size());
  std::vector<std::int32_t> want(static_cast<std::size_t>(n));
  auto check = [&](const char* what) {
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_TRUE(exact_match(out.download(), want)) << what;
    out.poison();
  };
  out.poison();
  tally::inclusive_scan_by_flags(cdata(in), cdata(d_flags), out.data(), n);
  seq::inclusive_scan_by_flags(h.begin(), h.end(), flags.begin(), want.begin());
  check("inclusive_scan_by_flags");
  tally::exclusive_scan_by_flags(cdata(in), cdata(d_flags), out.data(), n, 7);
  seq::exclusive_scan_by_flags(h.begin(), h.end(), flags.begin(), want.begin(), 7);
  check("exclusive_scan_by_flags");
  tally::inclusive_scan_by_key(cdata(d_keys), cdata(in), out.data(), n);
  seq::inclusive_scan_by_key(keys.begin(), keys.end(), h.begin(), want.begin());
  check("inclusive_scan_by_key");
  tally::exclusive_scan_by_key(cdata(d_keys), cdata(in), out.data(), n, 7);
  seq::exclusive_scan_by_key(keys.begin(), keys.end(), h.begin(), want.begin(), 7);
  check("exclusive_scan_by_key");
  tally::inclusive_segmented_scan(cdata(in), out.data(), n, cdata(d_offs), segments);
  seq::inclusive_segmented_scan(h.begin(), offs.begin(), offs.end(), want.begin());
  check("inclusive_segmented_scan");
  tally::exclusive_segmented_scan(cdata(in), out.data(), n, cdata(d_offs), segments, 7);
  seq::exclusive_segmented_scan(h.begin(), offs.begin(), offs.end(), want.begin(), 7);
  check("exclusive_segmented_scan");
  const std::vector<i64> shape{50, 100};
  tally::inclusive_scan_batched(cdata(in), out.data(), 50, 100, 0);
  seq::inclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 0);
  check("inclusive_scan_batched (rows, cols)");
  tally::exclusive_scan_batched(cdata(in), out.data(), 50, 100, 1, 7);
  seq::exclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 1, 7);
  check("exclusive_scan_batched (rows, cols)");
  tally::inclusive_scan_batched(cdata(in), out.data(), std::span<const i64>(shape), 1);
  seq::inclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 1);
  check("inclusive_scan_batched (shape)");
  tally::exclusive_scan_batched(cdata(in), out.data(), std::span<const i64>(shape), 0, 7);
  seq::exclusive_scan_batched(h.begin(), want.begin(), std::span<const i64>(shape), 0, 7);
  check("exclusive_scan_batched (shape)");
  device_buffer<std::int32_t> sums(lens.size());
  tally::segmented_reduce(cdata(in), n, cdata(d_offs), segments, sums.data(), 7);
  std::vector<std::int32_t> want_sums(lens.size());
  seq::segmented_reduce(h.begin(), offs.begin(), offs.end(), want_sums.begin(), 7);
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(exact_match(sums.download(), want_sums)) << "segmented_reduce";
}

// The accumulator rule: int32 values near 2^30 with an int64 init accumulate (and store)
// in int64, where int32 would overflow.
TEST(SegmentedOptions, ExclusiveAccumulatesInInitType) {
  const i64 n = 200000;
  fast_rng g(31);
  std::vector<std::int32_t> h(static_cast<std::size_t>(n));
  for (auto& x : h) x = std::uniform_int_distribution<std::int32_t>(1 << 29, 1 << 30)(g);
  const auto lens = segment_lengths(dist::long_mix, n, g);
  const auto flags = head_flags<std::uint8_t>(lens, n, g);
  const auto offs = make_offsets<std::int32_t>(lens, 0);
  const device_buffer<std::int32_t> in(h);
  const device_buffer<std::uint8_t> d_flags(flags);
  const device_buffer<std::int32_t> d_offs(offs);
  device_buffer<std::int64_t> out(h.size()), sums(lens.size());
  out.poison();
  sums.poison();
  tally::exclusive_scan_by_flags(cdata(in), cdata(d_flags), out.data(), n, std::int64_t{5}, tally::plus{},
                                 tally::options{});
  tally::segmented_reduce(cdata(in), n, cdata(d_offs), static_cast<i64>(lens.size()), sums.data(),
                          std::int64_t{5}, tally::plus{}, tally::options{});
  std::vector<std::int64_t> want(h.size()), want_sums(lens.size());
  seq::exclusive_scan_by_flags(h.begin(), h.end(), flags.begin(), want.begin(), std::int64_t{5}, tally::plus{});
  seq::segmented_reduce(h.begin(), offs.begin(), offs.end(), want_sums.begin(), std::int64_t{5}, tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_TRUE(exact_match(out.download(), want)) << "exclusive_scan_by_flags";
  EXPECT_TRUE(exact_match(sums.download(), want_sums)) << "segmented_reduce";
}

// ---- argument errors ---------------------------------------------------------------------------

// `f` throws std::invalid_argument naming `function` and (quoted, as 'argument') `argument`.
template <class F>
void expect_invalid(F&& f, const std::string& function, const std::string& argument, bool quoted = true) {
  const std::string m = invalid_argument_message(std::forward<F>(f));
  EXPECT_NE(m.find(function), std::string::npos) << "expected the function " << function << " in: " << m;
  const std::string arg = quoted ? "'" + argument + "'" : argument;
  EXPECT_NE(m.find(arg), std::string::npos) << "expected the argument " << arg << " in: " << m;
}

// Valid buffers (64 elements, two segments), so that a call that wrongly does not throw
// still runs on valid memory.
struct argument_fixture {
  static constexpr i64 n = 64;
  device_buffer<std::int32_t> in{exact_values<std::int32_t>(n, 1)};
  device_buffer<std::int32_t> out{static_cast<std::size_t>(n)};
  device_buffer<std::uint8_t> flags{std::vector<std::uint8_t>(n, 0)};
  device_buffer<int> keys{std::vector<int>(n, 3)};
  device_buffer<std::int32_t> offsets{std::vector<std::int32_t>{0, 16, 64}};
  device_buffer<std::int32_t> sums{3};
  const std::int32_t* x = in.data();
  std::int32_t* y = out.data();
  const std::uint8_t* f = flags.data();
  const int* k = keys.data();
  const std::int32_t* off = offsets.data();
  const std::int32_t* null_x = nullptr;
  std::int32_t* null_y = nullptr;
  const std::uint8_t* null_f = nullptr;
  const int* null_k = nullptr;
  const std::int32_t* null_off = nullptr;
  const tally::plus op{};
  const tally::options o{};
};

TEST(SegmentedArguments, NegativeCounts) {
  argument_fixture a;
  expect_invalid([&] { tally::inclusive_scan_by_flags(a.x, a.f, a.y, -1, a.op, a.o); }, "inclusive_scan_by_flags", "n");
  expect_invalid([&] { tally::exclusive_scan_by_flags(a.x, a.f, a.y, -1, 7, a.op, a.o); }, "exclusive_scan_by_flags", "n");
  expect_invalid([&] { tally::inclusive_scan_by_key(a.k, a.x, a.y, -1, a.op, std::equal_to<>{}, a.o); }, "inclusive_scan_by_key", "n");
  expect_invalid([&] { tally::exclusive_scan_by_key(a.k, a.x, a.y, -1, 7, a.op, std::equal_to<>{}, a.o); }, "exclusive_scan_by_key", "n");
  expect_invalid([&] { tally::inclusive_segmented_scan(a.x, a.y, -1, a.off, 2, a.op, a.o); }, "inclusive_segmented_scan", "n");
  expect_invalid([&] { tally::exclusive_segmented_scan(a.x, a.y, -1, a.off, 2, 7, a.op, a.o); }, "exclusive_segmented_scan", "n");
  expect_invalid([&] { tally::segmented_reduce(a.x, -1, a.off, 2, a.y, 7, a.op, a.o); }, "segmented_reduce", "n");
  expect_invalid([&] { tally::inclusive_segmented_scan(a.x, a.y, a.n, a.off, -1, a.op, a.o); }, "inclusive_segmented_scan", "num_segments");
  expect_invalid([&] { tally::exclusive_segmented_scan(a.x, a.y, a.n, a.off, -1, 7, a.op, a.o); }, "exclusive_segmented_scan", "num_segments");
  expect_invalid([&] { tally::segmented_reduce(a.x, a.n, a.off, -1, a.y, 7, a.op, a.o); }, "segmented_reduce", "num_segments");
}

TEST(SegmentedArguments, NullPointers) {
  argument_fixture a;
  const i64 n = a.n;
  expect_invalid([&] { tally::inclusive_scan_by_flags(a.null_x, a.f, a.y, n, a.op, a.o); }, "inclusive_scan_by_flags", "in");
  expect_invalid([&] { tally::inclusive_scan_by_flags(a.x, a.null_f, a.y, n, a.op, a.o); }, "inclusive_scan_by_flags", "flags");
  expect_invalid([&] { tally::inclusive_scan_by_flags(a.x, a.f, a.null_y, n, a.op, a.o); }, "inclusive_scan_by_flags", "out");
  expect_invalid([&] { tally::exclusive_scan_by_flags(a.null_x, a.f, a.y, n, 7, a.op, a.o); }, "exclusive_scan_by_flags", "in");
  expect_invalid([&] { tally::exclusive_scan_by_flags(a.x, a.null_f, a.y, n, 7, a.op, a.o); }, "exclusive_scan_by_flags", "flags");
  expect_invalid([&] { tally::exclusive_scan_by_flags(a.x, a.f, a.null_y, n, 7, a.op, a.o); }, "exclusive_scan_by_flags", "out");
  expect_invalid([&] { tally::inclusive_scan_by_key(a.null_k, a.x, a.y, n, a.op, std::equal_to<>{}, a.o); }, "inclusive_scan_by_key", "keys");
  expect_invalid([&] { tally::inclusive_scan_by_key(a.k, a.null_x, a.y, n, a.op, std::equal_to<>{}, a.o); }, "inclusive_scan_by_key", "in");
  expect_invalid([&] { tally::inclusive_scan_by_key(a.k, a.x, a.null_y, n, a.op, std::equal_to<>{}, a.o); }, "inclusive_scan_by_key", "out");
  expect_invalid([&] { tally::exclusive_scan_by_key(a.null_k, a.x, a.y, n, 7, a.op, std::equal_to<>{}, a.o); }, "exclusive_scan_by_key", "keys");
  expect_invalid([&] { tally::exclusive_scan_by_key(a.k, a.null_x, a.y, n, 7, a.op, std::equal_to<>{}, a.o); }, "exclusive_scan_by_key", "in");
  expect_invalid([&] { tally::exclusive_scan_by_key(a.k, a.x, a.null_y, n, 7, a.op, std::equal_to<>{}, a.o); }, "exclusive_scan_by_key", "out");
  expect_invalid([&] { tally::inclusive_segmented_scan(a.null_x, a.y, n, a.off, 2, a.op, a.o); }, "inclusive_segmented_scan", "in");
  expect_invalid([&] { tally::inclusive_segmented_scan(a.x, a.null_y, n, a.off, 2, a.op, a.o); }, "inclusive_segmented_scan", "out");
  expect_invalid([&] { tally::inclusive_segmented_scan(a.x, a.y, n, a.null_off, 2, a.op, a.o); }, "inclusive_segmented_scan", "offsets");
  expect_invalid([&] { tally::exclusive_segmented_scan(a.null_x, a.y, n, a.off, 2, 7, a.op, a.o); }, "exclusive_segmented_scan", "in");
  expect_invalid([&] { tally::exclusive_segmented_scan(a.x, a.null_y, n, a.off, 2, 7, a.op, a.o); }, "exclusive_segmented_scan", "out");
  expect_invalid([&] { tally::exclusive_segmented_scan(a.x, a.y, n, a.null_off, 2, 7, a.op, a.o); }, "exclusive_segmented_scan", "offsets");
  expect_invalid([&] { tally::segmented_reduce(a.null_x, n, a.off, 2, a.y, 7, a.op, a.o); }, "segmented_reduce", "in");
  expect_invalid([&] { tally::segmented_reduce(a.x, n, a.null_off, 2, a.y, 7, a.op, a.o); }, "segmented_reduce", "offsets");
  expect_invalid([&] { tally::segmented_reduce(a.x, n, a.off, 2, a.null_y, 7, a.op, a.o); }, "segmented_reduce", "out");
  const std::vector<i64> shape{8, 8};
  const std::span<const i64> s(shape);
  expect_invalid([&] { tally::inclusive_scan_batched(a.null_x, a.y, s, 0, a.op, a.o); }, "inclusive_scan_batched", "in");
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.null_y, s, 0, a.op, a.o); }, "inclusive_scan_batched", "out");
  expect_invalid([&] { tally::exclusive_scan_batched(a.null_x, a.y, s, 1, 7, a.op, a.o); }, "exclusive_scan_batched", "in");
  expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.null_y, s, 1, 7, a.op, a.o); }, "exclusive_scan_batched", "out");
  expect_invalid([&] { tally::inclusive_scan_batched(a.null_x, a.y, 8, 8, 1, a.op, a.o); }, "inclusive_scan_batched", "in");
  expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.null_y, 8, 8, 0, 7, a.op, a.o); }, "exclusive_scan_batched", "out");
  // no elements: null pointers are fine
  EXPECT_NO_THROW(tally::inclusive_scan_by_flags(a.null_x, a.null_f, a.null_y, 0, a.op, a.o));
  EXPECT_NO_THROW(tally::exclusive_scan_by_flags(a.null_x, a.null_f, a.null_y, 0, 7, a.op, a.o));
  EXPECT_NO_THROW(tally::inclusive_scan_by_key(a.null_k, a.null_x, a.null_y, 0, a.op, std::equal_to<>{}, a.o));
  EXPECT_NO_THROW(tally::exclusive_scan_by_key(a.null_k, a.null_x, a.null_y, 0, 7, a.op, std::equal_to<>{}, a.o));
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
}

TEST(SegmentedArguments, Shapes) {
  argument_fixture a;
  auto span_of = [](const std::vector<i64>& v) { return std::span<const i64>(v); };
  const std::vector<i64> s2{8, 8}, s3{2, 4, 8}, negative{8, -1}, empty{};
  for (const int axis : {-1, 2}) {
    expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, span_of(s2), axis, a.op, a.o); }, "inclusive_scan_batched", "axis");
    expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.y, span_of(s2), axis, 7, a.op, a.o); }, "exclusive_scan_batched", "axis");
    expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, 8, 8, axis, a.op, a.o); }, "inclusive_scan_batched", "axis");
    expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.y, 8, 8, axis, 7, a.op, a.o); }, "exclusive_scan_batched", "axis");
  }
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, span_of(s3), 3, a.op, a.o); }, "inclusive_scan_batched", "axis");
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, {2, 4, 8}, -2, a.op, a.o); }, "inclusive_scan_batched", "axis");
  expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.y, {2, 4, 8}, 3, 7, a.op, a.o); }, "exclusive_scan_batched", "axis");
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, span_of(negative), 0, a.op, a.o); }, "inclusive_scan_batched", "shape");
  expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.y, span_of(negative), 1, 7, a.op, a.o); }, "exclusive_scan_batched", "shape");
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, {-3, 2}, 1, a.op, a.o); }, "inclusive_scan_batched", "shape");
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, span_of(empty), 0, a.op, a.o); }, "inclusive_scan_batched", "shape");
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, -1, 8, 0, a.op, a.o); }, "inclusive_scan_batched", "rows");
  expect_invalid([&] { tally::inclusive_scan_batched(a.x, a.y, 8, -1, 1, a.op, a.o); }, "inclusive_scan_batched", "cols");
  expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.y, -1, 8, 0, 7, a.op, a.o); }, "exclusive_scan_batched", "rows");
  expect_invalid([&] { tally::exclusive_scan_batched(a.x, a.y, 8, -1, 1, 7, a.op, a.o); }, "exclusive_scan_batched", "cols");
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
}

// options.storage (which these forms do not take), a block algorithm other than
// automatic / warp_scans, a strategy other than automatic / decoupled_lookback (the
// textbook ones: chained, reduce_then_scan, scan_then_propagate): every function throws
// std::invalid_argument naming the function and the option.
TEST(SegmentedArguments, Options) {
  argument_fixture a;
  const i64 n = a.n;
  const std::vector<i64> shape{8, 8};
  const std::span<const i64> s(shape);
  const std::vector<std::pair<std::string, std::function<void(const tally::options&)>>> calls{
      {"inclusive_scan_by_flags", [&](const tally::options& o) { tally::inclusive_scan_by_flags(a.x, a.f, a.y, n, a.op, o); }},
      {"exclusive_scan_by_flags", [&](const tally::options& o) { tally::exclusive_scan_by_flags(a.x, a.f, a.y, n, 7, a.op, o); }},
      {"inclusive_scan_by_key", [&](const tally::options& o) { tally::inclusive_scan_by_key(a.k, a.x, a.y, n, a.op, std::equal_to<>{}, o); }},
      {"exclusive_scan_by_key", [&](const tally::options& o) { tally::exclusive_scan_by_key(a.k, a.x, a.y, n, 7, a.op, std::equal_to<>{}, o); }},
      {"inclusive_segmented_scan", [&](const tally::options& o) { tally::inclusive_segmented_scan(a.x, a.y, n, a.off, 2, a.op, o); }},
      {"exclusive_segmented_scan", [&](const tally::options& o) { tally::exclusive_segmented_scan(a.x, a.y, n, a.off, 2, 7, a.op, o); }},
      {"segmented_reduce", [&](const tally::options& o) { tally::segmented_reduce(a.x, n, a.off, 2, a.sums.data(), 7, a.op, o); }},
      {"inclusive_scan_batched", [&](const tally::options& o) { tally::inclusive_scan_batched(a.x, a.y, s, 1, a.op, o); }},
      {"exclusive_scan_batched", [&](const tally::options& o) { tally::exclusive_scan_batched(a.x, a.y, s, 0, 7, a.op, o); }},
      {"inclusive_scan_batched", [&](const tally::options& o) { tally::inclusive_scan_batched(a.x, a.y, 8, 8, 0, a.op, o); }},
      {"exclusive_scan_batched", [&](const tally::options& o) { tally::exclusive_scan_batched(a.x, a.y, 8, 8, 1, 7, a.op, o); }},
  };
  device_buffer<unsigned char> storage(std::size_t{1} << 20);
  std::vector<std::pair<tally::options, std::string>> bad;
  {
    tally::options o;
    o.storage.data = storage.data();
    o.storage.bytes = storage.size();
    bad.emplace_back(o, "storage");
  }
  for (const auto b : {block_scan::kogge_stone, block_scan::kogge_stone_double_buffered, block_scan::brent_kung,
                       block_scan::brent_kung_conflict_free, block_scan::coarsened}) {
    tally::options o;
    o.block = b;
    bad.emplace_back(o, "block");
  }
  for (const auto st : {scan_strategy::chained, scan_strategy::reduce_then_scan, scan_strategy::scan_then_propagate}) {
    tally::options o;
    o.strategy = st;
    bad.emplace_back(o, "strategy");
  }
  for (const auto& entry : calls) {
    const std::string& name = entry.first;
    const auto& call = entry.second;
    for (const auto& bad_option : bad) {
      const tally::options& o = bad_option.first;
      const std::string& option = bad_option.second;
      SCOPED_TRACE(name + " with a bad options." + option + " (block " + std::to_string(int(o.block)) +
                   ", strategy " + std::to_string(int(o.strategy)) + ")");
      expect_invalid([&] { call(o); }, name, option, false);
    }
    // and the accepted ones run
    EXPECT_NO_THROW(call(tally::options{})) << name;
  }
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
}

}  // namespace
