// tests/block/test_op_count.cu -- work efficiency: the number of operator applications of
// one block scan of N items (one item per thread, N a power of two), counted by an
// operator that increments a global atomic counter:
//   Kogge-Stone (both buffers):   N log2 N - (N - 1)
//   Brent-Kung (both indexings, padded or not): 2N - 2 - log2 N
//   Blelloch: inclusive (through the down-sweep) 2N - 2; seeded exclusive 2N - 1
//             (2N - 2 plus the one application that forms the returned total)
//   segmented Blelloch (block/segmented_blelloch.cuh), no heads: exclusive 2N - 1,
//             inclusive 3N - 3 - log2 N, inclusive continuing a prefix 3N - 2; every item
//             a head: exclusive 1, inclusive 0 (a head skips the work before it)
// and of the device-wide teaching baselines (n elements):
//   the naive scan: n (n - 1) / 2, inclusive and exclusive (thread i applies op i times)
//   the reductions naive, shared_divergent, shared_convergent (and tree): n (n - 1 in the
//             tree, 1 for init). (block's warp butterflies apply op in every lane: more.)
// The results are checked as well, so a counter that misses work cannot pass.
#include "test_common.cuh"

namespace {

using namespace tally_test;

struct counting_plus {
  unsigned long long* counter;
  __device__ int operator()(int a, int b) const {
    atomicAdd(counter, 1ull);
    return a + b;
  }
};

template <class Block, bool Exclusive>
__global__ void count_kernel(const int* in, int* out, unsigned long long* counter) {
  __shared__ typename Block::TempStorage storage;
  Block scan(storage);
  const int x = in[threadIdx.x];
  if constexpr (Exclusive) {
    out[threadIdx.x] = scan.exclusive_scan(x, 5, counting_plus{counter});
  } else {
    out[threadIdx.x] = scan.inclusive_scan(x, counting_plus{counter});
  }
}

template <template <class, int, int> class Block, int N, bool Exclusive>
unsigned long long count_ops() {
  const auto h = random_vector<int, tally::plus>(N, N);
  device_buffer<int> in(h), out(N);
  device_buffer<unsigned long long> counter(1);
  out.poison();
  if (cudaMemset(counter.data(), 0, sizeof(unsigned long long)) != cudaSuccess) return 0;
  count_kernel<Block<int, N, 1>, Exclusive><<<1, N>>>(in.data(), out.data(), counter.data());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(matches(out.download(), reference_scan(h, Exclusive, 5, tally::plus{}), N));
  return counter.download()[0];
}

constexpr unsigned long long log2u(unsigned long long n) {
  unsigned long long l = 0;
  while ((1ull << l) < n) ++l;
  return l;
}
template <int N>
constexpr unsigned long long kogge_stone_ops = N * log2u(N) - (N - 1);
template <int N>
constexpr unsigned long long brent_kung_ops = 2ull * N - 2 - log2u(N);

template <class T, int Th, int It>
using bk_divergent = tally::block::block_scan_brent_kung<T, Th, It, tally::block::brent_kung_indexing::divergent>;
template <class T, int Th, int It>
using bk_contiguous = tally::block::block_scan_brent_kung<T, Th, It, tally::block::brent_kung_indexing::contiguous>;
template <class T, int Th, int It>
using blelloch = tally::block::block_scan_blelloch<T, Th, It, false>;
using tally::block::block_scan_brent_kung_conflict_free;
using tally::block::block_scan_kogge_stone;
using tally::block::block_scan_kogge_stone_double_buffered;

template <int N>
void check_counts() {
  SCOPED_TRACE("N = " + std::to_string(N));
  EXPECT_EQ((count_ops<block_scan_kogge_stone, N, false>()), kogge_stone_ops<N>);
  EXPECT_EQ((count_ops<block_scan_kogge_stone_double_buffered, N, false>()), kogge_stone_ops<N>);
  EXPECT_EQ((count_ops<bk_divergent, N, false>()), brent_kung_ops<N>);
  EXPECT_EQ((count_ops<bk_contiguous, N, false>()), brent_kung_ops<N>);
  EXPECT_EQ((count_ops<block_scan_brent_kung_conflict_free, N, false>()), brent_kung_ops<N>);
  EXPECT_EQ((count_ops<blelloch, N, false>()), 2ull * N - 2);
  EXPECT_EQ((count_ops<blelloch, N, true>()), 2ull * N - 1);
}

TEST(OperatorCount, N32) { check_counts<32>(); }
TEST(OperatorCount, N256) { check_counts<256>(); }
TEST(OperatorCount, N1024) { check_counts<1024>(); }

// ---- the segmented Blelloch tree ----
enum class segmented_form { inclusive, inclusive_prefix, exclusive };

template <int N, segmented_form Form>
__global__ void count_segmented_kernel(const int* in, const unsigned char* heads, int* out,
                                       unsigned long long* counter) {
  using block_t = tally::block::block_segmented_scan_blelloch<int, N, 1>;
  __shared__ typename block_t::TempStorage storage;
  block_t scan(storage);
  const int x[1] = {in[threadIdx.x]};
  const bool h[1] = {heads[threadIdx.x] != 0};
  int y[1];
  int total;
  if constexpr (Form == segmented_form::inclusive) {
    scan.inclusive_scan(x, h, y, counting_plus{counter}, total);
  } else if constexpr (Form == segmented_form::inclusive_prefix) {
    scan.inclusive_scan_with_prefix(x, h, y, 5, counting_plus{counter}, total);
  } else {
    scan.exclusive_scan(x, h, y, 5, counting_plus{counter}, total);
  }
  out[threadIdx.x] = y[0];
  if (threadIdx.x == 0) out[N] = total;
}

template <int N, segmented_form Form>
unsigned long long count_segmented(bool every_head) {
  const auto h = random_vector<int, tally::plus>(N, N + 1);
  const std::vector<unsigned char> heads(N, every_head ? 1 : 0);
  device_buffer<int> in(h), out(N + 1);
  device_buffer<unsigned char> flags(heads);
  device_buffer<unsigned long long> counter(1);
  out.poison();
  if (cudaMemset(counter.data(), 0, sizeof(unsigned long long)) != cudaSuccess) return 0;
  count_segmented_kernel<N, Form><<<1, N>>>(in.data(), flags.data(), out.data(), counter.data());
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  // the expected results: the prefix continues the segment before the tile (a head at 0
  // breaks it; the block scan reads the tile's flag 0, unlike the device forms)
  std::vector<int> want(N + 1);
  int run = 0;
  for (int i = 0; i < N; ++i) {
    const bool head = heads[i] != 0;
    if constexpr (Form == segmented_form::exclusive) {
      if (head || i == 0) run = 5;
      want[i] = run;
      run += h[i];
    } else if constexpr (Form == segmented_form::inclusive_prefix) {
      run = head ? h[i] : (i == 0 ? 5 : run) + h[i];
      want[i] = run;
    } else {
      run = head || i == 0 ? h[i] : run + h[i];
      want[i] = run;
    }
  }
  want[N] = Form == segmented_form::exclusive ? run : want[N - 1];
  EXPECT_EQ(out.download(), want);
  return counter.download()[0];
}

template <int N>
void check_segmented_counts() {
  SCOPED_TRACE("N = " + std::to_string(N));
  constexpr unsigned long long n = N;
  EXPECT_EQ((count_segmented<N, segmented_form::exclusive>(false)), 2 * n - 1);
  EXPECT_EQ((count_segmented<N, segmented_form::inclusive>(false)), 3 * n - 3 - log2u(n));
  EXPECT_EQ((count_segmented<N, segmented_form::inclusive_prefix>(false)), 3 * n - 2);
  EXPECT_EQ((count_segmented<N, segmented_form::exclusive>(true)), 1ull);
  EXPECT_EQ((count_segmented<N, segmented_form::inclusive>(true)), 0ull);
  EXPECT_EQ((count_segmented<N, segmented_form::inclusive_prefix>(true)), 0ull);
}

TEST(OperatorCount, SegmentedBlelloch) {
  check_segmented_counts<32>();
  check_segmented_counts<256>();
  check_segmented_counts<1024>();
}

// ---- the device-wide baselines ----
TEST(OperatorCount, NaiveScan) {
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{100}, std::int64_t{3000}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto h = random_vector<int, tally::plus>(static_cast<std::size_t>(n), 77);
    device_buffer<int> in(h), out(static_cast<std::size_t>(n));
    device_buffer<unsigned long long> counter(1);
    const unsigned long long want = static_cast<unsigned long long>(n) * (n - 1) / 2;
    for (const bool exclusive : {false, true}) {
      out.poison();
      ASSERT_EQ(cudaMemset(counter.data(), 0, sizeof(unsigned long long)), cudaSuccess);
      if (exclusive) {
        tally::detail::naive_scan::run<true, int>("naive", "naive", in.data(), out.data(), n,
                                                  tally::detail::seed_value<int, true>{5},
                                                  counting_plus{counter.data()}, nullptr, 0, nullptr);
      } else {
        tally::detail::naive_scan::run<false, int>("naive", "naive", in.data(), out.data(), n,
                                                   tally::detail::seed_value<int, false>{},
                                                   counting_plus{counter.data()}, nullptr, 0, nullptr);
      }
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_TRUE(matches(out.download(), reference_scan(h, exclusive, 5, tally::plus{}),
                          static_cast<std::size_t>(n)));
      EXPECT_EQ(counter.download()[0], want) << (exclusive ? "exclusive" : "inclusive");
    }
  }
}

