// tally/device/detail/thresholds.cuh -- the sizes and waits at which the device-wide calls
// change plan, in one table per GPU architecture.
//
// Each engine reads its entries from `thresholds` (the table of the architecture the build
// tunes for) rather than holding constants of its own, so that the plan of every call can
// be read, printed (tally-bench --print-thresholds) and retuned in one place. Why each value
// is what it is -- the measurement that put it there -- is in docs/performance.md ("Plans
// and thresholds"). Kernel shapes (threads, rows, stages) stay with their kernels.
#pragma once

#include <cstdint>

namespace tally::detail {

struct plan_thresholds {
  // -- the plain scans (single_pass/) --
  std::int64_t small_path_max_tiles;        // small tiles by block up to this many tiles
  std::int64_t pipelined_min_bytes;         // pipelined kernel from here, 4- and 8-byte values
  std::int64_t pipelined_wide_min_bytes;    // ... and from here, values of 12 to 64 bytes
  std::int64_t lookback_eager_tiles;        // tiles that poll their predecessors at once
  int lookback_initial_delay_ns;            // later tiles: the pause before the first poll
  int lookback_poll_delay_ns;               // ... and between polls
  long long lookback_deadline_cycles;       // pipelined: the longest wait before a tile
                                            // folds what it has seen (0: none)
  // -- the batched scans along a non-last axis (batched/) --
  std::int64_t pipelined_columns_min_bytes;      // pipelined column tiles from here
  std::int64_t pipelined_columns_max_chains;     // ... for at most this many chains of tiles
  std::int64_t columns_reduce_then_scan_min_bytes;  // deterministic columns by reduce-then-scan
  std::int64_t short_line_words_min;        // rows of 16-byte words from this many words ...
  std::int64_t short_line_word_rows_max;    // ... in lines of at most this many rows
  // -- the segmented reduce (segmented/) --
  std::int64_t ranges_min_n;                // the ranges kernel from this many values ...
  std::int64_t ranges_min_mean_bytes;       // ... with segments of this many bytes on average
  // -- the reduce (single_pass/reduce.cuh) --
  std::int64_t reduce_one_block_max_bytes;             // one block up to here
  std::int64_t reduce_descriptor_one_block_max_bytes;  // ... or here, for descriptor finishes
};

// sm_90: every value measured on sm_90 GPUs (docs/performance.md, "Plans and thresholds").
inline constexpr plan_thresholds sm90_thresholds{
    /*small_path_max_tiles=*/64,
    /*pipelined_min_bytes=*/std::int64_t{32} << 20,
    /*pipelined_wide_min_bytes=*/std::int64_t{4} << 20,
    /*lookback_eager_tiles=*/1024,
    /*lookback_initial_delay_ns=*/1200,
    /*lookback_poll_delay_ns=*/600,
    /*lookback_deadline_cycles=*/5000,
    /*pipelined_columns_min_bytes=*/std::int64_t{16} << 20,
    /*pipelined_columns_max_chains=*/8192,
    /*columns_reduce_then_scan_min_bytes=*/std::int64_t{16} << 20,
    /*short_line_words_min=*/std::int64_t{1} << 16,
    /*short_line_word_rows_max=*/8,
    /*ranges_min_n=*/std::int64_t{1} << 24,
    /*ranges_min_mean_bytes=*/8192,
    /*reduce_one_block_max_bytes=*/32 * 1024,
    /*reduce_descriptor_one_block_max_bytes=*/64 * 1024,
};

// The table the build uses. tally compiles for sm_90 (CMAKE_CUDA_ARCHITECTURES 90); other
// architectures have no table of their own and run with the sm_90 values.
inline constexpr const plan_thresholds& thresholds = sm90_thresholds;

// Every entry by name, for printing (the benchmark prints the table it ran with).
template <class F>
void for_each_threshold(F&& f) {
  const plan_thresholds& t = thresholds;
  f("small_path_max_tiles", static_cast<long long>(t.small_path_max_tiles));
  f("pipelined_min_bytes", static_cast<long long>(t.pipelined_min_bytes));
  f("pipelined_wide_min_bytes", static_cast<long long>(t.pipelined_wide_min_bytes));
  f("lookback_eager_tiles", static_cast<long long>(t.lookback_eager_tiles));
  f("lookback_initial_delay_ns", static_cast<long long>(t.lookback_initial_delay_ns));
  f("lookback_poll_delay_ns", static_cast<long long>(t.lookback_poll_delay_ns));
  f("lookback_deadline_cycles", static_cast<long long>(t.lookback_deadline_cycles));
  f("pipelined_columns_min_bytes", static_cast<long long>(t.pipelined_columns_min_bytes));
  f("pipelined_columns_max_chains", static_cast<long long>(t.pipelined_columns_max_chains));
  f("columns_reduce_then_scan_min_bytes",
    static_cast<long long>(t.columns_reduce_then_scan_min_bytes));
  f("short_line_words_min", static_cast<long long>(t.short_line_words_min));
  f("short_line_word_rows_max", static_cast<long long>(t.short_line_word_rows_max));
  f("ranges_min_n", static_cast<long long>(t.ranges_min_n));
  f("ranges_min_mean_bytes", static_cast<long long>(t.ranges_min_mean_bytes));
  f("reduce_one_block_max_bytes", static_cast<long long>(t.reduce_one_block_max_bytes));
  f("reduce_descriptor_one_block_max_bytes",
    static_cast<long long>(t.reduce_descriptor_one_block_max_bytes));
}

}  // namespace tally::detail
