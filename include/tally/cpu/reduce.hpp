// tally/cpu/reduce.hpp -- the CPU backend's reduction.
//
//   tally::cpu::reduce(first, last, init, op = plus{})  ->  init op x[0] op ... op x[n-1]
//
// Any associative operator (commutative or not: partial results are always combined in
// order) and any copyable type; the result type is decay(op(init, x)). Large random-access
// ranges are reduced in parallel with oneTBB's deterministic reduction, whose split
// depends on the size only, so floating-point results are identical run to run and for
// any thread count. Contiguous arithmetic ranges with plus/minimum/maximum use the
// vectorised kernel.
#pragma once

#include <cstdint>
#include <iterator>
#include <optional>

#include <tbb/blocked_range.h>
#include <tbb/parallel_reduce.h>

#include "tally/core/accumulator.hpp"
#include "tally/core/operators.hpp"
#include "tally/cpu/detail/dispatch.hpp"
#include "tally/cpu/sequential.hpp"

namespace tally::cpu {

template <class InIt, class Init, class Op = plus>
exclusive_accumulator_t<Op, Init, std::iter_value_t<InIt>> reduce(InIt first, InIt last,
                                                                  Init init, Op op = {}) {
  using T = std::iter_value_t<InIt>;
  using Acc = exclusive_accumulator_t<Op, Init, T>;
  const std::int64_t n = detail::checked_distance("cpu::reduce", first, last);

  // The aggregate of [begin, end) without an identity (the range is never empty).
  auto reduce_leaf = [&](std::int64_t begin, std::int64_t end) -> Acc {
    if constexpr (detail::vectorisable<InIt, T*, Op, Acc>()) {
      return detail::simd_reduce(detail::simd_op_of<Op>(), detail::raw(first) + begin,
                                 static_cast<std::size_t>(end - begin),
                                 tally::identity<Op, Acc>());
    } else {
      auto it = std::ranges::next(first, begin);
      Acc acc = static_cast<Acc>(*it);
      for (std::int64_t j = begin + 1; j < end; ++j) acc = op(std::as_const(acc), *++it);
      return acc;
    }
  };

  if constexpr (!std::random_access_iterator<InIt>) {
    return sequential::reduce(first, last, init, op);
  } else {
    if (n == 0) return static_cast<Acc>(init);
    if (static_cast<std::size_t>(n) * sizeof(T) < cpu_tuning::parallel_min_bytes) {
      return op(static_cast<Acc>(init), reduce_leaf(0, n));
    }
    using partial = std::optional<Acc>;
    const partial total = tbb::parallel_deterministic_reduce(
        tbb::blocked_range<std::int64_t>(0, n, cpu_tuning::tile_elements<T>()), partial{},
        [&](const tbb::blocked_range<std::int64_t>& r, partial acc) -> partial {
          Acc leaf = reduce_leaf(r.begin(), r.end());
          return acc ? partial(op(std::as_const(*acc), leaf)) : partial(std::move(leaf));
        },
        [&](const partial& left, const partial& right) -> partial {
          if (!left) return right;
          if (!right) return left;
          return partial(op(*left, *right));
        });
    return op(static_cast<Acc>(init), *total);
  }
}

}  // namespace tally::cpu
