// Workloads: strict parsing of job objects and JSONL job files (traces/formats.md), arrivals
// CSVs, and the closed-loop client's send schedule.
#include "gpumux/io/workload.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/csv_reader.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/input_path.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/request_variability_config.hpp"
#include "gpumux/io/sha256.hpp"
#include "gpumux/io/trace_sidecar.hpp"

namespace gpumux {

namespace {

// Upper bound on any time read from input (about 31 years), far below int64 ns overflow.
constexpr double kMaxSeconds = 1e9;

std::string seconds_text(double s) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, s);
  std::string out = ec == std::errc() ? std::string(buf, end) : std::to_string(s);
  if (out.find_first_of(".e") == std::string::npos) out += ".0";
  return out;
}

// Joins a caller's prefix ("line 3" or "workload.jobs[2]") with a key path inside the job.
std::string join_where(const std::string& where, const std::string& path) {
  if (path.empty() || path == "(top level)") return where.empty() ? path : where;
  if (where.empty()) return path;
  const char last = where.back();
  if (last == '.' || last == ' ' || last == ':') return where + path;
  if (last == ']') return where + "." + path;
  return where + ": " + path;
}

// Splits "<file>: <path>: <problem>" (a JsonReader ConfigError) into path and problem: from
// its parts when it is about `file`, else (an error from a file it names) from the text.
std::pair<std::string, std::string> split_error(const ConfigError& e, const std::string& file) {
  if (e.file() == file) return {e.where(), e.problem()};
  std::string msg = e.what();
  const std::string prefix = file + ": ";
  if (msg.rfind(prefix, 0) == 0) msg.erase(0, prefix.size());
  const auto sep = msg.find(": ");
  if (sep == std::string::npos) return {"", msg};
  return {msg.substr(0, sep), msg.substr(sep + 2)};
}

double seconds_value(JsonReader& r, const std::string& key, double v) {
  if (!(v >= 0)) r.fail(key, "must be >= 0, got " + seconds_text(v));
  if (v > kMaxSeconds) r.fail(key, "out of range (more than 1e9 s)");
  return v;
}

std::vector<TimeNs> read_request_array(JsonReader& r, const nlohmann::json& a, TimeNs arrival) {
  std::vector<TimeNs> out;
  out.reserve(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string key = "requests[" + std::to_string(i) + "]";
    const auto& v = a[i];
    if (!v.is_number()) r.fail(key, std::string("expected a number, got ") + v.type_name());
    const double s = seconds_value(r, key, v.get<double>());
    const TimeNs t = seconds_to_ns(s);
    if (t < arrival) {
      r.fail(key, "request at " + seconds_text(s) + " s is before arrival_s (" +
                      seconds_text(ns_to_seconds(arrival)) + ")");
    }
    if (!out.empty() && t < out.back()) {
      r.fail(key, "requests must be sorted (" + seconds_text(s) + " after " +
                      seconds_text(ns_to_seconds(out.back())) + ")");
    }
    out.push_back(t);
  }
  if (out.empty()) r.fail("requests", "an inference job needs at least one request");
  return out;
}

std::vector<TimeNs> read_request_file(JsonReader& r, double arrival_s,
                                      const std::filesystem::path& repo_root) {
  JsonReader q = r.object("requests");
  const std::string file = q.required_string("file");
  const double offset_s = seconds_value(q, "offset_s", q.number_or("offset_s", arrival_s));
  if (seconds_to_ns(offset_s) < seconds_to_ns(arrival_s)) {
    q.fail("offset_s", "must be >= arrival_s (" + seconds_text(arrival_s) + ")");
  }
  const double scale = q.positive("time_scale", q.number_or("time_scale", 1.0));
  std::int64_t limit = -1;
  if (q.has("limit")) {
    limit = q.required_int("limit");
    if (limit < 1) q.fail("limit", "must be >= 1");
  }
  q.finish();
  std::vector<double> rel;
  try {
    rel = load_arrivals_csv(resolve_input_path(file, r.file(), repo_root).path);
  } catch (const InputError& e) {
    q.fail("file", e.what());
  }
  if (limit >= 0 && rel.size() > static_cast<std::size_t>(limit)) rel.resize(limit);
  if (rel.empty()) q.fail("file", "the arrivals file has no requests");
  std::vector<TimeNs> out;
  out.reserve(rel.size());
  for (double t : rel) {
    const double s = offset_s + t * scale;
    if (s > kMaxSeconds) q.fail("time_scale", "request times out of range");
    out.push_back(seconds_to_ns(s));
  }
  return out;
}

