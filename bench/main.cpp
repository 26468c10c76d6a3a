// bench/main.cpp -- tally-bench: every tally algorithm against its peers, in one run.
//
//   tally-bench                  GPU part where a CUDA device is present, else the CPU part
//   tally-bench --cpu --quick    a one-minute smoke run of the CPU part
//   tally-bench --all --csv results/bench.csv --json results/bench.json
//   tally-bench --gpu --operations segmented    the segmented and batched scans only
//
// The method (DESIGN.md, "Benchmark method"): warm-up, then the median of >= 20 timed
// runs; a copy of the same bytes in the same run as the practical limit; the peers (CUB
// and Thrust on the GPU; std::inclusive_scan, its parallel form and oneTBB on the CPU);
// every output checked. See bench/README.md.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <exception>
#include <filesystem>
#include <map>
#include <optional>

#include "bench_config.hpp"
#include "cpu_bench.hpp"
#include "gpu_bench.hpp"
#include "report.hpp"

namespace {

using namespace tally_bench;

// "1048576", "2^20" or "1M"/"1K" (binary multiples) as a number of elements.
std::int64_t parse_size(const std::string& text) {
  if (text.rfind("2^", 0) == 0) return std::int64_t{1} << std::stoi(text.substr(2));
  std::size_t used = 0;
  std::int64_t value = std::stoll(text, &used);
  const std::string suffix = text.substr(used);
  if (suffix == "K" || suffix == "k") value <<= 10;
  else if (suffix == "M" || suffix == "m") value <<= 20;
  else if (suffix == "G" || suffix == "g") value <<= 30;
  else if (!suffix.empty()) throw std::invalid_argument("bad size '" + text + "'");
  if (value <= 0) throw std::invalid_argument("sizes must be positive: '" + text + "'");
  return value;
}

void ensure_parent_directory(const std::string& path) {
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"tally-bench: tally's scans against a copy of the same bytes and their peers "
               "(CUB and Thrust on the GPU; std::inclusive_scan, std::execution::par and "
               "oneTBB on the CPU)"};
  bench_config config;
  bool want_cpu = false;
  bool want_gpu = false;
  bool want_all = false;
  std::vector<std::string> size_texts;
  std::optional<int> max_log2;
  std::optional<int> reps;
  std::vector<std::string> operation_names;
  std::string csv_path;
  std::string json_path;

  app.add_flag("--cpu", want_cpu, "Run the CPU part");
  app.add_flag("--gpu", want_gpu, "Run the GPU part (needs a CUDA device)");
  app.add_flag("--all", want_all, "Run both parts");
  app.add_flag("--quick", config.quick,
               "A smoke run: a few sizes and fewer samples (about a minute)");
  app.add_option("--sizes", size_texts,
                 "Explicit sizes in elements, e.g. 1000,2^20,16M (overrides the log2 range)")
      ->delimiter(',');
  app.add_option("--min-log2", config.min_log2, "Smallest size 2^k of the sweep")
      ->check(CLI::Range(0, 34));
  app.add_option("--max-log2", max_log2,
                 "Largest size 2^k (default: CPU 26 below 8 hardware threads, else 28; "
                 "GPU 28, 27 for 8-byte types)")
      ->check(CLI::Range(0, 34));
  app.add_option("--log2-step", config.log2_step, "Step of the log2 sweep")
      ->check(CLI::Range(1, 8));
  app.add_option("--reps", reps, "Timed samples per row, the median is reported (default 21, "
                                 "--quick 7)")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", config.threads,
                 "CPU thread counts of the scaling sweep (default 1,2,4,... and the "
                 "hardware concurrency)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber);
  app.add_option("--types", config.types, "Element types: int32,float,int64,double (default all)")
      ->delimiter(',')
      ->check(CLI::IsMember({"int32", "float", "int64", "double"}));
  app.add_option("--ops", config.ops,
                 "Operators for every type: plus,max (default plus for all, max for int32)")
      ->delimiter(',')
      ->check(CLI::IsMember({"plus", "max"}));
  app.add_option("--operations", operation_names,
                 "inclusive,exclusive,reduce,segmented,select,applications (default: CPU "
                 "inclusive; GPU the first four; segmented: the GPU table of segmented and "
                 "batched scans; select: the CPU's copy_if; applications: the GPU table of "
                 "tally/algorithms/, or one of them: linear_recurrence, line_of_sight, "
                 "lexicographic_compare, spmv_csr, allocate, polynomial_evaluate)")
      ->delimiter(',')
      ->check(CLI::IsMember({"inclusive", "exclusive", "reduce", "segmented", "select",
                             "applications", "linear_recurrence", "line_of_sight",
                             "lexicographic_compare", "spmv_csr", "allocate",
                             "polynomial_evaluate"}));
  app.add_option("--filter", config.filters,
                 "Only implementations whose name contains one of these (copies always run)")
      ->delimiter(',');
  app.add_option("--seed", config.seed, "Seed of the input data");
  app.add_option("--csv", csv_path, "Write every row to this CSV file");
  app.add_option("--json", json_path, "Write every row and note to this JSON file");
  CLI11_PARSE(app, argc, argv);

