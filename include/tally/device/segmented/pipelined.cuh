// tally/device/segmented/pipelined.cuh -- the segmented scans by head flags, by
// keys, by CSR offsets and by equal lengths (the batched scans along the last axis) of
// LARGE inputs, on the pipelined kernel of the plain scan (single_pass/pipelined.cuh).
//
// Why. The tile kernel of segmented/tile_heads.cuh runs one block per tile, and a block that
// waits for its prefix holds its tile and issues no loads: the same reason the plain
// scan's one-block-per-tile kernel stays further from a copy than its pipelined kernel
// (docs/performance.md, "What each path earns"). Here the pipelined kernel runs a TILE
// PROGRAM of (head, value) pairs instead of values:
//   - a stage holds the tile's values and, for the flag forms, its flag bytes behind
//     them, for the key forms its keys (and the 16 bytes before them, which end with the
//     key before the tile), for the offsets forms its bits of a head bitmap built before
//     the scan: the producer starts two bulk copies that complete on the same FULL
//     barrier; equal lengths read nothing more (a head where (base + i) % len == 0);
//   - step a scans each warp's rows as pairs under the flag-augmented operator
//     (segmented_offsets::scan_pair_rows, the tile kernel's own step 2) and keeps the
//     warp's first head in the warp's CARRY, which the store of the tile needs;
//   - the tile's aggregate, its descriptors and the look-back are pairs (has a head,
//     reduction since the last head) under segmented_op, exactly as in the tile kernel;
//   - step c: the warp's prefix goes in front of the items before its first head
//     (segmented_offsets::finish_pair_row), and an exclusive scan shifts by one element
//     and puts init at each head.
// Exclusive scans are seeded as in segmented/pairs_scan.cuh: each head's value is init op x, so
// the protocol itself runs unseeded (tile 0 has no prefix) for both.
//
// Element 0 starts a segment whatever its flag (the flag forms do not read flags[0]): the
// heads of tile 0's first vector are fixed up where they are read, in the scan and in the
// store (the stage's flag bytes are never written).
//
// CSR offsets: a tile cannot find its heads in the offsets itself without putting
// dependent loads in the pipeline's path (the search's rounds, or the loads of the tile's
// offsets); the bitmap, copied like flags, leaves the pipeline as it is
// (docs/performance.md, "What each path earns"). Elements outside [offsets[0],
// offsets[S]) are not written: the producer reads offsets[0] and offsets[S] for each tile
// (prepare) and the store skips the elements outside them.
//
// Applies to 16-byte aligned pointers to 4- and 8-byte values and 16-byte aligned
// one-byte flags or keys of 1-8 bytes (bulk copies need 16-byte aligned addresses, and a
// tile's flags and keys start at a multiple of its items), from min_bytes of values on
// (segmented.cuh). Tiles with flags: 256 threads x 7 rows x 16 bytes of values (28 KiB,
// and 7 KiB of flags), two stages (70 KiB), 3 blocks per SM; 8 rows would take 80 KiB and
// leave room for 2. With keys as many rows as leave room for 3 blocks an SM
// (default_rows): 4 with 4-byte keys beside 4-byte values. Equal lengths (nothing beside
// the values): the plain scan's 9 rows; offsets (1 KiB of bits a stage): 8 rows
// (docs/performance.md, "Plans and thresholds").
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include <cuda_runtime.h>

#include "tally/core/error.hpp"
#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/device/detail/storage.cuh"
#include "tally/device/segmented/pairs_scan.cuh"
#include "tally/device/segmented/tile_heads.cuh"
#include "tally/device/single_pass/pipelined.cuh"
#include "tally/device/single_pass/tile_pipeline.cuh"
#include "tally/device/single_pass/tile_state.cuh"

