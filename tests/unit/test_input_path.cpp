// input_path.hpp: a relative path in a config resolves against the config's folder first,
// then (deprecated, except for the repository's traces/) against the repository root.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <random>

#include "gpumux/io/config.hpp"
#include "gpumux/io/input_path.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace gpumux;

namespace {

fs::path fresh_dir() {
  std::random_device rd;
  const fs::path d = fs::temp_directory_path() / ("gpumux_paths_" + std::to_string(rd()));
  fs::create_directories(d / "cfg");
  return d;
}

nlohmann::json replay_config(const std::string& file) {
  return {{"name", "paths"},
          {"devices", {{{"profile", "v100-pcie3x16"}}}},
          {"policy", {{"name", "time_slicing"}}},
          {"workload",
           {{"jobs",
             {{{"name", "svc"},
               {"kind", "inference"},
               {"model", "resnet50"},
               {"requests", {{"file", file}}}}}}}}};
}

}  // namespace

TEST_CASE("relative paths: the config's folder, then the repository root", "[config]") {
  const fs::path root = fresh_dir();
  const fs::path cfg = root / "cfg" / "x.json";
  std::ofstream(root / "cfg" / "near.csv") << "arrival_s\n0.5\n";
  std::ofstream(root / "near.csv") << "arrival_s\n9\n";
  fs::create_directories(root / "data");
  std::ofstream(root / "data" / "far.csv") << "arrival_s\n1\n";
  CHECK(resolve_input_path("near.csv", cfg.string(), root).path == root / "cfg" / "near.csv");
  const ResolvedInput far = resolve_input_path("data/far.csv", cfg.string(), root);
  CHECK(far.path == root / "data" / "far.csv");
  CHECK(far.via_repo_root);
  CHECK(resolve_input_path("none.csv", cfg.string(), root).path == root / "cfg" / "none.csv");
  CHECK(resolve_input_path("none.csv", "x.json", root).path == root / "none.csv");
  CHECK(resolve_input_path("/abs/x.csv", cfg.string(), root).path == "/abs/x.csv");
  CHECK(repo_root_fallback_warning("near.csv", cfg.string(), "k", root).empty());
  CHECK(repo_root_fallback_warning("data/far.csv", cfg.string(), "k", root) ==
        cfg.string() + ": k: 'data/far.csv' is not in the config's folder (" +
            (root / "cfg").string() +
            ") and was found relative to the repository root instead; this fallback is "
            "deprecated: write the path relative to the config's folder, or absolute");
  fs::remove_all(root);
}

TEST_CASE("a config's replay file next to it wins, a repository path still loads, with a warning",
          "[config]") {
  const fs::path dir = fresh_dir();
  const fs::path cfg = dir / "cfg" / "x.json";
  std::ofstream(dir / "cfg" / "mine.csv") << "arrival_s\n0.25\n0.5\n";
  const fs::path repo = test::source_dir();
  ExperimentConfig c = parse_experiment(replay_config("mine.csv"), cfg.string(), repo);
  REQUIRE(c.jobs.size() == 1);
  CHECK(c.jobs[0].requests_ns == std::vector<TimeNs>{250'000'000, 500'000'000});
  CHECK(c.warnings.empty());
  // The repository's data under traces/ is named from the repository root without a warning.
  c = parse_experiment(replay_config("traces/arrivals/orion_inter_arrival.csv"), cfg.string(),
                       repo);
  CHECK(c.jobs[0].requests_ns.size() == 6240);
  CHECK(c.warnings.empty());
  // Any other repository path: the old resolution, deprecated.
  c = parse_experiment(replay_config("tests/fuzz/corpus/arrivals/seed_steady.csv"), cfg.string(),
                       repo);
  REQUIRE(c.warnings.size() == 1);
  CHECK(c.warnings[0].find("workload.jobs[0].requests.file: "
                           "'tests/fuzz/corpus/arrivals/seed_steady.csv' is not in the "
                           "config's folder") != std::string::npos);
  fs::remove_all(dir);
}
