// The Fluid figure's pipeline (plots/fig_fluid_speedup.py, D46) on its smallest sweep:
// experiments/sweeps/fluid_dcgan_hyperband.json --quick (seed 1, both executors) through the
// real binary. Each point's summary must carry what the figure reads: a tuning section with a
// time-to-target for trial_per_gpu and for fluid, and the CLI table a `stopped` column whose
// count is the summary's.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

nlohmann::json read_json(const fs::path& p) {
  return nlohmann::json::parse(slurp(p));
}

/// The table row printed for `label`, split on blanks ("" when absent).
std::vector<std::string> table_row(const std::string& output, const std::string& label) {
  std::istringstream lines(output);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream cells(line);
    std::vector<std::string> row;
    for (std::string c; cells >> c;) row.push_back(c);
    if (!row.empty() && row.front() == label) return row;
  }
  return {};
}

}  // namespace

TEST_CASE("the Fluid figure's smallest sweep gives a time-to-target for both executors",
          "[cli][fluid]") {
  const fs::path out = scratch() / "fluid_dcgan_hyperband";
  const Outcome o = gpumux(
      "sweep experiments/sweeps/fluid_dcgan_hyperband.json --quick -j 2 "
      "--set events=false --out '" +
      out.string() + "'");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  CHECK(o.output.find("stopped") != std::string::npos);  // the table's column header

  std::map<std::string, double> ttt;
  for (const char* executor : {"trial_per_gpu", "fluid"}) {
    INFO(executor);
    const std::string label = std::string(executor) + "_1";  // quick: seed 1 only
    const fs::path dir = out / label;
    const nlohmann::json cfg = read_json(dir / "config.resolved.json");
    CHECK(cfg["policy"]["name"] == executor);
    const nlohmann::json s = read_json(dir / "summary.json");
    REQUIRE(s["tuning"].size() == 1);
    const nlohmann::json& t = s["tuning"][0];
    CHECK(t["tuner"] == "hyperband");
    CHECK(t["target_reached"] == true);
    REQUIRE(t["time_to_target_s"].is_number());
    ttt[executor] = t["time_to_target_s"].get<double>();
    CHECK(ttt[executor] > 0.0);
    // The target ends the tuning: its makespan is its time-to-target (docs/figures.md, Fluid).
    CHECK(t["makespan_s"].get<double>() == Approx(ttt[executor]));
    CHECK(t["best_metric"].get<double>() >= 5.2);  // the paper's DCGAN target (Table 3)

    // Every trial slot is a job; slots left when the tuning ends are stopped (D42): the
    // outcome counts add up to the 2000 slots, and the table's last column is the stopped count.
    const nlohmann::json& all = s["jobs_overall"];
    CHECK(all["jobs"] == 2000);
    const auto stopped = all["stopped"].get<std::uint64_t>();
    CHECK(stopped > 0);
    CHECK(all["finished"].get<std::uint64_t>() + all["rejected"].get<std::uint64_t>() +
              all["unfinished"].get<std::uint64_t>() + all["never_started"].get<std::uint64_t>() +
              all["not_arrived"].get<std::uint64_t>() + stopped ==
          2000);
    const std::vector<std::string> row = table_row(o.output, label);
    REQUIRE_FALSE(row.empty());
    CHECK(row.back() == std::to_string(stopped));
  }
  CHECK(ttt.size() == 2);
}
