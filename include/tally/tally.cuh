// tally/tally.cuh -- the umbrella header of everything GPU (includes tally.hpp), the
// applications of tally/algorithms/ included.
#pragma once

#include "tally/tally.hpp"

#include "tally/warp/warp_scan.cuh"

#include "tally/block/blelloch.cuh"
#include "tally/block/block_reduce.cuh"
#include "tally/block/brent_kung.cuh"
#include "tally/block/brent_kung_conflict_free.cuh"
#include "tally/block/coarsened.cuh"
#include "tally/block/kogge_stone.cuh"
#include "tally/block/kogge_stone_double_buffered.cuh"
#include "tally/block/segmented_blelloch.cuh"
#include "tally/block/tile_io.cuh"
#include "tally/block/warp_scans.cuh"

#include "tally/device/arguments.cuh"
#include "tally/device/reduce.cuh"
#include "tally/device/scan.cuh"
#include "tally/device/segmented.cuh"
#include "tally/device/select.cuh"
#include "tally/device/textbook.cuh"

#include "tally/algorithms/allocate.cuh"
#include "tally/algorithms/lexicographic_compare.cuh"
#include "tally/algorithms/line_of_sight.cuh"
#include "tally/algorithms/linear_recurrence.cuh"
#include "tally/algorithms/polynomial.cuh"
#include "tally/algorithms/spmv.cuh"
