// bench/report.hpp -- one measured row, and the report that collects, relates and prints
// the rows of a run (stdout table, CSV, JSON).
//
// This header is shared by the C++ and the CUDA translation units, so it uses nothing but
// the standard library (nvcc never has to parse fmt or nlohmann::json).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace tally_bench {

// What a row measured. The segmented table (gpu_bench_segmented.cu) adds inclusive
// segmented scans (offsets, flags, keys: the same result from three descriptions of the
// segments), segmented reductions (one result per segment) and batched scans (every line
// of a 2-d array along one axis).
enum class operation {
  copy,
  inclusive_scan,
  exclusive_scan,
  reduce,
  segmented_scan,
  segmented_reduce,
  batched_scan,
  copy_if,            // stream compaction (select_if, select_flagged: the row's variant)
  partition,          // stable two-way partition
  unique,             // the first item of every run
  run_length_encode,  // the first item and the length of every run
  reduce_by_key,      // the first key and the reduction of every run of keys
  // the applications of tally/algorithms/ (gpu_bench_algorithms.cu)
  linear_recurrence,      // x[i] = a[i] x[i-1] + b[i], 1-d and batched
  line_of_sight,          // which points an observer at point 0 sees
  lexicographic_compare,  // two strings in dictionary order
  spmv_csr,               // y = A x, A in CSR form
  allocate,               // offsets = exclusive sum of sizes, and the total
  polynomial_evaluate,    // p(x) at many points
};

const char* operation_name(operation op);

// How the output of a row compared with the reference.
enum class check_status {
  not_checked,
  passed,  // the output matched the reference at every checked position
  failed,  // it did not: the row's time measures something wrong
};

struct result_row {
  // ---- what was measured (filled by the CPU or GPU part) ----
  std::string device;    // "cpu" or the GPU's name
  operation what = operation::inclusive_scan;
  std::string type;      // int32, float, int64, double
  std::string op;        // plus, max ("-" for copies)
  std::int64_t n = 0;    // elements
  std::string variant;   // segmented and batched rows: the segments ("len 32") or the
                         // shape and axis ("2^20x32 axis 0"); empty elsewhere. Rows are
                         // related (peer) only to rows of the same variant.
  std::string peer_impl; // when set, the peer is the row of the same case whose impl
                         // contains this (a case whose peer is not the device's: cuSPARSE,
                         // a kernel of the bench); empty: the device's peer name
  double bytes = 0;      // bytes read + written
  std::string impl;      // implementation, e.g. "tbb::parallel_scan"
  int threads = 0;       // CPU threads allowed (0 on the GPU)
  int reps = 0;          // timed samples
  double median_s = 0;   // seconds per call
  double min_s = 0;
  double max_s = 0;
  check_status check = check_status::not_checked;
  std::string note;

  // ---- filled by report::add from the rows already in the run ----
  double gbps = 0;                        // bytes / median / 1e9
  std::optional<double> pct_of_copy;      // gbps / gbps of the fastest copy of the same size
  std::string copy_ref;                   // which copy that was
  std::string peer;                       // the peer that speedup_vs_peer compares with
  std::optional<double> speedup_vs_peer;  // peer time / this time (> 1: faster than the peer)
  std::optional<double> vs_tbb;           // CPU: tbb::parallel_scan time / this time
  std::optional<double> vs_par;           // CPU: std::execution::par time / this time
};

// The CPU and the GPU name their peers differently. A peer row is one of the same device,
// operation, type, operator, n and variant whose `impl` contains the given text (so "cub::" finds
// cub::DeviceScan::InclusiveSum, cub::DeviceScan::ExclusiveScan and cub::DeviceReduce::Sum
// alike, each for its own operation).
struct peer_names {
  std::string peer;  // e.g. "(seq)" on the CPU, "cub::" on the GPU
  std::string tbb;   // empty: no vs_tbb column; else matched at the same thread count
  std::string par;   // empty: no vs_par column; else matched at the same thread count
  int impl_width = 34;  // width of the implementation column in the table
};

class report {
 public:
  // Declares how the peers of rows of `device` are named (call before adding its rows).
  void set_peers(const std::string& device, peer_names names);

  // Fills the relative columns of `row` from the rows already added, prints it as a table
  // line (with a header the first time and whenever the group changes) and keeps it.
  void add(result_row row);

  // A line printed at once and kept for the JSON output (device description, a skipped
  // implementation, a failed check ...).
  void note(const std::string& text);

  // Recomputes the relative columns of every row from the whole run (a copy measured
  // after a row may have been faster than the one it was first compared with). The CSV
  // and JSON writers call it.
  void finalize();

  const std::vector<result_row>& rows() const { return rows_; }
  int failures() const;

  void write_csv(const std::string& path);
  void write_json(const std::string& path, const std::string& command_line);

 private:
  // Fills the relative columns of `row` from the rows in rows_ (and `row` itself).
  void fill_relative(result_row& row) const;
  // The row of the same device, operation, type, operator, n and variant as `like` whose impl
  // contains `impl_part` (and, when threads >= 0, ran with that many threads).
  const result_row* find(const result_row& like, const std::string& impl_part,
                         int threads) const;

  std::vector<result_row> rows_;
  std::vector<std::string> notes_;
  std::map<std::string, peer_names> peers_;
  std::string last_group_;
};

}  // namespace tally_bench
