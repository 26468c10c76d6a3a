// tally/cpu/detail/select.hpp -- the parallel machinery of the selection family: a
// two-pass chunked algorithm on oneTBB's threads.
//
// The input is cut into chunks of cpu_tuning::tile_bytes of input each.
//   1. In parallel, each chunk counts its elements of each output class (kept/dropped for
//      a compaction; selected/rejected for a partition; run heads for the run forms).
//   2. An exclusive scan of the chunk counts gives every chunk its first output position
//      in each class (on one thread: one count per chunk of tens of thousands of
//      elements is little work).
//   3. In parallel, each chunk writes its elements at those positions, in input order, so
//      every output is stable and its layout is the sequential one.
// Predicates and comparisons are evaluated in passes 1 and 3, concurrently: they must
// be pure. Pass 3 reuses the classification pass 1 made of each chunk's first element (one
// byte per chunk), which the in-place compaction needs (see compact_in_place).
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include <tbb/parallel_for.h>
#include <tbb/partitioner.h>
#include <tbb/task_arena.h>

#include "tally/core/error.hpp"
#include "tally/cpu/detail/chained_scan.hpp"
#include "tally/cpu/detail/dispatch.hpp"

namespace tally::cpu::detail {

// Iterators whose range length is last - first (pointers, random-access iterators,
// tally::transform_iterator).
template <class It>
concept sized_iterator = requires(const It& a, const It& b) {
  { b - a } -> std::convertible_to<std::int64_t>;
};

// Iterators the parallel passes can index: it[i] and it + i, besides the length.
template <class It>
concept indexable_iterator = sized_iterator<It> && requires(const It& a, std::int64_t i) {
  a[i];
  { a + i } -> std::convertible_to<It>;
};

template <class... It>
inline constexpr bool all_indexable_v = (indexable_iterator<It> && ...);

// The length of [first, last), checked; -1 for iterators that cannot tell it without
// walking the range (a single-pass input iterator would be consumed by that walk).
template <class It>
std::int64_t select_length(const char* fn, const char* first_name, const char* last_name,
                           const It& first, const It& last) {
  if constexpr (std::is_pointer_v<It>) {
    if ((first == nullptr) != (last == nullptr)) {
      tally::detail::throw_invalid(fn, first == nullptr ? first_name : last_name,
                                   "is a null pointer and the other end of the range is not");
    }
  }
  if constexpr (sized_iterator<It>) {
    const auto n = static_cast<std::int64_t>(last - first);
    if (n < 0) {
      tally::detail::throw_invalid(fn, last_name,
                                   std::string("comes before '") + first_name + "' (distance " +
                                       std::to_string(n) + ")");
    }
    return n;
  } else {
    return -1;
  }
}

// 1 if [first, last) has elements, else 0: the count for tally::detail::check_pointer.
template <class It>
std::int64_t any_elements(std::int64_t n, const It& first, const It& last) {
  return n > 0 || (n < 0 && first != last) ? 1 : 0;
}

// Whether writing n outputs from d_first may change the inputs from first that are
// still to be read: true where both are contiguous and their byte ranges overlap, and
// for other iterators unless the input yields values rather than references (a
// transform or counting input cannot alias anything).
template <class InIt, class OutIt>
bool may_overlap(const InIt& first, const OutIt& d_first, std::int64_t n) {
  if constexpr (std::contiguous_iterator<InIt> && std::contiguous_iterator<OutIt>) {
    const auto in = reinterpret_cast<std::uintptr_t>(raw(first));
    const auto out = reinterpret_cast<std::uintptr_t>(raw(d_first));
    const auto in_bytes = static_cast<std::uintptr_t>(n) * sizeof(std::iter_value_t<InIt>);
    const auto out_bytes = static_cast<std::uintptr_t>(n) * sizeof(std::iter_value_t<OutIt>);
    return in < out + out_bytes && out < in + in_bytes;
  } else {
    return std::is_reference_v<std::iter_reference_t<InIt>>;
  }
}

// Whether n elements of the given input types (bytes read per element: their sizes'
// sum) are enough to run in parallel, by the threshold of the scans.
template <class... T>
bool select_in_parallel(std::int64_t n) {
  return n > 0 && static_cast<std::size_t>(n) * (sizeof(T) + ...) >= cpu_tuning::parallel_min_bytes;
}

struct chunk_grid {
  std::int64_t n = 0;
  std::int64_t size = 1;   // elements per chunk
  std::int64_t count = 0;  // chunks
  std::int64_t begin(std::int64_t c) const { return c * size; }
  std::int64_t end(std::int64_t c) const { return std::min(n, (c + 1) * size); }
};

// Chunks of cpu_tuning::tile_bytes of input, counted over the element types read.
template <class... T>
chunk_grid make_chunk_grid(std::int64_t n) {
  constexpr std::size_t bytes = (sizeof(T) + ...);
  constexpr auto size = static_cast<std::int64_t>(
      cpu_tuning::tile_bytes / bytes > 0 ? cpu_tuning::tile_bytes / bytes : 1);
  return chunk_grid{n, size, (n + size - 1) / size};
}

// ---- classes: compaction and partitions ------------------------------------------------

// classify(i) -> int in [0, Classes): the output class of element i.
template <int Classes>
struct class_layout {
  chunk_grid grid;
  // start[c][k]: the elements of class k in the chunks before c (chunk c's first position
  // in class k's output).
  std::vector<std::array<std::int64_t, Classes>> start;
  std::vector<std::uint8_t> first_class;  // the class of each chunk's first element
  std::array<std::int64_t, Classes> total{};
};

// Passes 1 and 2: the per-chunk counts and their exclusive scan.
template <int Classes, class Classify>
class_layout<Classes> count_classes(const chunk_grid& grid, const Classify& classify) {
  class_layout<Classes> layout{grid, std::vector<std::array<std::int64_t, Classes>>(grid.count),
                               std::vector<std::uint8_t>(grid.count), {}};
  tbb::parallel_for(std::int64_t{0}, grid.count, [&](std::int64_t c) {
    const std::int64_t b = grid.begin(c), e = grid.end(c);
    const int first = classify(b);
    layout.first_class[c] = static_cast<std::uint8_t>(first);
    // One counter per class but the last (the chunk's length gives it), incremented
    // without indexing by the class so that the counters stay in registers.
    std::array<std::int64_t, Classes> count{};
    for (int k = 0; k + 1 < Classes; ++k) count[k] = first == k ? 1 : 0;
    for (std::int64_t i = b + 1; i < e; ++i) {
      const int cls = classify(i);
      for (int k = 0; k + 1 < Classes; ++k) count[k] += cls == k ? 1 : 0;
    }
    std::int64_t others = e - b;
    for (int k = 0; k + 1 < Classes; ++k) others -= count[k];
    count[Classes - 1] = others;
    layout.start[c] = count;
  });
  std::array<std::int64_t, Classes> running{};
  for (auto& s : layout.start) {
    const std::array<std::int64_t, Classes> count = s;
    s = running;
    for (int k = 0; k < Classes; ++k) running[k] += count[k];
  }
  layout.total = running;
  return layout;
}

// Pass 3 for outputs that do not overlap the input: place(cls, pos, i) writes element i
// as the pos-th element of class cls, every chunk in parallel.
template <int Classes, class Classify, class Place>
void place_classes(const class_layout<Classes>& layout, const Classify& classify,
                   const Place& place) {
  const chunk_grid& grid = layout.grid;
  tbb::parallel_for(std::int64_t{0}, grid.count, [&](std::int64_t c) {
    std::array<std::int64_t, Classes> pos = layout.start[c];
    const std::int64_t b = grid.begin(c), e = grid.end(c);
    for (std::int64_t i = b; i < e; ++i) {
      const int cls = i == b ? int{layout.first_class[c]} : classify(i);
      std::int64_t at = pos[0];
      for (int k = 1; k < Classes; ++k) at = cls == k ? pos[k] : at;
      place(cls, at, i);
      for (int k = 0; k < Classes; ++k) pos[k] += cls == k ? 1 : 0;
    }
  });
}

// Pass 3 of a compaction whose output may overlap its input (d_first == first): class 0
// is kept, read(i) -> T is element i's value, out the output.
//
// Chunk c writes [start_c, start_(c+1)), which lies below the end of chunk c's input
// (start_(c+1) <= its end: a chunk keeps at most its elements), so it can only overwrite
// input of chunk c itself and of earlier chunks, never of later ones. Each chunk
// therefore first copies its kept elements into a buffer of its thread (one chunk long,
// L2-resident: the copy costs no memory traffic), then announces that its input is
// read, then waits until every earlier chunk whose input its output range covers has
// announced the same, and writes. Chunks thus write in parallel with one chunk of
// memory per thread, instead of one after another (the write pass in chunk order) or
// with a buffer as long as the output.
//
// No deadlock: chunk indices come from an atomic counter, so a chunk only waits for
// chunks taken before it by threads already running them, and the read that it waits
// for never waits for anything. The classification of a chunk's first element may read
// the element before it (unique compares neighbours), in the previous chunk, which that
// chunk's write may be storing to at the same moment (a data race, though the value
// stored is the one already there): pass 1's classification (first_class) is used.
template <class T, class Classify, class Read, class OutIt>
void compact_in_place(const class_layout<2>& layout, const Classify& classify, const Read& read,
                      OutIt out) {
  const chunk_grid& grid = layout.grid;
  const auto input_read =
      std::make_unique<std::atomic<bool>[]>(static_cast<std::size_t>(grid.count));
  std::atomic<std::int64_t> next_chunk{0};
  auto wait_for = [&](std::int64_t c) {
    // acquire: pairs with the release below, so chunk c's reads of its input happen
    // before this thread's writes over it.
    for (int spins = 0; !input_read[c].load(std::memory_order_acquire); ++spins) {
      if (spins < 2048) {
        spin_pause();
      } else {
        std::this_thread::yield();  // its owner may be descheduled
      }
    }
  };
  auto worker = [&] {
    // storage for one chunk of T, which need not be default-constructible: each slot's
    // value is constructed in place by the store below
    struct slot {
      alignas(T) unsigned char bytes[sizeof(T)];
    };
    std::vector<slot> storage(static_cast<std::size_t>(grid.size));
    T* const kept = reinterpret_cast<T*>(storage.data());
    for (;;) {
      // relaxed: the counter only hands out indices; the data is published through
      // input_read.
      const std::int64_t c = next_chunk.fetch_add(1, std::memory_order_relaxed);
      if (c >= grid.count) return;
      const std::int64_t b = grid.begin(c), e = grid.end(c);
      // Branch-free: every element is stored at the buffer's next slot, which advances
      // only past a kept one (the buffer holds a whole chunk, so no store leaves it).
      std::int64_t count = 0;
      for (std::int64_t i = b; i < e; ++i) {
        const int cls = i == b ? int{layout.first_class[c]} : classify(i);
        ::new (static_cast<void*>(kept + count)) T(read(i));
        count += cls == 0 ? 1 : 0;
      }
      // release: the reads above happen before any write over this chunk's input.
      input_read[c].store(true, std::memory_order_release);
      if (count == 0) continue;
      const std::int64_t to = layout.start[c][0];
      const std::int64_t last_covered = std::min(c - 1, (to + count - 1) / grid.size);
      for (std::int64_t j = to / grid.size; j <= last_covered; ++j) wait_for(j);
      for (std::int64_t k = 0; k < count; ++k) out[to + k] = *std::launder(kept + k);
    }
  };
  const int threads = static_cast<int>(
      std::min<std::int64_t>(grid.count, tbb::this_task_arena::max_concurrency()));
  // One task per thread, each taking chunks until none is left (as in chained_scan).
  tbb::parallel_for(0, threads, [&](int) { worker(); }, tbb::simple_partitioner{});
}

// A compaction (class 0 kept, class 1 dropped): out[...] = read(i) for every kept i, in
// order; returns the number kept. `in_place`: the output may overlap the input.
template <class T, class Classify, class Read, class OutIt>
std::int64_t compact(const chunk_grid& grid, const Classify& classify, const Read& read, OutIt out,
                     bool in_place) {
  const class_layout<2> layout = count_classes<2>(grid, classify);
  if (in_place) {
    compact_in_place<T>(layout, classify, read, out);
    return layout.total[0];
  }
  // Branch-free (a kept-or-not branch on data mispredicts about half the time at 50%):
  // every element is stored at the chunk's next output position, which advances only past
  // a kept one, so a dropped element's store is overwritten by the next kept one. The
  // stores stay inside the chunk's own output range [start_c, start_(c+1)): the loop ends
  // once that range is full.
  const chunk_grid& g = layout.grid;
  tbb::parallel_for(std::int64_t{0}, g.count, [&](std::int64_t c) {
    std::int64_t pos = layout.start[c][0];
    const std::int64_t end = c + 1 < g.count ? layout.start[c + 1][0] : layout.total[0];
    const std::int64_t b = g.begin(c), e = g.end(c);
    for (std::int64_t i = b; i < e && pos < end; ++i) {
      const int cls = i == b ? int{layout.first_class[c]} : classify(i);
      out[pos] = read(i);
      pos += cls == 0 ? 1 : 0;
    }
  });
  return layout.total[0];
}

// ---- runs: run-length encoding, non-trivial runs, reduce-by-key ------------------------

// is_head(i): whether element i starts a run (true for i == 0).
struct run_layout {
  chunk_grid grid;
  std::vector<std::int64_t> start;       // outputs of the chunks before c
  std::vector<std::int64_t> first_head;  // the first head in chunk c (its end if none)
  std::vector<std::int64_t> next_head;   // the first head at or after chunk c's end (n if none)
  std::int64_t total = 0;
};

// Pass 1 and the scan. emits(i), for a head i: whether its run has an output.
// lead(c, first_head): called once per chunk, for chunks to look at their elements before
// their first head (the tail of a run that began in an earlier chunk).
template <class IsHead, class Emits, class Lead>
run_layout count_runs(const chunk_grid& grid, const IsHead& is_head, const Emits& emits,
                      const Lead& lead) {
  const auto chunks = static_cast<std::size_t>(grid.count);
  run_layout layout{grid, std::vector<std::int64_t>(chunks), std::vector<std::int64_t>(chunks),
                    std::vector<std::int64_t>(chunks), 0};
  tbb::parallel_for(std::int64_t{0}, grid.count, [&](std::int64_t c) {
    const std::int64_t b = grid.begin(c), e = grid.end(c);
    std::int64_t first = e, count = 0;
    for (std::int64_t i = b; i < e; ++i) {
      if (!is_head(i)) continue;
      if (first == e) first = i;
      count += emits(i) ? 1 : 0;
    }
    layout.first_head[c] = first;
    layout.start[c] = count;
    lead(c, first);
  });
  std::int64_t running = 0;
  for (auto& s : layout.start) {
    const std::int64_t count = s;
    s = running;
    running += count;
  }
  layout.total = running;
  std::int64_t next = grid.n;
  for (std::int64_t c = grid.count - 1; c >= 0; --c) {
    layout.next_head[c] = next;
    if (layout.first_head[c] < grid.end(c)) next = layout.first_head[c];
  }
  return layout;
}

// Calls f(head, end) for every run whose head lies in chunk c, in order; end is the next
// head, possibly in a later chunk, or n.
template <class IsHead, class F>
void for_each_run(const run_layout& layout, std::int64_t c, const IsHead& is_head, F&& f) {
  const std::int64_t e = layout.grid.end(c);
  std::int64_t head = layout.first_head[c];
  if (head >= e) return;
  for (std::int64_t i = head + 1; i < e; ++i) {
    if (is_head(i)) {
      f(head, i);
      head = i;
    }
  }
  f(head, layout.next_head[c]);
}

}  // namespace tally::cpu::detail
