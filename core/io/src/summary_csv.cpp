// summary.csv and summary_run.csv (see summary_csv.hpp): each column names a JSON pointer into
// summary.json, so the tables and the JSON cannot disagree.
#include "gpumux/io/summary_csv.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <ostream>

namespace gpumux {

namespace {

struct Column {
  const char* name;
  const char* pointer;  ///< into a job object (summary.csv) or summary.json (summary_run.csv)
};

// Per job. The order of the first columns is that of summary format 4 (tenant added after
// batch); a cell is empty where the job has no such value (a training job has no latency).
constexpr std::array kJobColumns{
    Column{"name", "/name"},
    Column{"kind", "/kind"},
    Column{"model", "/model"},
    Column{"batch", "/batch"},
    Column{"tenant", "/tenant"},
    Column{"status", "/status"},
    Column{"outcome", "/outcome"},
    Column{"arrival_s", "/arrival_s"},
    Column{"end_s", "/end_s"},
    Column{"jct_s", "/jct_s"},
    Column{"present_s", "/present_s"},
    Column{"gpu_time_s", "/gpu_time_s"},
    Column{"iterations", "/iterations"},
    Column{"samples", "/samples"},
    Column{"samples_per_s", "/samples_per_s"},
    Column{"samples_per_s_present", "/samples_per_s_present"},
    Column{"requests", "/requests"},
    Column{"requests_arrived", "/requests_arrived"},
    Column{"requests_unserved", "/requests_unserved"},
    Column{"requests_dropped", "/requests_dropped"},
    Column{"latency_mean_ms", "/latency/mean_ms"},
    Column{"latency_p50_ms", "/latency/p50_ms"},
    Column{"latency_p95_ms", "/latency/p95_ms"},
    Column{"latency_p99_ms", "/latency/p99_ms"},
    Column{"latency_max_ms", "/latency/max_ms"},
    Column{"slo_ms", "/slo_ms"},
    Column{"slo_met", "/slo_met"},
    Column{"slo_attainment", "/slo_attainment"},
    Column{"slo_attainment_arrived", "/slo_attainment_arrived"},
    Column{"goodput_per_s", "/goodput_per_s"},
    Column{"finish_rate", "/finish_rate"},
    Column{"late_rate", "/late_rate"},
    Column{"drop_rate", "/drop_rate"},
};

// Run-wide: what summary.csv's ALL row held before format 5, and the job counts.
constexpr std::array kRunColumns{
    Column{"end_s", "/run/end_s"},
    Column{"last_job_end_s", "/run/last_job_end_s"},
    Column{"jobs", "/jobs_overall/jobs"},
    Column{"finished", "/jobs_overall/finished"},
    Column{"rejected", "/jobs_overall/rejected"},
    Column{"unfinished", "/jobs_overall/unfinished"},
    Column{"never_started", "/jobs_overall/never_started"},
    Column{"not_arrived", "/jobs_overall/not_arrived"},
    Column{"stopped", "/jobs_overall/stopped"},
    Column{"mean_jct_s", "/jobs_overall/mean_jct_s"},
    Column{"p50_jct_s", "/jobs_overall/p50_jct_s"},
    Column{"p95_jct_s", "/jobs_overall/p95_jct_s"},
    Column{"makespan_s", "/jobs_overall/makespan_s"},
    Column{"training_iterations", "/training/iterations"},
    Column{"training_samples", "/training/samples"},
    Column{"training_samples_per_s_present_sum", "/training/samples_per_s_present_sum"},
    Column{"training_samples_per_s_while_present", "/training/samples_per_s_while_present"},
    Column{"training_samples_per_s_over_run", "/training/samples_per_s_over_run"},
    Column{"training_mean_jct_s", "/training/mean_jct_s"},
    Column{"requests", "/inference/count"},
    Column{"requests_arrived", "/inference/requests_arrived"},
    Column{"requests_unserved", "/inference/requests_unserved"},
    Column{"requests_dropped", "/inference/requests_dropped"},
    Column{"latency_mean_ms", "/inference/mean_ms"},
    Column{"latency_p50_ms", "/inference/p50_ms"},
    Column{"latency_p95_ms", "/inference/p95_ms"},
    Column{"latency_p99_ms", "/inference/p99_ms"},
    Column{"latency_max_ms", "/inference/max_ms"},
    Column{"slo_met", "/inference/slo_met"},
    Column{"slo_attainment", "/inference/slo_attainment"},
    Column{"slo_attainment_arrived", "/inference/slo_attainment_arrived"},
    Column{"goodput_per_s", "/inference/goodput_per_s"},
    Column{"finish_rate", "/inference/finish_rate"},
    Column{"late_rate", "/inference/late_rate"},
    Column{"drop_rate", "/inference/drop_rate"},
    Column{"jain_gpu_time", "/fairness/jain_gpu_time"},
    Column{"preemptions", "/run/preemptions"},
    Column{"migrations", "/run/migrations"},
};

const nlohmann::json& at_pointer(const nlohmann::json& doc, const char* pointer) {
  static const nlohmann::json kNone;
  const nlohmann::json::json_pointer p(pointer);
  return doc.contains(p) ? doc.at(p) : kNone;
}

template <std::size_t N>
void write_header(const CsvColumns& lead, const std::array<Column, N>& cols, std::ostream& out) {
  bool first = true;
  for (const auto& [name, value] : lead) {
    out << (first ? "" : ",") << csv_field(name);
    first = false;
  }
  for (const Column& c : cols) {
    out << (first ? "" : ",") << c.name;
    first = false;
  }
  out << '\n';
}

template <std::size_t N>
void write_row(const CsvColumns& lead, const std::array<Column, N>& cols, const nlohmann::json& obj,
               std::ostream& out) {
  bool first = true;
  for (const auto& [name, value] : lead) {
    out << (first ? "" : ",") << csv_field(value);
    first = false;
  }
  for (const Column& c : cols) {
    out << (first ? "" : ",") << csv_cell(at_pointer(obj, c.pointer));
    first = false;
  }
  out << '\n';
}

template <std::size_t N>
std::vector<std::string> names(const std::array<Column, N>& cols) {
  std::vector<std::string> out;
  out.reserve(N);
  for (const Column& c : cols) out.emplace_back(c.name);
  return out;
}

}  // namespace

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
  return out;
}

