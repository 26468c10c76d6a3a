// tests/device/multi_pass/test_device_baselines.cu -- the teaching baselines against the
// sequential oracle (tally::cpu::sequential), in one translation unit:
//   - the block algorithms blelloch and brent_kung_divergent under both multi-pass
//     strategies (int32 sum with the deep sizes and in place, float sum, the 2x2 matrix
//     product), and one tile sweep each;
//   - the naive O(n^2) scan (scan_strategy::naive) up to 2^14 elements (2^12 quick),
//     int32 sum, float maximum, the matrix product, inclusive and exclusive, in place and
//     with caller storage;
//   - the segmented Blelloch scan (textbook::*_scan_by_flags): random, sparse, no and only
//     heads, int32 sum, float sum (exact: small integers) and affine composition, in
//     place, caller storage, bad arguments and options;
//   - the reductions naive, shared_divergent and shared_convergent: int32 sum (commutative:
//     the textbook convergent tree), int32 into int64, exact float sums, the matrix product
//     and affine composition (non-commutative: the bit-reversed convergent tree), caller
//     storage, bad arguments;
//   - step counts: the kernel launches of the naive scan and of the reductions (a CUDA
//     graph captured from the call, its kernel nodes counted) and the depth of the
//     reductions' trees (an operator that carries the length of its longest chain).
// (The work counts, operator applications, are in tests/block/test_op_count.cu.)
#include "test_affine.cuh"
#include "test_device_common.cuh"
#include "test_reduce_common.cuh"

