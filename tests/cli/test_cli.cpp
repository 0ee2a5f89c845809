// The gpumux program as a user meets it: bad input gives exit code 2 and a message naming the
// file and the key or line, and leaves no results directory; sweeps resume.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "cli_harness.hpp"

namespace fs = std::filesystem;

namespace {

using namespace cli_test;

const char* const kGoodConfig = kSmallConfig;

/// Runs a bad config: exit code 2, the message names what it should, no results directory.
void expect_input_error(const std::string& name, const std::string& config,
                        const std::vector<std::string>& expected_fragments) {
  const fs::path cfg = write(name + ".json", config);
  const fs::path out = scratch() / ("out-" + name);
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'");
  INFO(o.output);
  CHECK(o.exit_code == 2);
  CHECK(o.output.find("error: ") != std::string::npos);
  for (const auto& f : expected_fragments) CHECK(o.output.find(f) != std::string::npos);
  CHECK_FALSE(fs::exists(out));
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto pos = s.find(from);
  REQUIRE(pos != std::string::npos);
  return s.replace(pos, from.size(), to);
}

}  // namespace

TEST_CASE("a good config runs and writes a complete results directory", "[cli]") {
  const fs::path cfg = write("good.json", kGoodConfig);
  const fs::path out = scratch() / "out-good";
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  for (const char* f : {"config.resolved.json", "events.jsonl", "summary.json", "summary.csv",
                        "trace.json", "run.json"}) {
    CHECK(fs::exists(out / f));
  }
  CHECK(gpumux("validate '" + cfg.string() + "'").exit_code == 0);
}

TEST_CASE("a cluster config runs on its expanded devices", "[cli]") {
  const std::string cluster =
      "\"cluster\": {\"nodes\": 2, \"gpus_per_node\": 2, \"profile\": \"v100-pcie3x16\"}";
  std::string text = kGoodConfig;
  const std::string devices = "\"devices\": [{\"profile\": \"v100-pcie3x16\"}]";
  text.replace(text.find(devices), devices.size(), cluster);
  const fs::path cfg = write("cluster.json", text);
  const fs::path out = scratch() / "out-cluster";
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "'");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  CHECK(fs::exists(out / "summary.json"));
}

