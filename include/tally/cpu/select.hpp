// tally/cpu/select.hpp -- the CPU backend's selection family: stream compaction,
// partitions, run-length encoding and reduce-by-key.
//
//   Out copy_if(first, last, d_first, pred)                  keep x[i] where pred(x[i])
//   Out copy_if(first, last, stencil_first, d_first, pred)   keep x[i] where pred(stencil[i])
//   Out copy_flagged(first, last, flags_first, d_first)      keep x[i] where bool(flags[i])
//   Out remove_if(first, last, d_first, pred)                keep x[i] where !pred(x[i])
//   std::int64_t count_if(first, last, pred)
//   Out partition(first, last, d_first, pred)
//   three_way_result partition_three_way(first, last, first_out, second_out, rest_out,
//                                        pred1, pred2)
//   Out unique(first, last, d_first, equal = std::equal_to<>{})
//   pair<KOut, VOut> unique_by_key(keys_first, keys_last, values_first, keys_out,
//                                  values_out, equal = std::equal_to<>{})
//   pair<UOut, COut> run_length_encode(first, last, unique_out, counts_out, equal = {})
//   pair<OOut, LOut> non_trivial_runs(first, last, offsets_out, lengths_out, equal = {})
//   pair<KOut, VOut> reduce_by_key(keys_first, keys_last, values_first, keys_out,
//                                  values_out, op = plus{}, equal = {})
//
// Semantics (those of tally/cpu/sequential_select.hpp, the oracle):
// - Stable: every output keeps the input order. The compactions return the end of the
//   output; partition writes the selected elements and then the rejected ones to d_first
//   and returns the position of the first rejected one; partition_three_way sends x to
//   first_out if pred1(x), else to second_out if pred2(x), else to rest_out, and returns
//   the three counts; the pair forms return the ends of both outputs.
// - Runs are maximal ranges of consecutive equal elements (as std::unique): i > 0 starts
//   a run when !equal(x[i-1], x[i]). unique keeps the first element of every run;
//   unique_by_key the first key of every run of keys and the value at its position;
//   run_length_encode the first element and the length of every run; non_trivial_runs
//   the offset (index of the first element) and the length of every run longer than 1;
//   reduce_by_key the first key of every run and v[s] op ... op v[e-1] over its values,
//   in inclusive_accumulator_t<Op, V> (tally/core/accumulator.hpp), for any associative
//   op, commutative or not. Counts, offsets and lengths are written as the output's value
//   type (std::int64_t for an output iterator without one, e.g. std::back_inserter).
// - In place: d_first == first is allowed for copy_if (both forms), copy_flagged,
//   remove_if and unique. No other output may overlap an input (partition,
//   partition_three_way, unique_by_key, run_length_encode, non_trivial_runs,
//   reduce_by_key), and outputs must not overlap each other.
// - pred, pred1, pred2 and equal must be pure: the parallel version calls them
//   concurrently and more than once per element.
// - The parallel compactions (copy_if, copy_flagged, remove_if, unique out of place) may
//   store to an output position more than once (a dropped element's store, overwritten by
//   the next kept one; never outside the output's final range): d_first must be plain
//   storage, not an iterator with side effects on assignment.
//
// Execution: where every iterator can be indexed (pointers, random-access iterators,
// tally::transform_iterator) and the input holds at least cpu_tuning::parallel_min_bytes,
// the two-pass chunked algorithm of detail/select.hpp on oneTBB's threads: count per
// chunk in parallel, scan the chunk counts, write per chunk in parallel. Otherwise the
// sequential reference, which takes single-pass input iterators and output iterators.
// reduce_by_key folds a run that crosses chunks strictly left to right: within each
// chunk, then chunk by chunk. Integers are exact; floating-point folds depend on the
// chunk size (not on the thread count) and round differently from the sequential order.
//
// Checked arguments (std::invalid_argument naming the function and the argument): `last`
// before `first` (`keys_last` before `keys_first`) where the iterators can tell, and null
// pointers with elements. Not checked: overlaps, and that the stencil, flags and values
// ranges are as long as the input.
#pragma once

#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include "tally/core/accumulator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/select.hpp"
#include "tally/cpu/detail/select.hpp"
#include "tally/cpu/sequential_select.hpp"