namespace {

using namespace tally_test;
using tally::block_scan;
using tally::scan_strategy;
namespace r = tally::reduction;
using affine32 = tally_test::affine::affine32;
using compose32 = tally_test::affine::compose32;

// ---- the block baselines under the multi-pass strategies ------------------------------------
template <class Strategy, class Selector>
void check_block_baseline() {
  using tally::plus;
  {
    SCOPED_TRACE("int32 plus");
    check_device_sizes<Strategy, Selector, false, std::int32_t, plus>(
        standard_sizes<Selector, std::int32_t>(true), true);
    check_device_sizes<Strategy, Selector, true, std::int32_t, plus>(
        standard_sizes<Selector, std::int32_t>(true), true);
  }
  {
    SCOPED_TRACE("float plus");
    check_device_sizes<Strategy, Selector, false, float, plus>(standard_sizes<Selector, float>(false),
                                                               false);
    check_device_sizes<Strategy, Selector, true, float, plus>(standard_sizes<Selector, float>(false),
                                                              false);
  }
  {
    SCOPED_TRACE("mat2 product (non-commutative, no identity)");
    check_device_sizes<Strategy, Selector, false, mat2, mat2_product>(
        standard_sizes<Selector, mat2>(false), true);
    check_device_sizes<Strategy, Selector, true, mat2, mat2_product>(
        standard_sizes<Selector, mat2>(false), true);
  }
}

using blelloch = tally::detail::blelloch_selector;
using brent_kung_divergent = tally::detail::brent_kung_divergent_selector;

TEST(Baselines, Blelloch_ReduceThenScan) { check_block_baseline<reduce_then_scan, blelloch>(); }
TEST(Baselines, Blelloch_ScanThenPropagate) { check_block_baseline<scan_then_propagate, blelloch>(); }
TEST(Baselines, Blelloch_TileSweep) { check_tile_sweep<reduce_then_scan, blelloch>(); }
TEST(Baselines, BrentKungDivergent_ReduceThenScan) {
  check_block_baseline<reduce_then_scan, brent_kung_divergent>();
}
TEST(Baselines, BrentKungDivergent_ScanThenPropagate) {
  check_block_baseline<scan_then_propagate, brent_kung_divergent>();
}
TEST(Baselines, BrentKungDivergent_TileSweep) {
  check_tile_sweep<scan_then_propagate, brent_kung_divergent>();
}

// Both are power-of-two tiles of the trees' tuning.
static_assert(tally::detail::default_tile<blelloch, std::int32_t>() == 1024);
static_assert(tally::detail::default_tile<brent_kung_divergent, mat2>() == 256);

// ---- the naive scan -------------------------------------------------------------------------
template <bool Exclusive, class T, class Op>
void run_naive(const T* in, T* out, std::int64_t n, const T& init, Op op,
               const tally::options& o = {}) {
  tally::detail::textbook_scan<tally::detail::naive_scan::strategy,
                               tally::detail::warp_scans_selector, Exclusive, T>(
      "naive", "naive_storage_bytes", in, out, n, tally::detail::make_seed<T, Exclusive>(init), op, o);
}

std::vector<std::int64_t> naive_sizes() {
  const std::int64_t max_n = quick() ? 4096 : 16384;
  auto v = sizes(256, max_n);  // 0, 1, 2, 31, 32, 33, 255, 256, 257, ... randoms
  std::vector<std::int64_t> small;
  for (auto n : v)
    if (n <= max_n) small.push_back(n);
  return small;
}

template <bool Exclusive, class T, class Op>
void check_naive() {
  const auto sz = naive_sizes();
  const std::int64_t max_n = sz.back();
  const auto h = random_vector<T, Op>(static_cast<std::size_t>(max_n), 5100 + Exclusive);
  const T init = test_init<T, Op>();
  const Op op{};
  const auto want = reference_scan(h, Exclusive, init, op);
  device_buffer<T> in(h), out(static_cast<std::size_t>(max_n));
  for (const std::int64_t n : sz) {
    out.poison();
    run_naive<Exclusive>(in.data(), out.data(), n, init, op);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const std::size_t count = static_cast<std::size_t>(n < max_n ? n + 1 : n);
    const auto got = out.download(count);
    ASSERT_TRUE(matches(got, want, static_cast<std::size_t>(n))) << "naive scan of n = " << n;
    if (n < max_n) ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)]));
  }
  // in place: through n accumulators of temporary storage (stream-ordered, then the caller's)
  device_buffer<T> work(static_cast<std::size_t>(max_n));
  const std::size_t bytes = tally::detail::naive_scan::storage_bytes<T>(max_n);
  device_buffer<unsigned char> storage(bytes);
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{257}, max_n}) {
    for (const bool caller : {false, true}) {
      work.upload(h);
      tally::options o;
      if (caller) o.storage = {storage.data(), bytes};
      run_naive<Exclusive>(work.data(), work.data(), n, init, op, o);
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      ASSERT_TRUE(matches(work.download(static_cast<std::size_t>(n)), want, static_cast<std::size_t>(n)))
          << "in-place naive scan of n = " << n << (caller ? " (caller storage)" : "");
    }
  }
}

TEST(Baselines, NaiveScan_Int32Plus) {
  check_naive<false, std::int32_t, tally::plus>();
  check_naive<true, std::int32_t, tally::plus>();
}
// (float maximum, exact: a float sum's rounding grows with the naive scan's depth n, beyond
// the tolerance of matches(), which is for trees of logarithmic depth)
TEST(Baselines, NaiveScan_FloatMax) {
  check_naive<false, float, tally::maximum>();
  check_naive<true, float, tally::maximum>();
}
TEST(Baselines, NaiveScan_Mat2Product) {
  check_naive<false, mat2, mat2_product>();
  check_naive<true, mat2, mat2_product>();
}

TEST(Baselines, NaiveScan_TooSmallStorage) {
  device_buffer<std::int32_t> buf(100);
  device_buffer<unsigned char> storage(64);
  tally::options o;
  o.storage = {storage.data(), 64};
  const auto m = invalid_argument_message([&] { run_naive<false>(buf.data(), buf.data(), 100, 0, tally::plus{}, o); });
  EXPECT_NE(m.find("options.storage"), std::string::npos) << m;
}

// ---- the segmented Blelloch scan ------------------------------------------------------------
enum class heads_pattern { random_third, sparse, none, every };

