// tests/block/test_block_scan.cu -- every block scan class used directly from a user kernel
// (as CUB's BlockScan is), against the CPU oracle: inclusive with aggregate, exclusive
// with a seed and total, for int32 plus, int32 maximum and the non-commutative mat2
// product (no identity), with one and several items per thread. Also block_reduce and
// Blelloch's unseeded exclusive scan (which needs an identity).
#include "test_common.cuh"

namespace {

using namespace tally_test;

// Each block scans its own tile of Block::tile_items elements, in the blocked arrangement.
template <class Block, int Items, class T, class Op>
__global__ void block_kernel(const T* in, T* inclusive, T* exclusive, T* aggregates, T* totals,
                             T init, Op op) {
  __shared__ typename Block::TempStorage storage;
  constexpr int threads = Block::block_threads;
  const std::size_t base = static_cast<std::size_t>(blockIdx.x) * threads * Items;
  T items[Items];
  for (int k = 0; k < Items; ++k) items[k] = in[base + threadIdx.x * Items + k];
  Block scan(storage);
  T out[Items];
  T aggregate;
  scan.inclusive_scan(items, out, op, aggregate);
  for (int k = 0; k < Items; ++k) inclusive[base + threadIdx.x * Items + k] = out[k];
  __syncthreads();  // the storage is reused
  T total;
  scan.exclusive_scan(items, items, init, op, total);  // in place on the items array
  for (int k = 0; k < Items; ++k) exclusive[base + threadIdx.x * Items + k] = items[k];
  aggregates[blockIdx.x * threads + threadIdx.x] = aggregate;
  totals[blockIdx.x * threads + threadIdx.x] = total;
}

// The single-item overloads (ItemsPerThread == 1).
template <class Block, class T, class Op>
__global__ void block_item_kernel(const T* in, T* inclusive, T* exclusive, T* aggregates,
                                  T* totals, T init, Op op) {
  __shared__ typename Block::TempStorage storage;
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  Block scan(storage);
  T aggregate, total;
  inclusive[i] = scan.inclusive_scan(in[i], op, aggregate);
  __syncthreads();
  exclusive[i] = scan.exclusive_scan(in[i], init, op, total);
  aggregates[i] = aggregate;
  totals[i] = total;
}

template <template <class, int, int> class Block, int Threads, int Items, class T, class Op>
void check_block() {
  using block_t = Block<T, Threads, Items>;
  constexpr int tile = Threads * Items;
  const int blocks = quick() ? 3 : 40;
  const std::size_t n = static_cast<std::size_t>(tile) * blocks;
  const auto h = random_vector<T, Op>(n, tile * 13 + Items);
  const T init = test_init<T, Op>();
  Op op{};
  device_buffer<T> in(h), inc(n), exc(n), agg(blocks * Threads), tot(blocks * Threads);
  for (auto* b : {&inc, &exc, &agg, &tot}) b->poison();
  if constexpr (Items == 1) {
    block_item_kernel<block_t><<<blocks, Threads>>>(in.data(), inc.data(), exc.data(), agg.data(),
                                                     tot.data(), init, op);
  } else {
    block_kernel<block_t, Items><<<blocks, Threads>>>(in.data(), inc.data(), exc.data(), agg.data(),
                                                       tot.data(), init, op);
  }
  TALLY_TEST_CUDA(cudaGetLastError());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto hi = inc.download(), he = exc.download(), ha = agg.download(), ht = tot.download();
  for (int b = 0; b < blocks; ++b) {
    std::vector<T> seg(h.begin() + b * tile, h.begin() + (b + 1) * tile);
    std::vector<T> got_i(hi.begin() + b * tile, hi.begin() + (b + 1) * tile);
    std::vector<T> got_e(he.begin() + b * tile, he.begin() + (b + 1) * tile);
    const auto want_i = reference_scan(seg, false, init, op);
    const auto want_e = reference_scan(seg, true, init, op);
    ASSERT_TRUE(matches(got_i, want_i, tile)) << "inclusive, block " << b;
    ASSERT_TRUE(matches(got_e, want_e, tile)) << "exclusive, block " << b;
    const T want_total = op(want_e.values[tile - 1], seg[tile - 1]);
    for (int t = 0; t < Threads; ++t) {
      ASSERT_EQ(ha[b * Threads + t], want_i.values[tile - 1]) << "aggregate, block " << b << " thread " << t;
      ASSERT_EQ(ht[b * Threads + t], want_total) << "exclusive total, block " << b << " thread " << t;
    }
  }
}

// Aliases with the uniform <T, Threads, Items> shape.
template <class T, int Th, int It>
using bk_divergent = tally::block::block_scan_brent_kung<T, Th, It, tally::block::brent_kung_indexing::divergent>;
template <class T, int Th, int It>
using bk_contiguous = tally::block::block_scan_brent_kung<T, Th, It, tally::block::brent_kung_indexing::contiguous>;
template <class T, int Th, int It>
using blelloch = tally::block::block_scan_blelloch<T, Th, It, false>;
template <class T, int Th, int It>
using blelloch_cf = tally::block::block_scan_blelloch<T, Th, It, true>;
using tally::block::block_scan_brent_kung_conflict_free;
using tally::block::block_scan_coarsened;
using tally::block::block_scan_kogge_stone;
using tally::block::block_scan_kogge_stone_double_buffered;
using tally::block::block_scan_warp_scans;

#define TALLY_BLOCK_TESTS(Name, Block, Threads, Items)                                        \
  TEST(BlockScan, Name##_##Threads##x##Items##_Int32Plus) {                                   \
    check_block<Block, Threads, Items, std::int32_t, tally::plus>();                          \
  }                                                                                           \
  TEST(BlockScan, Name##_##Threads##x##Items##_Int32Maximum) {                                \
    check_block<Block, Threads, Items, std::int32_t, tally::maximum>();                       \
  }                                                                                           \
  TEST(BlockScan, Name##_##Threads##x##Items##_Mat2Product) {                                 \
    check_block<Block, Threads, Items, mat2, mat2_product>();                                 \
  }

TALLY_BLOCK_TESTS(KoggeStone, block_scan_kogge_stone, 128, 1)
TALLY_BLOCK_TESTS(KoggeStone, block_scan_kogge_stone, 64, 3)
TALLY_BLOCK_TESTS(KoggeStoneDoubleBuffered, block_scan_kogge_stone_double_buffered, 128, 1)
TALLY_BLOCK_TESTS(KoggeStoneDoubleBuffered, block_scan_kogge_stone_double_buffered, 96, 4)
TALLY_BLOCK_TESTS(BrentKungDivergent, bk_divergent, 128, 1)
TALLY_BLOCK_TESTS(BrentKungDivergent, bk_divergent, 64, 4)
TALLY_BLOCK_TESTS(BrentKungContiguous, bk_contiguous, 256, 1)
TALLY_BLOCK_TESTS(BrentKungContiguous, bk_contiguous, 128, 2)
TALLY_BLOCK_TESTS(BrentKungConflictFree, block_scan_brent_kung_conflict_free, 128, 1)
TALLY_BLOCK_TESTS(BrentKungConflictFree, block_scan_brent_kung_conflict_free, 256, 4)
TALLY_BLOCK_TESTS(Blelloch, blelloch, 128, 1)
TALLY_BLOCK_TESTS(Blelloch, blelloch, 64, 8)
TALLY_BLOCK_TESTS(BlellochConflictFree, blelloch_cf, 256, 2)
TALLY_BLOCK_TESTS(Coarsened, block_scan_coarsened, 96, 1)
TALLY_BLOCK_TESTS(Coarsened, block_scan_coarsened, 128, 7)
TALLY_BLOCK_TESTS(WarpScans, block_scan_warp_scans, 32, 1)
TALLY_BLOCK_TESTS(WarpScans, block_scan_warp_scans, 160, 5)
TALLY_BLOCK_TESTS(WarpScans, block_scan_warp_scans, 1024, 2)

// Blelloch's exclusive scan without a seed: the root becomes the identity.
__global__ void blelloch_unseeded_kernel(const int* in, int* out) {
  using block_t = tally::block::block_scan_blelloch<int, 128, 2>;
  __shared__ block_t::TempStorage storage;
  int items[2] = {in[threadIdx.x * 2], in[threadIdx.x * 2 + 1]};
  block_t(storage).exclusive_scan(items, items, tally::plus{});
  out[threadIdx.x * 2] = items[0];
  out[threadIdx.x * 2 + 1] = items[1];
}

TEST(BlockScan, BlellochUnseededExclusive) {
  const auto h = random_vector<int, tally::plus>(256, 99);
  device_buffer<int> in(h), out(256);
  out.poison();
  blelloch_unseeded_kernel<<<1, 128>>>(in.data(), out.data());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto want = reference_scan(h, true, 0, tally::plus{});
  EXPECT_TRUE(matches(out.download(), want, 256));
}

// block_reduce in every thread, non-commutative.
template <int Threads, int Items>
__global__ void block_reduce_kernel(const mat2* in, mat2* out) {
  using reduce_t = tally::block::block_reduce<mat2, Threads, Items>;
  __shared__ typename reduce_t::TempStorage storage;
  mat2 items[Items];
  for (int k = 0; k < Items; ++k) items[k] = in[(blockIdx.x * Threads + threadIdx.x) * Items + k];
  out[blockIdx.x * Threads + threadIdx.x] = reduce_t(storage).reduce(items, mat2_product{});
}

template <int Threads, int Items>
void check_reduce() {
  const int blocks = 7, tile = Threads * Items;
  const auto h = random_vector<mat2, mat2_product>(static_cast<std::size_t>(blocks) * tile, 5);
  device_buffer<mat2> in(h), out(blocks * Threads);
  out.poison();
  block_reduce_kernel<Threads, Items><<<blocks, Threads>>>(in.data(), out.data());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto got = out.download();
  for (int b = 0; b < blocks; ++b) {
    mat2 want = h[b * tile];
    for (int i = 1; i < tile; ++i) want = mat2_product{}(want, h[b * tile + i]);
    for (int t = 0; t < Threads; ++t) ASSERT_EQ(got[b * Threads + t], want) << b << " " << t;
  }
}
TEST(BlockReduce, Mat2_96x3) { check_reduce<96, 3>(); }
TEST(BlockReduce, Mat2_1024x1) { check_reduce<1024, 1>(); }

}  // namespace
