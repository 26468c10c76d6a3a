// tally/device/select/runs.cuh -- the run forms as tile programs: unique, unique_by_key,
// run_length_encode, non_trivial_runs (the public API: device/select.cuh).
//
// A run is a maximal range of consecutive equal items: item i > 0 is a run's HEAD when
// !equal(x[i-1], x[i]) (item 0 always is), its END when i == n - 1 or !equal(x[i],
// x[i+1]). Each item reads its neighbours in its load, so a tile needs no halo exchange
// (they are in the same or the adjacent cache lines).
//   unique, unique_by_key  a compaction of the heads (select/compaction.cuh's counts).
//   run_length_encode      the scan carries run_state{runs so far, start of the latest
//                          run} (select/program_scan.cuh; 32-bit below 2^32 items): a head stores its item to
//                          unique_out[runs - 1], an end stores i - start + 1 to
//                          counts_out[runs - 1].
//   non_trivial_runs       the same with count = runs of more than one item so far,
//                          counted at each run's second item; an end i > start stores the
//                          offset and length.
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>

#include "tally/core/accumulator.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/device/select/compaction.cuh"
#include "tally/device/select/program_scan.cuh"

namespace tally::detail::select {

// The value type an output stores (std::int64_t for an output without one).
template <class Out>
constexpr auto stored_count_type() {
  if constexpr (requires { typename std::iter_value_t<Out>; }) {
    if constexpr (!std::is_void_v<std::iter_value_t<Out>>) {
      return std::type_identity<std::iter_value_t<Out>>{};
    } else {
      return std::type_identity<std::int64_t>{};
    }
  } else {
    return std::type_identity<std::int64_t>{};
  }
}
template <class Out>
using stored_count_t = typename decltype(stored_count_type<Out>())::type;

template <class In, class Equal>
TALLY_DEVICE TALLY_FORCEINLINE bool is_head(const In& in, std::int64_t i, const Equal& equal) {
  return i == 0 || !static_cast<bool>(equal(in[i - 1], in[i]));
}

// unique: the heads stay.
template <class In, class Equal>
struct unique_input {
  using value_type = std::remove_cvref_t<input_value_t<In>>;
  using payload_type = kept_item<value_type>;
  In in;
  Equal equal;
  TALLY_DEVICE TALLY_FORCEINLINE payload_type payload(std::int64_t i) const {
    const value_type x = in[i];
    return {x, i == 0 || !static_cast<bool>(equal(in[i - 1], x))};
  }
  TALLY_DEVICE TALLY_FORCEINLINE int value(std::int64_t, const payload_type& p) const {
    return p.keep ? 1 : 0;
  }
};

// unique_by_key: the head keys stay, with the value at their position (read in the store,
// by the heads only).
template <class KeysOut, class Values, class ValuesOut, class K>
struct unique_by_key_output {
  KeysOut keys_out;
  Values values;
  ValuesOut values_out;
  std::int64_t* count;
  std::int64_t n;
  template <class Count>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const kept_item<K>& p,
                                            Count kept) const {
    if (p.keep) {
      keys_out[kept - 1] = p.x;
      values_out[kept - 1] = values[i];
    }
    if (i == n - 1) *count = static_cast<std::int64_t>(kept);
  }
};

template <class T>
struct run_item {
  T x;
  bool head;
  bool end;
};

template <class C, class In, class Equal>
struct run_length_input {
  using value_type = std::remove_cvref_t<input_value_t<In>>;
  using payload_type = run_item<value_type>;
  In in;
  Equal equal;
  std::int64_t n;
  TALLY_DEVICE TALLY_FORCEINLINE payload_type payload(std::int64_t i) const {
    const value_type x = in[i];
    return {x, i == 0 || !static_cast<bool>(equal(in[i - 1], x)),
            i == n - 1 || !static_cast<bool>(equal(x, in[i + 1]))};
  }
  TALLY_DEVICE TALLY_FORCEINLINE run_state<C> value(std::int64_t i, const payload_type& p) const {
    return p.head ? run_state<C>{1, static_cast<C>(i)} : run_state<C>{0, run_state<C>::none};
  }
};