  try {
    for (const std::string& text : size_texts) config.sizes.push_back(parse_size(text));
    config.max_log2 = max_log2;
    config.reps = reps.value_or(config.quick ? 7 : 21);
    if (config.threads.empty()) config.threads = default_thread_counts();
    if (config.types.empty()) config.types = {"int32", "float", "int64", "double"};
    const std::map<std::string, operation> operation_by_name = {
        {"inclusive", operation::inclusive_scan},
        {"exclusive", operation::exclusive_scan},
        {"reduce", operation::reduce},
        {"segmented", operation::segmented_scan},
        {"select", operation::copy_if},
        {"linear_recurrence", operation::linear_recurrence},
        {"line_of_sight", operation::line_of_sight},
        {"lexicographic_compare", operation::lexicographic_compare},
        {"spmv_csr", operation::spmv_csr},
        {"allocate", operation::allocate},
        {"polynomial_evaluate", operation::polynomial_evaluate}};
    for (const std::string& name : operation_names) {
      if (name == "applications") {  // the applications table: all of its operations
        for (const char* each : {"linear_recurrence", "line_of_sight", "lexicographic_compare",
                                 "spmv_csr", "allocate", "polynomial_evaluate"}) {
          config.operations.push_back(operation_by_name.at(each));
        }
        continue;
      }
      config.operations.push_back(operation_by_name.at(name));
    }

    // Which parts: as asked, else the GPU where there is one and the CPU otherwise.
    const int devices = gpu_device_count();
    bool run_cpu = want_cpu || want_all;
    bool run_gpu = want_gpu || want_all;
    if (!run_cpu && !run_gpu) {
      run_gpu = devices > 0;
      run_cpu = !run_gpu;
    }
    if (run_gpu && devices == 0) {
      if (want_gpu) {
        fmt::print(stderr, "tally-bench: --gpu: {}\n", gpu_unavailable_reason());
        return 2;
      }
      fmt::print("tally-bench: skipping the GPU part: {}\n", gpu_unavailable_reason());
      run_gpu = false;
    }

    std::string command_line;
    for (int i = 0; i < argc; ++i) command_line += (i > 0 ? " " : "") + std::string(argv[i]);
    report out;
    out.note(fmt::format("tally-bench: {}; seed {}; {} samples per row (median reported){}",
                         command_line, config.seed, config.reps,
                         config.quick ? "; quick" : ""));

    if (run_cpu) run_cpu_bench(config, out);
    if (run_gpu) run_gpu_bench(config, out);

    if (!csv_path.empty()) {
      ensure_parent_directory(csv_path);
      out.write_csv(csv_path);
      fmt::print("\nwrote {}\n", csv_path);
    }
    if (!json_path.empty()) {
      ensure_parent_directory(json_path);
      out.write_json(json_path, command_line);
      fmt::print("wrote {}\n", json_path);
    }
    const int failures = out.failures();
    fmt::print("\n{} rows, {} failed checks\n", out.rows().size(), failures);
    return failures == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tally-bench: error: {}\n", e.what());
    return 1;
  }
}
