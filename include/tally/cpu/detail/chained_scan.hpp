// tally/cpu/detail/chained_scan.hpp -- the parallel CPU scan: a chained scan over tiles.
//
// The single-pass chained scan (Yan, Long & Zhang 2013) transposed to CPU threads:
//   1. a thread takes the next tile index from an atomic counter (so a tile is only ever
//      waited for by tiles taken after it, by threads that are running: no deadlock
//      whatever the number of threads or their scheduling);
//   2. it reduces its tile (one read from memory; the tile, sized to fit in the core's
//      L2 cache, stays cached);
//   3. it waits for the predecessor tile's inclusive prefix, combines it with its own
//      aggregate and publishes its inclusive prefix at once, so the successor waits only
//      for one combine, not for the scan of this tile;
//   4. it scans its tile from the cache, seeded with the predecessor's prefix, writing
//      the output with non-temporal stores for large arrays.
// Memory traffic is one read and one write of the array (the copy's traffic), instead of
// the two reads and one write of a reduce-then-scan. The association of the result is
// fixed by the tile size alone, so it is identical from run to run and for any number of
// threads.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <thread>

#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tally::cpu::detail {

inline void spin_pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// Per-tile state, one cache line each so that neighbours do not share lines.
//   aggregate    the reduction of the tile alone; written once, by the tile's owner
//   inclusive    everything up to and including the tile; may be computed by the owner
//                or by a helper (below), always as inclusive(t-1) op aggregate(t), so
//                every writer computes the same bits; `claim` lets one of them store it.
template <class Acc>
struct alignas(64) tile_state {
  std::atomic<bool> aggregate_ready{false};
  std::atomic<int> claim{0};  // 0: no inclusive; 1: being stored; 2: stored
  std::optional<Acc> aggregate;
  std::optional<Acc> inclusive;
};

// Runs the chained scan over `tiles` tiles.
//   reduce_tile(t)          -> Acc: the aggregate of tile t
//   scan_tile(t, prefix)    scans tile t seeded with `prefix` (a const
//                           std::optional<Acc>&, empty for the very first element of
//                           an inclusive scan)
//   combine(a, b)           -> Acc: the operator, earlier operand first
// `seed` is the prefix of tile 0 (the init of an exclusive scan, or empty).
//
// Waiting, and helping. A tile waits briefly for its predecessor's inclusive prefix. If
// it does not come (its owner's thread was descheduled, which is common with more
// runnable threads than cores), the waiting thread computes the missing prefixes itself:
// it walks back to the nearest published inclusive prefix and forward again,
// reducing any tile whose aggregate is not published, and publishes each prefix it
// computes. A prefix is always inclusive(t-1) op aggregate(t), whoever computes it, so
// results stay identical bit for bit. Helping re-reads input tiles, so it is disabled
// for in-place scans (`may_help` false), where the owner may already be overwriting its
// tile with output.
template <class Acc, class ReduceTile, class ScanTile, class Combine>
void chained_scan(std::int64_t tiles, const std::optional<Acc>& seed, ReduceTile reduce_tile,
                  ScanTile scan_tile, Combine combine, bool may_help = true) {
  const auto states = std::make_unique<tile_state<Acc>[]>(static_cast<std::size_t>(tiles));
  std::atomic<std::int64_t> next_tile{0};

  auto combine_opt = [&](const std::optional<Acc>& prefix, const Acc& aggregate) {
    return prefix ? std::optional<Acc>(combine(*prefix, aggregate)) : std::optional<Acc>(aggregate);
  };
  // Stores inclusive(t) unless another thread already claimed it; returns the stored
  // value (identical to `value` in every case, but reading it back keeps a helper that
  // lost the race on the published bits).
  auto publish = [&](std::int64_t t, std::optional<Acc> value) -> std::optional<Acc> {
    tile_state<Acc>& s = states[t];
    int expected = 0;
    if (s.claim.compare_exchange_strong(expected, 1, std::memory_order_relaxed)) {
      s.inclusive = std::move(value);
      // release: the value stored above is visible to whoever acquires claim == 2.
      s.claim.store(2, std::memory_order_release);
      return s.inclusive;
    }
    while (s.claim.load(std::memory_order_acquire) != 2) spin_pause();  // a store in flight
    return s.inclusive;
  };
  auto inclusive_ready = [&](std::int64_t t) {
    // acquire: pairs with the release in publish, so `inclusive` is readable after it.
    return states[t].claim.load(std::memory_order_acquire) == 2;
  };
  // The prefix of tile t: inclusive(t-1), or the seed for tile 0.
  auto prefix_of = [&](std::int64_t t) -> std::optional<Acc> {
    if (t == 0) return seed;
    for (int spins = 0; !inclusive_ready(t - 1); ++spins) {
      if (spins < 2048) {
        spin_pause();
        continue;
      }
      if (!may_help) {
        std::this_thread::yield();
        continue;
      }
      // Help: back to the nearest published prefix, then forward to t-1.
      std::int64_t j = t - 1;
      while (j >= 0 && !inclusive_ready(j)) --j;
      std::optional<Acc> inclusive = j >= 0 ? states[j].inclusive : seed;
      for (std::int64_t m = j + 1; m < t; ++m) {
        // acquire: pairs with the owner's release of its aggregate.
        const Acc aggregate = states[m].aggregate_ready.load(std::memory_order_acquire)
                                  ? *states[m].aggregate
                                  : reduce_tile(m);
        inclusive = publish(m, combine_opt(inclusive, aggregate));
      }
      return inclusive;
    }
    return states[t - 1].inclusive;
  };

  auto worker = [&] {
    for (;;) {
      // relaxed: the counter only hands out indices; the data a tile needs is published
      // through the flags of tile_state.
      const std::int64_t t = next_tile.fetch_add(1, std::memory_order_relaxed);
      if (t >= tiles) return;
      states[t].aggregate = reduce_tile(t);
      // release: a helper that acquires the flag reads the aggregate stored above.
      states[t].aggregate_ready.store(true, std::memory_order_release);
      const std::optional<Acc> prefix = prefix_of(t);
      publish(t, combine_opt(prefix, *states[t].aggregate));
      scan_tile(t, prefix);
    }
  };

  const int threads = static_cast<int>(
      std::min<std::int64_t>(tiles, tbb::this_task_arena::max_concurrency()));
  // One task per thread. Each task loops over tiles until none is left; a tile only ever
  // waits for tiles taken before it by running tasks (or computes their prefixes itself),
  // so no order of execution can deadlock.
  tbb::parallel_for(0, threads, [&](int) { worker(); }, tbb::simple_partitioner{});
}

}  // namespace tally::cpu::detail
