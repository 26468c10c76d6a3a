// tally/device/select.cuh -- the selection family on the device: stream compaction,
// partitions, unique, run-length encoding and reduce-by-key. The public API.
//
//   copy_if(in, out, n, pred)                    keep x[i] where pred(x[i])
//   copy_if(in, stencil, out, n, pred)           keep x[i] where pred(stencil[i])
//   copy_flagged(in, flags, out, n)              keep x[i] where bool(flags[i])
//   remove_if(in, out, n, pred)                  keep x[i] where !pred(x[i])
//   count_if(in, n, pred)                        how many x[i] satisfy pred
//   partition(in, out, n, pred)                  the selected items, then the others
//   partition_three_way(in, first, second, rest, n, pred1, pred2)
//   unique(in, out, n, equal = tally::equal_to{})
//   unique_by_key(keys, values, keys_out, values_out, n, equal = tally::equal_to{})
//   run_length_encode(in, unique_out, counts_out, n, equal = tally::equal_to{})
//   non_trivial_runs(in, offsets_out, lengths_out, n, equal = tally::equal_to{})
//   reduce_by_key(keys, values, keys_out, values_out, n, op = plus{}, equal = equal_to{})
// each followed by `const options& = {}`.
//
// The count. Every form returns how many items it produced (std::int64_t; for
// partition_three_way a three_way_result; for the run and key forms the number of runs),
// and for that waits for the stream (not allowed while the stream is captured into a
// graph: std::invalid_argument). Each has a second form that takes
// tally::count_to(pointer) right before the options and returns nothing: the kernel writes
// the count to *pointer (device memory, or memory the device can write), asynchronously
// on options.stream, graph-capturable.
//
// Semantics (those of the CPU backend, tally/cpu/select.hpp, and its sequential oracle):
// - Stable: every output keeps the input order. partition writes the selected items to
//   out[0, S) and the rejected ones to out[S, n), both in input order (CUB reverses the
//   rejected ones; tally does not), and returns S. partition_three_way sends x to first
//   if pred1(x), else to second if pred2(x), else to rest.
// - Runs are maximal ranges of consecutive equal items (as std::unique): i > 0 starts a
//   run when !equal(x[i-1], x[i]). unique keeps the first item of every run,
//   unique_by_key the first key of every run of keys and the value at its position,
//   run_length_encode the first item and the length of every run, non_trivial_runs the
//   offset (index of its first item) and length of every run longer than one,
//   reduce_by_key the first key of every run and v[s] op ... op v[e-1] over its values,
//   in inclusive_accumulator_t<Op, V> (core/accumulator.hpp), for any associative op,
//   commutative or not. Counts, offsets and lengths are stored as the output's value type.
// - In place: out == in is allowed for copy_if (both forms), copy_flagged, remove_if and
//   unique. No other output may overlap an input (checked for pointers: the primary input
//   and output), and outputs must not overlap each other.
// - in, out and the other ranges: device pointers or random-access iterators usable on
//   the device (a transform iterator fuses a map into the input), any alignment; any
//   trivially copyable element type. n: 64-bit, any n >= 0. pred, pred1, pred2, equal and
//   op: host+device callables, pure (called more than once per item).
// - options: stream; deterministic (reduce_by_key of floating-point values: the same bits
//   in every run, single_pass/decoupled_lookback.cuh); strategy and block automatic or the
//   look-back's (device/scan.cuh). options.storage is not taken (std::invalid_argument):
//   the tile state lives in tally's per-stream buffer, as for the scans without storage.
//
// How: one single-pass look-back scan whose input and output are a tile program
// (device/select/program_scan.cuh): one launch at every n, counting and scatter in the
// same pass, no n-sized scratch; partition counts first (two launches,
// device/select/partition.cuh).
//
// Errors: n < 0, a null pointer with n > 0 (or a null count), host memory the device
// cannot read, overlapping input and output where not allowed, unsupported options ->
// std::invalid_argument naming the function and argument; CUDA failures -> tally::error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include "tally/core/error.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/options.hpp"
#include "tally/core/select.hpp"
#include "tally/device/detail/pointer_check.cuh"
#include "tally/device/select/compaction.cuh"
#include "tally/device/select/partition.cuh"
#include "tally/device/select/program_scan.cuh"
#include "tally/device/select/reduce_by_key.cuh"
#include "tally/device/select/runs.cuh"

