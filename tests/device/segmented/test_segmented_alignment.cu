// GPU segmented scans: the paths that depend on alignment.
//
// For 4- and 8-byte values at 16-byte aligned pointers the segmented scans run the tile
// kernel of segmented/tile_heads.cuh (flags also need aligned flag bytes; keys at a pointer
// not aligned for 16-byte runs are read one by one there). Otherwise the pair scan of
// segmented/pairs_scan.cuh reads a lane's run of 16 bytes of values with the run's flags, keys
// or bitmap word when every pointer is aligned for it (flagged_input::vector_ready), and
// runs its scalar layout when not. The main tests (test_segmented.cu) use cudaMalloc'd,
// hence aligned, buffers. Here each pointer in turn (values in, flags or keys, values out)
// is offset by one element, which sends the call down the other paths, and the aligned
// case is run beside them. Sizes
// cross several tiles (4096 pairs for 4-byte values, 2048 for 8-byte ones) with a
// partial last tile; segment lengths are random from 1 to 40, so heads fall at every
// position of a run, including its first (where the key comparison reads the previous
// lane's key). Results are compared exactly with a sequential loop (small integer values:
// every sum is exact in int32 and in double).
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "test_common.cuh"

namespace {

using namespace tally_test;
using i64 = std::int64_t;

struct shifts {
  int in, heads, out;  // elements by which each pointer is moved from its aligned base
  std::string text() const {
    return "in+" + std::to_string(in) + " heads+" + std::to_string(heads) + " out+" +
           std::to_string(out);
  }
};

const std::vector<shifts> all_shifts = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}};

std::vector<i64> sizes_to_test() {
  if (quick()) return {3 * 4096 + 5};
  return {3 * 4096 + 5, (i64{1} << 18) + 3};
}

// Random segment lengths 1..40 covering n: the head of each segment.
std::vector<std::uint8_t> random_heads(i64 n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<std::uint8_t> heads(static_cast<std::size_t>(n), 0);
  for (i64 i = 0; i < n; i += 1 + static_cast<i64>(g() % 40)) heads[static_cast<std::size_t>(i)] = 1;
  return heads;
}

// The segmented sum of x[first, last) with the given heads (first always starts one),
// inclusive or exclusive from init; other positions keep `keep`.
template <class T>
std::vector<T> oracle(const std::vector<T>& x, const std::vector<std::uint8_t>& heads, i64 first,
                      i64 last, bool exclusive, T init, const std::vector<T>& keep) {
  std::vector<T> want = keep;
  T running{};
  for (i64 i = first; i < last; ++i) {
    const auto k = static_cast<std::size_t>(i);
    const bool head = i == first || heads[k] != 0;
    if (exclusive) {
      if (head) running = init;
      want[k] = running;
      running = static_cast<T>(running + x[k]);
    } else {
      running = head ? x[k] : static_cast<T>(running + x[k]);
      want[k] = running;
    }
  }
  return want;
}

template <class T>
std::vector<T> small_values(i64 n, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<T> v(static_cast<std::size_t>(n));
  for (auto& x : v) x = static_cast<T>(static_cast<int>(g() % 19) - 9);
  return v;
}

enum class form { flags, keys, offsets, batched };

const char* name(form f) {
  switch (f) {
    case form::flags: return "by flags";
    case form::keys: return "by keys";
    case form::offsets: return "offsets";
    case form::batched: return "batched (last axis)";
  }
  return "?";
}