TEST_CASE("bad input: each case exits 2 naming the file and the key or line", "[cli]") {
  const std::string good = kGoodConfig;
  SECTION("malformed JSON") {
    expect_input_error("malformed", replace(good, "\"devices\"", "\"devices\" ::"),
                       {"malformed.json"});
  }
  SECTION("unknown key") {
    expect_input_error(
        "unknown_key",
        replace(good, "\"name\": \"cli-test\",", "\"name\": \"cli-test\", \"sed\": 3,"),
        {"unknown_key.json", "sed", "unknown key"});
  }
  SECTION("wrong type") {
    expect_input_error("wrong_type", replace(good, "\"batch\": 16", "\"batch\": \"sixteen\""),
                       {"wrong_type.json", "workload.jobs[0].batch"});
  }
  SECTION("unknown model lists the valid names") {
    expect_input_error(
        "unknown_model",
        replace(good, "\"resnet50\", \"batch\": 16", "\"resnet5000\", \"batch\": 16"),
        {"unknown_model.json", "resnet5000", "resnet152", "bert_base"});
  }
  SECTION("unknown policy lists the valid names") {
    expect_input_error("unknown_policy", replace(good, "\"time_slicing\"", "\"fastest\""),
                       {"unknown_policy.json", "policy.name", "fastest", "time_slicing", "mps"});
  }
  SECTION("unknown device profile lists the valid names") {
    expect_input_error("unknown_device", replace(good, "v100-pcie3x16", "v200"),
                       {"unknown_device.json", "v200", "h100-sxm"});
  }
  SECTION("devices and cluster together") {
    expect_input_error("both_cluster",
                       replace(good, "\"devices\":",
                               "\"cluster\": {\"nodes\": 2, \"gpus_per_node\": 1, \"profile\": "
                               "\"v100-pcie3x16\"}, \"devices\":"),
                       {"both_cluster.json", "cluster", "not both"});
  }
  SECTION("a cluster of no nodes") {
    expect_input_error("no_nodes",
                       replace(good, "\"devices\": [{\"profile\": \"v100-pcie3x16\"}]",
                               "\"cluster\": {\"nodes\": 0, \"gpus_per_node\": 1, \"profile\": "
                               "\"v100-pcie3x16\"}"),
                       {"no_nodes.json", "cluster.nodes"});
  }
  SECTION("negative arrival") {
    expect_input_error(
        "negative",
        replace(good, "\"arrival_s\": 0, \"iterations\"", "\"arrival_s\": -1, \"iterations\""),
        {"negative.json", "arrival_s"});
  }
  SECTION("unsorted request arrivals") {
    expect_input_error("unsorted", replace(good, "[0.01, 0.02]", "[0.02, 0.01]"),
                       {"unsorted.json", "requests"});
  }
  SECTION("unsorted arrivals in a JSONL file name the line") {
    const fs::path jsonl =
        write("unsorted.jsonl",
              "{\"name\": \"a\", \"kind\": \"training\", \"model\": \"resnet50\", \"batch\": 8, "
              "\"arrival_s\": 5, \"iterations\": 1}\n"
              "{\"name\": \"b\", \"kind\": \"training\", \"model\": \"resnet50\", \"batch\": 8, "
              "\"arrival_s\": 1, \"iterations\": 1}\n");
    std::string cfg = good;
    const auto start = cfg.find("\"workload\"");
    cfg = cfg.substr(0, start) + "\"workload\": {\"files\": [\"" + jsonl.string() + "\"]}\n}";
    expect_input_error("unsorted_file", cfg, {"unsorted.jsonl", "line 2", "arrival_s"});
  }
  SECTION("a missing workload file") {
    std::string cfg = good;
    const auto start = cfg.find("\"workload\"");
    cfg = cfg.substr(0, start) + "\"workload\": {\"files\": [\"traces/workloads/nope.jsonl\"]}\n}";
    expect_input_error("missing_file", cfg, {"nope.jsonl"});
  }
  SECTION("an unknown platform parameter, on a GPU platform too") {
    // Platform parameters are checked before the device is looked for: exit 2, not 1.
    for (const char* platform : {"sim", "emulated", "cuda"}) {
      INFO(platform);
      expect_input_error(
          std::string("platform_param_") + platform,
          replace(good, "\"name\": \"cli-test\",",
                  std::string("\"name\": \"cli-test\", \"platform\": \"") + platform +
                      "\", \"platform_params\": {\"bogus\": 1},"),
          {std::string("platform_param_") + platform + ".json", "platform_params.bogus"});
    }
  }
  SECTION("a missing config file") {
    const Outcome o = gpumux("run /nonexistent/config.json");
    CHECK(o.exit_code == 2);
    CHECK(o.output.find("/nonexistent/config.json") != std::string::npos);
  }
  SECTION("a bad --set override") {
    const fs::path cfg = write("override.json", good);
    const Outcome o = gpumux("run '" + cfg.string() + "' --set devices.7.profile=x");
    CHECK(o.exit_code == 2);
    CHECK(o.output.find("devices.7") != std::string::npos);
  }
  SECTION("a bad command line") {
    CHECK(gpumux("run").exit_code == 2);
    CHECK(gpumux("frobnicate").exit_code == 2);
    CHECK(gpumux("list everything").exit_code == 2);
  }
}

TEST_CASE("every command answers --help, and list prints the registries", "[cli]") {
  for (const char* cmd : {"--help", "run --help", "validate --help", "list --help", "sweep --help",
                          "calibrate --help"}) {
    const Outcome o = gpumux(cmd);
    INFO(cmd << "\n" << o.output);
    CHECK(o.exit_code == 0);
    CHECK(o.output.find("Usage") != std::string::npos);
  }
  CHECK(gpumux("list policies").output.find("stop_and_start") != std::string::npos);
  CHECK(gpumux("list models").output.find("resnet152") != std::string::npos);
  CHECK(gpumux("list devices").output.find("v100-pcie3x16") != std::string::npos);
  CHECK(gpumux("list generators").output.find("poisson") != std::string::npos);
  CHECK(gpumux("list platforms").output.find("sim") != std::string::npos);
  const Outcome tuners = gpumux("list tuners");
  CHECK(tuners.exit_code == 0);
  for (const char* name : {"grid_search", "random_search", "successive_halving", "hyperband",
                           "asha", "bohb", "sync_bohb", "pbt"}) {
    CHECK(tuners.output.find(name) != std::string::npos);
  }
}

