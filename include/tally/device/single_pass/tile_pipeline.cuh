// tally/device/single_pass/tile_pipeline.cuh -- the tile pipeline shared by the two
// single-pass scans: single_pass/chained.cuh (Yan, Long & Zhang 2013) and single_pass/decoupled_lookback.cuh
// (Merrill & Garland 2016). Those files hold what differs: how a tile learns the
// reduction of everything before it (its exclusive PREFIX) from its predecessors.
//
// One kernel, one block per tile, n read once and written once.
//
//   0. thread 0 draws the tile's ticket (single_pass/tile_state.cuh); one barrier to share it. (Where
//      the whole grid runs at once, the blocks take tile = blockIdx.x instead and read the
//      ticket's reply, which then only carries the epoch, in step 4: see "The small-n
//      path" and "Tiles by block" below.)
//   1. load the tile into registers, WARP-STRIPED: warp w owns a contiguous run of
//      Rows * 32 * Vec items; in row r, lane l holds the Vec consecutive items
//      at  w * warp_items + r * 32 * Vec + l * Vec. A row is one 16-byte access per lane,
//      512 contiguous bytes per warp instruction, straight from registers: no shared
//      memory transpose. (Vec = 1 when the pointers are not 16-byte aligned, or are
//      iterators without the vector hook below: the same layout with scalar accesses.)
//      16-byte aligned pointers to Acc STAGE the tile in shared memory instead ("Staged
//      tiles" below): the same layout, each lane's vectors copied there by cp.async,
//      read back row by row in step 2, read again in step 5. (The large scans of such
//      pointers run single_pass/pipelined.cuh instead: the same steps, persistent blocks.)
//   2. scan locally: each lane scans its Vec items serially; each row's lane totals are
//      scanned with warp shuffles; the row totals are chained serially (rows in order)
//      into each warp's total
//   3. warp totals to shared memory; barrier; warp 0 scans them (the block aggregate)
//   4. warp 0 obtains the tile's prefix from the predecessors (the Protocol) and
//      publishes the tile's inclusive value; it stores each warp's prefix in shared
//      memory; barrier
//   5. every item gets its prefix (warp prefix, row prefix, lane prefix) and is stored
//      with the same striped layout.
//
// Operator order: every combination is op(earlier, later); no identity is needed (the
// very first item of the scan has no prefix; every "prefix" below is optional).
// Operator applications: about 2 per item (the serial scan and the prefix), plus
// O(log 32) per lane and row.
// Partial last tile: items past n are loaded as copies of x_{n-1} (defined padding; the
// scan is causal so they change no valid result) and never stored.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include "tally/block/detail/scan_interface.cuh"
#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/device/arch/bulk_copy.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/dependent_launch.cuh"
#include "tally/device/detail/occupancy.cuh"
#include "tally/device/detail/storage.cuh"
#include "tally/device/detail/thresholds.cuh"
#include "tally/device/single_pass/tile_state.cuh"
#include "tally/warp/warp_scan.cuh"

