// Stored golden logs: every config in tests/golden/configs/ runs through the path the CLI's
// `gpumux run` takes (load_experiment, run_experiment writing a results folder) and its
// events.jsonl and summary.json must equal, byte for byte, the files stored in
// tests/golden/expected/<config name>/. They pin the engine's behaviour under every registered
// policy; tests/golden/regenerate.sh rewrites them when a change is meant to alter it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "gpumux/api/policy.hpp"
#include "gpumux/io/config.hpp"
#include "gpumux/io/experiment.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "test_support.hpp"

using namespace gpumux;
namespace fs = std::filesystem;

namespace {

const fs::path& golden_dir() {
  static const fs::path dir = test::source_dir() / "tests" / "golden";
  return dir;
}

std::vector<fs::path> golden_configs() {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(golden_dir() / "configs")) {
    if (entry.path().extension() == ".json") out.push_back(entry.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// "" when equal, else where the two texts first differ: line number and both lines.
std::string first_difference(const std::string& expected, const std::string& actual) {
  if (expected == actual) return "";
  std::istringstream e(expected), a(actual);
  std::string le, la;
  for (std::size_t line = 1;; ++line) {
    const bool has_e = static_cast<bool>(std::getline(e, le));
    const bool has_a = static_cast<bool>(std::getline(a, la));
    if (!has_e && !has_a) return "the texts differ only in their final newline";
    if (has_e != has_a || le != la) {
      return "first difference at line " + std::to_string(line) +
             "\n  expected: " + (has_e ? le : "<end of file>") +
             "\n  produced: " + (has_a ? la : "<end of file>");
    }
  }
}

/// A folder of this test process under the system's temporary directory; removed at exit
/// when empty (the files of a run that differed stay).
struct Scratch {
  fs::path dir;
  Scratch() {
    std::random_device rd;
    dir = fs::temp_directory_path() / ("gpumux_golden_" + std::to_string(rd()));
    fs::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove(dir, ec);  // only when empty
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
};

const fs::path& scratch() {
  static const Scratch s;
  return s.dir;
}

}  // namespace

TEST_CASE("stored golden logs: events.jsonl and summary.json are byte-identical", "[golden]") {
  const auto configs = golden_configs();
  REQUIRE(!configs.empty());
  for (const fs::path& cfg : configs) {
    const std::string name = cfg.stem().string();
    DYNAMIC_SECTION(name) {
      ExperimentConfig config = load_experiment(cfg, {}, test::source_dir());
      // A new folder per run (run_experiment refuses to replace what it did not write).
      const fs::path out = scratch() / name;
      fs::remove_all(out);
      config.out_dir = out.string();
      config.out_dir_origin = "test_golden_logs";
      const ExperimentResult result = run_experiment(config, test::source_dir(), true);
      REQUIRE(result.out_dir == out);
      bool equal = true;
      for (const char* file : {"events.jsonl", "summary.json"}) {
        const fs::path stored = golden_dir() / "expected" / name / file;
        const fs::path produced = out / file;
        REQUIRE(fs::exists(stored));
        const std::string diff = first_difference(slurp(stored), slurp(produced));
        INFO(name << "/" << file << ": " << diff << "\nproduced file: " << produced.string()
                  << "\nstored file: " << stored.string()
                  << "\n(if the change is intended: tests/golden/regenerate.sh, review the diff)");
        CHECK(diff.empty());
        if (!diff.empty()) equal = false;
      }
      // The produced files stay for inspection when they differ.
      if (equal) fs::remove_all(out);
    }
  }
}

TEST_CASE("stored golden logs cover every registered policy", "[golden]") {
  std::set<std::string> covered;
  for (const fs::path& cfg : golden_configs()) {
    covered.insert(load_experiment(cfg, {}, test::source_dir()).policy);
  }
  for (const std::string& policy : PolicyRegistry::instance().names()) {
    if (policy.rfind("test_", 0) == 0) continue;  // policies that tests define
    INFO("no config in tests/golden/configs/ runs policy " << policy);
    CHECK(covered.count(policy) == 1);
  }
}

TEST_CASE("stored golden logs: every stored folder has its config", "[golden]") {
  std::set<std::string> names;
  for (const fs::path& cfg : golden_configs()) names.insert(cfg.stem().string());
  for (const auto& entry : fs::directory_iterator(golden_dir() / "expected")) {
    if (!entry.is_directory()) continue;  // .gitattributes
    INFO("tests/golden/expected/" << entry.path().filename().string()
                                  << " has no config (tests/golden/regenerate.sh removes it)");
    CHECK(names.count(entry.path().filename().string()) == 1);
  }
}
