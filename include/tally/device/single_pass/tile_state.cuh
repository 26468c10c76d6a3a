// tally/device/single_pass/tile_state.cuh -- the tile descriptors and tile tickets of the
// single-pass scans (single_pass/chained.cuh, single_pass/decoupled_lookback.cuh), and where they live.
//
// A single-pass scan runs one block per tile. Each block
//   1. draws a TICKET, its tile index, from an atomic counter (not blockIdx: a block
//      only ever waits for tiles of smaller tickets, and those were drawn by blocks that
//      are already running, so the scan cannot deadlock whatever order the hardware
//      starts blocks in);
//   2. publishes the DESCRIPTOR of its tile: a status (aggregate: the reduction of the
//      tile alone; inclusive: the reduction of everything up to and including the tile)
//      and the value, which later tiles read.
//
// Epochs instead of an initialisation kernel. Clearing the descriptors with a second
// kernel before every scan adds a launch, a large share of a small scan's time. Here the
// state is reused from call to call without a reset:
//   - the ticket counter is one 64-bit word, (epoch << 32) | count. A block's
//     atomicAdd(header, 1) returns its ticket (count) and the call's epoch together; the
//     block that draws the last ticket (count == tiles - 1) knows every ticket of this
//     call is drawn and writes (epoch + 1) << 32: count 0 and a new epoch for the next
//     call on the stream (stream order puts that call after this kernel).
//   - every descriptor carries a 32-bit TAG = (epoch << 2) | status, of which 30 bits of
//     the epoch. A descriptor whose tag holds another epoch was written by an earlier
//     call and reads as `invalid` (not written yet). Freshly allocated state is zeroed
//     once (tag 0 = status invalid).
//   - 30 bits wrap after 2^30 calls, and a descriptor not rewritten since then would
//     read as valid. So the calls whose epoch is 2^29 - 1 (mod 2^29) also zero every
//     descriptor past their own tiles (their own ones they rewrite): afterwards every
//     tag is at most 2^29 epochs old, never equal mod 2^30 to the current epoch.
//
// Descriptor formats, by the size of the accumulator (Merrill & Garland 2016, sec. 4.4:
// status and value in one word where they fit, so one load sees both consistently):
//   <= 4 bytes  one 8-byte word: tag in the high half, the value's bits in the low half;
//               written and read with single 8-byte relaxed accesses; one word per
//               128-byte line (why: at tile_descriptors<T, 4>).
//   5..8 bytes  one 16-byte word of two 8-byte halves, each (tag << 32 | 32 value bits),
//               one word per 128-byte line as well. Written with one 16-byte store.
//               The PTX memory model does not promise that a 16-byte access is
//               single-copy atomic, only each 8-byte half, so a reader could see halves
//               of two different writes: it accepts the word only when both halves
//               carry the same tag (a different status or epoch means a torn read; it
//               reads again).
//   (head, 5..8-byte value) pairs of the segmented scans: the 5..8-byte format's word
//               with the value, the head in the status (status 3: an aggregate with a
//               head; at tile_descriptors<P, 9>).
//   9..64 bytes 4 to 16 8-byte quarters, each (tag << 32 | 32 value bits), one descriptor
//               to a 128-byte line, written with 16-byte stores; a reader loads them all
//               (one round trip: the loads are independent) and accepts the quarters
//               only when all carry the same tag, as for 5..8 bytes.
//   > 64 bytes  a tag array and two value arrays (aggregate, inclusive: a reader of an
//               aggregate must never see it overwritten by the inclusive value). The
//               writer stores the value, then the tag with RELEASE semantics; a reader
//               loads the tag with ACQUIRE semantics, then the value: the release/acquire
//               pair makes the value visible to whoever sees the tag.
//
// Where the state lives (host side, tile_state_registry below):
//   - by default, in a buffer that tally keeps per (device, stream, state layout),
//     grown when a call needs more tiles (stream-ordered allocation + memset, on that
//     call only), reused by every later call on the stream: one launch per scan, no
//     allocation;
//   - with caller storage (options.storage), in the caller's memory, zeroed by a
//     cudaMemsetAsync before the kernel (the caller's memory holds anything), or, for
//     the single-pass scans' kernel that runs tiles by block, by the kernel itself
//     (tile_state::unzeroed below), or, for their ticket kernels, the pipelined scan
//     and the single-pass reduce, by a clear kernel whose launch overlaps theirs
//     (dependent_launch.cuh);
//   - while the stream is being captured into a CUDA graph without caller storage, in a
//     stream-ordered allocation of the call, zeroed likewise (a graph may be replayed on
//     any stream, so it must not share the per-stream buffer).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include <cuda_runtime.h>