namespace tally::detail::single_pass {

// ---- tuning ------------------------------------------------------------------------------
// threads per block; rows per warp; items per 16-byte vector (1 for types that are not
// vectorised). Items per thread = rows * vec; tile = threads * rows * vec.
struct single_pass_tuning {
  int block_threads;
  int rows;
  int vec;
  constexpr int items_per_thread() const { return rows * vec; }
  constexpr int tile_items() const { return block_threads * rows * vec; }
};

template <class Acc>
inline constexpr bool vectorisable_v =
    std::is_trivially_copyable_v<Acc> && (sizeof(Acc) == 4 || sizeof(Acc) == 8);

// The defaults: 4-byte values 256 threads x 8 rows x 4 (32 KiB tiles), 8-byte values
// 256 x 6 rows x 2 (24 KiB). Larger tiles mean fewer tiles polling the descriptors (the
// bottleneck, see single_pass/decoupled_lookback.cuh) but fewer blocks per SM
// (docs/performance.md, "Plans and thresholds"). Other types: about 16 KiB per tile.
template <class Acc>
constexpr single_pass_tuning default_single_pass_tuning() {
  constexpr std::size_t bytes = sizeof(Acc);
  if constexpr (vectorisable_v<Acc> && bytes == 4) {
    return single_pass_tuning{256, 8, 4};
  } else if constexpr (vectorisable_v<Acc>) {
    return single_pass_tuning{256, 6, 2};
  } else {
    constexpr int rows = bytes <= 4 ? 16 : bytes <= 16 ? 4 : bytes <= 32 ? 2 : 1;
    return single_pass_tuning{256, rows, 1};
  }
}

// A test hook: called by thread 0 of each block right after the ticket is drawn, with
// the tile index and blockIdx.x. The default does nothing; the stall test delays chosen
// tiles and blocks with it.
struct no_stall {
  TALLY_DEVICE void operator()(std::int64_t, unsigned) const {}
};

// ---- lines ---------------------------------------------------------------------------------
// Where the scan starts afresh. A plain scan is one line: only tile 0 has no predecessor.
// The batched scans along the last axis whose lines are a whole number of tiles run the
// same kernel with `tile_lines` (segmented.cuh): the first tile of each line takes no
// prefix (the seed, for an exclusive scan) and publishes its inclusive value at once, so
// the look-back of the line's later tiles stops there, as it stops at tile 0 (it never
// folds a tile before the latest inclusive one: single_pass/decoupled_lookback.cuh, single_pass/chained.cuh).
struct one_line {
  TALLY_DEVICE TALLY_FORCEINLINE bool starts_line(std::int64_t tile) const { return tile == 0; }
};
struct tile_lines {
  unsigned tiles;  // tiles per line, >= 1 (a scan has fewer than 2^31 tiles)
  TALLY_DEVICE TALLY_FORCEINLINE bool starts_line(std::int64_t tile) const {
    return static_cast<unsigned>(tile) % tiles == 0;
  }
};

// ---- the optional prefix --------------------------------------------------------------------
template <class Acc>
struct maybe {
  Acc value;
  bool present;
};

template <class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE maybe<Acc> then(const maybe<Acc>& a, const Acc& b, Op& op) {
  return {a.present ? static_cast<Acc>(op(a.value, b)) : b, true};
}

// ---- striped tile access ----------------------------------------------------------------
// (Integers rather than a single_pass_tuning: nvcc's kernel stubs do not take class-type
// template parameters.)
template <int Threads, int Rows, int Vec, bool Vectorised>
struct layout {
  static constexpr int threads = Threads;
  static constexpr int warps = threads / 32;
  static constexpr int vec = Vectorised ? Vec : 1;
  static constexpr int rows = Vectorised ? Rows : Rows * Vec;
  static constexpr int row_items = 32 * vec;
  static constexpr int warp_items = rows * row_items;
  static constexpr int tile_items = warps * warp_items;
  static_assert(tile_items == Threads * Rows * Vec, "both layouts cover the same tile");
  static_assert(threads % 32 == 0 && warps <= 32, "block_threads: a multiple of 32, <= 1024");
};

template <class Acc, int Vec>
struct alignas(16) vector_of {
  Acc v[Vec];
};

// ---- vector accesses ------------------------------------------------------------------------
// In the vectorised layout each lane reads and writes Vec consecutive items at a time, at
// an index that is a multiple of Vec. A pointer to Acc does so with one 16-byte access.
// An iterator may offer the same through four members (the segmented scans' pair
// iterators do: a 16-byte load of values plus a small load of flags, segmented/pairs_scan.cuh);
// an iterator without them gets the scalar path:
//   static constexpr int vector_items;          the Vec it serves (0: none, scalar path)
//   template <int Vec> void load(i, Acc (&items)[Vec]) const       (input)
//   template <int Vec> void store(i, const Acc (&items)[Vec]) const  (output)
//   bool vector_ready() const      (host side: these accesses are valid, e.g. aligned)
template <class It>
constexpr int vector_items_of() {
  if constexpr (requires { It::vector_items; }) {
    return It::vector_items;
  } else {
    return 0;
  }
}

template <int Vec, class Acc, class In>
TALLY_DEVICE TALLY_FORCEINLINE void load_vector(const In& in, std::int64_t i, Acc (&items)[Vec]) {
  if constexpr (std::is_pointer_v<In>) {
    const vector_of<Acc, Vec> v = *reinterpret_cast<const vector_of<Acc, Vec>*>(&in[i]);
#pragma unroll
    for (int k = 0; k < Vec; ++k) items[k] = v.v[k];
  } else {
    in.template load<Vec>(i, items);
  }
}

template <int Vec, class Acc, class Out>
TALLY_DEVICE TALLY_FORCEINLINE void store_vector(const Out& out, std::int64_t i,
                                                 const Acc (&items)[Vec]) {
  if constexpr (std::is_pointer_v<Out>) {
    vector_of<Acc, Vec> v;
#pragma unroll
    for (int k = 0; k < Vec; ++k) v.v[k] = items[k];
    *reinterpret_cast<vector_of<Acc, Vec>*>(&out[i]) = v;
  } else {
    out.template store<Vec>(i, items);
  }
}

// ---- scalar runs ---------------------------------------------------------------------------------
// An input without vector accesses (a transform of the index, a pointer to another type
// than Acc) yields one item at a time. In the striped layout every item of a lane is then
// a row of its own (vec = 1), and every row costs a warp-wide scan: rows * Vec warp scans
// a thread instead of rows. So such an input, with any output that has no vector accesses
// of its own (a pointer, a store_iterator), runs the vectorised layout through these
// adapters, which serve each lane's Vec consecutive items with Vec scalar accesses: a
// lane-serial scan of Vec items and one warp scan per row, as for vectors. A warp's
// accesses then stride by Vec items, and the L1 cache serves the lines they share.
template <class It, int Vec>
struct scalar_runs {
  It it;
  static constexpr int vector_items = Vec;
  bool vector_ready() const { return true; }  // scalar accesses need no alignment
  TALLY_DEVICE TALLY_FORCEINLINE decltype(auto) operator[](std::int64_t i) const { return it[i]; }
  template <int V, class Acc>
  TALLY_DEVICE TALLY_FORCEINLINE void load(std::int64_t i, Acc (&items)[V]) const {
#pragma unroll
    for (int k = 0; k < V; ++k) items[k] = static_cast<Acc>(it[i + k]);
  }
  template <int V, class Acc>
  TALLY_DEVICE TALLY_FORCEINLINE void store(std::int64_t i, const Acc (&items)[V]) const {
#pragma unroll
    for (int k = 0; k < V; ++k) it[i + k] = items[k];
  }
};

// ---- tile programs --------------------------------------------------------------------------
// The kernel scans what its input yields and stores what the scan gives. An input may
// instead be a TILE PROGRAM, which lets the same kernel run an operation that has a scan
// in its middle (the selection family, device/select/: a stream compaction is a scan of
// 0/1 counts whose store is a scatter). A program input keeps a PAYLOAD for each item,
// in registers from the load (step 1) to the store (step 5), and tells the scan what to
// combine for it; its output stores from the payload and the scanned value:
//   input   using payload_type = P;
//           P payload(std::int64_t i) const;                   item i's payload (i < n)
//           Acc value(std::int64_t i, const P& p) const;        what the scan combines
//   output  void store(std::int64_t i, const P& p, const Acc& scanned) const;  (i < n)
// and, for the vectorised layout (vector_items as above), the same for Vec consecutive
// items: in.load<Vec>(i, P (&)[Vec], Acc (&)[Vec]), out.store<Vec>(i, const P (&)[Vec],
// const Acc (&)[Vec]), and vector_ready() always true: a program with these hooks runs
// the vectorised layout only (launch_layout). The payload is read once, so an output may overwrite the input
// (the scan's tiles read all their items before they publish anything). Programs run
// tiles by ticket, never staged: their input is not a pointer to Acc.
template <class In>
concept tile_program = requires { typename In::payload_type; };

// The payloads of one thread's items: none for a plain input.
template <class In, class L>
struct tile_payloads {};
template <class In, class L>
  requires tile_program<In>
struct tile_payloads<In, L> {
  typename In::payload_type at[L::rows][L::vec];
};

// items[r][k] = in[base + offset(r, k)]; a full tile reads without bounds checks, a
// partial one pads with x_{n-1}.
template <class L, bool Vectorised, class Acc, class In>
TALLY_DEVICE TALLY_FORCEINLINE void load_tile(In in, std::int64_t base, std::int64_t n, int warp,
                                              int lane, Acc (&items)[L::rows][L::vec],
                                              tile_payloads<In, L>& keep) {
  const std::int64_t first = base + warp * L::warp_items + lane * L::vec;
  const bool full = base + L::tile_items <= n;
  if constexpr (Vectorised) {
    if (full) {
#pragma unroll
      for (int r = 0; r < L::rows; ++r) {
        // one vector per row
        if constexpr (tile_program<In>) {
          in.template load<L::vec>(first + r * L::row_items, keep.at[r], items[r]);
        } else {
          load_vector<L::vec>(in, first + r * L::row_items, items[r]);
        }
      }
      return;
    }
  }
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
#pragma unroll
    for (int k = 0; k < L::vec; ++k) {
      const std::int64_t i = first + r * L::row_items + k;
      const std::int64_t j = full || i < n ? i : n - 1;
      if constexpr (tile_program<In>) {
        keep.at[r][k] = in.payload(j);
        items[r][k] = in.value(j, keep.at[r][k]);
      } else {
        items[r][k] = static_cast<Acc>(in[j]);
      }
    }
  }
}

