// tally/core/accumulator.hpp -- which type a scan or reduction accumulates in.
//
// tally follows the C++ P2322 rule (std::ranges::fold_left):
//   - an inclusive scan accumulates in decay(op(x, x)) for elements x of the input;
//   - an exclusive scan and a reduction accumulate in decay(op(init, x)).
// So `exclusive_scan(int32 in, ..., init = std::int64_t{0})` sums in int64 and cannot
// overflow where Thrust (which accumulates in the input type) would; and an inclusive
// plus-scan of int8 accumulates in int (the promoted type of int8 + int8).
#pragma once

#include <iterator>
#include <type_traits>

namespace tally {

template <class Op, class T>
using inclusive_accumulator_t =
    std::decay_t<std::invoke_result_t<Op&, const T&, const T&>>;

template <class Op, class Init, class T>
using exclusive_accumulator_t =
    std::decay_t<std::invoke_result_t<Op&, const Init&, const T&>>;

// The element type of an iterator or pointer input.
template <class It>
using input_value_t = std::iter_value_t<It>;

}  // namespace tally
