// No output holds a number JSON cannot: a tuning job whose learning curve or search space made
// its metrics NaN or infinite (events.jsonl lines `"value":nan`, which Python's json and
// nlohmann refuse) is now refused before it runs, naming the key; the widest accepted curve and
// ranges run, and every line of every JSON output parses strictly.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

/// A tuning run (random search, 3 trials of 7 epochs: 21 trial_epoch events) with `curve` and
/// `space` spliced in.
std::string tuning_config(const std::string& curve, const std::string& space) {
  return R"({"name": "nonfinite", "devices": [{"profile": "v100-pcie3x16"}],
    "policy": {"name": "trial_per_gpu"},
    "workload": {"tuning": [{"name": "t", "tuner": "random_search",
      "params": {"num_samples": 3, "max_epochs": 7}, "search_space": )" +
         space + R"(, "curve": )" + curve + R"(,
      "model": "alexnet", "batch": 8, "samples_per_epoch": 16, "max_trials": 3}]}})";
}

/// Parses `text` as JSON with nlohmann (no NaN, no Infinity: RFC 8259); "" when it parses.
std::string strict_parse_error(const std::string& text) {
  try {
    const nlohmann::json parsed = nlohmann::json::parse(text);
    (void)parsed;
  } catch (const nlohmann::json::parse_error& e) {
    return e.what();
  }
  return "";
}

/// Every JSON document and every events.jsonl line of result folder `out` parses strictly;
/// returns the number of events.jsonl lines.
std::size_t check_strict(const fs::path& out) {
  for (const char* f : {"summary.json", "trace.json", "run.json", "config.resolved.json"}) {
    INFO(f);
    CHECK(strict_parse_error(slurp(out / f)).empty());
  }
  std::istringstream events(slurp(out / "events.jsonl"));
  std::size_t lines = 0;
  for (std::string line; std::getline(events, line); ++lines) {
    INFO("events.jsonl line " << lines + 1 << ": " << line);
    CHECK(strict_parse_error(line).empty());
  }
  return lines;
}

}  // namespace

TEST_CASE("curves and ranges that made metrics NaN or infinite are refused, naming the key",
          "[cli][numbers]") {
  const std::string lr = R"({"lr": {"loguniform": [0.001, 1.0]}})";
  struct Case {
    std::string curve, space, key;
  };
  // Each ran before with exit 0 and wrote nan or inf into trial_epoch lines (the first: 21 of
  // them, one per epoch of each trial).
  const Case cases[] = {
      {R"({"y_start": -1e308, "y_best": 1e308})", lr, "workload.tuning[0].curve.y_start"},
      {R"({"y_start": 0.1, "y_best": 1e308})", lr, "workload.tuning[0].curve.y_best"},
      {R"({"noise": 1e308})", lr, "workload.tuning[0].curve.noise"},
      {R"({"width": 1e-200})", "{}", "workload.tuning[0].curve.width"},
      {"{}", R"({"x": {"uniform": [-1e308, 1e308]}})", "workload.tuning[0].search_space.x"},
      {"{}", R"({"x": {"loguniform": [1e-308, 1e308]}})", "workload.tuning[0].search_space.x"},
      {"{}", R"({"x": {"int": [-1e30, 1e30]}})", "workload.tuning[0].search_space.x"},
  };
  int n = 0;
  for (const Case& c : cases) {
    const std::string name = "nonfinite-" + std::to_string(n++);
    const fs::path cfg = write(name + ".json", tuning_config(c.curve, c.space));
    const fs::path out = scratch() / ("out-" + name);
    const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "' -q");
    INFO(c.curve << " " << c.space << "\n" << o.output);
    CHECK(o.exit_code == 2);
    CHECK(o.output.find(cfg.string() + ": " + c.key + ": ") != std::string::npos);
    if (fs::exists(out)) {  // before: a complete result whose events.jsonl was not JSON
      CHECK(check_strict(out) == 0);
    }
    CHECK_FALSE(fs::exists(out));
  }
}

TEST_CASE("the widest accepted curve and ranges give outputs that parse strictly",
          "[cli][numbers]") {
  // The bounds themselves: metrics of +-1e9 with noise 1e9, the narrowest width, a uniform
  // range of width 1.78e308 (finite), a log-uniform ratio of 1e307, int bounds of 2^53.
  const std::string curve =
      R"({"y_start": -1e9, "y_best": 1e9, "noise": 1e9, "width": 1e-6, "alpha_lo": 1e-6,
          "alpha_hi": 1e6})";
  const std::string space = R"({"u": {"uniform": [-8.9e307, 8.9e307]},
      "l": {"loguniform": [1e-300, 1e7]}, "i": {"int": [-9007199254740992, 9007199254740992]},
      "c": {"choice": [1, "two", null]}})";
  const fs::path cfg = write("nonfinite-bounds.json", tuning_config(curve, space));
  const fs::path out = scratch() / "out-nonfinite-bounds";
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "' -q");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  const std::size_t lines = check_strict(out);
  CHECK(lines > 21);
  // 3 trials x 7 epochs, each metric a finite number.
  std::istringstream events(slurp(out / "events.jsonl"));
  int epochs = 0;
  for (std::string line; std::getline(events, line);) {
    const nlohmann::json e = nlohmann::json::parse(line);
    if (e.at("ev") != "trial_epoch") continue;
    ++epochs;
    CHECK(e.at("value").is_number());
  }
  CHECK(epochs == 21);
  const nlohmann::json summary = nlohmann::json::parse(slurp(out / "summary.json"));
  CHECK_FALSE(summary.contains("non_finite"));
  CHECK(summary.at("tuning").at(0).at("best_metric").is_number());
}
