// A sweep's tables hold only up-to-date points: `--collect` checks every point as a resume
// does (fingerprint, readable result files) and refuses, naming the points and what changed;
// a point whose summary.json was cut short is re-run, naming the file (docs/sweeps.md).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

// A data folder (GPUMUX_ROOT) of its own, so the test may change a device profile's bytes.
fs::path own_root(const std::string& name) {
  const fs::path root = scratch() / name;
  const fs::path src = fs::path(GPUMUX_SOURCE_DIR) / "traces";
  for (const char* f : {"models/resnet50.json", "devices/v100-pcie3x16.json"}) {
    fs::create_directories((root / "traces" / f).parent_path());
    fs::copy_file(src / f, root / "traces" / f, fs::copy_options::overwrite_existing);
  }
  return root;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("sweep --collect refuses points a resume would re-run, naming them and what changed",
          "[cli][sweep]") {
  const fs::path root = own_root("stale-root");
  const std::string env = "GPUMUX_ROOT='" + root.string() + "'";
  const fs::path out = scratch() / "sweep-stale";
  const fs::path sweep = four_point_sweep("sw-stale", kSmallConfig, out);
  const std::string cmd = "sweep '" + sweep.string() + "'";
  REQUIRE(gpumux(cmd + " -j 2", env).exit_code == 0);
  const Outcome fresh = gpumux(cmd + " --collect", env);
  INFO(fresh.output);
  REQUIRE(fresh.exit_code == 0);
  CHECK(fresh.output.find("4 points collected") != std::string::npos);
  const std::string table = slurp(out / "summary_run.csv");

  // A --set the points did not run with.
  Outcome o = gpumux(cmd + " --collect --set horizon_s=5", env);
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("4 of 4 points have no up-to-date result") != std::string::npos);
  CHECK(o.output.find("inputs changed since it ran (settings: horizon_s): mps_1, mps_2, "
                      "exclusive_1, exclusive_2") != std::string::npos);

  // The base config changed (the training job's batch, 16 -> 8).
  std::string edited = kSmallConfig;
  edited.replace(edited.find(R"("batch": 16)"), 11, R"("batch": 8)");
  write("sw-stale-base.json", edited);
  o = gpumux(cmd + " --collect", env);
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("(settings: workload.jobs.0.batch)") != std::string::npos);
  write("sw-stale-base.json", kSmallConfig);
  CHECK(gpumux(cmd + " --collect", env).exit_code == 0);

  // A device profile's bytes changed: the folder keeps no copy, so the message says which
  // kinds of file it may be.
  std::ofstream(root / "traces" / "devices" / "v100-pcie3x16.json", std::ios::app) << "\n";
  o = gpumux(cmd + " --collect", env);
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("inputs changed since it ran (a model, device-profile, job or arrivals "
                      "file it reads): mps_1, mps_2, exclusive_1, exclusive_2") !=
        std::string::npos);
  // Refused collects left the tables as they were.
  CHECK(slurp(out / "summary_run.csv") == table);

  // The same command without --collect re-runs exactly those points, then collects.
  o = gpumux(cmd, env);
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(count(o.output, "(re-run: inputs changed since it ran (a model, device-profile") == 4);
  CHECK(gpumux(cmd + " --collect", env).exit_code == 0);
}

TEST_CASE("a point whose summary.json was cut short is re-run, naming the file", "[cli][sweep]") {
  const fs::path out = scratch() / "sweep-cut";
  const fs::path sweep = four_point_sweep("sw-cut", kSmallConfig, out);
  const std::string cmd = "sweep '" + sweep.string() + "'";
  REQUIRE(gpumux(cmd).exit_code == 0);
  const fs::path summary = out / "mps_1" / "summary.json";
  const std::string whole = slurp(summary);
  std::ofstream(summary, std::ios::trunc) << whole.substr(0, whole.size() / 2);

  // --collect names the file, exit 2, and writes nothing.
  const std::string table = slurp(out / "summary.csv");
  Outcome o = gpumux(cmd + " --collect");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("1 of 4 points") != std::string::npos);
  CHECK(o.output.find(summary.string() + ": ") != std::string::npos);
  CHECK(slurp(out / "summary.csv") == table);

  // With a file gpumux did not write beside it, the folder is not gpumux's to replace: the
  // resume refuses and deletes nothing.
  const std::string cut = slurp(summary);
  write("sweep-cut/mps_1/notes.txt", "mine");
  o = gpumux(cmd);
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("notes.txt") != std::string::npos);
  CHECK(slurp(out / "mps_1" / "notes.txt") == "mine");
  CHECK(slurp(summary) == cut);
  fs::remove(out / "mps_1" / "notes.txt");

  // A resume re-runs that point (saying why) and skips the others.
  o = gpumux(cmd);
  INFO(o.output);
  CHECK(o.exit_code == 0);
  CHECK(o.output.find("sw-cut/mps_1: done in") != std::string::npos);
  CHECK(o.output.find("(re-run: " + summary.string() + ": ") != std::string::npos);
  CHECK(count(o.output, "complete (same inputs), skipped") == 3);
  CHECK(nlohmann::json::parse(slurp(summary))["jobs"].size() == 2);
  CHECK(gpumux(cmd + " --collect").exit_code == 0);
  CHECK(slurp(out / "summary.csv") == table);

  // run.json the same way; an empty file too.
  std::ofstream(out / "exclusive_2" / "run.json", std::ios::trunc) << "";
  o = gpumux(cmd + " --collect");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find((out / "exclusive_2" / "run.json").string() + ": ") != std::string::npos);
  CHECK(gpumux(cmd).exit_code == 0);
  CHECK(gpumux(cmd + " --collect").exit_code == 0);
}
