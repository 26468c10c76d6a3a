// tally/device/detail/pipelined_scan.cuh -- the single-pass scan of LARGE inputs:
// persistent blocks that hide the wait for a tile's prefix behind the next tile.
//
// Why. In the one-block-per-tile pipeline (single_pass_scan.cuh) a block that waits for
// its prefix holds its tile and issues no loads; the tile pipeline alone runs at 96-98% of
// a copy, the look-back scan at 80-89% (docs/perf-notes.md, "Staged tiles" and "The
// pipelined scan"). Here a block does not wait with empty hands: it publishes a tile's
// aggregate as soon as the tile is scanned, and asks for that tile's prefix only after it
// has scanned its NEXT tile, while a third tile's bytes are already on their way.
//
// The block: 8 compute warps (256 threads) and one producer warp, persistent (a grid of
// what the device holds at once, at most one block per tile), with a ring of `Stages`
// tiles in shared memory.
//   - The producer (one lane) fills the ring in order. For each free stage it draws a
//     ticket (the tile index: tile_state.cuh), and starts ONE bulk copy of the whole tile
//     (cp.async.bulk, the Hopper copy engine, TMA) that signals the stage's FULL mbarrier
//     when its bytes have landed. When the tickets are used up it marks the stage "no
//     tile" and stops.
//   - The compute warps take the stages in the same order. For tile i:
//       a. wait for its FULL barrier; scan it in place (each warp its rows: lane-serial,
//          across the warp, rows chained), writing each item's warp-local result back to
//          shared memory ("the write-back scan" below); warp totals to shared memory;
//          barrier;
//       b. warp 0: the tile's aggregate from the warp totals; publishes it (look-back) or,
//          for tile 0, its inclusive value;
//       c. warp 0: the PREVIOUS tile i-1's prefix (Protocol::prefix_after_aggregate: the
//          look-back, or the chained scan's wait for its predecessor) and inclusive value,
//          and its warps' prefixes to shared memory; barrier;
//       d. all: tile i-1's items behind their warp's prefix, stored to global memory;
//          each thread then arrives on the stage's EMPTY mbarrier, which lets the
//          producer refill it.
//     After the last tile, c and d once more for it.
// The order of b before c is the point: tile i's successors can see its aggregate while
// this block still waits for tile i-1's prefix, and by the time it asks, the answer has
// usually arrived (a tile's scan takes about as long as a look-back round trip).
//
// Tickets and the end of a call. A block draws tickets until one is >= tiles, exactly
// once per block, so a call draws tiles + gridDim.x tickets: the block that draws the
// last of them (count tiles + gridDim.x - 1) opens the next epoch, as the last ticket
// does in single_pass_scan.cuh. A tile index is drawn only when the producer can start
// the tile's copy at once; a ticket held while the block is busy elsewhere would make
// every later tile wait for this block (a first persistent version did that and ran at
// 40% of the copy: docs/perf-notes.md, "Staged tiles" item 5).
//
// Deadlock freedom. A block waits for a prefix only at c, for tiles drawn before its own,
// so by blocks that are running. Let m be the smallest tile whose aggregate (look-back) or
// inclusive value (chained) is not published yet. Its block has drawn it, so it is
// either loading it (the copy lands by itself), or at c for an earlier tile of its own,
// whose predecessors are all < m and published, or at c for m itself after scanning its
// next tile (its producer needs nothing but a free stage, which d freed an iteration
// ago). So m is published eventually, for any number of resident blocks.
//
// Memory ordering inside the block: the mbarriers order it. The producer writes the
// stage's tile index before arriving on FULL (arrive has release semantics at CTA scope;
// the compute warps' wait acquires), and the bulk copy's bytes are visible to whoever
// sees the phase complete. The compute threads arrive on EMPTY after their last
// shared-memory access to the stage, each after a fence.proxy.async: they wrote the stage
// through the generic proxy (the write-back scan), the next bulk copy writes it through
// the async proxy, and that fence orders the former before the latter; the producer waits
// on EMPTY before it starts the copy. Between blocks: the descriptors of tile_state.cuh.
//
// Applies to 16-byte aligned pointers to 4- and 8-byte values (bulk copies need 16-byte
// aligned addresses). A partial last tile is loaded by the compute threads themselves,
// padded with x_{n-1} as in single_pass_scan.cuh. Tiles: 256 threads x 8 rows x 16 bytes
// = 32 KiB, two stages (64 KiB of dynamic shared memory), 3 blocks per SM on an H100.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include <cuda_runtime.h>