#include "tally/core/macros.hpp"
#include "tally/core/segmented.hpp"  // flagged (the pairs' format)
#include "tally/device/arch/memory_order.cuh"
#include "tally/device/detail/cuda_check.cuh"
#include "tally/device/detail/storage.cuh"

namespace tally::detail::single_pass {

enum tile_status : unsigned { status_invalid = 0, status_aggregate = 1, status_inclusive = 2 };

// The epoch bits a tag keeps, and the epochs at which stale descriptors are cleared.
inline constexpr unsigned tag_epoch_mask = 0x3fffffffu;  // 30 bits
inline constexpr unsigned clearing_period_mask = (1u << 29) - 1;

TALLY_HOST_DEVICE constexpr unsigned make_tag(unsigned epoch, tile_status status) {
  return (epoch << 2) | status;
}
// The status a tag means in `epoch`: invalid unless it was written in this epoch.
TALLY_HOST_DEVICE constexpr tile_status status_of(unsigned tag, unsigned epoch) {
  return (tag >> 2) == (epoch & tag_epoch_mask) ? static_cast<tile_status>(tag & 3u)
                                                : status_invalid;
}
TALLY_HOST_DEVICE constexpr bool is_clearing_epoch(unsigned epoch) {
  return (epoch & clearing_period_mask) == clearing_period_mask;
}

// ---- relaxed / acquire / release accesses at device (gpu) scope (device/arch) ----------
using arch::load_acquire;
using arch::load_relaxed;
using arch::load_relaxed_16;
using arch::store_relaxed;
using arch::store_relaxed_16;
using arch::store_release;

// ---- tickets ---------------------------------------------------------------------------
struct ticket {
  unsigned epoch;
  std::int64_t tile;
};

// Drawn by one thread per block; every block of the grid (gridDim.x == tiles) draws
// exactly once. In two steps, so that a kernel may issue the atomic and read its reply
// later (the small-n path's blocks know their tile without it: single_pass/tile_pipeline.cuh):
//   take_ticket   the atomic. Relaxed is enough: the ticket orders nothing by itself;
//                 descriptors carry their own synchronisation (one word, or
//                 release/acquire).
//   open_ticket   its reply: the call's epoch and the count; the block that drew the
//                 last count opens the next epoch.
TALLY_DEVICE TALLY_FORCEINLINE unsigned long long take_ticket(unsigned long long* header) {
  return atomicAdd(header, 1ull);
}

TALLY_DEVICE inline ticket open_ticket(unsigned long long word, unsigned long long* header,
                                       std::int64_t tiles) {
  ticket t{static_cast<unsigned>(word >> 32), static_cast<std::int64_t>(word & 0xffffffffull)};
  // A count outside [0, tiles) means the state was corrupted (a kernel of this state was
  // killed half-way, or two streams shared it): stop rather than scan garbage.
  if (t.tile >= tiles) __trap();
  if (t.tile == tiles - 1) {
    // The last ticket: all others are drawn, nobody of this call touches the header again.
    // A plain relaxed store is enough: every other atomic on the header precedes ours in
    // its coherence order (ours returned the last count), and this store follows ours in
    // program order on the same address. (An atomicExch would do the same and make the
    // thread wait for a reply nobody needs.)
    store_relaxed(header, static_cast<unsigned long long>(t.epoch + 1u) << 32);
  }
  return t;
}

TALLY_DEVICE inline ticket draw_ticket(unsigned long long* header, std::int64_t tiles) {
  return open_ticket(take_ticket(header), header, tiles);
}

// ---- descriptor formats ------------------------------------------------------------------
// The format of a tile's descriptor, by the width of its value: 4 (one 8-byte word), 8 (one
// 16-byte word), 16 (9 to 64 bytes: two to eight 16-byte words of tagged quarters),
// 32 (more than 64 bytes: three arrays); and 9 for the
// segmented scans' (head, value) pairs of 5-8-byte values, 16 bytes and more as a pair:
// format 8's word, the head in the status.
template <class T>
struct wide_pair : std::false_type {};
template <class T>
struct wide_pair<::tally::flagged<T>> : std::bool_constant<(sizeof(T) > 4 && sizeof(T) <= 8)> {};
template <class T>
inline constexpr int descriptor_format =
    wide_pair<T>::value ? 9 : sizeof(T) <= 4 ? 4 : sizeof(T) <= 8 ? 8 : sizeof(T) <= 64 ? 16 : 32;

// Where the descriptors of formats 4, 8 and 16 sit: one to a 128-byte line (the single-pass
// scans, whose tiles in flight all poll the few newest descriptors: tile_descriptors<T, 4>
// and <T, 8>), or packed 16 (8, 4) to a line, for readers that take many neighbouring
// descriptors in one load (the batched scans' columns, batched/strided.cuh; the reduce's
// finish, single_pass/reduce.cuh), which would read 16 (8, 4) times the lines spread
// out. Format 32 is always packed.
enum class spacing { one_per_line, packed };

template <class T, spacing S = spacing::one_per_line, int Format = descriptor_format<T>>
struct tile_descriptors;

// Accumulators of at most 4 bytes: one 8-byte word per tile, alone in a 128-byte line
// (`stride` words apart). Packed 16 to a line, the descriptors of the few hundred tiles
// in flight would sit in a handful of lines, so one or two L2 slices would serve every
// poll and every publish of the whole grid, and the data of every tile passing through
// those slices would wait behind them (docs/performance.md, "What each path earns"). It
// costs 128 bytes of state per tile (4 MiB at 2^28 int32).
template <class T, spacing S>
struct tile_descriptors<T, S, 4> {
  static_assert(std::is_trivially_copyable_v<T>, "tile values must be trivially copyable");
  unsigned long long* words = nullptr;  // tile t's descriptor is words[t * stride]

