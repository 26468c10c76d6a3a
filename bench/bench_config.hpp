// bench/bench_config.hpp -- what the command line asked for, shared by the CPU and GPU
// parts (standard library only: the CUDA translation unit includes it too).
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report.hpp"
#include "verify.hpp"

namespace tally_bench {

struct bench_config {
  bool quick = false;

  // Sizes: an explicit list, or powers of two from 2^min_log2 to 2^max_log2 in steps of
  // log2_step. Without --max-log2 each part picks its own default maximum.
  std::vector<std::int64_t> sizes;
  int min_log2 = 10;
  std::optional<int> max_log2;
  int log2_step = 1;

  int reps = 21;                    // timed samples per row; the median is reported
  std::vector<int> threads;         // CPU thread counts for the scaling sweep
  std::vector<std::string> types;   // int32, float, int64, double
  std::vector<std::string> ops;     // empty: plus for every type, max for int32 as well
  std::vector<operation> operations;  // empty: each part's default
  std::vector<std::string> filters;   // keep implementations whose name contains one
  std::uint64_t seed = 1;

  // The operators to run for `type`.
  std::vector<scan_op> ops_for(const std::string& type) const {
    std::vector<scan_op> result;
    if (ops.empty()) {
      result.push_back(scan_op::plus);
      if (type == "int32") result.push_back(scan_op::max);
      return result;
    }
    for (const std::string& name : ops) result.push_back(name == "max" ? scan_op::max : scan_op::plus);
    return result;
  }

  bool wants(operation what, const std::vector<operation>& part_default) const {
    const auto& list = operations.empty() ? part_default : operations;
    return std::find(list.begin(), list.end(), what) != list.end();
  }

  // Whether the implementation named `impl` passes the --filter list (copies, the
  // reference for the percent column, always run).
  bool selected(const std::string& impl) const {
    if (filters.empty()) return true;
    for (const std::string& f : filters) {
      if (impl.find(f) != std::string::npos) return true;
    }
    return false;
  }

  // The sizes for elements of `element_bytes`: the explicit list, or the power-of-two
  // sweep up to max_log2 (or `default_max_log2`, one less for 8-byte types when
  // `halve_for_wide` so that both types use the same bytes at the top).
  std::vector<std::int64_t> sizes_for(std::size_t element_bytes, int default_max_log2,
                                      const std::vector<int>& quick_log2,
                                      bool halve_for_wide) const {
    if (!sizes.empty()) return sizes;
    int top = max_log2.value_or(default_max_log2);
    if (!max_log2 && halve_for_wide && element_bytes == 8) top -= 1;
    std::vector<std::int64_t> result;
    if (quick && !max_log2) {
      // The part's few quick sizes, each clamped to the top.
      for (int k : quick_log2) {
        const std::int64_t n = std::int64_t{1} << std::min(k, top);
        if (k >= min_log2 && (result.empty() || result.back() != n)) result.push_back(n);
      }
      return result;
    }
    for (int k = min_log2; k <= top; k += std::max(1, log2_step)) {
      result.push_back(std::int64_t{1} << k);
    }
    return result;
  }
};

}  // namespace tally_bench