JobSpec parse_job_fields(const nlohmann::json& j, const std::string& file,
                         const std::filesystem::path& repo_root) {
  JsonReader r(j, file, "");
  JobSpec job;
  read_job_fields(r, job, /*read_kind=*/true);
  if (job.kind == JobKind::Training) {
    for (const char* key : {"requests", "dynamic"}) {
      if (r.has(key)) r.fail(key, "not allowed for a training job");
    }
    const std::int64_t iterations = r.required_int("iterations");
    if (iterations < 1) r.fail("iterations", "must be >= 1");
    job.iterations = static_cast<std::uint64_t>(iterations);
    job.optimizer = r.choice_or("optimizer", kOptimizerNames, Optimizer::Momentum);
  } else {
    for (const char* key : {"iterations", "optimizer"}) {
      if (r.has(key)) r.fail(key, "not allowed for an inference job");
    }
    if (const auto* dynamic = r.optional("dynamic")) {
      job.dynamic = parse_request_variability(*dynamic, r.file(), r.path_of("dynamic"), repo_root);
    }
    const auto& requests = r.required("requests");
    if (requests.is_array()) {
      job.requests_ns = read_request_array(r, requests, job.arrival_ns);
    } else if (requests.is_object()) {
      // offset_s defaults to arrival_s as written (not its ns), so request times round once.
      const double arrival_s = r.has("arrival_s") ? r.required_number("arrival_s") : 0.0;
      job.requests_ns = read_request_file(r, arrival_s, repo_root);
    } else {
      r.fail("requests", std::string("expected an array of times or an object with \"file\", "
                                     "got ") +
                             requests.type_name());
    }
  }
  r.finish();
  return job;
}

// The keys of a JSON object, comma-separated (for messages).
std::string key_list(const nlohmann::json& j) {
  std::string out;
  for (const auto& item : j.items()) out += (out.empty() ? "" : ", ") + printable(item.key());
  return out;
}

// A key that holds a request's time, to suggest as --time-column ("" when none stands out).
std::string time_key_of(const nlohmann::json& j) {
  for (const char* k : {"timestamp", "arrival_time", "arrival", "time", "ts", "TIMESTAMP"}) {
    if (j.contains(k)) return k;
  }
  return "";
}

// The advice for a request trace met where gpumux expects a job file or an arrival CSV.
std::string import_advice(const std::string& file, const std::string& time_key) {
  return "convert it with `gpumux trace import " + file + " --out <name>.csv --time-column " +
         (time_key.empty() ? std::string("<key>") : time_key) +
         " --time-unit <s|ms|us|ns>` and replay the CSV from an inference service "
         "(requests.file; traces/importing.md)";
}

}  // namespace

void read_job_fields(JsonReader& r, JobSpec& job, bool read_kind) {
  job.name = r.required_string("name");
  if (job.name.empty()) r.fail("name", "must not be empty");
  if (read_kind) job.kind = r.required_choice("kind", kJobKindNames);
  job.model = r.required_string("model");
  if (job.model.empty()) r.fail("model", "must not be empty");
  job.batch = r.integer_in_or<std::uint32_t>("batch", 1, 1, 1 << 20);
  job.arrival_ns = r.duration_or("arrival_s", TimeUnit::Seconds, 0);
  job.priority = r.integer_in_or<int>("priority", 0, -1000000000, 1000000000);
  job.weight = r.positive("weight", r.number_or("weight", 1.0));
  job.tenant = r.string_or("tenant", job.name);
  if (job.tenant.empty()) r.fail("tenant", "must not be empty");
  job.expected_duration_ns = r.duration_or("expected_duration_s", TimeUnit::Seconds, 0);
  if (job.kind == JobKind::Training) {
    if (r.has("slo_ms")) r.fail("slo_ms", "not allowed for a training job");
  } else {
    job.slo_ns = r.duration_or("slo_ms", TimeUnit::Milliseconds, 0, Sign::Positive);
  }
}

