// tally/algorithms/spmv.hpp -- the sparse matrix-vector product y = A x of a matrix in
// compressed sparse row (CSR) form as a segmented reduction (Blelloch 1990, "Prefix sums
// and their applications", 1.5; the course's use of segmented scan): the products
// values[k] * x[cols[k]] of the non-zeros, in row order, summed per row, each row a
// segment of the row offsets. The products are formed inside the reduction's input (a
// transform of the index), never stored; an empty row gives 0.
//
//   tally::cpu::spmv_csr(row_offsets_first, row_offsets_last, cols, values, x, y) -> y + rows
//       rows = length of the offsets - 1; non-zero k of row r: row_offsets[r] <= k <
//       row_offsets[r+1]; cols in [0, columns of A). The GPU form: spmv.cuh.
// Values: V = common_type of the values' and x's value types (the sums are in V, stored
// to y's value type). Rows of floats are summed in an order fixed by the matrix (run to
// run identical), not left to right. Offsets are checked as the segmented reductions
// check them (non-decreasing, offsets[0] >= 0); column indices are not checked.
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>

#include "tally/core/counting_iterator.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/segmented.hpp"

namespace tally::algorithms_support {

// k -> values[k] * x[cols[k]]
template <class Cols, class Vals, class X, class V>
struct csr_product {
  Cols cols{};
  Vals values{};
  X x{};
  TALLY_HOST_DEVICE V operator()(std::int64_t k) const {
    return static_cast<V>(values[k]) * static_cast<V>(x[cols[k]]);
  }
};

template <class Vals, class X>
using spmv_value_t = std::common_type_t<std::iter_value_t<Vals>, std::iter_value_t<X>>;

template <class V, class Cols, class Vals, class X>
auto csr_products(Cols cols, Vals values, X x) {
  return make_transform_iterator(counting_iterator<std::int64_t>(0),
                                 csr_product<Cols, Vals, X, V>{cols, values, x});
}

}  // namespace tally::algorithms_support

namespace tally::cpu {

template <std::random_access_iterator OffIt, std::random_access_iterator ColIt,
          std::random_access_iterator ValIt, std::random_access_iterator XIt,
          std::random_access_iterator YIt>
YIt spmv_csr(OffIt row_offsets_first, OffIt row_offsets_last, ColIt cols, ValIt values, XIt x,
             YIt y) {
  using namespace tally::algorithms_support;
  using V = spmv_value_t<ValIt, XIt>;
  return tally::cpu::segmented_reduce(csr_products<V>(cols, values, x), row_offsets_first,
                                      row_offsets_last, y, V(0), plus{});
}

}  // namespace tally::cpu