  static constexpr std::int64_t stride = S == spacing::one_per_line ? 16 : 1;
  static constexpr std::size_t bytes_per_tile = 8 * stride;
  static tile_descriptors at(unsigned char* p, std::int64_t) {
    return {reinterpret_cast<unsigned long long*>(p)};
  }

  TALLY_DEVICE void store(std::int64_t tile, unsigned tag, const T& value) const {
    unsigned bits = 0;
    memcpy(&bits, &value, sizeof(T));
    store_relaxed(words + tile * stride, (static_cast<unsigned long long>(tag) << 32) | bits);
  }
  TALLY_DEVICE tile_status load(std::int64_t tile, unsigned epoch, T& value) const {
    const unsigned long long w = load_relaxed(words + tile * stride);
    const auto bits = static_cast<unsigned>(w);
    memcpy(&value, &bits, sizeof(T));
    return status_of(static_cast<unsigned>(w >> 32), epoch);
  }
  TALLY_DEVICE void clear(std::int64_t tile) const { store_relaxed(words + tile * stride, 0ull); }
};

// 5 to 8 bytes: one 16-byte word per tile, the tag repeated in each 8-byte half; alone in
// a 128-byte line (`stride` 8-byte words apart) like format 4, for the same reason: a
// gain for the plain 8-byte scans and for most segmented scans of 4-byte values (their
// (head, value) pairs), against a small loss in a few segmented cases
// (docs/performance.md, "What each path earns"). It costs 128 bytes of state per tile.
template <class T, spacing S>
struct tile_descriptors<T, S, 8> {
  static_assert(std::is_trivially_copyable_v<T>, "tile values must be trivially copyable");
  unsigned long long* words = nullptr;  // tile t's two words at words[t * stride], 16-byte aligned