TEST_CASE("list policies --params prints each policy's declared parameters", "[cli]") {
  const Outcome o = gpumux("list policies --params");
  INFO(o.output);
  CHECK(o.exit_code == 0);
  // One line per parameter under its policy: name, type [unit] {choices}, default, help.
  const auto olympian = o.output.find("olympian");
  const auto quantum = o.output.find("    quantum_us");
  REQUIRE(olympian != std::string::npos);
  REQUIRE(quantum != std::string::npos);
  CHECK(quantum > olympian);
  const std::string line = o.output.substr(quantum, o.output.find('\n', quantum) - quantum);
  CHECK(line.find("duration [us]") != std::string::npos);
  CHECK(line.find("default 1000.0") != std::string::npos);
  CHECK(o.output.find("choice {pack|fair|rr|fifo|preempt|srtf}") != std::string::npos);
  // Without the flag, only names and summaries.
  CHECK(gpumux("list policies").output.find("quantum_us") == std::string::npos);
  // Platforms declare theirs the same way.
  const Outcome platforms = gpumux("list platforms --params");
  CHECK(platforms.exit_code == 0);
  CHECK(platforms.output.find("    time_scale") != std::string::npos);
  // Tuners too: Hyperband's eta, with the Fluid scripts' default 3.
  const Outcome tuners = gpumux("list tuners --params");
  CHECK(tuners.exit_code == 0);
  const auto eta = tuners.output.find("    eta", tuners.output.find("hyperband"));
  REQUIRE(eta != std::string::npos);
  const std::string eta_line = tuners.output.substr(eta, tuners.output.find('\n', eta) - eta);
  std::istringstream after_default(eta_line.substr(eta_line.find("default") + 7));
  std::string value;
  after_default >> value;
  CHECK(value == "3");
}

TEST_CASE("platform cuda without a GPU fails cleanly with exit code 1", "[cli]") {
  const fs::path cfg = write("cuda.json", kGoodConfig);
  // CUDA_VISIBLE_DEVICES= hides any GPU, so the test means the same on a GPU machine.
  const Outcome o = gpumux("run '" + cfg.string() + "' --set platform=cuda --out '" +
                               (scratch() / "out-cuda").string() + "'",
                           "CUDA_VISIBLE_DEVICES=");
  INFO(o.output);
  // No GPU in CI: either the backend was not compiled, or no device exists. Never a crash.
  CHECK(o.exit_code == 1);
  CHECK(o.output.find("error: ") != std::string::npos);
  CHECK_FALSE(fs::exists(scratch() / "out-cuda"));
}

TEST_CASE("sweeps run every point and resume without re-running complete ones", "[cli]") {
  write("sweep-base.json", kGoodConfig);
  const fs::path out = scratch() / "sweep-out";
  const fs::path sweep =
      write("sweep.json", R"({"name": "s", "base": ")" + (scratch() / "sweep-base.json").string() +
                              R"(", "out_dir": ")" + out.string() +
                              R"(", "grid": {"policy.name": ["mps", "exclusive"]}})");
  const Outcome first = gpumux("sweep '" + sweep.string() + "' -j 2");
  INFO(first.output);
  REQUIRE(first.exit_code == 0);
  CHECK(fs::exists(out / "mps" / "run.json"));
  CHECK(fs::exists(out / "exclusive" / "summary.json"));
  CHECK(first.output.find("[2/2]") != std::string::npos);
  const Outcome second = gpumux("sweep '" + sweep.string() + "'");
  CHECK(second.exit_code == 0);
  CHECK(second.output.find("complete (same inputs), skipped") != std::string::npos);
}

TEST_CASE("every figure sweep is accepted by platform cuda up to the missing GPU", "[cli]") {
  // `--set platform=cuda` runs the figure configs on a GPU. Without one, each point
  // must get through every input check (config, workload, models, profiles, policy and
  // platform parameters) and fail only because no GPU is usable: exit 1, never 2, and no
  // results written.
  int sweeps = 0;
  for (const auto& entry :
       fs::directory_iterator(fs::path(GPUMUX_SOURCE_DIR) / "experiments" / "sweeps")) {
    if (entry.path().extension() != ".json") continue;
    ++sweeps;
    const std::string stem = entry.path().stem().string();
    const fs::path out = scratch() / ("cuda-" + stem);
    const Outcome o = gpumux("sweep '" + entry.path().string() +
                                 "' --quick --set platform=cuda --out-dir '" + out.string() + "'",
                             "CUDA_VISIBLE_DEVICES=");
    INFO(stem << "\n" << o.output);
    CHECK(o.exit_code == 1);
    // Every point failed for want of a GPU (or of the compiled backend), nothing else.
    std::istringstream lines(o.output);
    int points = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("[", 0) != 0 || line.find("FAILED") == std::string::npos) continue;
      ++points;
      INFO(line);
      CHECK((line.find("no usable GPU") != std::string::npos ||
             line.find("not compiled") != std::string::npos));
    }
    CHECK(points > 0);
    bool wrote_run = false;
    if (fs::exists(out)) {
      for (const auto& f : fs::recursive_directory_iterator(out)) {
        wrote_run = wrote_run || f.path().filename() == "run.json";
      }
    }
    CHECK_FALSE(wrote_run);
  }
  CHECK(sweeps >= 15);
}