namespace tally::cpu {
namespace detail {

// Whether element i of x starts a run.
template <class It, class Equal>
auto run_heads(const It& x, const Equal& equal) {
  return [&x, &equal](std::int64_t i) {
    return i == 0 || !static_cast<bool>(equal(x[i - 1], x[i]));
  };
}

// Shared by the three one-output compactions: keep(i) says whether element i is kept.
template <class InIt, class OutIt, class Keep>
OutIt compact_range(InIt first, std::int64_t n, OutIt d_first, const Keep& keep,
                    const chunk_grid& grid) {
  using T = input_value_t<InIt>;
  auto classify = [&](std::int64_t i) { return keep(i) ? 0 : 1; };
  auto read = [&](std::int64_t i) -> T { return first[i]; };
  return d_first + compact<T>(grid, classify, read, d_first, may_overlap(first, d_first, n));
}

}  // namespace detail

// ---- compaction ---------------------------------------------------------------------------

template <class InIt, class OutIt, class Pred>
OutIt copy_if(InIt first, InIt last, OutIt d_first, Pred pred) {
  constexpr const char* fn = "cpu::copy_if";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  tally::detail::check_pointer(fn, "d_first", d_first, detail::any_elements(n, first, last));
  if constexpr (detail::all_indexable_v<InIt, OutIt>) {
    using T = input_value_t<InIt>;
    if (detail::select_in_parallel<T>(n)) {
      return detail::compact_range(
          first, n, d_first, [&](std::int64_t i) { return static_cast<bool>(pred(first[i])); },
          detail::make_chunk_grid<T>(n));
    }
  }
  return sequential::copy_if(first, last, d_first, pred);
}

template <class InIt, class StencilIt, class OutIt, class Pred>
OutIt copy_if(InIt first, InIt last, StencilIt stencil_first, OutIt d_first, Pred pred) {
  constexpr const char* fn = "cpu::copy_if";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  const std::int64_t any = detail::any_elements(n, first, last);
  tally::detail::check_pointer(fn, "stencil_first", stencil_first, any);
  tally::detail::check_pointer(fn, "d_first", d_first, any);
  if constexpr (detail::all_indexable_v<InIt, StencilIt, OutIt>) {
    using T = input_value_t<InIt>;
    using S = input_value_t<StencilIt>;
    if (detail::select_in_parallel<T, S>(n)) {
      return detail::compact_range(
          first, n, d_first,
          [&](std::int64_t i) { return static_cast<bool>(pred(stencil_first[i])); },
          detail::make_chunk_grid<T, S>(n));
    }
  }
  return sequential::copy_if(first, last, stencil_first, d_first, pred);
}

template <class InIt, class FlagIt, class OutIt>
OutIt copy_flagged(InIt first, InIt last, FlagIt flags_first, OutIt d_first) {
  constexpr const char* fn = "cpu::copy_flagged";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  const std::int64_t any = detail::any_elements(n, first, last);
  tally::detail::check_pointer(fn, "flags_first", flags_first, any);
  tally::detail::check_pointer(fn, "d_first", d_first, any);
  if constexpr (detail::all_indexable_v<InIt, FlagIt, OutIt>) {
    using T = input_value_t<InIt>;
    using F = input_value_t<FlagIt>;
    if (detail::select_in_parallel<T, F>(n)) {
      return detail::compact_range(
          first, n, d_first, [&](std::int64_t i) { return static_cast<bool>(flags_first[i]); },
          detail::make_chunk_grid<T, F>(n));
    }
  }
  return sequential::copy_flagged(first, last, flags_first, d_first);
}

template <class InIt, class OutIt, class Pred>
OutIt remove_if(InIt first, InIt last, OutIt d_first, Pred pred) {
  constexpr const char* fn = "cpu::remove_if";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  tally::detail::check_pointer(fn, "d_first", d_first, detail::any_elements(n, first, last));
  if constexpr (detail::all_indexable_v<InIt, OutIt>) {
    using T = input_value_t<InIt>;
    if (detail::select_in_parallel<T>(n)) {
      return detail::compact_range(
          first, n, d_first, [&](std::int64_t i) { return !static_cast<bool>(pred(first[i])); },
          detail::make_chunk_grid<T>(n));
    }
  }
  return sequential::remove_if(first, last, d_first, pred);
}

template <class InIt, class Pred>
std::int64_t count_if(InIt first, InIt last, Pred pred) {
  constexpr const char* fn = "cpu::count_if";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  if constexpr (detail::all_indexable_v<InIt>) {
    using T = input_value_t<InIt>;
    if (detail::select_in_parallel<T>(n)) {
      const detail::chunk_grid grid = detail::make_chunk_grid<T>(n);
      return tbb::parallel_reduce(
          tbb::blocked_range<std::int64_t>(0, n, grid.size), std::int64_t{0},
          [&](const tbb::blocked_range<std::int64_t>& r, std::int64_t count) {
            for (std::int64_t i = r.begin(); i < r.end(); ++i) {
              count += static_cast<bool>(pred(first[i])) ? 1 : 0;
            }
            return count;
          },
          [](std::int64_t a, std::int64_t b) { return a + b; });
    }
  }
  return sequential::count_if(first, last, pred);
}

// ---- partitions ---------------------------------------------------------------------------

template <class InIt, class OutIt, class Pred>
OutIt partition(InIt first, InIt last, OutIt d_first, Pred pred) {
  constexpr const char* fn = "cpu::partition";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  tally::detail::check_pointer(fn, "d_first", d_first, detail::any_elements(n, first, last));
  if constexpr (detail::all_indexable_v<InIt, OutIt>) {
    using T = input_value_t<InIt>;
    if (detail::select_in_parallel<T>(n)) {
      auto classify = [&](std::int64_t i) { return static_cast<bool>(pred(first[i])) ? 0 : 1; };
      const auto layout = detail::count_classes<2>(detail::make_chunk_grid<T>(n), classify);
      const std::int64_t selected = layout.total[0];
      detail::place_classes<2>(layout, classify, [&](int cls, std::int64_t pos, std::int64_t i) {
        d_first[cls == 0 ? pos : selected + pos] = first[i];
      });
      return d_first + selected;
    }
  }
  return sequential::partition(first, last, d_first, pred);
}

template <class InIt, class Out1, class Out2, class Out3, class Pred1, class Pred2>
three_way_result partition_three_way(InIt first, InIt last, Out1 first_out, Out2 second_out,
                                     Out3 rest_out, Pred1 pred1, Pred2 pred2) {
  constexpr const char* fn = "cpu::partition_three_way";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  const std::int64_t any = detail::any_elements(n, first, last);
  tally::detail::check_pointer(fn, "first_out", first_out, any);
  tally::detail::check_pointer(fn, "second_out", second_out, any);
  tally::detail::check_pointer(fn, "rest_out", rest_out, any);
  if constexpr (detail::all_indexable_v<InIt, Out1, Out2, Out3>) {
    using T = input_value_t<InIt>;
    if (detail::select_in_parallel<T>(n)) {
      auto classify = [&](std::int64_t i) {
        const auto& x = first[i];
        return static_cast<bool>(pred1(x)) ? 0 : static_cast<bool>(pred2(x)) ? 1 : 2;
      };
      const auto layout = detail::count_classes<3>(detail::make_chunk_grid<T>(n), classify);
      detail::place_classes<3>(layout, classify, [&](int cls, std::int64_t pos, std::int64_t i) {
        if (cls == 0) {
          first_out[pos] = first[i];
        } else if (cls == 1) {
          second_out[pos] = first[i];
        } else {
          rest_out[pos] = first[i];
        }
      });
      return three_way_result{layout.total[0], layout.total[1], layout.total[2]};
    }
  }
  return sequential::partition_three_way(first, last, first_out, second_out, rest_out, pred1,
                                         pred2);
}

// ---- runs ---------------------------------------------------------------------------------

template <class InIt, class OutIt, class Equal = std::equal_to<>>
OutIt unique(InIt first, InIt last, OutIt d_first, Equal equal = {}) {
  constexpr const char* fn = "cpu::unique";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  tally::detail::check_pointer(fn, "d_first", d_first, detail::any_elements(n, first, last));
  if constexpr (detail::all_indexable_v<InIt, OutIt>) {
    using T = input_value_t<InIt>;
    if (detail::select_in_parallel<T>(n)) {
      return detail::compact_range(first, n, d_first, detail::run_heads(first, equal),
                                   detail::make_chunk_grid<T>(n));
    }
  }
  return sequential::unique(first, last, d_first, equal);
}

template <class KeyIt, class ValIt, class KeyOut, class ValOut, class Equal = std::equal_to<>>
std::pair<KeyOut, ValOut> unique_by_key(KeyIt keys_first, KeyIt keys_last, ValIt values_first,
                                        KeyOut keys_out, ValOut values_out, Equal equal = {}) {
  constexpr const char* fn = "cpu::unique_by_key";
  const std::int64_t n =
      detail::select_length(fn, "keys_first", "keys_last", keys_first, keys_last);
  const std::int64_t any = detail::any_elements(n, keys_first, keys_last);
  tally::detail::check_pointer(fn, "values_first", values_first, any);
  tally::detail::check_pointer(fn, "keys_out", keys_out, any);
  tally::detail::check_pointer(fn, "values_out", values_out, any);
  if constexpr (detail::all_indexable_v<KeyIt, ValIt, KeyOut, ValOut>) {
    using K = input_value_t<KeyIt>;
    using V = input_value_t<ValIt>;
    if (detail::select_in_parallel<K, V>(n)) {
      const auto is_head = detail::run_heads(keys_first, equal);
      auto classify = [&](std::int64_t i) { return is_head(i) ? 0 : 1; };
      const auto layout = detail::count_classes<2>(detail::make_chunk_grid<K, V>(n), classify);
      detail::place_classes<2>(layout, classify, [&](int cls, std::int64_t pos, std::int64_t i) {
        if (cls != 0) return;
        keys_out[pos] = keys_first[i];
        values_out[pos] = values_first[i];
      });
      return {keys_out + layout.total[0], values_out + layout.total[0]};
    }
  }
  return sequential::unique_by_key(keys_first, keys_last, values_first, keys_out, values_out,
                                   equal);
}

template <class InIt, class UniqueOut, class CountOut, class Equal = std::equal_to<>>
std::pair<UniqueOut, CountOut> run_length_encode(InIt first, InIt last, UniqueOut unique_out,
                                                 CountOut counts_out, Equal equal = {}) {
  constexpr const char* fn = "cpu::run_length_encode";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  const std::int64_t any = detail::any_elements(n, first, last);
  tally::detail::check_pointer(fn, "unique_out", unique_out, any);
  tally::detail::check_pointer(fn, "counts_out", counts_out, any);
  if constexpr (detail::all_indexable_v<InIt, UniqueOut, CountOut>) {
    using T = input_value_t<InIt>;
    using C = detail::written_t<CountOut>;
    if (detail::select_in_parallel<T>(n)) {
      const auto is_head = detail::run_heads(first, equal);
      const auto layout = detail::count_runs(
          detail::make_chunk_grid<T>(n), is_head, [](std::int64_t) { return true; },
          [](std::int64_t, std::int64_t) {});
      tbb::parallel_for(std::int64_t{0}, layout.grid.count, [&](std::int64_t c) {
        std::int64_t j = layout.start[c];
        detail::for_each_run(layout, c, is_head, [&](std::int64_t head, std::int64_t end) {
          unique_out[j] = first[head];
          counts_out[j] = static_cast<C>(end - head);
          ++j;
        });
      });
      return {unique_out + layout.total, counts_out + layout.total};
    }
  }
  return sequential::run_length_encode(first, last, unique_out, counts_out, equal);
}

template <class InIt, class OffsetOut, class LengthOut, class Equal = std::equal_to<>>
std::pair<OffsetOut, LengthOut> non_trivial_runs(InIt first, InIt last, OffsetOut offsets_out,
                                                 LengthOut lengths_out, Equal equal = {}) {
  constexpr const char* fn = "cpu::non_trivial_runs";
  const std::int64_t n = detail::select_length(fn, "first", "last", first, last);
  const std::int64_t any = detail::any_elements(n, first, last);
  tally::detail::check_pointer(fn, "offsets_out", offsets_out, any);
  tally::detail::check_pointer(fn, "lengths_out", lengths_out, any);
  if constexpr (detail::all_indexable_v<InIt, OffsetOut, LengthOut>) {
    using T = input_value_t<InIt>;
    using O = detail::written_t<OffsetOut>;
    using L = detail::written_t<LengthOut>;
    if (detail::select_in_parallel<T>(n)) {
      const auto is_head = detail::run_heads(first, equal);
      // A run is longer than 1 where the element after its head does not start a run.
      const auto layout = detail::count_runs(
          detail::make_chunk_grid<T>(n), is_head,
          [&](std::int64_t head) { return head + 1 < n && !is_head(head + 1); },
          [](std::int64_t, std::int64_t) {});
      tbb::parallel_for(std::int64_t{0}, layout.grid.count, [&](std::int64_t c) {
        std::int64_t j = layout.start[c];
        detail::for_each_run(layout, c, is_head, [&](std::int64_t head, std::int64_t end) {
          if (end - head < 2) return;
          offsets_out[j] = static_cast<O>(head);
          lengths_out[j] = static_cast<L>(end - head);
          ++j;
        });
      });
      return {offsets_out + layout.total, lengths_out + layout.total};
    }
  }
  return sequential::non_trivial_runs(first, last, offsets_out, lengths_out, equal);
}

// A run that crosses chunks is folded by the chunk of its head: its values in that chunk
// left to right, then, chunk by chunk, the fold of each following chunk's elements before
// that chunk's first head (its "lead", computed in pass 1). The operator thus combines
// the run's values in order, earlier operand first, whatever its length.
template <class KeyIt, class ValIt, class KeyOut, class ValOut, class Op = plus,
          class Equal = std::equal_to<>>
std::pair<KeyOut, ValOut> reduce_by_key(KeyIt keys_first, KeyIt keys_last, ValIt values_first,
                                        KeyOut keys_out, ValOut values_out, Op op = {},
                                        Equal equal = {}) {
  constexpr const char* fn = "cpu::reduce_by_key";
  const std::int64_t n =
      detail::select_length(fn, "keys_first", "keys_last", keys_first, keys_last);
  const std::int64_t any = detail::any_elements(n, keys_first, keys_last);
  tally::detail::check_pointer(fn, "values_first", values_first, any);
  tally::detail::check_pointer(fn, "keys_out", keys_out, any);
  tally::detail::check_pointer(fn, "values_out", values_out, any);
  if constexpr (detail::all_indexable_v<KeyIt, ValIt, KeyOut, ValOut>) {
    using K = input_value_t<KeyIt>;
    using V = input_value_t<ValIt>;
    using Acc = inclusive_accumulator_t<Op, V>;
    if (detail::select_in_parallel<K, V>(n)) {
      const auto is_head = detail::run_heads(keys_first, equal);
      const detail::chunk_grid grid = detail::make_chunk_grid<K, V>(n);
      std::vector<std::optional<Acc>> leads(static_cast<std::size_t>(grid.count));
      const auto layout = detail::count_runs(
          grid, is_head, [](std::int64_t) { return true; },
          [&](std::int64_t c, std::int64_t first_head) {
            const std::int64_t b = grid.begin(c);
            if (first_head == b) return;  // chunk 0, or a run starts exactly here
            Acc acc = static_cast<Acc>(static_cast<V>(values_first[b]));
            for (std::int64_t i = b + 1; i < first_head; ++i) {
              acc = op(std::as_const(acc), static_cast<V>(values_first[i]));
            }
            leads[c] = acc;
          });
      tbb::parallel_for(std::int64_t{0}, grid.count, [&](std::int64_t c) {
        const std::int64_t e = grid.end(c);
        std::int64_t head = layout.first_head[c];
        if (head >= e) return;
        std::int64_t j = layout.start[c];
        Acc acc = static_cast<Acc>(static_cast<V>(values_first[head]));
        for (std::int64_t i = head + 1; i < e; ++i) {
          if (is_head(i)) {
            keys_out[j] = keys_first[head];
            values_out[j] = acc;
            ++j;
            head = i;
            acc = static_cast<Acc>(static_cast<V>(values_first[i]));
          } else {
            acc = op(std::as_const(acc), static_cast<V>(values_first[i]));
          }
        }
        // The last run goes on up to the next head, through the leads of the chunks
        // before it.
        for (std::int64_t d = c + 1; d < grid.count && grid.begin(d) < layout.next_head[c]; ++d) {
          acc = op(std::as_const(acc), std::as_const(*leads[d]));
        }
        keys_out[j] = keys_first[head];
        values_out[j] = acc;
      });
      return {keys_out + layout.total, values_out + layout.total};
    }
  }
  return sequential::reduce_by_key(keys_first, keys_last, values_first, keys_out, values_out, op,
                                   equal);
}

}  // namespace tally::cpu
