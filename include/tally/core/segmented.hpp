// tally/core/segmented.hpp -- the flag-augmented operator of segmented scans, and the
// conventions every segmented and batched scan in tally follows (CPU and GPU alike).
//
// The algorithm: Sengupta, Harris, Zhang & Owens, "Scan primitives for GPU computing"
// (2007), and Schwartz's earlier observation that a segmented scan is an ordinary scan
// under an operator on (head flag, value) pairs:
//
//     (fa, a) (+) (fb, b)  =  fb ? (fb, b) : (fa, a op b)
//
// The result's flag is fa | fb. If `op` is associative, so is (+) (for any op, commutative
// or not; (+) itself is never commutative), so any scan algorithm -- a tiled single-pass
// scan included -- computes a segmented scan when run on flagged values with (+): one
// pass over the data, whatever the segment lengths, never one task or block per segment.
// A tile's aggregate is (whether the tile holds a head, the reduction from its last head
// to its end -- or of the whole tile if it holds none), and a tile's prefix is combined
// with its aggregate by (+) exactly like the prefix of an ordinary scan.
// If `op` has an identity e, (false, e) is an identity of (+) (identity_of below), which
// the up-sweep/down-sweep (Blelloch) form of the segmented scan needs.
//
// Conventions (all tally segmented and batched scans):
//   segments  Elements are split into consecutive segments. The first element always
//             starts a segment (its head flag, where there is one, is not read).
//   inclusive out[i] = x[s] op x[s+1] op ... op x[i], s the first element of i's segment.
//             No init. Accumulates in inclusive_accumulator_t<Op, T> (decay(op(x, x))).
//   exclusive out[i] = init op x[s] op ... op x[i-1]: every segment starts again at init,
//             so out[s] = init. Accumulates in exclusive_accumulator_t<Op, Init, T>
//             (decay(op(init, x))). Operands are always combined earlier first.
//   flags     x[i] starts a segment when flags[i] converts to true (i > 0).
//   offsets   CSR: num_segments + 1 non-decreasing offsets; segment k is the elements
//             [offsets[k], offsets[k+1]). Segments may be empty (equal offsets): a scan
//             writes nothing for them, a segmented reduce writes `init` for them.
//             Elements outside [offsets[0], offsets[num_segments]) are neither read nor
//             written.
//   keys      x[i] starts a segment when !equal(keys[i-1], keys[i]) (the earlier key is
//             the first argument); `equal` defaults to ==. Equal keys that are not
//             adjacent belong to different segments.
//   batched   A contiguous row-major N-d array of extents shape[0..rank) is scanned along
//             one axis: every 1-d line along that axis is scanned independently (scanning
//             along the last axis is a segmented scan with segments of equal length).
#pragma once

#include <type_traits>

#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"

namespace tally {

// A value and whether it starts a segment (its "head" flag).
template <class T>
struct flagged {
  bool head;
  T value;
};

// The flag-augmented operator (+) above. `op` is applied as op(earlier, later).
template <class Op>
struct segmented_op {
  Op op;

  template <class T>
  TALLY_HOST_DEVICE constexpr flagged<T> operator()(const flagged<T>& a,
                                                    const flagged<T>& b) const {
    // b starts a segment: nothing before it reaches it. Otherwise b continues a's segment
    // and the pair starts a segment exactly when a does.
    return b.head ? b : flagged<T>{a.head, static_cast<T>(op(a.value, b.value))};
  }
};

// A pair with a head absorbs whatever comes before it: (h, a) (+) (true, b) = (true, b),
// bit for bit (operators.hpp's absorbs_prefix). So a tile whose aggregate holds a head
// ends a look-back there: its own look-back, which only its items before the head need,
// is not waited for.
template <class Op, class T>
TALLY_HOST_DEVICE constexpr bool absorbs_prefix(const segmented_op<Op>&, const flagged<T>& x) {
  return x.head;
}

template <class Op>
TALLY_HOST_DEVICE constexpr segmented_op<Op> make_segmented_op(Op op) {
  return segmented_op<Op>{op};
}

// (false, identity of op) is the identity of segmented_op<Op>, where op has one.
template <class Op, class T>
struct identity_of<segmented_op<Op>, flagged<T>, std::enable_if_t<has_identity_v<Op, T>>> {
  TALLY_HOST_DEVICE static constexpr flagged<T> value() {
    return flagged<T>{false, identity<Op, T>()};
  }
};

}  // namespace tally