namespace tally::detail::segmented_pipelined {

using single_pass::maybe;

// The heads of a tile: one-byte flags staged behind the values, or segments of `len`
// elements (len < 2^31: a head where (base + i) % len == 0, computed in 32 bits).
struct staged_flags {
  const unsigned char* flags;
};
struct equal_lengths {
  std::int64_t len;
};
// Keys (a pointer to keys of 1, 2, 4 or 8 bytes) staged behind the values, a head where
// equal(keys[i - 1], keys[i]) is false. The stage holds 16 bytes before the tile's keys:
// the 16-byte word that ends with keys[base - 1], the key before the tile (copied with
// them; tile 0 has none).
template <class Key, class Equal>
struct staged_keys {
  const Key* keys;
  Equal equal;
};
// CSR offsets (any random-access iterator of integers, segments >= 1): segment k is
// [offsets[k], offsets[k+1]). Before the scan, the heads become a bitmap of n bits
// (segmented/pairs_scan.cuh's build_bitmap: a clear and one pass over the offsets), which the
// stage holds behind the values (one bulk copy, 1/32 of the values' bytes for 4-byte
// values); the producer also reads offsets[0] and offsets[S], the range the scan writes.
template <class Offsets>
struct offsets_bitmap {
  Offsets offsets;
  std::int64_t segments;
  const std::uint32_t* words;  // the bitmap (set by scan)
};
template <class Heads>
inline constexpr bool is_offsets_v = false;
template <class Offsets>
inline constexpr bool is_offsets_v<offsets_bitmap<Offsets>> = true;
template <class Heads>
inline constexpr bool is_keys_v = false;
template <class Key, class Equal>
inline constexpr bool is_keys_v<staged_keys<Key, Equal>> = true;
template <class Heads>
struct key_of {
  using type = unsigned char;  // (not keys: never staged as keys)
};
template <class Key, class Equal>
struct key_of<staged_keys<Key, Equal>> {
  using type = Key;
};
// The bytes a stage holds beside each value: a flag byte, a key, or nothing (equal
// lengths; CSR offsets stage a bitmap, one bit a value, and keep rows of their own:
// default_rows).
template <class Heads>
inline constexpr int bytes_beside_v = 0;
template <>
inline constexpr int bytes_beside_v<staged_flags> = 1;
template <class Key, class Equal>
inline constexpr int bytes_beside_v<staged_keys<Key, Equal>> = static_cast<int>(sizeof(Key));

// Rows of a tile: as many as leave room for 3 blocks an SM (CSR offsets: 8, below). An
// sm_90 SM has 228 KiB of shared memory, of which the runtime keeps 1 KiB a
// block; a block takes two stages and its static shared memory: up to 768 bytes of the
// kernel's own, and in the deterministic kernel the look-back's held windows, HeldBytes (4
// KiB of (head, float) or (head, double) pairs with decoupled_lookback::protocol). So a
// stage may take (76 KiB - 1 KiB - 768 bytes) / 2 = 38016 bytes (35968 beside 4 KiB held),
// rounded up to 128 bytes as stage_bytes is: 7 rows with one-byte flags or keys beside
// 4-byte values (35 KiB), 4 with 4-byte keys (32 KiB), 3 with 8-byte keys; beside 8-byte
// values 8 rows with one-byte flags or keys, 6 with 4-byte keys. The deterministic kernel
// of floating values takes one row less where the held windows need it (double beside flags
// 7, beside 4-byte keys 5; float beside 8-byte keys 2): holding fewer windows to keep the
// row costs more than the row gains. The GPU test SegmentedPipelined.ThreeBlocksAnSM
// checks the rule with the occupancy API. Equal lengths stage the values alone: 9 rows
// (36 KiB, the plain scan's tiles), 8 in the deterministic kernel of floating values.
// CSR offsets keep 8 rows: a bitmap slice of 1152 bytes and 16 bytes of slots beside 9
// rows are 38144 bytes, over the rule (3 blocks an SM still fit, the kernel's static
// shared memory being 512 bytes, with no byte to spare), and 9 rows gain nothing there
// (docs/performance.md, "Plans and thresholds").
template <class Heads, class Acc, int HeldBytes = 0>
constexpr int default_rows() {
  if constexpr (is_offsets_v<Heads>) {
    return 8;  // (a bitmap of 1 KiB beside 32 KiB of values)
  } else {
    constexpr int per_block = 228 * 1024 / 3 - 1024 - 768;
    constexpr int budget = (per_block - HeldBytes) / 2;
    constexpr int row_items = 256 * 16 / static_cast<int>(sizeof(Acc));  // values of one row
    constexpr int before = is_keys_v<Heads> ? 16 : 0;  // (keys: the 16 bytes before the tile's)
    const auto stage_bytes = [](int rows) {
      return (rows * row_items * (static_cast<int>(sizeof(Acc)) + bytes_beside_v<Heads>) + before + 127) / 128 *
             128;
    };
    int rows = 1;
    while (stage_bytes(rows + 1) <= budget) ++rows;
    return rows;
  }
}
// The rows of the kernel that does not hold windows (every kernel of exact values and of
// the chained protocol) ...
template <class Heads, class Acc>
inline constexpr int tile_rows = default_rows<Heads, Acc>();

// ... and of Protocol's kernel for the mode (single_pass::with_determinism).
template <class Protocol, bool Deterministic, class Acc>
constexpr int held_bytes() {
  if constexpr (Deterministic) {
    return Protocol::template deterministic_held_bytes<flagged<Acc>>;
  } else {
    return 0;
  }
}
template <class Protocol, bool Deterministic, class Heads, class Acc>
inline constexpr int mode_rows = default_rows<Heads, Acc, held_bytes<Protocol, Deterministic, Acc>()>();

// The tile program (single_pass/pipelined.cuh's "tile programs").
template <bool Exclusive, class Acc, class Op, class Heads, int ComputeThreads = 256,
          int Rows = tile_rows<Heads, Acc>, int Stages = 2>
struct segmented_tiles {
  static constexpr pipelined::pipelined_tuning tune{ComputeThreads, Rows, Stages};
  using total = flagged<Acc>;
  using L = pipelined::layout<Acc, tune>;
  using vector = single_pass::vector_of<Acc, L::vec>;
  static constexpr bool has_flags = std::is_same_v<Heads, staged_flags>;
  static constexpr bool has_keys = is_keys_v<Heads>;
  static constexpr bool has_offsets = is_offsets_v<Heads>;
  using key = typename key_of<Heads>::type;
  static constexpr unsigned value_bytes = pipelined::tile_bytes<Acc, tune>();
  // behind the values: the flag bytes, or 16 bytes (the key before the tile) and the keys
  static constexpr unsigned flag_bytes = has_flags ? static_cast<unsigned>(L::tile_items) : 0u;
  static constexpr unsigned key_bytes = has_keys ? static_cast<unsigned>(L::tile_items * sizeof(key)) : 0u;
  static constexpr unsigned keys_at = value_bytes + 16u;  // the tile's first key
  // offsets: the tile's bits of the head bitmap, then the range the scan writes (two
  // 8-byte slots, written by the producer: prepare)
  static constexpr unsigned bitmap_bytes = has_offsets ? static_cast<unsigned>(L::tile_items / 8) : 0u;
  static constexpr unsigned slots_at = value_bytes + bitmap_bytes;
  static constexpr unsigned extra_bytes =
      has_keys ? 16u + key_bytes : (has_offsets ? bitmap_bytes + 16u : flag_bytes);
  // rounded up to 128 bytes: the next stage starts aligned
  static constexpr unsigned stage_bytes = (value_bytes + extra_bytes + 127u) / 128u * 128u;
  static_assert(value_bytes % 128 == 0 && extra_bytes % 16 == 0, "bulk copies of 16-byte multiples");
  static_assert(!has_keys || (sizeof(key) <= 8 && 16 % sizeof(key) == 0), "keys of 1, 2, 4 or 8 bytes");
  static_assert(!has_offsets || L::tile_items % 128 == 0, "whole 16-byte words of bits a tile");
  // A partial last tile: each thread loads its own elements, but a key's head needs the
  // key before it, and the bitmap's words hold other threads' heads: the kernel passes a
  // barrier after load_partial.
  static constexpr bool partial_barrier = has_keys || has_offsets;
  // The look-back's deadline (single_pass/pipelined.cuh's kernel), by the tile's rows:
  // about three fifths of the time from a tile's aggregate to the landing of the block's
  // next tile. None for tiles of 8 or more rows of 8-byte values, where a deadline does
  // not pay (docs/performance.md, "Plans and thresholds").
  static constexpr long long lookback_deadline_cycles =
      Rows <= 4 ? 3000 : (Rows <= 7 ? 4000 : (sizeof(Acc) <= 4 ? 5000 : 0));
  struct carry {
    int first_head;  // the warp's first head (warp-local index; L::warp_items: none)
  };