std::string csv_number(double v) {
  if (!std::isfinite(v)) return "";
  constexpr int kDecimals = 9;  // ns resolution of seconds (TimeNs)
  std::array<char, 400> buf{};  // the largest double in fixed notation has 309 digits
  const auto [end, ec] =
      std::to_chars(buf.data(), buf.data() + buf.size(), v, std::chars_format::fixed, kDecimals);
  if (ec != std::errc{}) return "";
  std::string s(buf.data(), end);
  s.erase(s.find_last_not_of('0') + 1);
  if (s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string csv_cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_number_integer()) return v.dump();
  if (v.is_number()) return csv_number(v.get<double>());
  if (v.is_string()) return csv_field(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return csv_field(v.dump());
}

CsvColumns run_identity_columns(const nlohmann::json& run_info) {
  auto text = [&](const char* key) {
    const auto it = run_info.find(key);
    if (it == run_info.end() || it->is_null()) return std::string();
    return it->is_string() ? it->get<std::string>() : it->dump();
  };
  return {{"policy", text("policy")},
          {"platform", text("platform_name")},
          {"seed", text("seed")},
          {"config_sha256", text("config_sha256")}};
}

void write_summary_csv(const nlohmann::json& summary, const CsvColumns& lead, std::ostream& out,
                       bool header) {
  if (header) write_header(lead, kJobColumns, out);
  for (const auto& job : summary.at("jobs")) write_row(lead, kJobColumns, job, out);
}

void write_summary_run_csv(const nlohmann::json& summary, const CsvColumns& lead, std::ostream& out,
                           bool header) {
  if (header) write_header(lead, kRunColumns, out);
  write_row(lead, kRunColumns, summary, out);
}

std::vector<std::string> summary_csv_columns() {
  return names(kJobColumns);
}
std::vector<std::string> summary_run_csv_columns() {
  return names(kRunColumns);
}

}  // namespace gpumux