  static constexpr std::int64_t stride = S == spacing::one_per_line ? 16 : 2;
  static constexpr std::size_t bytes_per_tile = 8 * stride;
  static tile_descriptors at(unsigned char* p, std::int64_t) {
    return {reinterpret_cast<unsigned long long*>(p)};
  }

  TALLY_DEVICE void store(std::int64_t tile, unsigned tag, const T& value) const {
    unsigned bits[2] = {0, 0};
    memcpy(bits, &value, sizeof(T));
    const unsigned long long t = static_cast<unsigned long long>(tag) << 32;
    store_relaxed_16(words + tile * stride, t | bits[0], t | bits[1]);
  }
  TALLY_DEVICE tile_status load(std::int64_t tile, unsigned epoch, T& value) const {
    unsigned long long lo, hi;
    load_relaxed_16(words + tile * stride, lo, hi);
    const unsigned bits[2] = {static_cast<unsigned>(lo), static_cast<unsigned>(hi)};
    memcpy(&value, bits, sizeof(T));
    const auto tag = static_cast<unsigned>(lo >> 32);
    if (tag != static_cast<unsigned>(hi >> 32)) return status_invalid;  // torn: read again
    return status_of(tag, epoch);
  }
  TALLY_DEVICE void clear(std::int64_t tile) const { store_relaxed_16(words + tile * stride, 0ull, 0ull); }
};

// (head, value) pairs of 5-8-byte values (the segmented scans of int64, double ...):
// format 8's 16-byte word holds the value, and the head goes in the status. An inclusive
// value always holds element 0, which starts a segment, so only an aggregate needs it:
// status 3 is "an aggregate with a head" (make_tag's statuses take 0-2); a reader gets
// status_aggregate for it, and the head. (Where an inclusive value's head would be false,
// a segmented reduce whose first segment starts past element 0, it reads as true: a
// prefix's head changes no value under segmented_op, only the head of what follows it.)
// As a pair these would take 16 bytes and four tagged quarters; format 8's word carries
// them in one 16-byte access (docs/performance.md, "What each path earns"). Pairs of
// 4-byte values keep format 8: an 8-byte word in place of its 16 bytes gains nothing.
template <class P, spacing S>
struct tile_descriptors<P, S, 9> {
  using T = decltype(P::value);
  using word_format = tile_descriptors<T, S, 8>;  // the same words, the value alone
  word_format word;

  static constexpr std::size_t bytes_per_tile = word_format::bytes_per_tile;
  static tile_descriptors at(unsigned char* p, std::int64_t capacity) {
    return {word_format::at(p, capacity)};
  }

  TALLY_DEVICE void store(std::int64_t tile, unsigned tag, const P& pair) const {
    if ((tag & 3u) == status_aggregate && pair.head) tag |= 2u;
    word.store(tile, tag, pair.value);
  }
  // (format 8's load passes status 3 through: status_of keeps a current tag's low bits)
  TALLY_DEVICE tile_status load(std::int64_t tile, unsigned epoch, P& pair) const {
    const unsigned s = word.load(tile, epoch, pair.value);
    pair.head = s == status_inclusive || s == 3u;
    return s == 3u ? status_aggregate : static_cast<tile_status>(s);
  }
  TALLY_DEVICE void clear(std::int64_t tile) const { word.clear(tile); }
};

// 9 to 64 bytes: the value in 4-byte pieces, each beside the tag in an 8-byte quarter;
// `quarters` of them (an even number: 4 for up to 16 bytes, 6 for 24, ... 16 for 64), two
// to a 16-byte word, in a 128-byte line of their own (`stride` 8-byte words apart) like
// formats 4 and 8. A reader's 16-byte loads are independent, so a poll is one round trip,
// and so is a publication (stores with no ordering between them). Each quarter is
// single-copy atomic (8 bytes); a reader accepts the quarters only when all carry the same
// tag: a tile writes at most one aggregate and one inclusive value in an epoch, so one tag
// (epoch and status) names one write, and quarters of one tag are that write's whatever
// order they landed in. Format 32's packed arrays would cost a poll two round trips (the
// tag, then the value) and put the tags of all tiles in flight in a few lines
// (docs/performance.md, "What each path earns").
template <class T, spacing S>
struct tile_descriptors<T, S, 16> {
  static_assert(std::is_trivially_copyable_v<T>, "tile values must be trivially copyable");
  static constexpr int quarters = 2 * static_cast<int>((sizeof(T) + 7) / 8);
  static_assert(quarters <= 16, "at most 64 bytes: one 128-byte line");
  unsigned long long* words = nullptr;  // tile t's quarters at words[t * stride], 16-byte aligned