  const Acc* in;
  Acc* out;
  std::int64_t n;
  Heads heads;
  Acc init;  // exclusive scans' seed (unused by inclusive ones)
  Op op;

  TALLY_DEVICE TALLY_FORCEINLINE segmented_op<Op> combine() const { return {op}; }
  TALLY_DEVICE TALLY_FORCEINLINE maybe<total> first_prefix(const total& defined) const {
    return {defined, false};
  }

  TALLY_DEVICE TALLY_FORCEINLINE void copy(unsigned char* stage, std::int64_t base,
                                           unsigned long long* full) const {
    if constexpr (has_keys) {
      // the keys and, before them, the 16 bytes that end with keys[base - 1] (tile 0: none)
      const unsigned before = base > 0 ? 16u : 0u;
      pipelined::mbarrier_expect(full, value_bytes + before + key_bytes);
      pipelined::bulk_copy(stage, in + base, value_bytes, full);
      pipelined::bulk_copy(stage + keys_at - before,
                           reinterpret_cast<const unsigned char*>(heads.keys + base) - before,
                           before + key_bytes, full);
    } else {
      pipelined::mbarrier_expect(full, value_bytes + flag_bytes + bitmap_bytes);
      pipelined::bulk_copy(stage, in + base, value_bytes, full);
      if constexpr (has_flags) pipelined::bulk_copy(stage + value_bytes, heads.flags + base, flag_bytes, full);
      if constexpr (has_offsets) {
        pipelined::bulk_copy(stage + value_bytes, heads.words + base / 32, bitmap_bytes, full);
      }
    }
  }

