// bench/cpu_bench.hpp -- the CPU part of tally-bench.
#pragma once

#include "bench_config.hpp"
#include "report.hpp"

namespace tally_bench {

// The thread counts of the default scaling sweep: 1, 2, 4, ... up to the hardware
// concurrency, and the hardware concurrency itself.
std::vector<int> default_thread_counts();

// Measures copies, std::inclusive_scan (sequential and std::execution::par),
// tbb::parallel_scan and tally::cpu for every selected type, operator and size, adding
// the rows to `out`.
void run_cpu_bench(const bench_config& config, report& out);

}  // namespace tally_bench