JobSpec parse_job(const nlohmann::json& j, const std::string& file, const std::string& where,
                  const std::filesystem::path& repo_root) {
  try {
    return parse_job_fields(j, file, repo_root);
  } catch (const ConfigError& e) {
    auto [path, problem] = split_error(e, file);
    throw TraceError(file, join_where(where, path), problem);
  }
}

std::vector<JobSpec> load_jobs_jsonl(const std::filesystem::path& file,
                                     const std::filesystem::path& repo_root) {
  const std::string name = file.string();
  // Relative paths name files in the repository; messages keep the path as given.
  std::filesystem::path open_path = file;
  std::error_code ec;
  if (file.is_relative() && !repo_root.empty() && std::filesystem::exists(repo_root / file, ec)) {
    open_path = repo_root / file;
  }
  return parse_jobs_jsonl_text(read_input_file(open_path, name, kMaxTraceBytes, InputKind::Trace),
                               name, repo_root);
}

std::vector<JobSpec> parse_jobs_jsonl_text(std::string_view text, const std::string& name,
                                           const std::filesystem::path& repo_root) {
  std::vector<JobSpec> jobs;
  std::map<std::string, std::size_t> first_line;  // job name -> line it was defined on
  std::size_t line_no = 0;
  for (std::size_t begin = 0; begin < text.size();) {
    const auto end = std::min(text.find('\n', begin), text.size());
    std::string_view line = text.substr(begin, end - begin);
    begin = end + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    const std::string where = "line " + std::to_string(line_no);
    const nlohmann::json j = parse_json_text(line, name, where, InputKind::Trace);
    // One request per line (no name, no kind) is a request trace, not a job file.
    if (j.is_object() && !j.contains("name") && !j.contains("kind")) {
      throw TraceError(name, where,
                       "this looks like a request trace (one request per line, keys " +
                           key_list(j) + "), not a job file (a job has name, kind and model); " +
                           import_advice(name, time_key_of(j)));
    }
    JobSpec job = parse_job(j, name, where, repo_root);
    if (!jobs.empty() && job.arrival_ns < jobs.back().arrival_ns) {
      throw TraceError(name, where + ": arrival_s",
                       "arrivals must be non-decreasing (" +
                           seconds_text(ns_to_seconds(job.arrival_ns)) + " after " +
                           seconds_text(ns_to_seconds(jobs.back().arrival_ns)) + ")");
    }
    if (auto it = first_line.find(job.name); it != first_line.end()) {
      throw TraceError(name, where + ": name",
                       "duplicate job name '" + job.name + "' (first on line " +
                           std::to_string(it->second) + ")");
    }
    first_line.emplace(job.name, line_no);
    jobs.push_back(std::move(job));
  }
  return jobs;
}

