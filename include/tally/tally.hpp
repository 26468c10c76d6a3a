// tally/tally.hpp -- everything in tally that compiles without CUDA: the operators and
// their identities, options, errors, the accumulator-type rule, and the CPU backend.
// (GPU code: include tally/tally.cuh, which includes this header.)
#pragma once

#include "tally/core/accumulator.hpp"
#include "tally/core/error.hpp"
#include "tally/core/macros.hpp"
#include "tally/core/operators.hpp"
#include "tally/core/options.hpp"
#include "tally/core/segmented.hpp"
#include "tally/core/select.hpp"
#include "tally/cpu/reduce.hpp"
#include "tally/cpu/scan.hpp"
#include "tally/cpu/segmented.hpp"
#include "tally/cpu/select.hpp"
#include "tally/cpu/sequential.hpp"
#include "tally/cpu/sequential_segmented.hpp"
#include "tally/cpu/sequential_select.hpp"