template <class L, bool Vectorised, class Acc, class Out, class Keep>
TALLY_DEVICE TALLY_FORCEINLINE void store_tile(Out out, std::int64_t base, std::int64_t n, int warp,
                                               int lane, const Acc (&items)[L::rows][L::vec],
                                               const Keep& keep) {
  constexpr bool program = !std::is_empty_v<Keep>;
  const std::int64_t first = base + warp * L::warp_items + lane * L::vec;
  const bool full = base + L::tile_items <= n;
  if constexpr (Vectorised) {
    if (full) {
#pragma unroll
      for (int r = 0; r < L::rows; ++r) {
        // one vector per row
        if constexpr (program) {
          out.template store<L::vec>(first + r * L::row_items, keep.at[r], items[r]);
        } else {
          store_vector<L::vec>(out, first + r * L::row_items, items[r]);
        }
      }
      return;
    }
  }
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
#pragma unroll
    for (int k = 0; k < L::vec; ++k) {
      const std::int64_t i = first + r * L::row_items + k;
      if (full || i < n) {
        if constexpr (program) {
          out.store(i, keep.at[r][k], items[r][k]);
        } else {
          out[i] = items[r][k];
        }
      }
    }
  }
}

// Row r of a staged tile (16-byte aligned pointers: a full tile stores one vector).
template <class L, class Acc, class Out>
TALLY_DEVICE TALLY_FORCEINLINE void store_row(Out out, std::int64_t base, std::int64_t n, int warp,
                                              int lane, int r, const Acc (&items)[L::vec]) {
  const std::int64_t first = base + warp * L::warp_items + r * L::row_items + lane * L::vec;
  if (base + L::tile_items <= n) {
    store_vector<L::vec>(out, first, items);
    return;
  }
#pragma unroll
  for (int k = 0; k < L::vec; ++k) {
    if (first + k < n) out[first + k] = items[k];
  }
}

// ---- staged tiles ------------------------------------------------------------------------------
// In a large scan the tile pipeline alone (the same kernel with a protocol that does not
// wait) runs close to the copy; the look-back costs the rest. A tile waits for its prefix
// about as long as its loads took, holding its registers all the while, and the
// registers (64 a thread: the tile's 32 items and their prefixes) allow 4 blocks of 256
// threads per SM (3 for 8-byte values).
//
// So for 16-byte aligned pointers to Acc (the common case) the tile lives in SHARED
// MEMORY during the wait, not in registers: in step 1 each lane copies its vectors there
// with cp.async (global -> shared, through no register); step 2 reads the rows back and
// scans them, keeping each row's lane and row prefixes in registers (2 per row); step 5
// reads and scans each row again. The items do not live across the wait: 48 registers,
// 5 blocks per SM, where the register tiles allowed 3-4.
// Each lane reads back only the vectors it copied, at the same addresses, so its own
// wait for its copies (cp.async.wait_all) orders everything; no barrier. A partial last
// tile is staged with ordinary loads (padded as in load_tile). The gain:
// docs/performance.md, "What each path earns". The look-back's wait itself stays: hiding
// it is what the pipelined scan of the large scans does (single_pass/pipelined.cuh; there
// a write-back scan of each row replaces the second scan of step 5).
//
// A tile staged in shared memory, or none (the tile in registers).
enum class staging { none, rescan };

// The register budget that gives those 5 blocks of 256 threads: the compiler is held to
// it (__launch_bounds__' second argument), because left alone it gives the exclusive
// kernels more registers (3 blocks per SM), which costs more than the few bytes the
// budget spills. Not for the deterministic kernels, whose wider look-back window needs
// more, nor for the others: 0 leaves the compiler free (a 1 does not: it changes their
// register counts and slows the deterministic staged kernels).
inline constexpr int staged_registers = 48;
template <int Threads, bool Staged, bool Deterministic>
inline constexpr int min_blocks_per_sm =
    Staged && !Deterministic ? 65536 / (Threads * staged_registers) : 0;

template <class Acc, int Vec>
TALLY_DEVICE TALLY_FORCEINLINE void copy_async_16(vector_of<Acc, Vec>* to, const Acc* from) {
  arch::copy_async_16(to, from);
}

// The index in the staged tile of lane `lane`'s vector in row r of warp `warp`.
template <class L>
TALLY_DEVICE TALLY_FORCEINLINE int staged_index(int warp, int lane, int r) {
  return (warp * L::warp_items + r * L::row_items + lane * L::vec) / L::vec;
}

template <class L, class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void stage_tile(vector_of<Acc, L::vec>* tile, const Acc* in,
                                               std::int64_t base, std::int64_t n, int warp,
                                               int lane) {
  if (base + L::tile_items <= n) {
#pragma unroll
    for (int r = 0; r < L::rows; ++r) {
      const int v = staged_index<L>(warp, lane, r);
      copy_async_16(&tile[v], in + base + static_cast<std::int64_t>(v) * L::vec);
    }
    arch::wait_async_copies();  // this lane's copies have landed
    return;
  }
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    const int v = staged_index<L>(warp, lane, r);
    vector_of<Acc, L::vec> items;
#pragma unroll
    for (int k = 0; k < L::vec; ++k) {
      const std::int64_t i = base + static_cast<std::int64_t>(v) * L::vec + k;
      items.v[k] = in[i < n ? i : n - 1];
    }
    tile[v] = items;
  }
}

template <class L, class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void write_staged_row(vector_of<Acc, L::vec>* tile, int warp, int lane,
                                                     int r, const Acc (&items)[L::vec]) {
  vector_of<Acc, L::vec> v;
#pragma unroll
  for (int k = 0; k < L::vec; ++k) v.v[k] = items[k];
  tile[staged_index<L>(warp, lane, r)] = v;
}

template <class L, class Acc>
TALLY_DEVICE TALLY_FORCEINLINE void read_staged_row(const vector_of<Acc, L::vec>* tile, int warp,
                                                    int lane, int r, Acc (&items)[L::vec]) {
  const vector_of<Acc, L::vec> v = tile[staged_index<L>(warp, lane, r)];
#pragma unroll
  for (int k = 0; k < L::vec; ++k) items[k] = v.v[k];
}

