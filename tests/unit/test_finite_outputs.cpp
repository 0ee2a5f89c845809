// JSON has no NaN or infinity. events.jsonl writes a number field that is not finite as null
// with a "<key>_not_finite" sibling (read back to the same value), never as a bare `nan`; a
// summary's non-finite numbers become null and are listed under "non_finite"; and the inputs
// that made a learning curve's metric NaN (search-space ranges, curve parameters) are refused
// with the key named.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <random>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/event_fields.hpp"
#include "gpumux/api/events.hpp"
#include "gpumux/engine/learning_curve.hpp"
#include "gpumux/engine/search_space.hpp"
#include "gpumux/engine/tuning_spec.hpp"
#include "gpumux/io/events_reader.hpp"
#include "gpumux/io/finite_json.hpp"
#include "gpumux/io/tuning_config.hpp"

using namespace gpumux;
using Catch::Matchers::Equals;
namespace fs = std::filesystem;

namespace {

constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string jsonl_of(const EventLog& log) {
  std::ostringstream out;
  log.write_jsonl(out);
  return out.str();
}

std::string config_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("events.jsonl writes a non-finite value as null with its reason", "[numbers]") {
  EventLog log;
  const double values[] = {kNan, kInf, -kInf, 0.25};
  for (std::size_t i = 0; i < 4; ++i) {
    Event e;
    e.t_ns = static_cast<TimeNs>(i);
    e.kind = EventKind::PolicyMetric;
    e.value = values[i];
    e.label = log.intern("m");
    log.add(e);
  }
  Event epoch;
  epoch.kind = EventKind::TrialEpoch;
  epoch.job = 3;
  epoch.a = 1;
  epoch.value = kNan;
  epoch.label = log.intern("continue");
  log.add(epoch);

  const std::string text = jsonl_of(log);
  std::istringstream lines(text);
  std::vector<nlohmann::json> parsed;
  for (std::string line; std::getline(lines, line);) {
    INFO(line);
    REQUIRE_NOTHROW(parsed.push_back(nlohmann::json::parse(line)));  // strict: no nan token
  }
  REQUIRE(parsed.size() == 5);
  CHECK(parsed[0].at("value").is_null());
  CHECK(parsed[0].at("value_not_finite") == "nan");
  CHECK(parsed[1].at("value_not_finite") == "inf");
  CHECK(parsed[2].at("value_not_finite") == "-inf");
  CHECK(parsed[3].at("value") == 0.25);
  CHECK_FALSE(parsed[3].contains("value_not_finite"));
  CHECK(parsed[4].at("ev") == "trial_epoch");
  CHECK(parsed[4].at("value").is_null());
  CHECK(parsed[4].at("value_not_finite") == "nan");
  CHECK_THAT(
      text.substr(0, text.find('\n')),
      Equals(
          R"({"t":0,"ev":"metric","a":0,"b":0,"value":null,"value_not_finite":"nan","label":"m"})"));

  // Read back: the same values (NaN compared as NaN).
  const fs::path dir =
      fs::temp_directory_path() / ("gpumux_finite_" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  std::ofstream(dir / "events.jsonl") << text;
  const EventLog back = read_events_jsonl((dir / "events.jsonl").string());
  REQUIRE(back.size() == 5);
  CHECK(std::isnan(back.events()[0].value));
  CHECK(back.events()[1].value == kInf);
  CHECK(back.events()[2].value == -kInf);
  CHECK(back.events()[3].value == 0.25);
  CHECK(std::isnan(back.events()[4].value));
  // A null without its reason is refused.
  std::ofstream(dir / "bad.jsonl") << R"({"t":0,"ev":"metric","value":null,"label":"m"})" << '\n';
  CHECK_THROWS_AS(read_events_jsonl((dir / "bad.jsonl").string()), TraceError);
  fs::remove_all(dir);
}

TEST_CASE("null_non_finite nulls NaN and infinities and names each by JSON pointer", "[numbers]") {
  nlohmann::json doc = {{"a", 1.5},
                        {"b", kNan},
                        {"c", {{"d/e", {1.0, kInf, -kInf}}, {"f~", kNan}}},
                        {"g", 7},
                        {"h", nullptr}};
  const nlohmann::json found = null_non_finite(doc);
  CHECK(found ==
        nlohmann::json{
            {"/b", "nan"}, {"/c/d~1e/1", "inf"}, {"/c/d~1e/2", "-inf"}, {"/c/f~0", "nan"}});
  CHECK(doc.at("b").is_null());
  CHECK(doc.at("c").at("d/e") == nlohmann::json({1.0, nullptr, nullptr}));
  CHECK(doc.at("a") == 1.5);
  CHECK(doc.at("g") == 7);
  CHECK(nlohmann::json::parse(doc.dump()) == doc);
  nlohmann::json finite = {{"x", {0.5, 2}}};
  CHECK(null_non_finite(finite).empty());
}

TEST_CASE("search-space ranges whose draws are not finite are refused, naming the key",
          "[numbers]") {
  const auto error = [](const char* space) {
    return config_error(
        [&] { (void)SearchSpace::from_json(nlohmann::json::parse(space), "t.json", "tune.ss"); });
  };
  CHECK_THAT(
      error(R"({"x": {"uniform": [-1e308, 1e308]}})"),
      Equals("t.json: tune.ss.x: 'uniform' range too wide: hi - lo must be a finite number"));
  CHECK_THAT(
      error(R"({"x": {"loguniform": [1e-308, 1e308]}})"),
      Equals("t.json: tune.ss.x: 'loguniform' range too wide: hi / lo must be a finite number"));
  CHECK_THAT(error(R"({"x": {"int": [-1e30, 1]}})"),
             Equals("t.json: tune.ss.x: 'int' needs whole-number bounds in [-2^53, 2^53]"));
  CHECK_THAT(error(R"({"x": {"int": [0.5, 3]}})"),
             Equals("t.json: tune.ss.x: 'int' needs whole-number bounds in [-2^53, 2^53]"));
  // The widest accepted ranges: every draw, grid point and unit coordinate is finite.
  const SearchSpace s =
      SearchSpace::from_json(nlohmann::json::parse(R"({"u": {"uniform": [-8.9e307, 8.9e307]},
        "l": {"loguniform": [1e-300, 1e7]}, "i": {"int": [-9007199254740992, 9007199254740992]}})"),
                             "t.json");
  std::mt19937_64 rng(3);
  for (int k = 0; k < 100; ++k) {
    const nlohmann::json p = s.sample(rng);
    for (const double u : s.unit(p)) CHECK(std::isfinite(u));
  }
  CHECK(s.grid_size(5) == 125);
  for (const nlohmann::json& p : s.grid(5)) {
    for (const double u : s.unit(p)) CHECK(std::isfinite(u));
  }
}

TEST_CASE("learning-curve parameters whose metric is not finite are refused", "[numbers]") {
  const auto error = [](const std::string& curve) {
    const nlohmann::json t = nlohmann::json::parse(
        R"({"name": "t", "tuner": "random_search", "search_space": {},
            "model": "m", "samples_per_epoch": 8, "max_trials": 1, "curve": )" +
        curve + "}");
    return config_error([&] { (void)parse_tuning(t, "c.json", "workload.tuning[0]", 0); });
  };
  CHECK_THAT(
      error(R"({"y_start": -1e308})"),
      Equals("c.json: workload.tuning[0].curve.y_start: must be in [-1e9, 1e9], got -1e+308"));
  CHECK_THAT(
      error(R"({"y_best": 2e9})"),
      Equals("c.json: workload.tuning[0].curve.y_best: must be in [-1e9, 1e9], got 2000000000.0"));
  CHECK_THAT(error(R"({"width": 1e-200})"),
             Equals("c.json: workload.tuning[0].curve.width: must be in [1e-6, 1e6], got 1e-200"));
  CHECK_THAT(error(R"({"noise": 1e308})"),
             Equals("c.json: workload.tuning[0].curve.noise: must be in [0, 1e9], got 1e+308"));
  CHECK(error(R"({"y_start": -1e9, "y_best": 1e9, "width": 1e-6, "noise": 1e9})") == "(no error)");
  // At those bounds, with no dimension (every config at the optimum: 0 / (2 width^2)), the
  // metric is finite at every epoch.
  LearningCurveParams p;
  p.y_start = -1e9;
  p.y_best = 1e9;
  p.width = 1e-6;
  p.noise = 1e9;
  const LearningCurve c(SearchSpace{}, 7, p);
  for (int epoch = 1; epoch <= 50; ++epoch)
    CHECK(std::isfinite(c.metric(nlohmann::json::object(), epoch)));
}
