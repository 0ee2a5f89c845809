// Merging a sweep's points into its tables (see sweep_collect.hpp).
#include "sweep_collect.hpp"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/errors.hpp"
#include "gpumux/result_dir.hpp"
#include "gpumux/summary_csv.hpp"
#include "sweep_select.hpp"

namespace gpumux::cli {

namespace fs = std::filesystem;

namespace {

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error("cannot read " + file.string());
  return nlohmann::json::parse(in);
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
    const nlohmann::json summary = read_json(dir / "summary.json");
    CsvColumns lead = point_columns(sweep, k, keys);
    const CsvColumns identity = run_identity_columns(read_json(dir / "run.json"));
    lead.insert(lead.end(), identity.begin(), identity.end());
    write_summary_csv(summary, lead, jobs, k == 0);
    write_summary_run_csv(summary, lead, runs, k == 0);
  }
  write_file(out_root / "summary.csv", jobs.str());
  write_file(out_root / "summary_run.csv", runs.str());
}

}  // namespace gpumux::cli