#include "tally/core/options.hpp"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/occupancy.cuh"
#include "tally/device/detail/single_pass_scan.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::pipelined {

using single_pass::maybe;
using single_pass::then;

// ---- tuning ------------------------------------------------------------------------------------
// Measured on an H100 (docs/perf-notes.md, "The pipelined scan"), int32 at 2^28, % of the
// copy: 8 rows x 2 stages 97.4, 8 x 3 95.2, 12 x 2 96.9, 16 x 3 97.8 (one block per SM,
// and 4-8 points behind at 2^20-2^22), 8 x 4 90.3, 4 x 4 76.6; double at 2^27: 8 x 2 98.4.
inline constexpr int compute_threads = 256;
inline constexpr int kernel_threads = compute_threads + 32;  // + the producer warp
inline constexpr int rows = 8;
inline constexpr int stages = 2;

template <class Acc>
inline constexpr int vec = static_cast<int>(16 / sizeof(Acc));
template <class Acc>
using layout = single_pass::layout<compute_threads, rows, vec<Acc>, true>;
// the same tiles as a single_pass_tuning (for the state's size)
template <class Acc>
constexpr single_pass::single_pass_tuning tuning() {
  return {compute_threads, rows, vec<Acc>};
}

template <class Acc>
constexpr std::int64_t tile_items() {
  return layout<Acc>::tile_items;
}
// The public scans' storage query counts the default tiles of single_pass_scan.cuh
// (single_pass::public_storage_bytes); these tiles must need no more descriptors.
static_assert(tile_items<float>() >= single_pass::default_single_pass_tuning<float>().tile_items() &&
                  tile_items<double>() >= single_pass::default_single_pass_tuning<double>().tile_items(),
              "the storage query covers the pipelined scan's state");
template <class Acc>
constexpr unsigned tile_bytes() {
  return static_cast<unsigned>(layout<Acc>::tile_items * sizeof(Acc));
}
template <class Acc>
constexpr std::size_t ring_bytes() {
  return static_cast<std::size_t>(stages) * tile_bytes<Acc>();
}

// The public look-back and chained scans take this kernel for 16-byte aligned pointers to
// 4- and 8-byte values from this many bytes of data on (dispatch.cuh). Measured on an H100
// against the one-block-per-tile kernel, same process (% of the copy): int32 2^22 (16
// MiB) 71-76% against 82%, 2^24 (64 MiB) 94% against 81%; double 2^20 (8 MiB) even, 2^24
// (128 MiB) 96% against 86%. So from 64 MiB; between 16 and 64 MiB was not measured.
inline constexpr std::int64_t min_bytes = std::int64_t{1} << 26;

// Whether the public scans take this kernel: pointers to Acc itself of a 4- or 8-byte
// type, both 16-byte aligned, and at least min_bytes of data.
template <class Acc, class In, class Out>
bool takes(In in, Out out, std::int64_t n) {
  if constexpr (single_pass::acc_pointers<Acc, In, Out>()) {
    return n >= min_bytes / static_cast<std::int64_t>(sizeof(Acc)) && single_pass::aligned_16(in) &&
           single_pass::aligned_16(out);
  } else {
    (void)in, (void)out, (void)n;
    return false;
  }
}

// ---- mbarriers and bulk copies (PTX, sm_90) ---------------------------------------------------
TALLY_DEVICE TALLY_FORCEINLINE unsigned shared_address(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// An mbarrier whose phase completes after `count` arrivals (and, with expect_tx, the
// expected bytes of bulk copies).
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(bar)), "r"(count)
               : "memory");
}
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_arrive(unsigned long long* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(bar)) : "memory");
}
// Arrive, and expect `bytes` more from bulk copies before the phase completes.
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_arrive_expect(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(bar)),
               "r"(bytes)
               : "memory");
}
// Wait until the phase of parity `parity` has completed.
TALLY_DEVICE TALLY_FORCEINLINE void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}" ::"r"(shared_address(bar)),
      "r"(parity)
      : "memory");
}
// One bulk copy global -> shared of `bytes` (a multiple of 16, both addresses 16-byte
// aligned), completing on `bar`.
TALLY_DEVICE TALLY_FORCEINLINE void bulk_copy(void* to, const void* from, unsigned bytes,
                                              unsigned long long* bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          shared_address(to)),
      "l"(from), "r"(bytes), "r"(shared_address(bar))
      : "memory");
}
// The compute warps' own barrier (the producer warp takes no part in it).
TALLY_DEVICE TALLY_FORCEINLINE void compute_barrier() {
  asm volatile("bar.sync 1, %0;" ::"n"(compute_threads) : "memory");
}

