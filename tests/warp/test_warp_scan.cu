// tests/warp/test_warp_scan.cu -- tally::warp scans and reduction against the CPU oracle.
//
// One kernel scans each warp of a launch in four ways (inclusive, exclusive with a seed,
// exclusive without a seed, reduce); the host checks every warp with
// tally::cpu::sequential. Types cover the native shuffle (int32, uint64, double) and
// the word-by-word shuffle (int8, int16, the 16-byte mat2).
#include "test_common.cuh"

namespace {

using namespace tally_test;

template <class T, class Op>
__global__ void warp_kernel(const T* in, T* inclusive, T* exclusive, T* exclusive_unseeded,
                            T* reduced, T init, Op op) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const T x = in[i];
  inclusive[i] = tally::warp::inclusive_scan(x, op);
  exclusive[i] = tally::warp::exclusive_scan(x, init, op);
  exclusive_unseeded[i] = tally::warp::exclusive_scan(x, op);
  reduced[i] = tally::warp::reduce(x, op);
}

template <class T, class Op>
void check_warp_scans() {
  const int threads = 128, blocks = quick() ? 4 : 64;
  const std::size_t n = static_cast<std::size_t>(threads) * blocks;
  // integer-valued doubles: the sums are exact, so any order of summation compares equal
  std::vector<T> h(n);
  auto g = rng(sizeof(T) * 31 + n);
  for (auto& x : h) {
    if constexpr (std::is_same_v<T, double>) {
      x = static_cast<double>(std::uniform_int_distribution<int>(1, 1000)(g));
    } else {
      x = random_value<T, Op>(g);
    }
  }
  const T init = test_init<T, Op>();
  Op op{};
  device_buffer<T> in(h), inc(n), exc(n), exu(n), red(n);
  for (auto* b : {&inc, &exc, &exu, &red}) b->poison();
  warp_kernel<<<blocks, threads>>>(in.data(), inc.data(), exc.data(), exu.data(), red.data(), init,
                                   op);
  TALLY_TEST_CUDA(cudaGetLastError());
  TALLY_TEST_CUDA(cudaDeviceSynchronize());
  const auto hi = inc.download(), he = exc.download(), hu = exu.download(), hr = red.download();
  for (std::size_t w = 0; w < n / 32; ++w) {
    std::vector<T> seg(h.begin() + w * 32, h.begin() + (w + 1) * 32);
    std::vector<T> want_i(32), want_e(32);
    tally::cpu::sequential::inclusive_scan(seg.begin(), seg.end(), want_i.begin(), op);
    tally::cpu::sequential::exclusive_scan(seg.begin(), seg.end(), want_e.begin(), init, op);
    for (int l = 0; l < 32; ++l) {
      const std::size_t i = w * 32 + l;
      ASSERT_EQ(hi[i], want_i[l]) << "inclusive, warp " << w << " lane " << l;
      ASSERT_EQ(he[i], want_e[l]) << "exclusive, warp " << w << " lane " << l;
      if (l > 0) ASSERT_EQ(hu[i], want_i[l - 1]) << "unseeded exclusive, warp " << w << " lane " << l;
      ASSERT_EQ(hr[i], want_i[31]) << "reduce, warp " << w << " lane " << l;
    }
  }
}

TEST(WarpScan, Int32Plus) { check_warp_scans<std::int32_t, tally::plus>(); }
TEST(WarpScan, Int32Maximum) { check_warp_scans<std::int32_t, tally::maximum>(); }
TEST(WarpScan, Uint64Plus) { check_warp_scans<std::uint64_t, tally::plus>(); }
TEST(WarpScan, DoublePlus) { check_warp_scans<double, tally::plus>(); }
TEST(WarpScan, Int8Maximum) { check_warp_scans<std::int8_t, tally::maximum>(); }
TEST(WarpScan, Int16Maximum) { check_warp_scans<std::int16_t, tally::maximum>(); }
TEST(WarpScan, Mat2Product) { check_warp_scans<mat2, mat2_product>(); }

}  // namespace