  // Offsets: the range the scan writes, [offsets[0], offsets[S]) within [0, n), to the
  // stage's slots, by the producer (segmented/tile_heads.cuh: nothing outside the segments is
  // written; the producer arrives on FULL after these writes). Two loads that hit L2 after
  // the first tiles, while the tile's copies are in flight.
  TALLY_DEVICE TALLY_FORCEINLINE void prepare(unsigned char* stage, std::int64_t) const {
    if constexpr (has_offsets) {
      const auto from = static_cast<std::int64_t>(heads.offsets[0]);
      const auto to = static_cast<std::int64_t>(heads.offsets[heads.segments]);
      std::int64_t* slot = slots(stage);
      slot[0] = from;
      slot[1] = to < n ? to : n;
    } else {
      (void)stage;
    }
  }
  TALLY_DEVICE TALLY_FORCEINLINE static std::int64_t* slots(unsigned char* stage) {
    return reinterpret_cast<std::int64_t*>(stage + slots_at);
  }
  TALLY_DEVICE TALLY_FORCEINLINE static const std::int64_t* slots(const unsigned char* stage) {
    return reinterpret_cast<const std::int64_t*>(stage + slots_at);
  }

  // each thread loads the vectors it scans (padded with x_{n-1}) and their flags (no head
  // past n)
  TALLY_DEVICE TALLY_FORCEINLINE void load_partial(unsigned char* stage, std::int64_t base, int warp,
                                                   int lane) const {
    pipelined::load_partial_values<L>(stage, in, base, n, warp, lane, [&](int v, int j, std::int64_t e) {
      (void)v, (void)j, (void)e;  // (equal lengths and offsets stage nothing here)
      if constexpr (has_flags) stage[value_bytes + v * L::vec + j] = e < n ? heads.flags[e] : 0;
      // (keys past n: copies of the last; their heads reach no stored result)
      if constexpr (has_keys) stage_keys(stage)[v * L::vec + j] = heads.keys[e < n ? e : n - 1];
    });
    if constexpr (has_keys) {
      if (warp == 0 && lane == 0 && base > 0) stage_keys(stage)[-1] = heads.keys[base - 1];
    }
    if constexpr (has_offsets) {
      // the tile's words of the bitmap (ceil(n / 32) words in all), zero past them
      const std::int64_t words = (n + 31) / 32;
      auto* bits = reinterpret_cast<std::uint32_t*>(stage + value_bytes);
      for (int w = warp * 32 + lane; w < L::tile_items / 32; w += ComputeThreads) {
        const std::int64_t at = base / 32 + w;
        bits[w] = at < words ? heads.words[at] : 0u;
      }
    }
  }