  static constexpr std::int64_t stride = S == spacing::one_per_line ? 16 : quarters;
  static constexpr std::size_t bytes_per_tile = 8 * stride;
  static tile_descriptors at(unsigned char* p, std::int64_t) {
    return {reinterpret_cast<unsigned long long*>(p)};
  }

  TALLY_DEVICE void store(std::int64_t tile, unsigned tag, const T& value) const {
    unsigned bits[quarters] = {};
    memcpy(bits, &value, sizeof(T));
    const unsigned long long t = static_cast<unsigned long long>(tag) << 32;
    unsigned long long* w = words + tile * stride;
#pragma unroll
    for (int i = 0; i < quarters; i += 2) store_relaxed_16(w + i, t | bits[i], t | bits[i + 1]);
  }
  TALLY_DEVICE tile_status load(std::int64_t tile, unsigned epoch, T& value) const {
    unsigned long long q[quarters];
    const unsigned long long* w = words + tile * stride;
#pragma unroll
    for (int i = 0; i < quarters; i += 2) load_relaxed_16(w + i, q[i], q[i + 1]);  // all in flight
    unsigned bits[quarters];
    const auto tag = static_cast<unsigned>(q[0] >> 32);
    bool one_tag = true;
#pragma unroll
    for (int i = 0; i < quarters; ++i) {
      bits[i] = static_cast<unsigned>(q[i]);
      one_tag = one_tag && static_cast<unsigned>(q[i] >> 32) == tag;
    }
    memcpy(&value, bits, sizeof(T));
    if (!one_tag) return status_invalid;  // torn: read again
    return status_of(tag, epoch);
  }
  TALLY_DEVICE void clear(std::int64_t tile) const {
    unsigned long long* w = words + tile * stride;
#pragma unroll
    for (int i = 0; i < quarters; i += 2) store_relaxed_16(w + i, 0ull, 0ull);
  }
};

// More than 64 bytes: tags, aggregates and inclusive values in three arrays.
template <class T, spacing S>
struct tile_descriptors<T, S, 32> {
  static_assert(std::is_trivially_copyable_v<T>, "tile values must be trivially copyable");
  unsigned* tags = nullptr;
  T* aggregates = nullptr;
  T* inclusives = nullptr;

  static constexpr std::size_t bytes_per_tile = 4 + 2 * sizeof(T);
  static constexpr std::size_t tags_bytes(std::int64_t capacity) {
    return round_up_storage(static_cast<std::size_t>(capacity) * 4);
  }
  static constexpr std::size_t values_bytes(std::int64_t capacity) {
    return round_up_storage(static_cast<std::size_t>(capacity) * sizeof(T));
  }
  static tile_descriptors at(unsigned char* p, std::int64_t capacity) {
    tile_descriptors d;
    d.tags = reinterpret_cast<unsigned*>(p);
    d.aggregates = reinterpret_cast<T*>(p + tags_bytes(capacity));
    d.inclusives = reinterpret_cast<T*>(p + tags_bytes(capacity) + values_bytes(capacity));
    return d;
  }