// ---- the write-back scan of a staged tile -----------------------------------------------------
// A lane's Vec serially scanned items behind their prefix within the warp (has_prefix:
// all but the warp's very first lane and row). has_prefix depends on the lane, and
// written as a plain condition it became a branch that the compiler hoisted out of the
// unrolled row loop, splitting every warp into two copies of all its shuffles (int32 at
// 2^28: 64% of the copy without any wait, docs/perf-notes.md, "Staged tiles, version
// 2"); so the choices are select_value (one selp instruction).
template <bool Exclusive, int Vec, class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void with_local_prefix(const Acc& prefix, bool has_prefix,
                                                      Acc (&items)[Vec], Op& op) {
  using single_pass::select_value;
  if constexpr (Exclusive) {
#pragma unroll
    for (int k = Vec - 1; k > 0; --k) {
      items[k] = select_value(has_prefix, static_cast<Acc>(op(prefix, items[k - 1])), items[k - 1]);
    }
    items[0] = prefix;  // without a prefix: not a value (store_rows puts the warp's prefix there)
  } else {
#pragma unroll
    for (int k = 0; k < Vec; ++k) {
      items[k] = select_value(has_prefix, static_cast<Acc>(op(prefix, items[k])), items[k]);
    }
  }
}

// Step a: each warp scans its rows of the staged tile and writes every item's warp-local
// result back in place (inclusive: the warp's items up to this one; exclusive: up to the
// one before), so that nothing per row lives in registers until the prefix is known.
// Returns the warp's total.
template <class L, bool Exclusive, class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE Acc scan_rows(single_pass::vector_of<Acc, L::vec>* staged, int warp,
                                             int lane, Op& op) {
  Acc warp_total;
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    Acc row[L::vec];
    single_pass::read_staged_row<L>(staged, warp, lane, r, row);
    single_pass::lane_scan(row, op);
    Acc row_total;
    const Acc lane_inclusive = warp::inclusive_scan(row[L::vec - 1], op, row_total);
    const Acc lane_exclusive = warp::shuffle_up(lane_inclusive, 1u);  // lane 0: not used
    // the lane's prefix within the warp: the rows before r, then the lanes before it
    // (lane 0: the rows only; lane 0 of row 0: none)
    Acc prefix = lane_exclusive;
    if (r > 0) {
      prefix = single_pass::select_value(lane > 0, static_cast<Acc>(op(warp_total, lane_exclusive)),
                                         warp_total);
    }
    with_local_prefix<Exclusive>(prefix, r > 0 || lane > 0, row, op);
    single_pass::write_staged_row<L>(staged, warp, lane, r, row);
    warp_total = r == 0 ? row_total : static_cast<Acc>(op(warp_total, row_total));
  }
  return warp_total;
}

// Step d: the warp-local values behind the warp's prefix (which an exclusive scan always
// has; there the warp's very first item, which has no local value, is the prefix itself),
// stored row by row.
template <class L, bool Exclusive, class Acc, class Out, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void store_rows(const single_pass::vector_of<Acc, L::vec>* staged,
                                               Out out, std::int64_t base, std::int64_t n, int warp,
                                               int lane, const maybe<Acc>& warp_prefix, Op& op) {
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    Acc row[L::vec];
    single_pass::read_staged_row<L>(staged, warp, lane, r, row);
    if (warp_prefix.present) {
#pragma unroll
      for (int k = 0; k < L::vec; ++k) row[k] = static_cast<Acc>(op(warp_prefix.value, row[k]));
    }
    if constexpr (Exclusive) {
      if (r == 0 && lane == 0) row[0] = warp_prefix.value;
    }
    single_pass::store_row<L>(out, base, n, warp, lane, r, row);
  }
}

