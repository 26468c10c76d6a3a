// tests/headers/plain_flags/batched.cu -- the batched scans compiled without nvcc's
// experimental flags: along the last axis (whole lines in a tile, lines of whole tiles)
// and along another axis (the strided scans), 2-d and 3-d.
#include <cstdint>
#include <vector>

#include "plain_flags.cuh"
#include "tally/tally.cuh"

namespace {

using tally_plain::buffer;
using tally_plain::small_values;

template <class T>
void check_batched() {
  // rows x cols, scanned along each row (axis 1) and down each column (axis 0)
  for (const std::int64_t cols : {std::int64_t{5}, std::int64_t{37}, std::int64_t{3000},
                                  std::int64_t{8192}}) {
    const std::int64_t rows = 7;
    const auto h = small_values<T>(rows * cols);
    buffer<T> in(h), out(rows * cols);
    std::vector<T> along_rows(h.size()), down_columns(h.size());
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t i = r * cols + c;
        along_rows[i] = (c == 0 ? T(0) : along_rows[i - 1]) + h[i];
        down_columns[i] = (r == 0 ? T(0) : down_columns[i - cols]) + h[i];
      }
    }
    tally::inclusive_scan_batched(in.data(), out.data(), rows, cols, 1);
    EXPECT_EQ(out.download(), along_rows) << cols << " columns, axis 1";
    tally::inclusive_scan_batched(in.data(), out.data(), rows, cols, 0);
    EXPECT_EQ(out.download(), down_columns) << cols << " columns, axis 0";
    tally::exclusive_scan_batched(in.data(), out.data(), {rows, cols}, 1, T(0));
    std::vector<T> exclusive_rows(h.size());
    for (std::size_t i = 0; i < h.size(); ++i) exclusive_rows[i] = along_rows[i] - h[i];
    EXPECT_EQ(out.download(), exclusive_rows) << cols << " columns, exclusive, axis 1";
  }
  // a 3-d shape along its middle axis
  const std::int64_t a = 3, b = 50, c = 4;
  const auto h = small_values<T>(a * b * c);
  buffer<T> in(h), out(a * b * c);
  std::vector<T> expected(h.size());
  for (std::int64_t i = 0; i < a; ++i) {
    for (std::int64_t j = 0; j < b; ++j) {
      for (std::int64_t k = 0; k < c; ++k) {
        const std::int64_t x = (i * b + j) * c + k;
        expected[x] = (j == 0 ? T(0) : expected[x - c]) + h[x];
      }
    }
  }
  tally::inclusive_scan_batched(in.data(), out.data(), {a, b, c}, 1);
  EXPECT_EQ(out.download(), expected) << "3-d, axis 1";
}

TEST(PlainFlagsBatched, Int32) { check_batched<std::int32_t>(); }

}  // namespace