std::vector<unsigned char> make_heads(std::size_t n, heads_pattern p, std::uint64_t salt) {
  auto g = rng(salt);
  std::vector<unsigned char> f(n);
  for (auto& x : f) {
    switch (p) {
      case heads_pattern::random_third: x = g() % 3 == 0; break;
      case heads_pattern::sparse: x = g() % 3000 == 0; break;
      case heads_pattern::none: x = 0; break;
      case heads_pattern::every: x = 1; break;
    }
  }
  if (n > 0) f[0] = 0xA5 % 2;  // flags[0] is not read: any value
  return f;
}

template <class T>
std::vector<T> segmented_input(std::size_t n, std::uint64_t salt) {
  if constexpr (std::is_same_v<T, affine32>) {
    auto g = rng(salt);
    std::vector<T> v(n);
    for (auto& x : v) x = affine32{static_cast<std::uint32_t>(g()) | 1u, static_cast<std::uint32_t>(g())};
    return v;
  } else if constexpr (std::is_floating_point_v<T>) {
    // 1 or 2: every sum of up to 2^22 of them is an integer below 2^24, exact in float
    // whatever the order of the additions
    auto g = rng(salt);
    std::vector<T> v(n);
    for (auto& x : v) x = static_cast<T>(1 + g() % 2);
    return v;
  } else {
    return random_vector<T, tally::plus>(n, salt);
  }
}