// ---- the kernel --------------------------------------------------------------------------------
// Protocol: decoupled_lookback's or chained's (publishes_aggregate, prefix_after_aggregate).
// Hook: single_pass_scan.cuh's test hook, called by the producer right after it drew a
// tile's ticket (before the tile's copy starts).
template <class Protocol, bool Deterministic, bool Exclusive, class Acc, class Op, class Hook>
__global__ void __launch_bounds__(kernel_threads)
    pipelined_kernel(const Acc* in, Acc* out, std::int64_t n, std::int64_t tiles,
                     seed_value<Acc, Exclusive> seed, Op op, single_pass::tile_state<Acc> state,
                     Hook hook) {
  using L = layout<Acc>;
  using vector = single_pass::vector_of<Acc, L::vec>;
  using single_pass::make_tag;
  using single_pass::status_aggregate;
  using single_pass::status_inclusive;
  extern __shared__ __align__(128) unsigned char ring[];  // `stages` tiles
  __shared__ unsigned long long full[stages];   // a stage's tile has landed
  __shared__ unsigned long long empty[stages];  // the compute threads are done with a stage
  __shared__ std::int64_t stage_tile[stages];   // its tile index, -1: no more tiles
  __shared__ unsigned stage_epoch[stages];      // the call's epoch, from the ticket
  __shared__ block::detail::uninitialized_array<Acc, L::warps> warp_totals;
  __shared__ block::detail::uninitialized_array<Acc, L::warps> warp_prefixes;

  const int lane = warp::lane_id();
  const int warp_id = static_cast<int>(threadIdx.x) / 32;
  const auto stage = [&](int s) {
    return reinterpret_cast<vector*>(ring + static_cast<std::size_t>(s) * tile_bytes<Acc>());
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(&full[s], 1);                  // the producer's arrival (+ the copy's bytes)
      mbarrier_init(&empty[s], compute_threads);  // every compute thread's
    }
    // the initialised barriers are visible to the other threads (and the copy engine)
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();  // nobody uses a barrier before it is initialised

  // ---- the producer: one lane ----
  if (warp_id == L::warps) {
    if (lane != 0) return;
    for (std::int64_t k = 0;; ++k) {
      const int s = static_cast<int>(k % stages);
      // the (k / stages)-th fill of stage s waits until the previous one's tile is stored
      if (k >= stages) mbarrier_wait(&empty[s], static_cast<unsigned>((k / stages - 1) & 1));
      std::int64_t tile = 0;
      unsigned epoch = 0;
      if (tiles > 1) {
        const unsigned long long word = single_pass::take_ticket(state.header);
        epoch = static_cast<unsigned>(word >> 32);
        tile = static_cast<std::int64_t>(word & 0xffffffffull);
        if (tile >= tiles) {
          const std::int64_t last = tiles + gridDim.x - 1;  // every block's one ticket too many
          if (tile > last) __trap();  // more draws than blocks + tiles: corrupted state, stop
          if (tile == last) {
            // the call's last draw (the others precede it in the header's coherence order):
            // open the next epoch (tile_state.cuh)
            single_pass::store_relaxed(state.header, static_cast<unsigned long long>(epoch + 1u) << 32);
          }
        }
      } else if (k > 0) {
        tile = tiles;  // a single tile: no state, no tickets
      }
      if (tile >= tiles) {
        stage_tile[s] = -1;
        mbarrier_arrive(&full[s]);
        // Every 2^29 calls: zero the descriptors past this call's tiles (tile_state.cuh),
        // a share of them by each block's producer. This call reads only descriptors <
        // tiles, so nobody reads these concurrently; the next call on the state starts
        // after this kernel ends.
        if (tiles > 1 && single_pass::is_clearing_epoch(epoch)) {
          for (std::int64_t t = tiles + blockIdx.x; t < state.capacity; t += gridDim.x) {
            state.descriptors.clear(t);
          }
        }
        return;
      }
      hook(tile, blockIdx.x);
      stage_tile[s] = tile;
      stage_epoch[s] = epoch;
      const std::int64_t base = tile * L::tile_items;
      if (base + L::tile_items <= n) {
        mbarrier_arrive_expect(&full[s], tile_bytes<Acc>());
        bulk_copy(stage(s), in + base, tile_bytes<Acc>(), &full[s]);
      } else {
        mbarrier_arrive(&full[s]);  // a partial tile: the compute threads load it
      }
    }
  }

  // ---- the compute warps ----
  // the previous tile, waiting for its prefix (its aggregate and warp prefixes in warp 0)
  std::int64_t previous = -1;
  unsigned previous_epoch = 0;
  int previous_stage = 0;
  Acc previous_aggregate{};
  Acc previous_warp_exclusive{};

  // steps c and d for the previous tile
  const auto finish_previous = [&]() {
    if (warp_id == 0) {
      maybe<Acc> prefix{previous_aggregate, false};
      if (previous == 0) {
        if constexpr (Exclusive) prefix = {seed.value, true};
      } else {
        prefix = {Protocol::template prefix_after_aggregate<Deterministic>(
                      state.descriptors, previous_epoch, previous, previous_aggregate, op),
                  true};
        if (lane == 0) {
          state.descriptors.store(previous, make_tag(previous_epoch, status_inclusive),
                                  static_cast<Acc>(op(prefix.value, previous_aggregate)));
        }
      }
      if (lane < L::warps) {
        const maybe<Acc> p = lane == 0 ? prefix : then(prefix, previous_warp_exclusive, op);
        if (p.present) warp_prefixes[lane] = p.value;
      }
    }
    compute_barrier();  // the warp prefixes are stored before any warp reads them
    const bool has_prefix = Exclusive || previous > 0 || warp_id > 0;
    const maybe<Acc> warp_prefix{has_prefix ? warp_prefixes[warp_id] : Acc{}, has_prefix};
    store_rows<L, Exclusive>(stage(previous_stage), out, previous * L::tile_items, n, warp_id, lane,
                             warp_prefix, op);
    // This thread is done with the stage. It wrote it through the generic proxy (the
    // write-back scan), the next bulk copy writes it through the async proxy: the proxy
    // fence, by the writing thread before the release (the arrival), orders the two.
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    mbarrier_arrive(&empty[previous_stage]);
  };

  for (std::int64_t i = 0;; ++i) {
    const int s = static_cast<int>(i % stages);
    mbarrier_wait(&full[s], static_cast<unsigned>((i / stages) & 1));
    const std::int64_t tile = stage_tile[s];
    if (tile < 0) break;
    const unsigned epoch = stage_epoch[s];
    vector* staged = stage(s);
    const std::int64_t base = tile * L::tile_items;
    if (base + L::tile_items > n) {
      // the partial last tile: each thread loads the vectors it scans, padded with x_{n-1}
#pragma unroll
      for (int r = 0; r < L::rows; ++r) {
        const int v = single_pass::staged_index<L>(warp_id, lane, r);
        vector items;
#pragma unroll
        for (int k = 0; k < L::vec; ++k) {
          const std::int64_t j = base + static_cast<std::int64_t>(v) * L::vec + k;
          items.v[k] = in[j < n ? j : n - 1];
        }
        staged[v] = items;
      }
    }

    // a. the write-back scan; warp totals
    const Acc warp_total = scan_rows<L, Exclusive>(staged, warp_id, lane, op);
    if (lane == 0) warp_totals[warp_id] = warp_total;
    compute_barrier();  // the warp totals are stored before warp 0 reads them

    // b. the aggregate, published at once
    Acc aggregate{};
    Acc warp_exclusive{};
    if (warp_id == 0) {
      // lanes past the last warp scan copies of the last total (defined padding)
      const Acc total = warp_totals[lane < L::warps ? lane : L::warps - 1];
      const Acc warp_inclusive = warp::inclusive_scan(total, op);
      aggregate = warp::shuffle_index(warp_inclusive, L::warps - 1);
      warp_exclusive = warp::shuffle_up(warp_inclusive, 1u);  // unused in lane 0
      if (tiles > 1 && lane == 0) {
        if (tile == 0) {
          Acc inclusive = aggregate;
          if constexpr (Exclusive) inclusive = static_cast<Acc>(op(seed.value, aggregate));
          state.descriptors.store(0, make_tag(epoch, status_inclusive), inclusive);
        } else if constexpr (Protocol::publishes_aggregate) {
          state.descriptors.store(tile, make_tag(epoch, status_aggregate), aggregate);
        }
      }
    }

    // c and d for the previous tile. Its barrier also keeps the other warps from writing
    // the next tile's warp totals before warp 0 has read these (b); the first tile has no
    // previous one, so it takes the barrier alone. (Without it a block's first aggregate
    // could read its second tile's totals: compute-sanitizer's racecheck, which slows
    // some warps down, caught that with wrong results.)
    if (previous >= 0) {
      finish_previous();
    } else {
      compute_barrier();
    }
    previous = tile;
    previous_epoch = epoch;
    previous_stage = s;
    previous_aggregate = aggregate;
    previous_warp_exclusive = warp_exclusive;
  }
  if (previous >= 0) finish_previous();
}