  TALLY_DEVICE TALLY_FORCEINLINE static key* stage_keys(unsigned char* stage) {
    return reinterpret_cast<key*>(stage + keys_at);
  }
  TALLY_DEVICE TALLY_FORCEINLINE static const key* stage_keys(const unsigned char* stage) {
    return reinterpret_cast<const key*>(stage + keys_at);
  }

  // The heads of the lane's vector v (row r) of tile `tile`.
  TALLY_DEVICE TALLY_FORCEINLINE void heads_of(const unsigned char* stage, std::int64_t tile, int r,
                                               int v, bool (&h)[L::vec]) const {
    if constexpr (has_flags) {
      segmented_offsets::read_heads<L::vec>(stage + value_bytes, v * L::vec, h);
    } else if constexpr (has_offsets) {
      (void)r;
      const int i = v * L::vec;  // (vec divides 32: a vector's bits lie in one word)
      const unsigned w = reinterpret_cast<const unsigned*>(stage + value_bytes)[i / 32] >> (i % 32);
#pragma unroll
      for (int k = 0; k < L::vec; ++k) h[k] = ((w >> k) & 1u) != 0;
    } else if constexpr (has_keys) {
      // the key before each element: the one before in the stage (before the tile's first:
      // keys[base - 1], staged in front of them; tile 0's first element is fixed below)
      (void)r;
      const key* k = stage_keys(stage) + v * L::vec;
      key earlier = k[-1];
#pragma unroll
      for (int j = 0; j < L::vec; ++j) {
        const key current = k[j];
        h[j] = !static_cast<bool>(heads.equal(earlier, current));
        earlier = current;
      }
    } else {
      // the vector's first element's place in its segment: one 64-bit remainder of the
      // tile's first element, then 32-bit arithmetic (len < 2^31, checked on the host)
      (void)r;
      const auto len = static_cast<unsigned>(heads.len);
      const auto first = static_cast<unsigned>((tile * L::tile_items) % heads.len);
      unsigned m = (first + static_cast<unsigned>(v * L::vec)) % len;  // < 2^31 + 2^13
#pragma unroll
      for (int k = 0; k < L::vec; ++k) {
        h[k] = m == 0;
        m = m + 1 == len ? 0 : m + 1;
      }
    }
    if (tile == 0 && v == 0) h[0] = true;  // element 0 starts a segment whatever its flag
  }

  TALLY_DEVICE TALLY_FORCEINLINE total scan(unsigned char* stage, std::int64_t tile, int warp, int lane,
                                            carry& c) const {
    Op o = op;
    bool warp_head = false;
    const auto heads_of_row = [&](int r, int v, bool(&h)[L::vec]) { heads_of(stage, tile, r, v, h); };
    const Acc warp_total = segmented_offsets::scan_pair_rows<L, Exclusive>(
        reinterpret_cast<vector*>(stage), warp, lane, heads_of_row, init, o, c.first_head, warp_head);
    return {warp_head, warp_total};
  }