TEST(OperatorCount, Reductions) {
  namespace r = tally::reduction;
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{1000}, std::int64_t{70001}}) {
    SCOPED_TRACE("n = " + std::to_string(n));
    const auto h = random_vector<int, tally::plus>(static_cast<std::size_t>(n), 78);
    int sum = 5;
    for (const int x : h) sum += x;
    device_buffer<int> in(h), out(1);
    device_buffer<unsigned long long> counter(1);
    const int* d = in.data();
    for (const auto a : {r::algorithm::naive, r::algorithm::shared_divergent,
                         r::algorithm::shared_convergent, r::algorithm::tree}) {
      out.poison();
      ASSERT_EQ(cudaMemset(counter.data(), 0, sizeof(unsigned long long)), cudaSuccess);
      const counting_plus op{counter.data()};
      switch (a) {
        case r::algorithm::naive: r::naive(d, n, out.data(), 5, op); break;
        case r::algorithm::shared_divergent: r::shared_divergent(d, n, out.data(), 5, op); break;
        case r::algorithm::shared_convergent: r::shared_convergent(d, n, out.data(), 5, op); break;
        default: r::tree(d, n, out.data(), 5, op); break;
      }
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      EXPECT_EQ(out.download()[0], sum) << r::algorithm_name(a);
      EXPECT_EQ(counter.download()[0], static_cast<unsigned long long>(n)) << r::algorithm_name(a);
    }
  }
}

}  // namespace