template <class UniqueOut, class CountsOut, class T>
struct run_length_output {
  UniqueOut unique_out;
  CountsOut counts_out;
  std::int64_t* count;
  std::int64_t n;
  template <class C>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const run_item<T>& p,
                                            const run_state<C>& s) const {
    if (p.head) unique_out[s.count - 1] = p.x;
    if (p.end) {
      counts_out[s.count - 1] =
          static_cast<stored_count_t<CountsOut>>(i - static_cast<std::int64_t>(s.start) + 1);
    }
    if (i == n - 1) *count = static_cast<std::int64_t>(s.count);
  }
};

struct run_marks {
  bool head;
  bool second;  // the second item of its run
  bool end;
};

template <class C, class In, class Equal>
struct non_trivial_input {
  using payload_type = run_marks;
  In in;
  Equal equal;
  std::int64_t n;
  TALLY_DEVICE TALLY_FORCEINLINE run_marks payload(std::int64_t i) const {
    const bool head = is_head(in, i, equal);
    const bool second = !head && is_head(in, i - 1, equal);
    const bool end = i == n - 1 || !static_cast<bool>(equal(in[i], in[i + 1]));
    return {head, second, end};
  }
  TALLY_DEVICE TALLY_FORCEINLINE run_state<C> value(std::int64_t i, const run_marks& p) const {
    return {static_cast<C>(p.second ? 1 : 0), p.head ? static_cast<C>(i) : run_state<C>::none};
  }
};

template <class OffsetsOut, class LengthsOut>
struct non_trivial_output {
  OffsetsOut offsets_out;
  LengthsOut lengths_out;
  std::int64_t* count;
  std::int64_t n;
  template <class C>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const run_marks& p,
                                            const run_state<C>& s) const {
    const auto start = static_cast<std::int64_t>(s.start);
    if (p.end && i > start) {
      offsets_out[s.count - 1] = static_cast<stored_count_t<OffsetsOut>>(start);
      lengths_out[s.count - 1] = static_cast<stored_count_t<LengthsOut>>(i - start + 1);
    }
    if (i == n - 1) *count = static_cast<std::int64_t>(s.count);
  }
};

template <class In, class Out, class Equal>
void unique(const char* function, In in, Out out, std::int64_t n, Equal equal, std::int64_t* count,
            const options& o) {
  using input = unique_input<In, Equal>;
  with_count_type(n, [&](auto c) {
    run<decltype(c)>(function, input{in, equal},
                     compaction_output<Out, typename input::value_type>{out, count, n}, n, plus{},
                     o);
  });
}

template <class Keys, class Values, class KeysOut, class ValuesOut, class Equal>
void unique_by_key(const char* function, Keys keys, Values values, KeysOut keys_out,
                   ValuesOut values_out, std::int64_t n, Equal equal, std::int64_t* count,
                   const options& o) {
  using input = unique_input<Keys, Equal>;
  with_count_type(n, [&](auto c) {
    run<decltype(c)>(function, input{keys, equal},
                     unique_by_key_output<KeysOut, Values, ValuesOut, typename input::value_type>{
                         keys_out, values, values_out, count, n},
                     n, plus{}, o);
  });
}

template <class In, class UniqueOut, class CountsOut, class Equal>
void run_length_encode(const char* function, In in, UniqueOut unique_out, CountsOut counts_out,
                       std::int64_t n, Equal equal, std::int64_t* count, const options& o) {
  with_count_type(n, [&](auto c) {
    using C = decltype(c);
    using input = run_length_input<C, In, Equal>;
    run<run_state<C>>(function, input{in, equal, n},
                      run_length_output<UniqueOut, CountsOut, typename input::value_type>{
                          unique_out, counts_out, count, n},
                      n, run_op{}, o);
  });
}

template <class In, class OffsetsOut, class LengthsOut, class Equal>
void non_trivial_runs(const char* function, In in, OffsetsOut offsets_out, LengthsOut lengths_out,
                      std::int64_t n, Equal equal, std::int64_t* count, const options& o) {
  with_count_type(n, [&](auto c) {
    using C = decltype(c);
    run<run_state<C>>(function, non_trivial_input<C, In, Equal>{in, equal, n},
                      non_trivial_output<OffsetsOut, LengthsOut>{offsets_out, lengths_out, count, n},
                      n, run_op{}, o);
  });
}

}  // namespace tally::detail::select
