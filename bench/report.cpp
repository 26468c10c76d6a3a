// bench/report.cpp -- relating, printing and writing the rows of a run.
#include "report.hpp"

#include <fmt/core.h>

#include <bit>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace tally_bench {

const char* operation_name(operation op) {
  switch (op) {
    case operation::copy: return "copy";
    case operation::inclusive_scan: return "inclusive_scan";
    case operation::exclusive_scan: return "exclusive_scan";
    case operation::reduce: return "reduce";
    case operation::segmented_scan: return "segmented_scan";
    case operation::segmented_reduce: return "segmented_reduce";
    case operation::batched_scan: return "batched_scan";
    case operation::copy_if: return "copy_if";
    case operation::partition: return "partition";
    case operation::unique: return "unique";
    case operation::run_length_encode: return "run_length_encode";
    case operation::reduce_by_key: return "reduce_by_key";
    case operation::linear_recurrence: return "linear_recurrence";
    case operation::line_of_sight: return "line_of_sight";
    case operation::lexicographic_compare: return "lexicographic_compare";
    case operation::spmv_csr: return "spmv_csr";
    case operation::allocate: return "allocate";
    case operation::polynomial_evaluate: return "polynomial_evaluate";
  }
  return "?";
}

namespace {

const char* check_name(check_status c) {
  switch (c) {
    case check_status::not_checked: return "-";
    case check_status::passed: return "ok";
    case check_status::failed: return "FAILED";
  }
  return "?";
}

// "2^20" for powers of two, the plain number otherwise.
std::string size_label(std::int64_t n) {
  if (n > 0 && std::has_single_bit(static_cast<std::uint64_t>(n))) {
    return fmt::format("2^{}", std::countr_zero(static_cast<std::uint64_t>(n)));
  }
  return fmt::format("{}", n);
}

// A time with a unit that keeps three or four significant digits.
std::string time_label(double seconds) {
  if (seconds < 1e-6) return fmt::format("{:.0f} ns", seconds * 1e9);
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1.0) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.3f} s", seconds);
}

std::string optional_label(const std::optional<double>& v, const char* format_string) {
  return v ? fmt::format(fmt::runtime(format_string), *v) : std::string("-");
}

// n, type, op, operation, implementation (width as the device asks), threads, median,
// GB/s, %copy, vs peer, vs tbb, vs par, check (and note).
constexpr const char* table_format =
    "{:<6} {:<6} {:<5} {:<16} {:<{}} {:>3} {:>10} {:>8} {:>7} {:>8} {:>7} {:>7}  {}\n";

// CSV: quote a field when it holds a separator, a quote or a line break.
std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char c : s) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string csv_optional(const std::optional<double>& v) {
  return v ? fmt::format("{:.6g}", *v) : std::string();
}