// Shared memory for a staged tile (nothing for the others), aligned to 128 bytes: a tile
// only 16-byte aligned behind the other shared variables makes the kernel markedly
// slower (docs/performance.md, "What each path earns").
template <class Acc, class L>
struct alignas(128) staged_tile {
  using vector = vector_of<Acc, L::vec>;
  unsigned char bytes[sizeof(vector) * (L::tile_items / L::vec)];
  TALLY_DEVICE TALLY_FORCEINLINE vector* data() { return reinterpret_cast<vector*>(bytes); }
};
struct no_staged_tile {
  TALLY_DEVICE TALLY_FORCEINLINE std::nullptr_t data() { return nullptr; }
};
template <class Acc, class L, bool Staged>
using staged_tile_t = std::conditional_t<Staged, staged_tile<Acc, L>, no_staged_tile>;

// each lane's Vec items, scanned serially in place
template <int Vec, class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void lane_scan(Acc (&items)[Vec], Op& op) {
#pragma unroll
  for (int k = 1; k < Vec; ++k) items[k] = static_cast<Acc>(op(items[k - 1], items[k]));
}

// A lane's Vec serially scanned items given their prefix p: inclusive, p op item
// (nothing to do without a prefix); exclusive, shifted by one with p first (p is always
// present there: tile 0 starts from the seed).
template <bool Exclusive, int Vec, class Acc, class Op>
TALLY_DEVICE TALLY_FORCEINLINE void apply_prefix(const maybe<Acc>& p, Acc (&items)[Vec], Op& op) {
  if constexpr (Exclusive) {
#pragma unroll
    for (int k = Vec - 1; k > 0; --k) items[k] = static_cast<Acc>(op(p.value, items[k - 1]));
    items[0] = p.value;
  } else if (p.present) {
#pragma unroll
    for (int k = 0; k < Vec; ++k) items[k] = static_cast<Acc>(op(p.value, items[k]));
  }
}

// c ? x : y for the 4-, 8- and 16-byte values of staged tiles, as selp instructions (one
// per 8 bytes): the compiler cannot turn it into a branch (single_pass/pipelined.cuh,
// with_local_prefix, says why; the segmented tile kernel uses it too).
template <class Acc>
TALLY_DEVICE TALLY_FORCEINLINE Acc select_value(bool c, const Acc& x, const Acc& y) {
  static_assert(sizeof(Acc) == 4 || sizeof(Acc) == 8 || sizeof(Acc) == 16,
                "staged tiles hold 4-, 8- or 16-byte values");
  Acc result;
  if constexpr (sizeof(Acc) == 16) {
    unsigned long long xb[2], yb[2], rb[2];
    std::memcpy(xb, &x, 16);
    std::memcpy(yb, &y, 16);
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      asm("{ .reg .pred c; setp.ne.u32 c, %1, 0; selp.b64 %0, %2, %3, c; }"
          : "=l"(rb[h]) : "r"(static_cast<unsigned>(c)), "l"(xb[h]), "l"(yb[h]));
    }
    std::memcpy(&result, rb, 16);
  } else if constexpr (sizeof(Acc) == 4) {
    unsigned xb, yb, rb;
    std::memcpy(&xb, &x, 4);
    std::memcpy(&yb, &y, 4);
    asm("{ .reg .pred c; setp.ne.u32 c, %1, 0; selp.b32 %0, %2, %3, c; }"
        : "=r"(rb) : "r"(static_cast<unsigned>(c)), "r"(xb), "r"(yb));
    std::memcpy(&result, &rb, 4);
  } else {
    unsigned long long xb, yb, rb;
    std::memcpy(&xb, &x, 8);
    std::memcpy(&yb, &y, 8);
    asm("{ .reg .pred c; setp.ne.u32 c, %1, 0; selp.b64 %0, %2, %3, c; }"
        : "=l"(rb) : "r"(static_cast<unsigned>(c)), "l"(xb), "l"(yb));
    std::memcpy(&result, &rb, 8);
  }
  return result;
}

// ---- the small-n path ------------------------------------------------------------------------
// At small n a scan is latency, and two costs of the large tiles show there: a block
// takes longer the larger its tile, and the ticket's round trip comes before a block
// knows which tile to load (docs/performance.md, "Plans and thresholds"). So for
// pointers to vectorisable values that
// are 16-byte aligned, and n of at most `small_path_max_tiles` tiles of a smaller tuning
// (2048 4-byte or 1024 8-byte items: 8 KiB), the public scans run (above the n that one
// block holds, which the one-block scan takes: single_pass/one_block.cuh)
//   - the smaller tiles, and
//   - BY BLOCK: tile = blockIdx.x, no wait for the ticket before the loads. That is safe
//     only if every block runs at the same time (block t waits for blocks < t; were one of
//     them not started while the waiting blocks held every slot, the scan would hang). A
//     cooperative launch guarantees exactly that, and the grid is kept within
//     co_resident_blocks() (occupancy.cuh), which the runtime always accepts. The ticket
//     is still drawn, for the call's epoch and to find the last block (single_pass/tile_state.cuh),
//     but its reply is read only in step 4, when warp 0 needs the epoch.
//
// ---- tiles by block ------------------------------------------------------------------------
// The same goes for the default tiles wherever the device holds their whole grid at once
// (for int32 sums 4 blocks of the kernel per SM, tiles of 8192; larger inputs from
// pipelined_min_bytes take the pipelined kernel): the public scans of 16-byte aligned
// pointers run them by block, in a cooperative launch, checked against the kernel's own
// resident grid (co_resident_grid, occupancy.cuh); a larger grid runs the ticket kernels.
// The gain is the ticket's round trip, which the loads do not wait for
// (docs/performance.md, "What each path earns").
//
// ---- states that hold anything ----------------------------------------------------------------
// In caller storage (options.storage) or a graph's call-owned allocation the state holds
// anything, so the descriptors must be cleared before any tile reads them. A
// cudaMemsetAsync before the kernel would be a second launch. A grid run by block clears
// them itself
// instead (tile_state::unzeroed): each block clears its own tile's descriptor, issues its
// loads, arrives at a grid-wide barrier (cooperative_groups: every block is resident, the
// launch is cooperative), scans its tile, and waits at the barrier before its look-back:
// every descriptor it may read has been cleared by then, and every later store to one is
// this call's. No tickets (the header holds anything too): every tag is of
// unzeroed_state_epoch. Split in arrive and wait, the barrier's round trips overlap the
// loads and the local scans, which makes it cheaper than a memset (docs/performance.md,
// "What each path earns").
// The ticket kernels, whose grid the device may not hold at once, need the zeroed header
// for their tickets: clear_kernel zeroes the state and the ticket kernel is launched as
// its programmatic dependent (dependent_launch.cuh), so that its launch overlaps the
// clear; each block waits for the clear (griddepcontrol.wait) before its ticket.

template <class Acc>
constexpr single_pass_tuning small_single_pass_tuning() {
  return sizeof(Acc) == 4 ? single_pass_tuning{256, 2, 4} : single_pass_tuning{256, 2, 2};
}
inline constexpr std::int64_t small_path_max_tiles = thresholds.small_path_max_tiles;