namespace tally::detail::select {

// An output that must not overlap an input (pointers only; iterators are not checked).
template <class A, class B>
void check_apart(const char* function, const char* a_name, const A& a, const char* b_name,
                 const B& b, std::int64_t n) {
  if constexpr (std::is_pointer_v<A> && std::is_pointer_v<B>) {
    if (n <= 0) return;
    const auto* a0 = reinterpret_cast<const unsigned char*>(a);
    const auto* b0 = reinterpret_cast<const unsigned char*>(b);
    const auto* a1 = a0 + static_cast<std::size_t>(n) * sizeof(*a);
    const auto* b1 = b0 + static_cast<std::size_t>(n) * sizeof(*b);
    if (a0 < b1 && b0 < a1) {
      throw_invalid(function, a_name, std::string("overlaps ") + b_name +
                                          " (only copy_if, copy_flagged, remove_if and unique "
                                          "may run in place)");
    }
  } else {
    (void)function, (void)a_name, (void)a, (void)b_name, (void)b, (void)n;
  }
}

// The checks of every form: n, options, the count, each range (name, iterator).
template <class Count, class... Ranges>
void check_call(const char* function, std::int64_t n, const options& o,
                const device_count<Count>& count, const Ranges&... ranges) {
  check_count(function, n);
  check_select_options(function, o);
  check_count_pointer(function, count);
  (check_device_pointer(function, ranges.first, ranges.second, n), ...);
}

template <class It>
struct named {
  const char* first;
  It second;
};
template <class It>
named(const char*, It) -> named<It>;

}  // namespace tally::detail::select

