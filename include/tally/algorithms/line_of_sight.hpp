// tally/algorithms/line_of_sight.hpp -- which points of a terrain profile an observer sees
// (Blelloch 1990, "Prefix sums and their applications", 1.3): an observer stands at
// point 0 of a line of altitudes sampled every `scale` units; point i is visible when no
// point between them rises above the line of sight, that is when its angle of elevation
// is larger than every angle before it:
//     slope[i]   = (altitude[i] - altitude[0]) / (scale * i)       (i > 0)
//     visible[i] = slope[i] > max(slope[1..i-1]),   visible[0] = true (the observer's place)
// The slope is the tangent of the material's angle (arctan is increasing, so comparing
// slopes decides the same), which saves an arctan per point. One exclusive max-scan of the
// slopes, with the slope computed inside the scan's input (a transform of the index) and
// the comparison inside its output (a store_iterator): one pass over the altitudes.
// Ties are not visible (the earlier point hides a point exactly on its line of sight).
// The slopes are computed in the altitude's floating-point type, or in double for
// integer altitudes. NaN altitudes give unspecified visibility.
//
//   tally::cpu::line_of_sight(altitude_first, altitude_last, scale, visible_first)
//       -> visible_first + n; the GPU form: line_of_sight.cuh.
// Errors: scale <= 0 (or NaN), a range with last before first, null pointers with
// elements: std::invalid_argument naming the argument.
#pragma once

#include <cstdint>
#include <iterator>
#include <type_traits>

#include "tally/core/counting_iterator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/store_iterator.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/scan.hpp"

namespace tally::algorithms_support {

template <class Alt>
using slope_t = std::conditional_t<std::is_floating_point_v<std::iter_value_t<Alt>>,
                                   std::iter_value_t<Alt>, double>;

// i -> the slope from the observer to point i (-inf at the observer itself, so that the
// exclusive max-scan's first value is the identity).
template <class Alt>
struct slope_from_observer {
  using R = slope_t<Alt>;
  Alt altitude{};
  R scale{};
  TALLY_HOST_DEVICE R operator()(std::int64_t i) const {
    if (i == 0) return identity<maximum, R>();
    return (static_cast<R>(altitude[i]) - static_cast<R>(altitude[0])) /
           (scale * static_cast<R>(i));
  }
};

// The scan's output: the largest slope before i against point i's own slope.
template <class Alt, class Vis>
struct visible_above {
  using R = slope_t<Alt>;
  slope_from_observer<Alt> slope{};
  Vis visible{};
  TALLY_HOST_DEVICE void operator()(std::int64_t i, const R& highest_before) const {
    visible[i] = i == 0 || slope(i) > highest_before;
  }
};

template <class R>
void check_scale(const char* function, R scale) {
  if (!(scale > R(0))) throw_argument_error(function, "scale", "must be > 0");
}

}  // namespace tally::algorithms_support

namespace tally::cpu {

template <std::random_access_iterator AltIt, std::random_access_iterator VisIt, class Scale>
VisIt line_of_sight(AltIt altitude_first, AltIt altitude_last, Scale scale, VisIt visible_first) {
  using namespace tally::algorithms_support;
  constexpr const char* function = "cpu::line_of_sight";
  using R = slope_t<AltIt>;
  const std::int64_t n = static_cast<std::int64_t>(altitude_last - altitude_first);
  if (n < 0) throw_argument_error(function, "altitude_last", "is before altitude_first");
  require_pointer(function, "altitude_first", altitude_first, n);
  require_pointer(function, "visible_first", visible_first, n);
  check_scale(function, static_cast<R>(scale));
  const slope_from_observer<AltIt> slope{altitude_first, static_cast<R>(scale)};
  const auto slopes = make_transform_iterator(counting_iterator<std::int64_t>(0), slope);
  tally::cpu::exclusive_scan(slopes, slopes + n,
                             make_store_iterator(visible_above<AltIt, VisIt>{slope, visible_first}),
                             identity<maximum, R>(), maximum{});
  return visible_first + n;
}

}  // namespace tally::cpu