// ---- the kernel ----------------------------------------------------------------------------
// Protocol (chained or decoupled look-back) provides, for warp 0 (all 32 lanes) of a tile
// t > 0 with aggregate A_t:
//   template <bool Deterministic> static Acc exclusive_prefix(descriptors, epoch, t, A_t, op)
// which may publish A_t first (look-back does, chained does not) and returns the
// reduction of all tiles before t (seed included for exclusive scans) in every lane.
// The kernel then publishes the inclusive value prefix op A_t.
// ByBlock: tile = blockIdx.x (only in a cooperative launch: "The small-n path" and "Tiles
// by block" above). Lines: one_line, or tile_lines ("Lines" above).
// Staging: whether the tile waits in shared memory, and how ("Staged tiles" above;
// Vectorised pointers only).
template <class Protocol, int Threads, int Rows, int Vec, bool Vectorised, staging Staging,
          bool Deterministic, bool Exclusive, bool ByBlock, class Acc, class In, class Out,
          class Op, class Hook, class Lines>
__global__ void __launch_bounds__(Threads, (min_blocks_per_sm<Threads, Staging != staging::none,
                                                              Deterministic>))
    single_pass_kernel(In in, Out out, std::int64_t n, std::int64_t tiles,
                       seed_value<Acc, Exclusive> seed, Op op, tile_state<Acc> state, Hook hook,
                       Lines lines) {
  using L = layout<Threads, Rows, Vec, Vectorised>;
  constexpr bool Staged = Staging != staging::none;
  __shared__ staged_tile_t<Acc, L, Staged> staged;
  __shared__ std::int64_t tile_index;
  __shared__ unsigned tile_epoch;
  __shared__ block::detail::uninitialized_array<Acc, L::warps> warp_totals;
  __shared__ block::detail::uninitialized_array<Acc, L::warps> warp_prefixes;

  const int lane = warp::lane_id();
  const int warp_id = static_cast<int>(threadIdx.x) / 32;

  // 0. the tile (a single tile needs no ticket: it has no predecessor and no successor)
  std::int64_t tile = 0;
  unsigned epoch = 0u;
  unsigned long long ticket_word = 0;  // ByBlock: the ticket's reply, read in step 4
  if (tiles > 1) {
    if constexpr (ByBlock) {
      tile = blockIdx.x;
      if (threadIdx.x == 0) {
        hook(tile, blockIdx.x);  // (stall tests: before anything the block does)
        if (state.unzeroed) {
          // "States that hold anything": this tile's descriptor cleared (thread 0 also
          // publishes it in step 4: program order keeps the clear before the publish;
          // the grid barrier, arrived at after step 1 and waited for after step 3, keeps
          // it before any other block's read); no ticket
          state.descriptors.clear(tile);
          ticket_word = static_cast<unsigned long long>(unzeroed_state_epoch) << 32;
        } else {
          ticket_word = take_ticket(state.header);  // not waited for here
        }
      }
    } else {
      // A state in caller storage is cleared by a kernel just before this one, which may
      // start before that clear has finished (launch_layout, dependent_launch.cuh): wait
      // for it before the first access to the state (at once in a plain launch). Every
      // thread: warp 0 reads descriptors in its look-back.
      wait_for_prerequisite_grid();
      if (threadIdx.x == 0) {
        const ticket t = draw_ticket(state.header, tiles);
        tile_index = t.tile;
        tile_epoch = t.epoch;
        hook(t.tile, blockIdx.x);
      }
      __syncthreads();  // every thread needs the tile index before it loads
      tile = tile_index;
      epoch = tile_epoch;
    }
  }
  const std::int64_t base = tile * L::tile_items;
  cooperative_groups::grid_group::arrival_token cleared = 0u;  // ByBlock, a state that holds anything

  // 1. load (a staged tile: into shared memory; its rows are read back in steps 2 and 5;
  //    a tile program: each item's payload too, "Tile programs" above)
  Acc items[L::rows][L::vec];
  tile_payloads<In, L> keep;
  if constexpr (Staged) {
    static_assert(!tile_program<In>, "tile programs are not staged");
    stage_tile<L>(staged.data(), in, base, n, warp_id, lane);
  } else {
    load_tile<L, Vectorised>(in, base, n, warp_id, lane, items, keep);
  }
  if constexpr (ByBlock) {
    // A state that holds anything: this block's clear is done (arrive: a barrier of the
    // block, then thread 0's release atomic on the grid's counter), with the loads above
    // still in flight. Waited for after step 3. (Uniform: every thread of every block
    // takes both or neither.)
    if (tiles > 1 && state.unzeroed) cleared = cooperative_groups::this_grid().barrier_arrive();
  }

  // 2. local scans: lane-serial, then each row across the warp, then rows chained; each
  //    row's lane and row prefixes stay in registers (a staged tile reads and scans its
  //    rows again in step 5)
  Acc lane_prefix[L::rows];  // this lane's exclusive prefix within its row (unused in lane 0)
  Acc row_prefix[L::rows];   // the warp's rows before r, reduced (unused for r = 0)
  Acc warp_total;
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    if constexpr (Staged) read_staged_row<L>(staged.data(), warp_id, lane, r, items[r]);
    lane_scan(items[r], op);
    Acc row_total;
    const Acc lane_inclusive = warp::inclusive_scan(items[r][L::vec - 1], op, row_total);
    lane_prefix[r] = warp::shuffle_up(lane_inclusive, 1u);
    if (r == 0) {
      warp_total = row_total;
    } else {
      row_prefix[r] = warp_total;
      warp_total = static_cast<Acc>(op(warp_total, row_total));
    }
  }

  // 3. the block aggregate
  if (lane == 0) warp_totals[warp_id] = warp_total;
  __syncthreads();  // the warp totals are stored before warp 0 reads them
  if constexpr (ByBlock) {
    // A state that holds anything: every block has cleared its descriptor before any
    // goes on to step 4's look-back (the wait: thread 0 polls the counter with acquire
    // loads, then a barrier of the block; release and acquire order every clear before
    // the reads that follow the wait).
    if (tiles > 1 && state.unzeroed) cooperative_groups::this_grid().barrier_wait(std::move(cleared));
  }

  // 4. the tile prefix (warp 0)
  if (warp_id == 0) {
    if constexpr (ByBlock) {
      if (tiles > 1) {
        // the ticket's reply (it has long arrived: the loads and scans took longer); lane 0
        // also leaves the epoch in shared memory for the clearing step (read after the
        // barrier below)
        // (a state that holds anything: no ticket, unzeroed_state_epoch from step 0)
        if (lane == 0) {
          tile_epoch = state.unzeroed ? unzeroed_state_epoch
                                      : open_ticket(ticket_word, state.header, tiles).epoch;
        }
        epoch = __shfl_sync(0xffffffffu, static_cast<unsigned>(ticket_word >> 32), 0);
      }
    }
    // lanes past the last warp scan copies of the last total (defined padding; the scan
    // is causal), so the aggregate is lane warps - 1's value, not lane 31's
    const Acc total = warp_totals[lane < L::warps ? lane : L::warps - 1];
    const Acc warp_inclusive = warp::inclusive_scan(total, op);
    const Acc aggregate = warp::shuffle_index(warp_inclusive, L::warps - 1);
    const Acc warp_exclusive = warp::shuffle_up(warp_inclusive, 1u);  // unused in lane 0

    maybe<Acc> prefix{aggregate, false};  // the tile's exclusive prefix
    if (lines.starts_line(tile)) {
      if constexpr (Exclusive) prefix = {seed.value, true};
    } else {
      prefix = {Protocol::template exclusive_prefix<Deterministic>(state.descriptors, epoch, tile,
                                                                  aggregate, op),
                true};
    }
    if (tiles > 1 && lane == 0) {
      // every tile publishes (the last one too: see the clearing rule in single_pass/tile_state.cuh)
      const Acc inclusive = prefix.present ? static_cast<Acc>(op(prefix.value, aggregate)) : aggregate;
      state.descriptors.store(tile, make_tag(epoch, status_inclusive), inclusive);
    }
    if (lane < L::warps) {
      // warp `lane`'s prefix: the tile prefix, then the warps before it
      const maybe<Acc> p = lane == 0 ? prefix : then(prefix, warp_exclusive, op);
      if (p.present) warp_prefixes[lane] = p.value;
    }
  }
  __syncthreads();  // the warp prefixes are stored before any warp reads them

  // 5. every item's prefix, then store
  const bool warp_has_prefix = Exclusive || !lines.starts_line(tile) || warp_id > 0;
  const maybe<Acc> warp_prefix{warp_has_prefix ? warp_prefixes[warp_id] : warp_total,
                               warp_has_prefix};
