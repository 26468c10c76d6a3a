// tally/algorithms/spmv.cuh -- the CSR sparse matrix-vector product y = A x on the GPU as
// one segmented reduction (the idea and values: spmv.hpp, which also has the CPU form).
//
//   tally::spmv_csr(row_offsets, cols, values, x, y, rows, nnz, options = {})
//       asynchronous; nnz = row_offsets[rows] (the length of cols and values)
//   tally::spmv_csr(row_offsets, cols, values, x, y, rows, options = {})
//       reads nnz from row_offsets[rows] first (a copy to the host and a wait for the
//       stream; refused while the stream is captured into a graph)
//   row_offsets: rows + 1 device offsets (int32 or int64); cols, values, x, y: device
//   pointers or iterators.
//
// y[r] = sum of values[k] * x[cols[k]] over row r (tally::segmented_reduce with the
// products formed in its input; 0 for an empty row). Offsets beyond nnz, decreasing
// offsets and column indices outside x are not checked on the device (unspecified
// results, as for segmented_reduce; a column index outside x reads outside it). Errors:
// rows < 0, nnz < 0, null or host pointers -> std::invalid_argument naming
// tally::spmv_csr; CUDA failures -> tally::error.
#pragma once

#include <cstdint>
#include <iterator>

#include <cuda_runtime.h>

#include "tally/algorithms/spmv.hpp"
#include "tally/algorithms/support.cuh"
#include "tally/core/options.hpp"
#include "tally/device/arguments.cuh"
#include "tally/device/segmented.cuh"

namespace tally {

template <class Offsets, class Cols, class Vals, class X, class Y>
void spmv_csr(Offsets row_offsets, Cols cols, Vals values, X x, Y y, std::int64_t rows,
              std::int64_t nnz, const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "spmv_csr";
  using V = spmv_value_t<Vals, X>;
  require_count(function, "rows", rows);
  require_count(function, "nnz", nnz);
  require_device_pointer(function, "row_offsets", row_offsets, rows + 1);
  require_device_pointer(function, "cols", cols, nnz);
  require_device_pointer(function, "values", values, nnz);
  require_device_pointer(function, "y", y, rows);
  if (nnz > 0) require_device_pointer(function, "x", x, 1);
  if (rows == 0) return;
  tally::segmented_reduce(csr_products<V>(cols, values, x), nnz, row_offsets, rows, y, V(0), plus{},
                          o);
}

template <class Offsets, class Cols, class Vals, class X, class Y>
void spmv_csr(Offsets row_offsets, Cols cols, Vals values, X x, Y y, std::int64_t rows,
              const options& o = {}) {
  static_assert(std::is_pointer_v<Offsets>,
                "tally::spmv_csr without nnz reads row_offsets[rows]: pass a pointer, or nnz");
  using namespace algorithms_support;
  constexpr const char* function = "spmv_csr";
  require_count(function, "rows", rows);
  require_device_pointer(function, "row_offsets", row_offsets, rows + 1);
  refuse_capture(function, o);
  std::remove_cv_t<std::remove_pointer_t<Offsets>> last{};
  cuda_check(cudaMemcpyAsync(&last, row_offsets + rows, sizeof(last), cudaMemcpyDeviceToHost, o.stream),
             function, "cudaMemcpyAsync");
  cuda_check(cudaStreamSynchronize(o.stream), function, "cudaStreamSynchronize");
  spmv_csr(row_offsets, cols, values, x, y, rows, static_cast<std::int64_t>(last), o);
}

}  // namespace tally