// ---- the host side ---------------------------------------------------------------------------
// The kernel's grid on the current device: as many blocks as it holds at once (cached
// per device; the kernel's ring is set as its dynamic shared memory there first).
template <class Protocol, bool Deterministic, bool Exclusive, class Acc, class Op, class Hook>
int resident_blocks(const char* function) {
  static std::atomic<int> cache[64] = {};
  const int device = current_device(function);
  int blocks = cache[device].load(std::memory_order_relaxed);
  if (blocks > 0) return blocks;
  constexpr auto kernel = pipelined_kernel<Protocol, Deterministic, Exclusive, Acc, Op, Hook>;
  TALLY_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        static_cast<int>(ring_bytes<Acc>())),
                   function);
  int sms = 0;
  int per_sm = 0;
  TALLY_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device), function);
  TALLY_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kernel_threads,
                                                                 ring_bytes<Acc>()),
                   function);
  if (per_sm < 1) {
    throw tally::error(static_cast<int>(cudaErrorInvalidConfiguration),
                       std::string("tally::") + function +
                           ": the device cannot hold one block of the pipelined scan");
  }
  blocks = (sms > 0 ? sms : 1) * per_sm;
  cache[device].store(blocks, std::memory_order_relaxed);
  return blocks;
}

template <class Protocol, bool Deterministic, bool Exclusive, class Acc, class Op, class Hook>
void launch(const char* function, const Acc* in, Acc* out, std::int64_t n, std::int64_t tiles,
            seed_value<Acc, Exclusive> seed, Op op, single_pass::tile_state<Acc> state, Hook hook,
            cudaStream_t stream) {
  const int resident = resident_blocks<Protocol, Deterministic, Exclusive, Acc, Op, Hook>(function);
  const auto grid = static_cast<unsigned>(tiles < resident ? tiles : resident);
  pipelined_kernel<Protocol, Deterministic, Exclusive, Acc, Op, Hook>
      <<<grid, kernel_threads, ring_bytes<Acc>(), stream>>>(in, out, n, tiles, seed, op, state, hook);
  TALLY_CUDA_CHECK_LAUNCH("pipelined_kernel", function);
}