#pragma unroll
  for (int r = 0; r < L::rows; ++r) {
    if constexpr (Staged) {
      // the row again (step 2's items are dead by now: that is what frees the registers)
      read_staged_row<L>(staged.data(), warp_id, lane, r, items[r]);
      lane_scan(items[r], op);
    }
    maybe<Acc> p = r == 0 ? warp_prefix : then(warp_prefix, row_prefix[r], op);
    if (lane > 0) p = then(p, lane_prefix[r], op);
    apply_prefix<Exclusive>(p, items[r], op);
  }
  store_tile<L, Vectorised>(out, base, n, warp_id, lane, items, keep);

  // Every 2^29 calls: zero the descriptors past this call's tiles (single_pass/tile_state.cuh). This
  // call reads only descriptors < tiles, so nobody reads these concurrently; the next
  // call on the state starts after this kernel ends.
  if (tiles > 1) {
    if constexpr (ByBlock) epoch = tile_epoch;
    if (is_clearing_epoch(epoch)) {
      for (std::int64_t i = tiles + tile * L::threads + threadIdx.x; i < state.capacity;
           i += tiles * L::threads) {
        state.descriptors.clear(i);
      }
    }
  }
}

// ---- the host side ----------------------------------------------------------------------------
template <class Acc, single_pass_tuning Tune = default_single_pass_tuning<Acc>()>
constexpr std::int64_t tile_items() {
  return Tune.tile_items();
}

// What a scan with tuning Tune needs as options.storage (0: none; one tile needs no state).
template <class Acc, single_pass_tuning Tune = default_single_pass_tuning<Acc>()>
constexpr std::size_t storage_bytes(std::int64_t n) {
  const std::int64_t tiles = ceil_div(n, Tune.tile_items());
  return tiles <= 1 ? 0 : state_bytes<Acc>(tiles) + storage_alignment;
}

// What the public single-pass scans need as options.storage: enough for the default
// tiles and, where the small-n path may run with caller storage (more than one default
// tile: small_path_takes below), for its smaller tiles (which it may take or not, by the
// pointers' alignment and the device: the caller cannot know which).
template <class Acc>
constexpr std::size_t public_storage_bytes(std::int64_t n) {
  const std::size_t large = storage_bytes<Acc>(n);
  if constexpr (vectorisable_v<Acc>) {
    constexpr single_pass_tuning small = small_single_pass_tuning<Acc>();
    if (large > 0 && n <= small_path_max_tiles * small.tile_items()) {
      const std::size_t smaller_tiles = storage_bytes<Acc, small>(n);
      return smaller_tiles > large ? smaller_tiles : large;
    }
  }
  return large;
}

