// tests/block/test_op_count.cu -- work efficiency: the number of operator applications of
// one block scan of N items (one item per thread, N a power of two), counted by an
// operator that increments a global atomic counter:
//   Kogge-Stone (both buffers):   N log2 N - (N - 1)
//   Brent-Kung (both indexings, padded or not): 2N - 2 - log2 N
//   Blelloch: inclusive (through the down-sweep) 2N - 2; seeded exclusive 2N - 1
//             (2N - 2 plus the one application that forms the returned total)
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

}  // namespace