// One pipelined scan of n >= 1 elements of 16-byte aligned pointers to Acc (checked by
// the caller: takes): the tile state as for the other single-pass scans
// (single_pass::with_call_state), then one launch.
template <class Protocol, bool Exclusive, class Acc, class Op, class Hook = single_pass::no_stall>
void scan(const char* function, const char* storage_query, const Acc* in, Acc* out, std::int64_t n,
          seed_value<Acc, Exclusive> seed, Op op, const options& o, Hook hook = {},
          std::size_t promised_storage = 0) {
  static_assert(single_pass::vectorisable_v<Acc>, "the pipelined scan takes 4- and 8-byte values");
  if (n == 0) return;
  single_pass::with_call_state<Acc, tuning<Acc>()>(
      function, storage_query, n, o, promised_storage,
      [&](std::int64_t tiles, single_pass::tile_state<Acc> state) {
        if constexpr (Protocol::has_deterministic_mode && !single_pass::exact_values<Acc>::value) {
          if (o.deterministic) {
            launch<Protocol, true, Exclusive>(function, in, out, n, tiles, seed, op, state, hook,
                                              o.stream);
            return;
          }
        }
        launch<Protocol, false, Exclusive>(function, in, out, n, tiles, seed, op, state, hook,
                                           o.stream);
      });
}

}  // namespace tally::detail::pipelined