// Exact comparison (the float inputs above make every sum exact).
template <class T>
::testing::AssertionResult same(const std::vector<T>& got, const std::vector<T>& want, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    if (!(got[i] == want[i])) {
      return ::testing::AssertionFailure() << "[" << i << "] got " << tally_test::affine::show(got[i])
                                           << ", expected " << tally_test::affine::show(want[i])
                                           << " (seed " << seed() << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

template <bool Exclusive, class T, class Op>
void check_segmented(heads_pattern pattern) {
  constexpr std::int64_t tile = tally::detail::segmented_blelloch::tile_tuning<T>().tile_items();
  const auto sz = sizes(tile, quick() ? std::int64_t{1} << 17 : std::int64_t{1} << 22);
  const std::int64_t max_n = sz.back();
  const auto h = segmented_input<T>(static_cast<std::size_t>(max_n), 5200 + sizeof(T));
  const auto heads = make_heads(static_cast<std::size_t>(max_n), pattern, 5300 + static_cast<int>(pattern));
  const T init = segmented_input<T>(1, 5400)[0];
  const Op op{};
  device_buffer<T> in(h), out(static_cast<std::size_t>(max_n));
  device_buffer<unsigned char> flags(heads);
  const T* d = in.data();
  const unsigned char* f = flags.data();
  auto scan = [&](T* to, std::int64_t n, const tally::options& o) {
    if constexpr (Exclusive) {
      tally::textbook::exclusive_scan_by_flags(d, f, to, n, init, op, o);
    } else {
      tally::textbook::inclusive_scan_by_flags(d, f, to, n, op, o);
    }
  };
  for (const std::int64_t n : sz) {
    std::vector<T> want(static_cast<std::size_t>(n));
    if constexpr (Exclusive) {
      tally::cpu::sequential::exclusive_scan_by_flags(h.begin(), h.begin() + n, heads.begin(),
                                                      want.begin(), init, op);
    } else {
      tally::cpu::sequential::inclusive_scan_by_flags(h.begin(), h.begin() + n, heads.begin(),
                                                      want.begin(), op);
    }
    out.poison();
    scan(out.data(), n, tally::options{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    const std::size_t count = static_cast<std::size_t>(n < max_n ? n + 1 : n);
    const auto got = out.download(count);
    ASSERT_TRUE(same(got, want, static_cast<std::size_t>(n))) << "n = " << n;
    if (n < max_n) ASSERT_TRUE(device_buffer<T>::is_poison(got[static_cast<std::size_t>(n)]));
  }
  // in place, and with caller storage (no allocation), at the largest size
  std::vector<T> want(static_cast<std::size_t>(max_n));
  if constexpr (Exclusive) {
    tally::cpu::sequential::exclusive_scan_by_flags(h.begin(), h.end(), heads.begin(), want.begin(),
                                                    init, op);
  } else {
    tally::cpu::sequential::inclusive_scan_by_flags(h.begin(), h.end(), heads.begin(), want.begin(), op);
  }
  const std::size_t bytes =
      Exclusive ? tally::textbook::exclusive_scan_by_flags_storage_bytes<const T*, T, Op>(max_n)
                : tally::textbook::inclusive_scan_by_flags_storage_bytes<const T*, Op>(max_n);
  device_buffer<unsigned char> storage(bytes);
  tally::options o;
  o.storage = {storage.data(), bytes};
  o.block = block_scan::blelloch;
  device_buffer<T> work(h);
  if constexpr (Exclusive) {
    tally::textbook::exclusive_scan_by_flags(work.data(), f, work.data(), max_n, init, op, o);
  } else {
    tally::textbook::inclusive_scan_by_flags(work.data(), f, work.data(), max_n, op, o);
  }
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  ASSERT_TRUE(same(work.download(), want, static_cast<std::size_t>(max_n))) << "in place, caller storage";
}

template <class T, class Op>
void check_segmented_patterns() {
  for (auto p : {heads_pattern::random_third, heads_pattern::sparse, heads_pattern::none,
                 heads_pattern::every}) {
    SCOPED_TRACE("heads pattern " + std::to_string(static_cast<int>(p)));
    check_segmented<false, T, Op>(p);
    check_segmented<true, T, Op>(p);
  }
}

TEST(Baselines, SegmentedBlelloch_Int32Plus) { check_segmented_patterns<std::int32_t, tally::plus>(); }
TEST(Baselines, SegmentedBlelloch_FloatPlus) { check_segmented_patterns<float, tally::plus>(); }
TEST(Baselines, SegmentedBlelloch_AffineCompose) { check_segmented_patterns<affine32, compose32>(); }

TEST(Baselines, SegmentedBlelloch_BadArguments) {
  device_buffer<std::int32_t> buf(16);
  device_buffer<unsigned char> flags(16);
  const unsigned char* null_flags = nullptr;
  auto has = [](const std::string& m, const char* part) { return m.find(part) != std::string::npos; };
  std::string m = invalid_argument_message(
      [&] { tally::textbook::inclusive_scan_by_flags(buf.data(), flags.data(), buf.data(), -1); });
  EXPECT_TRUE(has(m, "textbook::inclusive_scan_by_flags") && has(m, "'n'")) << m;
  m = invalid_argument_message(
      [&] { tally::textbook::exclusive_scan_by_flags(buf.data(), null_flags, buf.data(), 16, 0); });
  EXPECT_TRUE(has(m, "textbook::exclusive_scan_by_flags") && has(m, "'flags'")) << m;
  tally::options o;
  o.block = block_scan::kogge_stone;
  m = invalid_argument_message(
      [&] { tally::textbook::inclusive_scan_by_flags(buf.data(), flags.data(), buf.data(), 16, tally::plus{}, o); });
  EXPECT_TRUE(has(m, "'options.block'")) << m;
  o = {};
  o.strategy = scan_strategy::chained;
  m = invalid_argument_message(
      [&] { tally::textbook::exclusive_scan_by_flags(buf.data(), flags.data(), buf.data(), 16, 0, tally::plus{}, o); });
  EXPECT_TRUE(has(m, "'options.strategy'")) << m;
  // too small caller storage (more than one tile needs the aggregates)
  const std::int64_t n = 1 << 20;
  device_buffer<std::int32_t> big(static_cast<std::size_t>(n));
  device_buffer<unsigned char> big_flags(static_cast<std::size_t>(n));
  ASSERT_GT((tally::textbook::inclusive_scan_by_flags_storage_bytes<const std::int32_t*>(n)), 0u);
  device_buffer<unsigned char> storage(16);
  o = {};
  o.storage = {storage.data(), 16};
  m = invalid_argument_message([&] {
    tally::textbook::inclusive_scan_by_flags(big.data(), big_flags.data(), big.data(), n, tally::plus{}, o);
  });
  EXPECT_TRUE(has(m, "'options.storage'") && has(m, "inclusive_scan_by_flags_storage_bytes")) << m;
}

// ---- the baseline reductions ----------------------------------------------------------------
const r::algorithm baseline_reductions[] = {r::algorithm::naive, r::algorithm::shared_divergent,
                                            r::algorithm::shared_convergent};

template <r::algorithm A, class In, class Out, class Init, class Op>
void reduce_with(In in, std::int64_t n, Out out, Init init, Op op, const tally::options& o = {}) {
  if constexpr (A == r::algorithm::naive) {
    r::naive(in, n, out, init, op, o);
  } else if constexpr (A == r::algorithm::shared_divergent) {
    r::shared_divergent(in, n, out, init, op, o);
  } else {
    r::shared_convergent(in, n, out, init, op, o);
  }
}

// Over the reduction size list: exact inputs (integers; integer-valued floats) or the
// non-commutative ones, folded in order on the host; then with caller storage of garbage.
template <r::algorithm A, class T, class Op>
void check_reduction(std::int64_t max_n) {
  using namespace tally_reduce_test;
  SCOPED_TRACE(r::algorithm_name(A));
  const auto sz = reduce_sizes<T>(max_n);
  const std::int64_t top = sz.back();
  auto g = rng(5500 + sizeof(T));
  std::vector<T> h;
  T init;
  if constexpr (std::is_arithmetic_v<T>) {
    h = exact_input<T>(static_cast<std::size_t>(top), 5600 + sizeof(T), false);
    init = exact_input<T>(1, 5700, false)[0];
  } else {
    h.resize(static_cast<std::size_t>(top));
    for (auto& x : h) x = random_element<T>(g);
    init = random_element<T>(g);
  }
  std::vector<T> want;
  if constexpr (std::is_arithmetic_v<T>) {
    want = references<T, Op>(h, init, sz);
  } else {
    T acc = init;
    std::size_t i = 0;
    for (const std::int64_t n : sz) {
      for (; i < static_cast<std::size_t>(n); ++i) acc = Op{}(acc, h[i]);
      want.push_back(acc);
    }
  }
  device_buffer<T> in(h), out(1);
  const T* d = in.data();
  for (std::size_t k = 0; k < sz.size(); ++k) {
    out.poison();
    reduce_with<A>(d, sz[k], out.data(), init, Op{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(out.download()[0] == want[k]) << "n = " << sz[k] << ": got " << show(out.download()[0])
                                              << ", expected " << show(want[k]) << " (seed " << seed() << ")";
  }
  const std::size_t bytes = r::storage_bytes<const T*, T, Op>(A, top);
  caller_storage storage(bytes);
  tally::options o;
  o.storage = storage.get();
  for (std::size_t k : {sz.size() - 1, sz.size() / 2}) {
    ASSERT_LE((r::storage_bytes<const T*, T, Op>(A, sz[k])), bytes);
    out.poison();
    reduce_with<A>(d, sz[k], out.data(), init, Op{}, o);
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    ASSERT_TRUE(out.download()[0] == want[k]) << "caller storage, n = " << sz[k];
  }
}

template <r::algorithm A>
void check_reduction_types() {
  const std::int64_t max_n = std::int64_t{1} << 22;
  check_reduction<A, std::int32_t, tally::plus>(max_n);
  check_reduction<A, float, tally::plus>(max_n);
  check_reduction<A, mat2, mat2_product>(max_n);
  check_reduction<A, tally::test::affine, tally::test::compose>(max_n);
  // the accumulator rule: int32 elements summed from an int64 init
  const std::int64_t n = 100003;
  auto g = rng(5800);
  std::vector<std::int32_t> h(n);
  for (auto& x : h) x = std::uniform_int_distribution<std::int32_t>(1 << 29, 1 << 30)(g);
  std::int64_t want = 5;
  for (auto x : h) want += x;
  device_buffer<std::int32_t> in(h);
  device_buffer<std::int64_t> out(1);
  out.poison();
  reduce_with<A>(static_cast<const std::int32_t*>(in.data()), n, out.data(), std::int64_t{5}, tally::plus{});
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  EXPECT_EQ(out.download()[0], want);
}

TEST(Baselines, Reduce_Naive) { check_reduction_types<r::algorithm::naive>(); }
TEST(Baselines, Reduce_SharedDivergent) { check_reduction_types<r::algorithm::shared_divergent>(); }
TEST(Baselines, Reduce_SharedConvergent) { check_reduction_types<r::algorithm::shared_convergent>(); }

TEST(Baselines, Reduce_BadArguments) {
  device_buffer<std::int32_t> in(10), out(1);
  const std::int32_t* d = in.data();
  const std::int32_t* null_in = nullptr;
  std::int32_t* null_out = nullptr;
  auto has = [](const std::string& m, const char* part) { return m.find(part) != std::string::npos; };
  std::string m = invalid_argument_message([&] { r::naive(d, -1, out.data(), 0); });
  EXPECT_TRUE(has(m, "tally::reduction::naive") && has(m, "'n'")) << m;
  m = invalid_argument_message([&] { r::shared_divergent(null_in, 4, out.data(), 0); });
  EXPECT_TRUE(has(m, "tally::reduction::shared_divergent") && has(m, "'in'")) << m;
  m = invalid_argument_message([&] { r::shared_convergent(d, 4, null_out, 0); });
  EXPECT_TRUE(has(m, "tally::reduction::shared_convergent") && has(m, "'out'")) << m;
  for (const auto a : baseline_reductions) EXPECT_NE(std::string(r::algorithm_name(a)), "?");
  EXPECT_EQ(r::launch_count(r::algorithm::naive, 1), 1);
  EXPECT_EQ(r::launch_count(r::algorithm::naive, 1025), 12);
  EXPECT_EQ(r::launch_count(r::algorithm::shared_convergent, 65536), 3);
  EXPECT_EQ(r::launch_count(r::algorithm::shared_divergent, 65537), 4);
}

// ---- step counts ----------------------------------------------------------------------------
// The kernel launches of `call` (queued on `stream`): captured into a graph, kernel nodes
// counted (stream-ordered allocations become memory nodes, not kernels).
template <class Call>
std::int64_t kernel_launches(cudaStream_t stream, Call call) {
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) != cudaSuccess) return -1;
  call();
  if (cudaStreamEndCapture(stream, &graph) != cudaSuccess) return -1;
  std::size_t count = 0;
  if (cudaGraphGetNodes(graph, nullptr, &count) != cudaSuccess) return -1;
  std::vector<cudaGraphNode_t> nodes(count);
  if (count > 0 && cudaGraphGetNodes(graph, nodes.data(), &count) != cudaSuccess) return -1;
  std::int64_t kernels = 0;
  for (auto node : nodes) {
    cudaGraphNodeType type{};
    if (cudaGraphNodeGetType(node, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel) ++kernels;
  }
  (void)cudaGraphDestroy(graph);
  return kernels;
}

TEST(Baselines, StepCounts_Launches) {
  cudaStream_t stream = nullptr;
  TALLY_TEST_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  const std::int64_t max_n = 70000;
  const auto h = random_vector<std::int32_t, tally::plus>(max_n, 5900);
  device_buffer<std::int32_t> in(h), out(max_n);
  tally::options o;
  o.stream = stream;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{256},
                               std::int64_t{257}, std::int64_t{65536}, std::int64_t{65537}, max_n}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const std::int32_t* d = in.data();
    std::int64_t levels = 0;  // ceil(log2 n)
    while ((std::int64_t{1} << levels) < n) ++levels;
    std::int64_t block_levels = 0;  // ceil(log_256 n)
    for (std::int64_t m = n; m > 1; m = (m + 255) / 256) ++block_levels;
    EXPECT_EQ(kernel_launches(stream, [&] { r::naive(d, n, out.data(), 0, tally::plus{}, o); }), levels + 1);
    EXPECT_EQ(r::launch_count(r::algorithm::naive, n), levels + 1);
    EXPECT_EQ(kernel_launches(stream, [&] { r::tree(d, n, out.data(), 0, tally::plus{}, o); }), levels + 1);
    for (const auto a : {r::algorithm::shared_divergent, r::algorithm::shared_convergent}) {
      EXPECT_EQ(kernel_launches(stream, [&] { r::run(a, d, n, out.data(), 0, tally::plus{}, o); }),
                block_levels + 1)
          << r::algorithm_name(a);
      EXPECT_EQ(r::launch_count(a, n), block_levels + 1);
    }
    if (n <= 4096) {
      // the naive scan: one launch; in place two (the scan into storage, the copy)
      EXPECT_EQ(kernel_launches(stream, [&] { run_naive<false>(d, out.data(), n, 0, tally::plus{}, o); }), 1);
      EXPECT_EQ(kernel_launches(stream, [&] { run_naive<true>(out.data(), out.data(), n, 0, tally::plus{}, o); }), 2);
    }
  }
  TALLY_TEST_CUDA(cudaStreamSynchronize(stream));
  TALLY_TEST_CUDA(cudaStreamDestroy(stream));
}

// The longest chain of applications behind a result: (sum, depth) under
// (a, b) -> (a.sum + b.sum, max(a.depth, b.depth) + 1). Not associative in the depth, so
// it measures the tree an algorithm builds: a result of depth d waited for d dependent
// applications (d steps, at the least). The sums check the result.
struct sum_depth {
  long long sum;
  int depth;
  bool operator==(const sum_depth&) const = default;
};
struct depth_op {
  TALLY_HOST_DEVICE sum_depth operator()(const sum_depth& a, const sum_depth& b) const {
    return {a.sum + b.sum, (a.depth > b.depth ? a.depth : b.depth) + 1};
  }
};
// the same, declared commutative (as it is) for the textbook convergent tree
struct commutative_depth_op : depth_op {};

}  // namespace

template <>
struct tally::is_commutative<commutative_depth_op, sum_depth> : std::true_type {};

namespace {

template <class Op>
void check_depths() {
  const std::int64_t max_n = quick() ? 70000 : 1 << 20;
  std::vector<sum_depth> h(static_cast<std::size_t>(max_n));
  for (std::size_t i = 0; i < h.size(); ++i) h[i] = {static_cast<long long>(i % 1000) + 1, 0};
  device_buffer<sum_depth> in(h), out(1);
  const sum_depth* d = in.data();
  const sum_depth init{7, 0};
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{100}, std::int64_t{256},
                               std::int64_t{257}, std::int64_t{4096}, std::int64_t{65537}, max_n}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    long long sum = init.sum;
    for (std::int64_t i = 0; i < n; ++i) sum += h[static_cast<std::size_t>(i)].sum;
    int levels = 0;  // ceil(log2 n): the naive tree's height
    while ((std::int64_t{1} << levels) < n) ++levels;
    // the shared trees: ceil(log2 of block 0's elements) at every launch
    int block_depth = 0;
    for (std::int64_t m = n; m > 1; m = (m + 255) / 256) {
      const std::int64_t v = m < 256 ? m : 256;
      int l = 0;
      while ((std::int64_t{1} << l) < v) ++l;
      block_depth += l;
    }
    out.poison();
    r::naive(d, n, out.data(), init, Op{});
    TALLY_TEST_CUDA(cudaDeviceSynchronize());
    EXPECT_EQ(out.download()[0], (sum_depth{sum, levels + 1})) << "naive";
    for (const auto a : {r::algorithm::shared_divergent, r::algorithm::shared_convergent}) {
      out.poison();
      if (a == r::algorithm::shared_divergent) {
        r::shared_divergent(d, n, out.data(), init, Op{});
      } else {
        r::shared_convergent(d, n, out.data(), init, Op{});
      }
      TALLY_TEST_CUDA(cudaDeviceSynchronize());
      EXPECT_EQ(out.download()[0], (sum_depth{sum, block_depth + 1})) << r::algorithm_name(a);
    }
  }
}

TEST(Baselines, StepCounts_TreeDepth) {
  check_depths<depth_op>();              // the bit-reversed convergent tree
  check_depths<commutative_depth_op>();  // the textbook convergent tree
}

}  // namespace