  TALLY_DEVICE void store(std::int64_t tile, unsigned tag, const T& value) const {
    T* slot = (tag & 3u) == status_inclusive ? inclusives + tile : aggregates + tile;
    memcpy(slot, &value, sizeof(T));
    // release: the value above is visible to any thread that acquires this tag
    store_release(tags + tile, tag);
  }
  TALLY_DEVICE tile_status load(std::int64_t tile, unsigned epoch, T& value) const {
    // acquire: the value read below is the one written before this tag was released
    const tile_status s = status_of(load_acquire(tags + tile), epoch);
    if (s == status_inclusive) {
      memcpy(&value, inclusives + tile, sizeof(T));
    } else {
      // an aggregate, or nothing yet (then the value is ignored, but must be defined
      // bits for the warp shuffles that follow)
      memcpy(&value, aggregates + tile, sizeof(T));
    }
    return s;
  }
  TALLY_DEVICE void clear(std::int64_t tile) const { arch::store_relaxed_32(tags + tile, 0u); }
};

// The bytes of a state for `capacity` tiles: the ticket header (padded to the storage
// alignment), then the descriptors.
template <class T, spacing S = spacing::one_per_line>
constexpr std::size_t state_bytes(std::int64_t capacity) {
  using d = tile_descriptors<T, S>;
  if constexpr (descriptor_format<T> == 32) {
    return storage_alignment + d::tags_bytes(capacity) + 2 * d::values_bytes(capacity);
  } else {
    return storage_alignment + round_up_storage(static_cast<std::size_t>(capacity) * d::bytes_per_tile);
  }
}

// The registry's buffers are told apart by this: one per layout of the tags (format 16:
// one per count of quarters, whose tags sit in that many words of each descriptor).
template <class T, spacing S>
constexpr int state_layout_of() {
  constexpr int format = descriptor_format<T>;
  constexpr int spread = format != 32 && S == spacing::one_per_line ? format * 16 : format;
  if constexpr (format == 16) {
    return spread + 1024 * tile_descriptors<T, S, 16>::quarters;
  } else {
    return spread;
  }
}
template <class T, spacing S = spacing::one_per_line>
inline constexpr int state_layout = state_layout_of<T, S>();

// The epoch of a state that holds anything (tile_state::unzeroed below): the kernel
// that clears its own descriptors writes this epoch's tags, and no others; a cleared
// descriptor's tag (0: epoch 0) reads as invalid in it.
inline constexpr unsigned unzeroed_state_epoch = 1u;

// A view of a state in device memory, as the kernels take it.
template <class T, spacing S = spacing::one_per_line>
struct tile_state {
  unsigned long long* header = nullptr;  // (epoch << 32) | tickets drawn
  tile_descriptors<T, S> descriptors{};
  std::int64_t capacity = 0;  // descriptors allocated (>= tiles of the call)
  // The memory holds anything, header included, and is not zeroed yet: caller storage, or
  // a graph's call-owned allocation, given to a launch that zeroes it itself
  // (single_pass/tile_pipeline.cuh, "States that hold anything"): the by-block kernel clears the
  // descriptors of its own tiles and passes a grid-wide barrier before any look-back,
  // without tickets, in unzeroed_state_epoch; the ticket kernels and the pipelined
  // kernel run behind a clear (launch_layout; single_pass/pipelined.cuh, scan;
  // dependent_launch.cuh).
  bool unzeroed = false;

  static tile_state at(unsigned char* base, std::int64_t capacity) {
    tile_state s;
    s.header = reinterpret_cast<unsigned long long*>(base);
    s.descriptors = tile_descriptors<T, S>::at(base + storage_alignment, capacity);
    s.capacity = capacity;
    return s;
  }
};

// ---- the per-stream state buffers (host) ------------------------------------------------
// One zero-initialised buffer per (device, stream, state layout), grown on demand,
// never shrunk. The
// registry lock is held from looking the buffer up until the kernel is enqueued (the
// caller keeps the returned lease alive until then): a concurrent call on the same
// stream from another host thread cannot replace (and free) the buffer in between.
// Streams are told apart by cudaStreamGetId, which is unique for the life of the
// process: a destroyed stream's handle value may come back for a new stream, whose work
// could overlap the old one's. After `max_buffers` buffers on one device (a program that
// creates streams without end), the registry waits for the device (cudaDeviceSynchronize)
// and frees every other stream's buffer.
class tile_state_registry {
 public:
  static constexpr std::size_t max_buffers = 64;

  class lease {
   public:
    unsigned char* data = nullptr;
    std::int64_t capacity = 0;
    explicit lease(std::unique_lock<std::mutex> lock) : lock_(std::move(lock)) {}