// One form x type x size x shifts, inclusive and exclusive.
template <class T>
void check_case(form f, i64 n, const shifts& s, bool exclusive) {
  const std::string where = std::string(name(f)) + (exclusive ? " exclusive" : " inclusive") +
                            " n=" + std::to_string(n) + " " + s.text();
  const std::vector<T> x = small_values<T>(n, 11 + static_cast<std::uint64_t>(n));
  std::vector<std::uint8_t> heads = random_heads(n, 23 + static_cast<std::uint64_t>(n));
  const T init = static_cast<T>(5);
  const T sentinel = static_cast<T>(-1000);

  // offsets: the segments of `heads` inside [3, n - 2): elements outside are untouched
  i64 first = 0, last = n;
  std::vector<std::int32_t> offsets;
  // batched along the last axis: rows of 7 elements (heads every 7)
  i64 cols = 7;
  if (f == form::offsets) {
    first = 3;
    last = n - 2;
    for (i64 i = first; i < last; ++i) {
      if (i == first || heads[static_cast<std::size_t>(i)]) offsets.push_back(static_cast<std::int32_t>(i));
    }
    offsets.push_back(static_cast<std::int32_t>(last));
  } else if (f == form::batched) {
    n = n / cols * cols;
    heads.assign(static_cast<std::size_t>(n), 0);
    for (i64 i = 0; i < n; i += cols) heads[static_cast<std::size_t>(i)] = 1;
    last = n;
  }
  std::vector<std::int32_t> keys(static_cast<std::size_t>(n));
  std::int32_t key = 0;
  for (i64 i = 0; i < n; ++i) {
    if (i > 0 && heads[static_cast<std::size_t>(i)]) ++key;
    keys[static_cast<std::size_t>(i)] = key;
  }

  const std::vector<T> x_n(x.begin(), x.begin() + n);
  const std::vector<T> keep(static_cast<std::size_t>(n), sentinel);
  const std::vector<T> want = oracle(x_n, heads, first, last, exclusive, init, keep);

  // Buffers one element longer, so that each pointer may be moved by one element.
  std::vector<T> x_shifted(static_cast<std::size_t>(n) + 1, T{});
  std::copy(x_n.begin(), x_n.end(), x_shifted.begin() + s.in);
  std::vector<std::uint8_t> flags_shifted(static_cast<std::size_t>(n) + 1, 0);
  std::copy(heads.begin(), heads.begin() + n, flags_shifted.begin() + s.heads);
  std::vector<std::int32_t> keys_shifted(static_cast<std::size_t>(n) + 1, 0);
  std::copy(keys.begin(), keys.end(), keys_shifted.begin() + s.heads);
  std::vector<T> out_init(static_cast<std::size_t>(n) + 1, sentinel);

  device_buffer<T> d_in(x_shifted);
  device_buffer<std::uint8_t> d_flags(flags_shifted);
  device_buffer<std::int32_t> d_keys(keys_shifted);
  device_buffer<std::int32_t> d_offsets(offsets.empty() ? std::vector<std::int32_t>{0} : offsets);
  device_buffer<T> d_out(out_init);
  const T* in = d_in.data() + s.in;
  T* out = d_out.data() + s.out;
  const std::uint8_t* flags = d_flags.data() + s.heads;
  const std::int32_t* keys_p = d_keys.data() + s.heads;
  const i64 segments = static_cast<i64>(offsets.size()) - 1;

  switch (f) {
    case form::flags:
      if (exclusive) tally::exclusive_scan_by_flags(in, flags, out, n, init);
      else tally::inclusive_scan_by_flags(in, flags, out, n);
      break;
    case form::keys:
      if (exclusive) tally::exclusive_scan_by_key(keys_p, in, out, n, init);
      else tally::inclusive_scan_by_key(keys_p, in, out, n);
      break;
    case form::offsets:
      if (exclusive) tally::exclusive_segmented_scan(in, out, n, d_offsets.data(), segments, init);
      else tally::inclusive_segmented_scan(in, out, n, d_offsets.data(), segments);
      break;
    case form::batched:
      if (exclusive) tally::exclusive_scan_batched(in, out, n / cols, cols, 1, init);
      else tally::inclusive_scan_batched(in, out, n / cols, cols, 1);
      break;
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << where;
  const std::vector<T> got_all = d_out.download();
  for (i64 i = 0; i < n; ++i) {
    const auto k = static_cast<std::size_t>(i);
    ASSERT_EQ(got_all[k + static_cast<std::size_t>(s.out)], want[k]) << where << " at " << i;
  }
  // the element the shift left out stays untouched
  const std::size_t spare = s.out == 0 ? static_cast<std::size_t>(n) : 0;
  ASSERT_EQ(got_all[spare], sentinel) << where << ": the element outside [out, out + n)";
}

template <class T>
void check_type() {
  for (const form f : {form::flags, form::keys, form::offsets, form::batched}) {
    for (const i64 n : sizes_to_test()) {
      for (const shifts& s : all_shifts) {
        for (const bool exclusive : {false, true}) {
          check_case<T>(f, n, s, exclusive);
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST(SegmentedAlignment, Int32) { check_type<std::int32_t>(); }
TEST(SegmentedAlignment, Double) { check_type<double>(); }

}  // namespace
