// tally/algorithms/line_of_sight.cuh -- the line-of-sight problem on the GPU: which points
// of a terrain profile an observer at point 0 sees (the idea, ties and types:
// line_of_sight.hpp, which also has the CPU form).
//
//   tally::line_of_sight(altitude, n, scale, visible, options = {})
//       visible[i] = point i is seen from point 0 (bool, or any type a bool converts to);
//       altitude: n samples `scale` apart (scale > 0).
//
// One launch: an exclusive max-scan (tally::exclusive_scan) whose input computes the slope
// to each point from the altitudes and whose output compares it with the highest slope
// before it (it reads altitude[i] again, from the cache, instead of carrying the slope
// through the scan's accumulator). Asynchronous on options.stream. Errors: n < 0, null or
// host pointers, scale <= 0 -> std::invalid_argument naming tally::line_of_sight.
#pragma once

#include <cstdint>

#include "tally/algorithms/line_of_sight.hpp"
#include "tally/core/options.hpp"
#include "tally/device/arguments.cuh"
#include "tally/device/scan.cuh"

namespace tally {

template <class Alt, class Scale, class Vis>
void line_of_sight(Alt altitude, std::int64_t n, Scale scale, Vis visible, const options& o = {}) {
  using namespace algorithms_support;
  constexpr const char* function = "line_of_sight";
  using R = slope_t<Alt>;
  require_count(function, "n", n);
  require_device_pointer(function, "altitude", altitude, n);
  require_device_pointer(function, "visible", visible, n);
  check_scale(function, static_cast<R>(scale));
  if (n == 0) return;
  const slope_from_observer<Alt> slope{altitude, static_cast<R>(scale)};
  tally::exclusive_scan(make_transform_iterator(counting_iterator<std::int64_t>(0), slope),
                        make_store_iterator(visible_above<Alt, Vis>{slope, visible}), n,
                        identity<maximum, R>(), maximum{}, o);
}

}  // namespace tally