   private:
    std::unique_lock<std::mutex> lock_;
  };

  static tile_state_registry& instance() {
    static tile_state_registry registry;
    return registry;
  }

  // A state of at least `bytes_for(capacity)` bytes for `tiles` tiles on `stream`, for
  // descriptors of layout `layout` (state_layout<T, S>). Each layout has its own buffer:
  // the epoch argument needs every tag to sit where the tags of earlier calls sat (an
  // 8-byte word's value half read as a tag of the split format could match the epoch;
  // and a clearing call clears only the places of its own layout's tags). Types of one
  // layout share a buffer: tags are at the same places in all of them (formats 4 and 8:
  // the high half of each word, of every `stride`-th word (pair of words) where they are
  // spread; format 16: the high half of each of the first `quarters` words of every
  // `stride`, one layout per count of quarters;
  // format 32: the tag array first), and a buffer too small for a larger type is
  // replaced by a new, zeroed one.
  template <class BytesFor>
  lease acquire(const char* function, cudaStream_t stream, std::int64_t tiles, int layout,
                BytesFor bytes_for) {
    int device = 0;
    TALLY_CUDA_CHECK(cudaGetDevice(&device), function);
    unsigned long long id = 0;
    if (cudaStreamGetId(stream, &id) != cudaSuccess) {
      (void)cudaGetLastError();
      throw tally::error(static_cast<int>(cudaErrorInvalidResourceHandle),
                         std::string("tally::") + function + ": options.stream is not a valid stream");
    }
    lease l{std::unique_lock<std::mutex>(mutex_)};
    entry* e = find(device, id, layout);
    if (e == nullptr) {
      if (count_on(device) >= max_buffers) evict_all_but_current(function, device, stream);
      entries_.push_back(entry{device, id, layout, nullptr, 0, 0});
      e = &entries_.back();
    }
    std::int64_t capacity = e->capacity > 1024 ? e->capacity : 1024;
    while (capacity < tiles) capacity *= 2;
    if (capacity != e->capacity || e->bytes < bytes_for(capacity)) {
      // Grow to a power of two (at least 1024 tiles), zeroed, stream-ordered: the kernels
      // still queued on this stream finish with the old buffer before it is freed.
      const std::size_t bytes = bytes_for(capacity);
      void* fresh = nullptr;
      TALLY_CUDA_CHECK(cudaMallocFromPoolAsync(&fresh, bytes, scratch_pool(function), stream),
                       function);
      TALLY_CUDA_CHECK(cudaMemsetAsync(fresh, 0, bytes, stream), function);
      if (e->data != nullptr) TALLY_CUDA_CHECK(cudaFreeAsync(e->data, stream), function);
      e->data = static_cast<unsigned char*>(fresh);
      e->capacity = capacity;
      e->bytes = bytes;
    }
    l.data = e->data;
    l.capacity = e->capacity;
    return l;
  }

 private:
  struct entry {
    int device;
    unsigned long long stream_id;
    int layout;
    unsigned char* data;
    std::int64_t capacity;
    std::size_t bytes;
  };

  entry* find(int device, unsigned long long id, int layout) {
    for (entry& e : entries_) {
      if (e.device == device && e.stream_id == id && e.layout == layout) return &e;
    }
    return nullptr;
  }
  std::size_t count_on(int device) const {
    std::size_t c = 0;
    for (const entry& e : entries_) c += e.device == device ? 1 : 0;
    return c;
  }
  void evict_all_but_current(const char* function, int device, cudaStream_t stream) {
    // Every stream's work on this device is finished after this; freeing on `stream` is
    // then safe for buffers of any stream.
    TALLY_CUDA_CHECK(cudaDeviceSynchronize(), function);
    std::vector<entry> kept;
    for (entry& e : entries_) {
      if (e.device == device) {
        TALLY_CUDA_CHECK(cudaFreeAsync(e.data, stream), function);
      } else {
        kept.push_back(e);
      }
    }
    entries_ = std::move(kept);
  }

  std::mutex mutex_;
  std::vector<entry> entries_;  // a handful: linear search is fine
};

}  // namespace tally::detail::single_pass