namespace {

// The arrival_s column of an arrival CSV, read through the one CSV reader (RFC 4180): a kept
// column may hold commas, quotes and line breaks.
std::vector<double> read_arrivals(CsvReader& reader, const std::string& name) {
  // A JSONL request trace: say so, before the CSV reader stops at its quotes.
  const std::string_view head = reader.peek(std::size_t{64} << 10);
  if (!head.empty() && head.front() == '{') {
    std::string_view first = head.substr(0, head.find('\n'));
    if (!first.empty() && first.back() == '\r') first.remove_suffix(1);
    const auto j = parse_json_if_json(first, name, "line 1", InputKind::Trace);
    throw TraceError(
        name, "line 1",
        "this looks like a request trace in JSONL, not an arrival CSV; " +
            import_advice(name, j && j->is_object() ? time_key_of(*j) : std::string()));
  }
  std::vector<std::string> fields;
  if (!reader.next(fields)) throw TraceError(name, "line 1", "empty file (expected a header)");
  // The arrival_s column: the first by convention, found by name wherever it is.
  const auto column = static_cast<std::size_t>(
      std::find(fields.begin(), fields.end(), "arrival_s") - fields.begin());
  if (column == fields.size()) {
    std::string header;
    for (const auto& f : fields) header += (header.empty() ? "" : ",") + f;
    throw TraceError(name, "line " + std::to_string(reader.line()),
                     "no arrival_s column in the header '" + printable(header) +
                         "' (an arrival CSV gives arrival_s in seconds); " +
                         import_advice(name, ""));
  }
  std::vector<double> out;
  while (reader.next(fields)) {
    const std::string where = "line " + std::to_string(reader.line());
    if (fields.size() <= column) {
      throw TraceError(name, where,
                       "arrival_s: the row ends before column " + std::to_string(column + 1));
    }
    const std::string& field = fields[column];
    double v = 0;
    const char* b = field.data();
    const char* e = b + field.size();
    while (b < e && *b == ' ') ++b;
    auto [ptr, ec] = std::from_chars(b, e, v);
    if (ec != std::errc() || ptr != e || !std::isfinite(v)) {
      throw TraceError(name, where, "arrival_s: expected a number, got '" + printable(field) + "'");
    }
    if (v < 0 || v > kMaxSeconds) {
      throw TraceError(name, where,
                       "arrival_s: " + seconds_text(v) + " is out of range [0, 1e9] s");
    }
    if (!out.empty() && v < out.back()) {
      throw TraceError(name, where,
                       "arrival_s: arrivals must be non-decreasing (" + seconds_text(v) +
                           " after " + seconds_text(out.back()) + ")");
    }
    out.push_back(v);
  }
  return out;
}

}  // namespace

std::vector<double> load_arrivals_csv(const std::filesystem::path& file) {
  const std::string name = file.string();
  InputStream in(file, name, kMaxTraceBytes, InputKind::Trace);
  // An import's .SOURCE records the digest of the CSV it describes (trace_sidecar.hpp).
  const std::optional<std::string> recorded = import_sidecar_data_sha256(file);
  Sha256 hash;
  if (recorded) in.observe([&](std::string_view bytes) { hash.update(bytes); });
  CsvReader reader(in);
  std::vector<double> out = read_arrivals(reader, name);
  if (recorded && hash.hex() != *recorded) {
    const std::string side = import_sidecar_of(file).string();
    throw TraceError(name, "",
                     "does not match " + side +
                         ", which gpumux trace import wrote for other data (its data_sha256 "
                         "differs): an import interrupted between writing the two, or the CSV "
                         "changed since; import it again (the command is in the .SOURCE)");
  }
  return out;
}

std::vector<double> parse_arrivals_csv_text(std::string_view text, const std::string& name) {
  CsvReader reader(text, name);
  return read_arrivals(reader, name);
}

void validate_jobs(const std::vector<JobSpec>& jobs, const std::string& file) {
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const JobSpec& j = jobs[i];
    const std::string where = "job '" + j.name + "'";
    if (j.name.empty()) throw TraceError(file, "jobs[" + std::to_string(i) + "]", "empty name");
    if (!seen.emplace(j.name, i).second) {
      throw TraceError(file, where, "duplicate job name '" + j.name + "'");
    }
    if (i > 0 && j.arrival_ns < jobs[i - 1].arrival_ns) {
      throw TraceError(file, where, "jobs must be sorted by arrival");
    }
    if (j.batch < 1) throw TraceError(file, where, "batch must be >= 1");
    if (j.kind == JobKind::Training) {
      if (j.iterations < 1 && !j.trial)
        throw TraceError(file, where, "a training job needs iterations >= 1");
      continue;
    }
    if (!j.closed_loop.enabled && j.requests_ns.empty()) {
      throw TraceError(file, where, "an inference job needs requests");
    }
    if (!j.requests_ns.empty() && j.requests_ns.front() < j.arrival_ns) {
      throw TraceError(file, where, "requests start before the job arrives");
    }
    if (!std::is_sorted(j.requests_ns.begin(), j.requests_ns.end())) {
      throw TraceError(file, where, "request times must be sorted");
    }
  }
}

}  // namespace gpumux