namespace tally {

// ---- compaction ------------------------------------------------------------------------------
template <class In, class Out, class Pred>
void copy_if(In in, Out out, std::int64_t n, Pred pred, device_count<std::int64_t> count,
             const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "copy_if";
  check_call(function, n, o, count, named{"in", in}, named{"out", out});
  if (n == 0) return write_zero(function, count.pointer, o);
  compact(function, in, out, n, by_value<Pred>{pred}, count.pointer, o);
}
template <class In, class Out, class Pred>
std::int64_t copy_if(In in, Out out, std::int64_t n, Pred pred, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("copy_if", o, [&](std::int64_t* c) {
    tally::copy_if(in, out, n, pred, count_to(c), o);
  });
}

template <class In, class Stencil, class Out, class Pred>
void copy_if(In in, Stencil stencil, Out out, std::int64_t n, Pred pred,
             device_count<std::int64_t> count, const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "copy_if";
  check_call(function, n, o, count, named{"in", in}, named{"stencil", stencil}, named{"out", out});
  if (n == 0) return write_zero(function, count.pointer, o);
  compact(function, in, out, n, by_stencil<Stencil, Pred>{stencil, pred}, count.pointer, o);
}
template <class In, class Stencil, class Out, class Pred>
std::int64_t copy_if(In in, Stencil stencil, Out out, std::int64_t n, Pred pred,
                     const options& o = {}) {
  return detail::select::host_count<std::int64_t>("copy_if", o, [&](std::int64_t* c) {
    tally::copy_if(in, stencil, out, n, pred, count_to(c), o);
  });
}

template <class In, class Flags, class Out>
void copy_flagged(In in, Flags flags, Out out, std::int64_t n, device_count<std::int64_t> count,
                  const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "copy_flagged";
  check_call(function, n, o, count, named{"in", in}, named{"flags", flags}, named{"out", out});
  if (n == 0) return write_zero(function, count.pointer, o);
  compact(function, in, out, n, by_flag<Flags>{flags}, count.pointer, o);
}
template <class In, class Flags, class Out>
std::int64_t copy_flagged(In in, Flags flags, Out out, std::int64_t n, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("copy_flagged", o, [&](std::int64_t* c) {
    tally::copy_flagged(in, flags, out, n, count_to(c), o);
  });
}

template <class In, class Out, class Pred>
void remove_if(In in, Out out, std::int64_t n, Pred pred, device_count<std::int64_t> count,
               const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "remove_if";
  check_call(function, n, o, count, named{"in", in}, named{"out", out});
  if (n == 0) return write_zero(function, count.pointer, o);
  compact(function, in, out, n, by_rejection<Pred>{pred}, count.pointer, o);
}
template <class In, class Out, class Pred>
std::int64_t remove_if(In in, Out out, std::int64_t n, Pred pred, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("remove_if", o, [&](std::int64_t* c) {
    tally::remove_if(in, out, n, pred, count_to(c), o);
  });
}

// count_if is a reduction (tally::transform_reduce_into), not a scan.
template <class In, class Pred>
void count_if(In in, std::int64_t n, Pred pred, device_count<std::int64_t> count,
              const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "count_if";
  check_call(function, n, o, count, named{"in", in});
  if (n == 0) return write_zero(function, count.pointer, o);
  tally::transform_reduce_into(in, n, count.pointer, std::int64_t{0}, plus{},
                               selection_count<Pred>{pred}, o);
}
template <class In, class Pred>
std::int64_t count_if(In in, std::int64_t n, Pred pred, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("count_if", o, [&](std::int64_t* c) {
    tally::count_if(in, n, pred, count_to(c), o);
  });
}

// ---- partitions ------------------------------------------------------------------------------
template <class In, class Out, class Pred>
void partition(In in, Out out, std::int64_t n, Pred pred, device_count<std::int64_t> count,
               const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "partition";
  check_call(function, n, o, count, named{"in", in}, named{"out", out});
  check_apart(function, "out", out, "in", in, n);
  if (n == 0) return write_zero(function, count.pointer, o);
  partition_two_way(function, in, out, n, pred, count.pointer, o);
}
template <class In, class Out, class Pred>
std::int64_t partition(In in, Out out, std::int64_t n, Pred pred, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("partition", o, [&](std::int64_t* c) {
    tally::partition(in, out, n, pred, count_to(c), o);
  });
}

template <class In, class Out1, class Out2, class Out3, class Pred1, class Pred2>
void partition_three_way(In in, Out1 first, Out2 second, Out3 rest, std::int64_t n, Pred1 pred1,
                         Pred2 pred2, device_count<three_way_result> count,
                         const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "partition_three_way";
  check_call(function, n, o, count, named{"in", in}, named{"first", first},
             named{"second", second}, named{"rest", rest});
  check_apart(function, "first", first, "in", in, n);
  check_apart(function, "second", second, "in", in, n);
  check_apart(function, "rest", rest, "in", in, n);
  if (n == 0) return write_zero(function, count.pointer, o);
  partition_three(function, in, first, second, rest, n, pred1, pred2, count.pointer, o);
}
template <class In, class Out1, class Out2, class Out3, class Pred1, class Pred2>
three_way_result partition_three_way(In in, Out1 first, Out2 second, Out3 rest, std::int64_t n,
                                     Pred1 pred1, Pred2 pred2, const options& o = {}) {
  return detail::select::host_count<three_way_result>(
      "partition_three_way", o, [&](three_way_result* c) {
        tally::partition_three_way(in, first, second, rest, n, pred1, pred2, count_to(c), o);
      });
}

// ---- runs --------------------------------------------------------------------------------------
template <class In, class Out, class Equal>
void unique(In in, Out out, std::int64_t n, Equal equal, device_count<std::int64_t> count,
            const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "unique";
  check_call(function, n, o, count, named{"in", in}, named{"out", out});
  if (n == 0) return write_zero(function, count.pointer, o);
  detail::select::unique(function, in, out, n, equal, count.pointer, o);
}
template <class In, class Out, class Equal = equal_to>
std::int64_t unique(In in, Out out, std::int64_t n, Equal equal = {}, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("unique", o, [&](std::int64_t* c) {
    tally::unique(in, out, n, equal, count_to(c), o);
  });
}

template <class Keys, class Values, class KeysOut, class ValuesOut, class Equal>
void unique_by_key(Keys keys, Values values, KeysOut keys_out, ValuesOut values_out,
                   std::int64_t n, Equal equal, device_count<std::int64_t> count,
                   const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "unique_by_key";
  check_call(function, n, o, count, named{"keys", keys}, named{"values", values},
             named{"keys_out", keys_out}, named{"values_out", values_out});
  check_apart(function, "keys_out", keys_out, "keys", keys, n);
  check_apart(function, "values_out", values_out, "values", values, n);
  if (n == 0) return write_zero(function, count.pointer, o);
  detail::select::unique_by_key(function, keys, values, keys_out, values_out, n, equal,
                                count.pointer, o);
}
template <class Keys, class Values, class KeysOut, class ValuesOut, class Equal = equal_to>
std::int64_t unique_by_key(Keys keys, Values values, KeysOut keys_out, ValuesOut values_out,
                           std::int64_t n, Equal equal = {}, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("unique_by_key", o, [&](std::int64_t* c) {
    tally::unique_by_key(keys, values, keys_out, values_out, n, equal, count_to(c), o);
  });
}

template <class In, class UniqueOut, class CountsOut, class Equal>
void run_length_encode(In in, UniqueOut unique_out, CountsOut counts_out, std::int64_t n,
                       Equal equal, device_count<std::int64_t> count, const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "run_length_encode";
  check_call(function, n, o, count, named{"in", in}, named{"unique_out", unique_out},
             named{"counts_out", counts_out});
  check_apart(function, "unique_out", unique_out, "in", in, n);
  if (n == 0) return write_zero(function, count.pointer, o);
  detail::select::run_length_encode(function, in, unique_out, counts_out, n, equal,
                                    count.pointer, o);
}
template <class In, class UniqueOut, class CountsOut, class Equal = equal_to>
std::int64_t run_length_encode(In in, UniqueOut unique_out, CountsOut counts_out, std::int64_t n,
                               Equal equal = {}, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("run_length_encode", o, [&](std::int64_t* c) {
    tally::run_length_encode(in, unique_out, counts_out, n, equal, count_to(c), o);
  });
}

template <class In, class OffsetsOut, class LengthsOut, class Equal>
void non_trivial_runs(In in, OffsetsOut offsets_out, LengthsOut lengths_out, std::int64_t n,
                      Equal equal, device_count<std::int64_t> count, const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "non_trivial_runs";
  check_call(function, n, o, count, named{"in", in}, named{"offsets_out", offsets_out},
             named{"lengths_out", lengths_out});
  if (n == 0) return write_zero(function, count.pointer, o);
  detail::select::non_trivial_runs(function, in, offsets_out, lengths_out, n, equal,
                                   count.pointer, o);
}
template <class In, class OffsetsOut, class LengthsOut, class Equal = equal_to>
std::int64_t non_trivial_runs(In in, OffsetsOut offsets_out, LengthsOut lengths_out,
                              std::int64_t n, Equal equal = {}, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("non_trivial_runs", o, [&](std::int64_t* c) {
    tally::non_trivial_runs(in, offsets_out, lengths_out, n, equal, count_to(c), o);
  });
}

// ---- reduce_by_key ---------------------------------------------------------------------------
template <class Keys, class Values, class KeysOut, class ValuesOut, class Op, class Equal>
void reduce_by_key(Keys keys, Values values, KeysOut keys_out, ValuesOut values_out,
                   std::int64_t n, Op op, Equal equal, device_count<std::int64_t> count,
                   const options& o = {}) {
  using namespace detail::select;
  constexpr const char* function = "reduce_by_key";
  check_call(function, n, o, count, named{"keys", keys}, named{"values", values},
             named{"keys_out", keys_out}, named{"values_out", values_out});
  check_apart(function, "keys_out", keys_out, "keys", keys, n);
  check_apart(function, "values_out", values_out, "values", values, n);
  if (n == 0) return write_zero(function, count.pointer, o);
  using acc_t = inclusive_accumulator_t<Op, input_value_t<Values>>;
  detail::select::reduce_by_key<acc_t>(function, keys, values, keys_out, values_out, n, op, equal,
                                       count.pointer, o);
}
template <class Keys, class Values, class KeysOut, class ValuesOut, class Op = plus,
          class Equal = equal_to>
std::int64_t reduce_by_key(Keys keys, Values values, KeysOut keys_out, ValuesOut values_out,
                           std::int64_t n, Op op = {}, Equal equal = {}, const options& o = {}) {
  return detail::select::host_count<std::int64_t>("reduce_by_key", o, [&](std::int64_t* c) {
    tally::reduce_by_key(keys, values, keys_out, values_out, n, op, equal, count_to(c), o);
  });
}

}  // namespace tally