  TALLY_DEVICE TALLY_FORCEINLINE void store(const unsigned char* stage, std::int64_t tile, int warp,
                                            int lane, const maybe<total>& warp_prefix,
                                            const carry& c) const {
    Op o = op;
    const std::int64_t base = tile * L::tile_items;
    const auto heads_of_row = [&](int r, int v, bool(&h)[L::vec]) { heads_of(stage, tile, r, v, h); };
    // the range this scan writes: [0, n), offsets [offsets[0], offsets[S]) within it
    std::int64_t write_from = 0, write_to = n;
    if constexpr (has_offsets) {
      write_from = slots(stage)[0];
      write_to = slots(stage)[1];
    }
    const bool inside = base >= write_from && base + L::tile_items <= write_to;
    // (the prefix's value without a prefix: defined bits, never used)
#pragma unroll
    for (int r = 0; r < L::rows; ++r) {
      Acc x[L::vec];
      segmented_offsets::finish_pair_row<L, Exclusive>(reinterpret_cast<const vector*>(stage), warp,
                                                      lane, r, heads_of_row, warp_prefix.value.value,
                                                      warp_prefix.present, c.first_head, init, o, x);
      const std::int64_t at = base + warp * L::warp_items + r * L::row_items + lane * L::vec;
      if (inside) {
        single_pass::store_vector<L::vec>(out, at, x);
      } else {
#pragma unroll
        for (int k = 0; k < L::vec; ++k) {
          if (at + k >= write_from && at + k < write_to) out[at + k] = x[k];
        }
      }
    }
  }
};

// From this many bytes of values on the scans take this path: the plain scan's switch to
// its pipelined kernel (docs/performance.md, "Plans and thresholds").
inline constexpr std::int64_t min_bytes = pipelined::min_bytes;

// Whether the call takes this path: pointers to Acc itself of a 4- or 8-byte type, 16-byte
// aligned (the flags too), at least min_bytes of values; equal lengths below 2^31.
template <class Acc>
bool takes(const Acc* in, const Acc* out, std::int64_t n) {
  return single_pass::vectorisable_v<Acc> && n >= min_bytes / static_cast<std::int64_t>(sizeof(Acc)) &&
         single_pass::aligned_16(in) && single_pass::aligned_16(out);
}
inline bool takes_heads(const staged_flags& h) { return single_pass::aligned_16(h.flags); }
inline bool takes_heads(const equal_lengths& h) { return h.len >= 1 && h.len < (std::int64_t{1} << 31); }
template <class Offsets>
bool takes_heads(const offsets_bitmap<Offsets>& h) {
  return h.segments >= 1;
}
template <class Key, class Equal>
bool takes_heads(const staged_keys<Key, Equal>& h) {
  return single_pass::aligned_16(h.keys);
}

// One segmented scan of n >= 1 elements (the caller checked takes and takes_heads), in
// tiles of Rows rows (0: mode_rows, the rows of the kernel that runs).
template <class Protocol, bool Exclusive, class Acc, class Op, class Heads, int Rows = 0, int Stages = 2>
void scan(const char* function, const Acc* in, Acc* out, std::int64_t n, Heads heads, Acc init, Op op,
          const options& o) {
  using pair = flagged<Acc>;
  // offsets: the head bitmap first, in a stream-ordered allocation (n / 8 bytes)
  scoped_storage bits(function, "", nullptr, 0,
                      is_offsets_v<Heads> ? segmented::bitmap_bytes(n) + storage_alignment : 0, o.stream);
  if constexpr (is_offsets_v<Heads>) {
    auto* words = reinterpret_cast<std::uint32_t*>(bits.aligned());
    segmented::build_bitmap(function, heads.offsets, heads.segments, n, words, o.stream);
    heads.words = words;
  }
  single_pass::with_determinism<Protocol, Acc>(o.deterministic, [&](auto mode) {
    constexpr bool deterministic = decltype(mode)::value;
    constexpr int rows = Rows > 0 ? Rows : mode_rows<Protocol, deterministic, Heads, Acc>;
    using program = segmented_tiles<Exclusive, Acc, Op, Heads, 256, rows, Stages>;
    segmented_offsets::with_pair_state<Acc>(
        function, n, program::L::tile_items, o, [&](std::int64_t tiles, single_pass::tile_state<pair> state) {
          // (offsets: the bitmap kernel's programmatic dependent, dependent_launch.cuh)
          pipelined::launch<Protocol, deterministic>(function, program{in, out, n, heads, init, op}, tiles,
                                                     state, single_pass::no_stall{}, o.stream,
                                                     is_offsets_v<Heads>);
        });
  });
}

}  // namespace tally::detail::segmented_pipelined