nlohmann::json json_optional(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

void report::set_peers(const std::string& device, peer_names names) {
  peers_[device] = std::move(names);
}

const result_row* report::find(const result_row& like, const std::string& impl_part,
                               int threads) const {
  if (impl_part.empty()) return nullptr;
  for (const result_row& r : rows_) {
    if (r.device == like.device && r.what == like.what && r.type == like.type &&
        r.op == like.op && r.n == like.n && r.variant == like.variant &&
        r.impl.find(impl_part) != std::string::npos &&
        (threads < 0 || r.threads == threads)) {
      return &r;
    }
  }
  return nullptr;
}

void report::fill_relative(result_row& row) const {
  row.gbps = row.median_s > 0 ? row.bytes / row.median_s / 1e9 : 0.0;

  // Percent of the copy: the throughput of this row over that of the fastest copy of the
  // same element type and n on the same device in this run. For a scan (which moves the
  // bytes a copy moves) that is copy time / scan time.
  const result_row* fastest_copy = nullptr;
  for (const result_row& r : rows_) {
    if (r.what == operation::copy && r.device == row.device && r.type == row.type &&
        r.n == row.n && r.check != check_status::failed &&
        (fastest_copy == nullptr || r.gbps > fastest_copy->gbps)) {
      fastest_copy = &r;
    }
  }
  if (row.what == operation::copy && (fastest_copy == nullptr || row.gbps > fastest_copy->gbps)) {
    fastest_copy = &row;
  }
  if (fastest_copy != nullptr && fastest_copy->gbps > 0) {
    row.pct_of_copy = 100.0 * row.gbps / fastest_copy->gbps;
    row.copy_ref = fastest_copy->impl;
    if (fastest_copy->threads > 0) row.copy_ref += fmt::format("@{}", fastest_copy->threads);
  }

  if (row.what == operation::copy) return;
  auto names = peers_.find(row.device);
  if (names == peers_.end()) return;
  const peer_names& p = names->second;
  // The row itself counts as its own peer (a ratio of 1), so the peer rows show it too.
  auto matching = [&](const std::string& part, int threads) -> const result_row* {
    if (!part.empty() && row.impl.find(part) != std::string::npos) return &row;
    return find(row, part, threads);
  };
  const std::string& peer_part = row.peer_impl.empty() ? p.peer : row.peer_impl;
  if (const result_row* peer = matching(peer_part, -1); peer != nullptr && row.median_s > 0) {
    row.peer = peer->impl;
    row.speedup_vs_peer = peer->median_s / row.median_s;
  }
  if (const result_row* tbb = matching(p.tbb, row.threads); tbb != nullptr && row.median_s > 0) {
    row.vs_tbb = tbb->median_s / row.median_s;
  }
  if (const result_row* par = matching(p.par, row.threads); par != nullptr && row.median_s > 0) {
    row.vs_par = par->median_s / row.median_s;
  }
}

void report::add(result_row row) {
  fill_relative(row);

  const auto names = peers_.find(row.device);
  const int impl_width = names != peers_.end() ? names->second.impl_width : 34;

  // A header before the first row and whenever the device, type, n or variant changes
  // (a variant is named on a line of its own above the header).
  const std::string group = fmt::format("{}|{}|{}|{}", row.device, row.type, row.n, row.variant);
  if (group != last_group_) {
    fmt::print("\n");
    if (!row.variant.empty()) fmt::print("[{}]\n", row.variant);
    fmt::print(fmt::runtime(table_format), "n", "type", "op", "operation", "implementation",
               impl_width, "thr", "median", "GB/s", "%copy", "vs peer", "vs tbb", "vs par",
               "check");
    last_group_ = group;
  }
  fmt::print(fmt::runtime(table_format), size_label(row.n), row.type, row.op,
             operation_name(row.what), row.impl, impl_width,
             row.threads > 0 ? fmt::format("{}", row.threads) : "-",
             time_label(row.median_s), fmt::format("{:.2f}", row.gbps),
             optional_label(row.pct_of_copy, "{:.1f}%"),
             optional_label(row.speedup_vs_peer, "{:.2f}x"), optional_label(row.vs_tbb, "{:.2f}x"),
             optional_label(row.vs_par, "{:.2f}x"),
             row.note.empty() ? std::string(check_name(row.check))
                              : fmt::format("{}  ({})", check_name(row.check), row.note));
  std::fflush(stdout);
  rows_.push_back(std::move(row));
}

void report::finalize() {
  for (result_row& row : rows_) {
    // fill_relative looks at every row, `row` included, so compare a copy with the rest.
    result_row updated = row;
    fill_relative(updated);
    row = std::move(updated);
  }
}

void report::note(const std::string& text) {
  fmt::print("{}\n", text);
  std::fflush(stdout);
  notes_.push_back(text);
}

int report::failures() const {
  int count = 0;
  for (const result_row& r : rows_) count += r.check == check_status::failed ? 1 : 0;
  return count;
}

void report::write_csv(const std::string& path) {
  finalize();
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot open " + path + " for writing");
  out << "device,operation,type,op,n,bytes,impl,threads,reps,median_s,min_s,max_s,gbps,"
         "pct_of_copy,copy_ref,peer,speedup_vs_peer,vs_tbb,vs_par,check,note,variant\n";
  for (const result_row& r : rows_) {
    out << fmt::format("{},{},{},{},{},{:.0f},{},{},{},{:.6g},{:.6g},{:.6g},{:.6g},{},{},{},{},{},{},{},{},{}\n",
                       csv_field(r.device), operation_name(r.what), r.type, r.op, r.n, r.bytes,
                       csv_field(r.impl), r.threads, r.reps, r.median_s, r.min_s, r.max_s, r.gbps,
                       csv_optional(r.pct_of_copy), csv_field(r.copy_ref), csv_field(r.peer),
                       csv_optional(r.speedup_vs_peer), csv_optional(r.vs_tbb),
                       csv_optional(r.vs_par), check_name(r.check), csv_field(r.note),
                       csv_field(r.variant));
  }
  if (!out) throw std::runtime_error("failed writing " + path);
}

void report::write_json(const std::string& path, const std::string& command_line) {
  finalize();
  nlohmann::json rows = nlohmann::json::array();
  for (const result_row& r : rows_) {
    rows.push_back({
        {"device", r.device},
        {"operation", operation_name(r.what)},
        {"type", r.type},
        {"op", r.op},
        {"n", r.n},
        {"bytes", r.bytes},
        {"impl", r.impl},
        {"threads", r.threads},
        {"reps", r.reps},
        {"median_s", r.median_s},
        {"min_s", r.min_s},
        {"max_s", r.max_s},
        {"gbps", r.gbps},
        {"pct_of_copy", json_optional(r.pct_of_copy)},
        {"copy_ref", r.copy_ref},
        {"peer", r.peer},
        {"speedup_vs_peer", json_optional(r.speedup_vs_peer)},
        {"vs_tbb", json_optional(r.vs_tbb)},
        {"vs_par", json_optional(r.vs_par)},
        {"check", check_name(r.check)},
        {"note", r.note},
        {"variant", r.variant},
    });
  }
  const nlohmann::json document = {
      {"command", command_line}, {"notes", notes_}, {"rows", std::move(rows)}};
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot open " + path + " for writing");
  out << document.dump(1) << "\n";
  if (!out) throw std::runtime_error("failed writing " + path);
}

}  // namespace tally_bench