template <class P>
bool aligned_16(const P* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// Both pointers to Acc itself, of a type the tiles read and write with 16-byte vectors.
template <class Acc, class In, class Out>
constexpr bool acc_pointers() {
  if constexpr (std::is_pointer_v<In> && std::is_pointer_v<Out>) {
    using in_t = std::remove_cv_t<std::remove_pointer_t<In>>;
    return vectorisable_v<Acc> && std::is_same_v<in_t, Acc> &&
           std::is_same_v<std::remove_pointer_t<Out>, Acc>;
  } else {
    return false;
  }
}

// Whether the small-n path ("The small-n path" above) takes a scan of n >= 1 elements:
// 16-byte aligned pointers to a vectorisable Acc, at most small_path_max_tiles of its
// tiles, and (for more than one tile) a device that can hold them all at once. Not where
// n fits one default tile and the state would have to be zeroed first (caller storage, or
// a graph being captured): there the default tile needs no state, while clearing the
// small tiles' state costs more than they save.
template <class Acc, class In, class Out>
bool small_path_takes(In in, Out out, std::int64_t n, const options& o, const char* function) {
  if constexpr (acc_pointers<Acc, In, Out>()) {
    constexpr std::int64_t tile = small_single_pass_tuning<Acc>().tile_items();
    if (n > small_path_max_tiles * tile || !aligned_16(in) || !aligned_16(out)) return false;
    if (n <= tile) return true;
    if (ceil_div(n, tile) > co_resident_blocks(function)) return false;
    if (n <= default_single_pass_tuning<Acc>().tile_items()) {
      if (o.storage.data != nullptr) return false;
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      TALLY_CUDA_CHECK(cudaStreamIsCapturing(o.stream, &capture), function);
      if (capture != cudaStreamCaptureStatusNone) return false;
    }
    return true;
  } else {
    (void)in, (void)out, (void)n, (void)o, (void)function;
    return false;
  }
}

// Values whose associative operators are exact (integers): every association gives the
// same bits, so options.deterministic needs no kernel of its own for them. (Specialised
// for the segmented scans' pairs in segmented/pairs_scan.cuh.)
template <class Acc>
struct exact_values : std::is_integral<Acc> {};

// The kernel that runs tiles by block (tile = blockIdx.x, the tile in registers: the
// staged kernel would fit more blocks on an SM, but measured slower where both fit, and
// one more kernel for every scan costs build time), and the largest grid of it that a
// cooperative launch takes on the current device (0: none).
template <class Protocol, single_pass_tuning Tune, bool Deterministic, bool Exclusive, class Acc,
          class In, class Out, class Op, class Hook, class Lines = one_line>
inline constexpr auto by_block_kernel =
    single_pass_kernel<Protocol, Tune.block_threads, Tune.rows, Tune.vec, true, staging::none,
                       Deterministic, Exclusive, true, Acc, In, Out, Op, Hook, Lines>;
template <class Protocol, single_pass_tuning Tune, bool Deterministic, bool Exclusive, class Acc,
          class In, class Out, class Op, class Hook, class Lines = one_line>
int by_block_grid(const char* function) {
  constexpr auto kernel =
      by_block_kernel<Protocol, Tune, Deterministic, Exclusive, Acc, In, Out, Op, Hook, Lines>;
  return co_resident_grid<kernel>(Tune.block_threads, function);
}

// One launch of the kernel. ByBlock (the small-n path, and the public scans' default
// tiles: "Tiles by block" above): where both pointers are 16-byte aligned and the device
// holds the whole grid at once (or there is one tile), tile = blockIdx.x in a cooperative
// launch; otherwise, as without ByBlock, the ticket kernels.
//
// A state that holds anything (state.unzeroed: with_tile_state) is cleared by the by-block
// kernel itself ("States that hold anything" above), and by clear_kernel before the
// ticket kernels, which are launched as its programmatic dependents
// (dependent_launch.cuh).
template <class Protocol, single_pass_tuning Tune, bool Deterministic, bool Exclusive, bool ByBlock,
          class Acc, class In, class Out, class Op, class Hook, class Lines>
void launch_layout(const char* function, In in, Out out, std::int64_t n, std::int64_t tiles,
                   seed_value<Acc, Exclusive> seed, Op op, tile_state<Acc> state, Hook hook,
                   Lines lines, cudaStream_t stream) {
  const auto grid = static_cast<unsigned>(tiles);
  bool by_block = false;
  if constexpr (ByBlock) {
    static_assert(acc_pointers<Acc, In, Out>() && Tune.vec > 1,
                  "tiles by block take pointers to vectorisable values");
    constexpr auto kernel =
        by_block_kernel<Protocol, Tune, Deterministic, Exclusive, Acc, In, Out, Op, Hook, Lines>;
    by_block = aligned_16(in) && aligned_16(out) &&
               (tiles == 1 || tiles <= co_resident_grid<kernel>(Tune.block_threads, function));
  }
  // The ticket kernels on a state that holds anything: cleared by clear_kernel, the
  // kernel launched as its programmatic dependent (it waits for the clear before its
  // ticket: dependent_launch.cuh), which overlaps the two launches.
  const bool after_clear = state.unzeroed && !by_block;
  if (after_clear) state.unzeroed = false;
  const auto launch_ticket_kernel = [&](auto kernel, auto kernel_in, auto kernel_out) {
    constexpr const char* what = "launch of single_pass_kernel";
    if (after_clear) {
      launch_after_clear(function, what, state.header, state_bytes<Acc>(tiles), dim3(grid),
                         dim3(Tune.block_threads), 0, stream, kernel, kernel_in, kernel_out, n,
                         tiles, seed, op, state, hook, lines);
    } else {
      kernel<<<grid, Tune.block_threads, 0, stream>>>(kernel_in, kernel_out, n, tiles, seed, op,
                                                       state, hook, lines);
      cuda_check(cudaGetLastError(), function, what);
    }
  };
  if constexpr (ByBlock) {
    constexpr auto kernel =
        by_block_kernel<Protocol, Tune, Deterministic, Exclusive, Acc, In, Out, Op, Hook, Lines>;
    if (by_block) {
      cudaLaunchAttribute cooperative = {};
      cooperative.id = cudaLaunchAttributeCooperative;
      cooperative.val.cooperative = 1;
      launch_with_attribute(function, "cudaLaunchKernelEx (cooperative) of single_pass_kernel", dim3(grid),
                            dim3(Tune.block_threads), 0, stream,
                            tiles > 1 ? &cooperative : nullptr,  // one tile waits for nobody
                            kernel, in, out, n, tiles, seed, op, state, hook, lines);
      return;
    }
  }
  // Pointers to Acc itself, both 16-byte aligned, are read and written with 16-byte
  // vectors through a staged tile, and vector iterators of the tuning's Vec that say
  // they are ready with 16-byte vectors in registers. Inputs without vector accesses
  // (other iterators, pointers to other element types), with outputs without them, take
  // the same vectorised layout with scalar accesses ("Scalar runs" above). Anything else
  // (a pointer to Acc offset by one element, a vector iterator that is not ready) runs
  // with scalar accesses in the striped layout.
  constexpr bool pointers = acc_pointers<Acc, In, Out>();
  constexpr bool vector_iterators =
      vector_items_of<In>() == Tune.vec && vector_items_of<Out>() == Tune.vec;
  constexpr bool scalar_sides = !pointers && !tile_program<In> && vector_items_of<In>() == 0 &&
                                vector_items_of<Out>() == 0;
  if constexpr (Tune.vec > 1 && scalar_sides) {
    using runs_in = scalar_runs<In, Tune.vec>;
    using runs_out = scalar_runs<Out, Tune.vec>;
    launch_ticket_kernel(
        single_pass_kernel<Protocol, Tune.block_threads, Tune.rows, Tune.vec, true, staging::none,
                           Deterministic, Exclusive, false, Acc, runs_in, runs_out, Op, Hook, Lines>,
        runs_in{in}, runs_out{out});
  } else {
    if constexpr (Tune.vec > 1 && (pointers || vector_iterators)) {
      bool vectorised = false;
      if constexpr (pointers) {
        vectorised = aligned_16(in) && aligned_16(out);
      } else {
        vectorised = in.vector_ready() && out.vector_ready();
      }
      if (vectorised) {
        constexpr staging staged = pointers ? staging::rescan : staging::none;
        launch_ticket_kernel(single_pass_kernel<Protocol, Tune.block_threads, Tune.rows, Tune.vec,
                                                true, staged, Deterministic, Exclusive, false, Acc,
                                                In, Out, Op, Hook, Lines>,
                             in, out);
        return;
      }
    }
    // (A tile program with vector hooks always takes the vectorised layout: its runs of
    // items need no alignment, so no scalar kernel is compiled for it.)
    if constexpr (!(tile_program<In> && vector_iterators)) {
      launch_ticket_kernel(single_pass_kernel<Protocol, Tune.block_threads, Tune.rows, Tune.vec,
                                              false, staging::none, Deterministic, Exclusive, false,
                                              Acc, In, Out, Op, Hook, Lines>,
                           in, out);
    }
  }
}

// Calls launch(std::bool_constant<Deterministic>{}) with the kernel to take: the
// deterministic one only where it differs, for a protocol with a deterministic mode of
// its own (look-back; the chained scan always is) and values that are not exact. Both
// single-pass kernels (this one and single_pass/pipelined.cuh's) choose through it.
template <class Protocol, class Acc, class Launch>
void with_determinism(bool deterministic, Launch&& launch) {
  if constexpr (Protocol::has_deterministic_mode && !exact_values<Acc>::value) {
    if (deterministic) {
      launch(std::true_type{});
      return;
    }
  }
  launch(std::false_type{});
}

template <class Protocol, single_pass_tuning Tune, bool Exclusive, bool ByBlock = false, class Acc,
          class In, class Out, class Op, class Hook, class Lines>
void launch(const char* function, In in, Out out, std::int64_t n, std::int64_t tiles,
            seed_value<Acc, Exclusive> seed, Op op, tile_state<Acc> state, bool deterministic,
            Hook hook, Lines lines, cudaStream_t stream) {
  with_determinism<Protocol, Acc>(deterministic, [&](auto mode) {
    launch_layout<Protocol, Tune, decltype(mode)::value, Exclusive, ByBlock>(
        function, in, out, n, tiles, seed, op, state, hook, lines, stream);
  });
}

// Calls launch(state) with the tile state of a single-pass kernel of `tiles` tiles of
// Acc descriptors: none for one tile (it has no predecessor and no successor); in caller
// storage (options.storage, at least `caller_bytes`) or, while a graph is being captured,
// in a call-owned allocation, zeroed by a memset first (launch_zeroes: not zeroed but
// marked state.unzeroed, for a launch that zeroes it itself: launch_layout and
// pipelined::scan); otherwise
// the stream's reusable buffer (tile_state_registry). The segmented scans over offsets
// run their own kernel on the same state (segmented/tile_heads.cuh), the batched scans
// theirs on a packed one (batched/strided.cuh: S, single_pass/tile_state.cuh).
template <class Acc, spacing S = spacing::one_per_line, class Launch>
void with_tile_state(const char* function, const char* storage_query, std::int64_t tiles,
                     std::size_t caller_bytes, const options& o, Launch&& launch,
                     bool launch_zeroes = false) {
  if (tiles == 1) {
    launch(tile_state<Acc, S>{});
    return;
  }
  cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
  TALLY_CUDA_CHECK(cudaStreamIsCapturing(o.stream, &capture), function);
  if (o.storage.data != nullptr || capture != cudaStreamCaptureStatusNone) {
    const std::size_t needed =
        o.storage.data != nullptr ? caller_bytes : state_bytes<Acc, S>(tiles) + storage_alignment;
    scoped_storage storage(function, storage_query, o.storage.data, o.storage.bytes, needed,
                           o.stream);
    auto state = tile_state<Acc, S>::at(storage.aligned(), tiles);
    if (launch_zeroes) {
      state.unzeroed = true;
    } else {
      TALLY_CUDA_CHECK(cudaMemsetAsync(storage.aligned(), 0, state_bytes<Acc, S>(tiles), o.stream),
                       function);
    }
    launch(state);
    return;
  }
  const auto lease = tile_state_registry::instance().acquire(
      function, o.stream, tiles, state_layout<Acc, S>,
      [](std::int64_t capacity) { return state_bytes<Acc, S>(capacity); });
  launch(tile_state<Acc, S>::at(lease.data, lease.capacity));
}

// Calls launch(tiles, state) for one single-pass call of n >= 1 elements in tiles of
// Tune's size: checks the tile count, holds caller storage to promised_storage (what the
// caller's storage query said a call of this n needs: the public scans pass
// public_storage_bytes, which covers every tiling they may choose, so that an error does
// not depend on the pointers' alignment) and takes the state as with_tile_state does.
// For this file's kernel and the pipelined one (single_pass/pipelined.cuh). launch_zeroes: as
// with_tile_state (this file's launch_layout zeroes a state that holds anything).
template <class Acc, single_pass_tuning Tune, class Launch>
void with_call_state(const char* function, const char* storage_query, std::int64_t n,
                     const options& o, std::size_t promised_storage, Launch&& launch,
                     bool launch_zeroes = false) {
  const std::int64_t tiles = ceil_div(n, Tune.tile_items());
  if (tiles > 0x7fffffff) {
    throw_invalid(function, "n", "needs more than 2^31 - 1 tiles of " +
                                     std::to_string(Tune.tile_items()) + " elements");
  }
  const std::size_t tiles_need = storage_bytes<Acc, Tune>(n);
  const std::size_t caller_bytes =
      o.storage.data != nullptr && promised_storage > tiles_need ? promised_storage : tiles_need;
  with_tile_state<Acc>(
      function, storage_query, tiles, caller_bytes, o,
      [&](tile_state<Acc> state) { launch(tiles, state); }, launch_zeroes);
}

// Runs one single-pass scan of n >= 1 elements (arguments checked by the caller): the
// state from the caller's storage, a call-owned allocation while capturing a graph, or
// the stream's reusable buffer (single_pass/tile_state.cuh); then one launch. ByBlock: tile =
// blockIdx.x where the grid fits on the device at once (launch_layout). promised_storage: see
// with_call_state. lines: where the scan starts afresh ("Lines" above).
template <class Protocol, bool Exclusive, class Acc,
          single_pass_tuning Tune = default_single_pass_tuning<Acc>(), bool ByBlock = false,
          class In, class Out, class Op, class Hook = no_stall, class Lines = one_line>
void scan(const char* function, const char* storage_query, In in, Out out, std::int64_t n,
          seed_value<Acc, Exclusive> seed, Op op, const options& o, Hook hook = {},
          std::size_t promised_storage = 0, Lines lines = {}) {
  static_assert(std::is_trivially_copyable_v<Acc>,
                "single-pass scans need a trivially copyable accumulator type");
  if (n == 0) return;
  with_call_state<Acc, Tune>(
      function, storage_query, n, o, promised_storage,
      [&](std::int64_t tiles, tile_state<Acc> state) {
        launch<Protocol, Tune, Exclusive, ByBlock>(function, in, out, n, tiles, seed, op, state,
                                                   o.deterministic, hook, lines, o.stream);
      },
      /*launch_zeroes=*/true);
}

}  // namespace tally::detail::single_pass
