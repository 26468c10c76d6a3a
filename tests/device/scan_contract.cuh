// tests/device/scan_contract.cuh -- the contract of tally::inclusive_scan / exclusive_scan,
// run on EVERY plan of the production call (device/detail/dispatch.cuh, scan_plan), each
// forced in turn through the test hook forced_scan_plan():
//   sizes around the plan's tile (1, 2, 31-33, tile - 1, tile, tile + 1, two tiles +- 1,
//   several tiles, random), inclusive, exclusive from a non-zero init, in place, and
//   misaligned pointers (one element off: the chooser's plan, since the vectorised plans
//   need 16-byte alignment), against the sequential CPU oracle, outputs poisoned first.
// Each check first asks the chooser which plan the call takes, so a plan that would not
// run is a failure, not a silent pass.
#pragma once

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "test_common.cuh"

namespace tally_test::contract {

using tally::detail::scan_plan;

inline constexpr scan_plan all_plans[] = {scan_plan::one_block, scan_plan::small_tiles,
                                          scan_plan::pipelined, scan_plan::tiles_by_block,
                                          scan_plan::tiles_by_ticket};

// Forces `plan` on this thread's scans while it lives.
class forced_plan {
 public:
  explicit forced_plan(scan_plan p) { tally::detail::forced_scan_plan() = p; }
  ~forced_plan() { tally::detail::forced_scan_plan().reset(); }
  forced_plan(const forced_plan&) = delete;
  forced_plan& operator=(const forced_plan&) = delete;
};

// Which plans can run values of Acc at all (the vectorised plans take 4- and 8-byte
// values; the pipelined kernel 4, 8 and 12-64 bytes).
template <class Acc>
bool plan_exists(scan_plan p) {
  namespace d = tally::detail;
  switch (p) {
    case scan_plan::one_block:
    case scan_plan::small_tiles:
    case scan_plan::tiles_by_block: return d::single_pass::vectorisable_v<Acc>;
    case scan_plan::pipelined: return d::pipelined::stages_v<Acc>;
    case scan_plan::tiles_by_ticket: return true;
  }
  return false;
}

// The tile of a plan, and the most elements it takes.
template <class Acc>
std::int64_t plan_tile(scan_plan p) {
  namespace d = tally::detail;
  switch (p) {
    case scan_plan::one_block: return d::one_block::max_items<Acc>();
    case scan_plan::small_tiles: return d::single_pass::small_single_pass_tuning<Acc>().tile_items();
    case scan_plan::pipelined:
      if constexpr (d::pipelined::stages_v<Acc>) return d::pipelined::tile_items<Acc>();
      return 1;
    default: return d::single_pass::default_single_pass_tuning<Acc>().tile_items();
  }
}
template <class Acc>
std::int64_t plan_max(scan_plan p) {
  namespace d = tally::detail;
  if (p == scan_plan::one_block) return d::one_block::max_items<Acc>();
  if (p == scan_plan::small_tiles) return d::single_pass::small_path_max_tiles * plan_tile<Acc>(p);
  return (quick() ? 12 : 40) * plan_tile<Acc>(p) + 5;
}

template <class Acc>
std::vector<std::int64_t> plan_sizes(scan_plan p) {
  const std::int64_t tile = plan_tile<Acc>(p), top = plan_max<Acc>(p);
  std::set<std::int64_t> s{1, 2, 31, 32, 33, tile - 1, tile, tile + 1, 2 * tile - 1, 2 * tile + 1,
                           top - 1, top};
  auto g = rng(97 + static_cast<std::uint64_t>(p) * 13 + sizeof(Acc));
  for (int i = 0; i < (quick() ? 2 : 6); ++i) {
    s.insert(std::uniform_int_distribution<std::int64_t>(1, top)(g));
  }
  std::vector<std::int64_t> v;
  for (const std::int64_t n : s) {
    if (n >= 1 && n <= top) v.push_back(n);
  }
  return v;
}

inline std::string plan_label(scan_plan p) { return tally::detail::scan_plan_name(p); }

// The oracle's answer for the first n of `h` (integers, structs: exact; floats: the
// double-precision reference with its tolerance, test_common.cuh).
template <class T, class Op>
auto oracle(const std::vector<T>& h, std::int64_t n, bool exclusive, T init, Op op) {
  const std::vector<T> prefix(h.begin(), h.begin() + n);
  return reference_scan(prefix, exclusive, init, op);
}

template <class T, class Op>
::testing::AssertionResult same(const std::vector<T>& got, const std::vector<T>& h,
                                std::int64_t n, bool exclusive, T init, Op op) {
  if constexpr (std::is_arithmetic_v<T>) {
    return matches(got, oracle(h, n, exclusive, init, op), static_cast<std::size_t>(n));
  } else {
    const std::vector<T> prefix(h.begin(), h.begin() + n);
    std::vector<T> want(static_cast<std::size_t>(n));
    if (exclusive) {
      tally::cpu::sequential::exclusive_scan(prefix.begin(), prefix.end(), want.begin(), init, op);
    } else {
      tally::cpu::sequential::inclusive_scan(prefix.begin(), prefix.end(), want.begin(), op);
    }
    for (std::int64_t i = 0; i < n; ++i) {
      if (!(got[static_cast<std::size_t>(i)] == want[static_cast<std::size_t>(i)])) {
        return ::testing::AssertionFailure() << "element " << i << " of " << n << " differs (seed "
                                             << seed() << ")";
      }
    }
    return ::testing::AssertionSuccess();
  }
}

template <class T, class Op>
std::vector<T> inputs(std::size_t n, std::uint64_t salt) {
  if constexpr (std::is_arithmetic_v<T>) {
    return random_vector<T, Op>(n, salt);
  } else {
    return bytes_random<T>(n, salt);
  }
}

// The contract of one type and operator on every plan that exists for it.
template <class T, class Op>
void check_every_plan(const char* label, Op op, std::uint64_t salt) {
  SCOPED_TRACE(label);
  namespace d = tally::detail;
  using strategy = d::decoupled_lookback::strategy;
  const T init = inputs<T, Op>(1, salt + 1)[0];
  for (const scan_plan plan : all_plans) {
    if (!plan_exists<T>(plan)) continue;
    const std::vector<std::int64_t> ns = plan_sizes<T>(plan);
    const std::int64_t max_n = ns.back();
    const auto h = inputs<T, Op>(static_cast<std::size_t>(max_n) + 1, salt + 7 * sizeof(T));
    device_buffer<T> in(h), out(static_cast<std::size_t>(max_n) + 1);
    for (const std::int64_t n : ns) {
      SCOPED_TRACE("plan " + plan_label(plan) + ", n = " + std::to_string(n));
      const forced_plan forced(plan);
      const scan_plan taken =
          d::scan_plan_for<strategy, T>("test", in.data(), out.data(), n, tally::options{});
      ASSERT_EQ(taken, plan) << "the forced plan does not run this call";
      out.poison();
      tally::inclusive_scan(in.data(), out.data(), n, op);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(same(out.download(static_cast<std::size_t>(n)), h, n, false, init, op))
          << "inclusive";
      out.poison();
      tally::exclusive_scan(in.data(), out.data(), n, init, op);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(same(out.download(static_cast<std::size_t>(n)), h, n, true, init, op))
          << "exclusive";
      // in place
      out.upload(h);
      tally::inclusive_scan(out.data(), out.data(), n, op);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(same(out.download(static_cast<std::size_t>(n)), h, n, false, init, op))
          << "inclusive in place";
      out.upload(h);
      tally::exclusive_scan(out.data(), out.data(), n, init, op);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(same(out.download(static_cast<std::size_t>(n)), h, n, true, init, op))
          << "exclusive in place";
    }
    // one element off: the aligned plans cannot run, the chooser decides
    const std::int64_t n = ns[ns.size() / 2];
    SCOPED_TRACE("plan " + plan_label(plan) + " forced, misaligned, n = " + std::to_string(n));
    const forced_plan forced(plan);
    const std::vector<T> shifted(h.begin() + 1, h.end());
    out.poison();
    tally::inclusive_scan(in.data() + 1, out.data() + 1, n, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const auto got = out.download(static_cast<std::size_t>(n) + 1);
    ASSERT_TRUE(same(std::vector<T>(got.begin() + 1, got.end()), shifted, n, false, init, op))
        << "misaligned inclusive";
  }
}

}  // namespace tally_test::contract
