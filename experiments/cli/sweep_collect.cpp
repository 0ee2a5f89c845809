// Merging a sweep's points into its tables (see sweep_collect.hpp).
#include "sweep_collect.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/input_file.hpp"
#include "gpumux/io/json_reader.hpp"
#include "gpumux/io/result_dir.hpp"
#include "gpumux/io/summary_csv.hpp"
#include "sweep_select.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

namespace {

// A point's file, parsed strictly (json_reader.hpp): errors name the file.
nlohmann::json read_point_file(const fs::path& file) {
  return parse_json_text(read_input_file(file, file.string(), kMaxTraceBytes, InputKind::Trace),
                         file.string(), "", InputKind::Trace);
}

// Written beside the target and renamed over it: a reader never sees half a table.
void write_file(const fs::path& file, const std::string& text) {
  std::string tmp_name = ".";  // appends, not operator+: GCC 12 bug 105329 (-Wrestrict)
  tmp_name += file.filename().string();
  tmp_name += ".gpumux-tmp.csv";
  const fs::path tmp = file.parent_path() / tmp_name;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw Error("cannot write " + tmp.string());
  }
  std::error_code ec;
  fs::rename(tmp, file, ec);
  if (ec) throw Error("cannot move " + tmp.string() + " to " + file.string() + ": " + ec.message());
}

}  // namespace

PointResult read_point_result(const fs::path& dir) {
  PointResult r{read_point_file(dir / "summary.json"), read_point_file(dir / "run.json")};
  const std::string summary_name = (dir / "summary.json").string();
  if (!r.summary.is_object()) throw TraceError(summary_name, "", "expected a JSON object");
  const auto jobs = r.summary.find("jobs");
  if (jobs == r.summary.end() || !jobs->is_array()) {
    throw TraceError(summary_name, "jobs", "expected an array of the run's jobs");
  }
  if (!r.run.is_object())
    throw TraceError((dir / "run.json").string(), "", "expected a JSON object");
  return r;
}

void collect_sweep(const SweepFile& sweep, const fs::path& out_root) {
  std::vector<std::string> missing;
  for (const SweepPoint& p : sweep.points) {
    if (inspect_result_dir(out_root / p.label).state != ResultDirState::GpumuxResult) {
      missing.push_back(p.label);
    }
  }
  if (!missing.empty()) {
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 10; ++i) {
      if (i > 0) list += ", ";
      list += missing[i];
    }
    if (missing.size() > 10) list += ", ...";
    throw UsageError("sweep " + sweep.name + ": " + std::to_string(missing.size()) + " of " +
                     std::to_string(sweep.points.size()) +
                     " points have no complete result under " + out_root.string() + " (" + list +
                     "); run them first");
  }
  const std::vector<std::string> keys = point_keys(sweep);
  std::ostringstream jobs, runs;
  for (std::size_t k = 0; k < sweep.points.size(); ++k) {
    const fs::path dir = out_root / sweep.points[k].label;
    const PointResult result = read_point_result(dir);
    CsvColumns lead = point_columns(sweep, k, keys);
    const CsvColumns identity = run_identity_columns(result.run);
    lead.insert(lead.end(), identity.begin(), identity.end());
    write_summary_csv(result.summary, lead, jobs, k == 0);
    write_summary_run_csv(result.summary, lead, runs, k == 0);
  }
  write_file(out_root / "summary.csv", jobs.str());
  write_file(out_root / "summary_run.csv", runs.str());
}

}  // namespace gpumux::cli
