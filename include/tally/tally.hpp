// tally/tally.hpp -- everything in tally that compiles without CUDA: the operators and
// their identities, options, errors, the accumulator-type rule, the iterators, the CPU
// backend and the CPU forms of the applications (tally/algorithms/*.hpp).
// (GPU code: include tally/tally.cuh, which includes this header.)
#pragma once

#include "tally/algorithms/allocate.hpp"
#include "tally/algorithms/lexicographic_compare.hpp"
#include "tally/algorithms/line_of_sight.hpp"
#include "tally/algorithms/linear_recurrence.hpp"
#include "tally/algorithms/polynomial.hpp"
#include "tally/algorithms/spmv.hpp"
#include "tally/core/accumulator.hpp"
#include "tally/core/affine.hpp"
#include "tally/core/counting_iterator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/core/select.hpp"
#include "tally/core/shape.hpp"
#include "tally/core/store_iterator.hpp"
#include "tally/core/transform_iterator.hpp"
#include "tally/cpu/reduce.hpp"
#include "tally/cpu/scan.hpp"
#include "tally/cpu/segmented.hpp"
#include "tally/cpu/select.hpp"
#include "tally/cpu/sequential.hpp"
#include "tally/cpu/sequential_segmented.hpp"
#include "tally/cpu/sequential_select.hpp"
