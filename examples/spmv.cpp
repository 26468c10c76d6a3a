// examples/spmv.cpp -- the sparse matrix-vector product y = A x, A in compressed sparse
// row (CSR) form: the non-zeros row after row, their columns, and where each row starts.
// The scan: a segmented reduction, one segment per row, of the products values[k] *
// x[cols[k]] (tally::spmv_csr, tally/algorithms/spmv.hpp).
//
//   spmv_cpu data/spmv.txt       four lines: row offsets, columns, values, x
//   spmv_cpu --generate N        an N x N matrix with 0 to 8 random non-zeros per row
// (spmv_gpu: the same on the GPU.)
#include <cmath>
#include <cstdint>
#include <iostream>
#include <random>
#include <vector>

#if defined(__CUDACC__)
#include <tally/tally.cuh>
#else
#include <tally/tally.hpp>
#endif

#include "example.hpp"

int main(int argc, char** argv) try {
  const example::arguments args = example::parse(argc, argv);
  std::vector<std::int64_t> row_offsets, cols;
  std::vector<double> values, x;
  if (args.generate > 0) {
    std::mt19937 random(2024);
    std::uniform_int_distribution<std::int64_t> row_length(0, 8), col(0, args.generate - 1);
    std::uniform_real_distribution<double> value(-1.0, 1.0);
    row_offsets.push_back(0);
    for (std::int64_t r = 0; r < args.generate; ++r) {
      for (std::int64_t k = row_length(random); k > 0; --k) {
        cols.push_back(col(random));
        values.push_back(value(random));
      }
      row_offsets.push_back(static_cast<std::int64_t>(cols.size()));
      x.push_back(value(random));
    }
  } else {
    const std::vector<std::string> lines = example::read_lines(args.file, 4);
    row_offsets = example::numbers<std::int64_t>(lines[0]);
    cols = example::numbers<std::int64_t>(lines[1]);
    values = example::numbers<double>(lines[2]);
    x = example::numbers<double>(lines[3]);
  }
  const auto rows = static_cast<std::int64_t>(row_offsets.size()) - 1;
  const auto nnz = static_cast<std::int64_t>(values.size());
  if (rows < 0 || cols.size() != values.size() || row_offsets.back() != nnz) {
    throw std::runtime_error("not a CSR matrix: the offsets must end at the number of values");
  }

  // y[r] = the sum of values[k] * x[cols[k]] over the non-zeros k of row r
#if defined(__CUDACC__)
  example::device_array<std::int64_t> d_row_offsets(row_offsets), d_cols(cols);
  example::device_array<double> d_values(values), d_x(x), d_y(rows);
  tally::spmv_csr(d_row_offsets.data(), d_cols.data(), d_values.data(), d_x.data(), d_y.data(),
                  rows, nnz);
  const std::vector<double> y = d_y.to_host();
#else
  std::vector<double> y(rows);
  tally::cpu::spmv_csr(row_offsets.begin(), row_offsets.end(), cols.begin(), values.begin(),
                       x.begin(), y.begin());
#endif

  std::cout << rows << " rows, " << nnz << " non-zeros\n";
  example::print("x", x);
  example::print("y = A x", y);

  // the loop, row by row; `size` (the sum of the products' magnitudes) bounds the rounding
  // that another order of the same sums may give
  bool agrees = true;
  for (std::int64_t r = 0; r < rows; ++r) {
    double sum = 0, size = 0;
    for (std::int64_t k = row_offsets[r]; k < row_offsets[r + 1]; ++k) {
      sum += values[k] * x[cols[k]];
      size += std::abs(values[k] * x[cols[k]]);
    }
    agrees = agrees && std::abs(y[r] - sum) <= 1e-12 * size;
  }
  return example::report(agrees);
} catch (const std::exception& e) {
  std::cerr << e.what() << '\n';
  return 1;
}
