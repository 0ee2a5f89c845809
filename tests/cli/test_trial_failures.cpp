// A tuning trial that does not fit its GPU fails, as a trial that errors in Ray Tune: a
// trial_failed event names it, its config and the out-of-memory bytes, the summary counts it,
// its GPU is released and the run goes on (before: exit 1, no results, no key).
//
// Hand-computed on the simulated V100 (traces/devices/v100-pcie3x16.json: memory_bytes
// 17,179,869,184) with ResNet-50 (traces/models/resnet50.json: 102,440,608 weight bytes; a
// training step keeps 89,726,880 activation bytes per sample, the sum of the layers'
// output_bytes), momentum SGD (weights + gradients + one slot = 3 x the weights):
//   batch 32:  3 x 102,440,608 + 32 x 89,726,880 = 307,321,824 + 2,871,260,160 B: fits;
//   batch 256: 256 x 89,726,880 = 22,970,081,280 B of activations alone: does not.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_harness.hpp"

namespace fs = std::filesystem;
using namespace cli_test;

namespace {

std::string tuning(const std::string& name, int batch) {
  return R"({"name": ")" + name + R"(", "tuner": "random_search",
    "params": {"num_samples": 2, "max_epochs": 2},
    "search_space": {"lr": {"loguniform": [0.001, 1.0]}},
    "model": "resnet50", "batch": )" +
         std::to_string(batch) + R"(, "samples_per_epoch": )" + std::to_string(2 * batch) +
         R"(, "max_trials": 2})";
}

std::string config(const std::vector<std::string>& tunings) {
  std::string list;
  for (const auto& t : tunings) list += (list.empty() ? "" : ", ") + t;
  return R"({"name": "trial-failures", "devices": [{"profile": "v100-pcie3x16"}],
    "policy": {"name": "trial_per_gpu"}, "workload": {"tuning": [)" +
         list + "]}}";
}

struct Run {
  nlohmann::json summary;
  std::vector<nlohmann::json> events;
};

Run run(const std::string& name, const std::string& text) {
  const fs::path cfg = write(name + ".json", text);
  const fs::path out = scratch() / ("out-" + name);
  const Outcome o = gpumux("run '" + cfg.string() + "' --out '" + out.string() + "' -q");
  INFO(o.output);
  REQUIRE(o.exit_code == 0);
  Run r;
  r.summary = nlohmann::json::parse(slurp(out / "summary.json"));
  std::istringstream lines(slurp(out / "events.jsonl"));
  for (std::string line; std::getline(lines, line);)
    r.events.push_back(nlohmann::json::parse(line));
  return r;
}

const nlohmann::json& job(const Run& r, const std::string& name) {
  for (const auto& j : r.summary.at("jobs")) {
    if (j.at("name") == name) return j;
  }
  FAIL("no job " << name);
  return r.summary;
}

std::vector<nlohmann::json> of_kind(const Run& r, const std::string& ev) {
  std::vector<nlohmann::json> out;
  for (const auto& e : r.events) {
    if (e.at("ev") == ev) out.push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("a trial that does not fit fails and the other trials finish", "[cli][tuning]") {
  const Run r = run("fits-and-not", config({tuning("small", 32), tuning("big", 256)}));

  const auto& tunings = r.summary.at("tuning");
  REQUIRE(tunings.size() == 2);
  CHECK(tunings[0].at("name") == "small");
  CHECK(tunings[0].at("trials_started") == 2);
  CHECK(tunings[0].at("trials_failed") == 0);
  CHECK(tunings[0].at("epochs") == 4);  // 2 trials x 2 epochs
  CHECK(tunings[1].at("name") == "big");
  CHECK(tunings[1].at("trials_started") == 2);
  CHECK(tunings[1].at("trials_failed") == 2);
  CHECK(tunings[1].at("epochs") == 0);
  CHECK(tunings[1].at("makespan_s").is_number());  // its tuner ended: both trials accounted for

  for (const char* name : {"small/trial-0", "small/trial-1"}) {
    INFO(name);
    CHECK(job(r, name).at("outcome") == "stopped");
    CHECK(job(r, name).at("iterations") == 4);  // 2 epochs of 64 samples at batch 32
  }
  for (const char* name : {"big/trial-0", "big/trial-1"}) {
    INFO(name);
    const auto& j = job(r, name);
    CHECK(j.at("outcome") == "rejected");
    CHECK(j.at("status").get<std::string>().find("out of memory: requested 22970081280 B") !=
          std::string::npos);
  }

  const auto failed = of_kind(r, "trial_failed");
  REQUIRE(failed.size() == 2);
  for (std::size_t k = 0; k < failed.size(); ++k) {
    const auto& e = failed[k];
    INFO(e.dump());
    // a: the trial, b: its epochs done, label: the reason and its config (event_fields.hpp)
    CHECK(e.at("a") == static_cast<int>(k));
    CHECK(e.at("b") == 0);
    const std::string reason = e.at("label");
    CHECK(reason.find("activations of job 'big/trial-" + std::to_string(k) +
                      "': out of memory: requested 22970081280 B") != std::string::npos);
    CHECK(reason.find("; config {\"lr\":") != std::string::npos);
  }
  // Both tunings ended; the big trials' memory was released (every alloc has its free).
  CHECK(of_kind(r, "tuning_end").size() == 2);
  std::int64_t held = 0;
  for (const auto& e : r.events) {
    if (e.at("ev") == "alloc") held += e.at("a").get<std::int64_t>();  // a: bytes
    if (e.at("ev") == "free") held -= e.at("a").get<std::int64_t>();
  }
  CHECK(held == 0);
}

TEST_CASE("a tuning whose every trial fails still ends with results, exit 0", "[cli][tuning]") {
  const Run r = run("none-fits", config({tuning("big", 256)}));
  const auto& t = r.summary.at("tuning").at(0);
  CHECK(t.at("trials_started") == 2);
  CHECK(t.at("trials_failed") == 2);
  CHECK(t.at("best_metric").is_null());
  CHECK(of_kind(r, "trial_failed").size() == 2);
  CHECK(of_kind(r, "tuning_end").size() == 1);
  CHECK(r.summary.at("jobs_overall").at("rejected") == 2);
}
