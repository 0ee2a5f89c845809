// Tuning jobs run by the engine (TuningDriver) under the trial_per_gpu executor: a
// successive-halving job of 9 trials, eta 3, on 3 GPUs. Counts and times computed by hand:
// rungs 9@1 -> 3@3 -> 1@9 epochs run 9 + 3*2 + 6 = 21 epochs (the tuner's own test), each
// epoch ipe = ceil(64 / 32) = 2 iterations whose time is the cost model's forward + backward
// + update of the whole model.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/summary.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;
using gpumux::test::make_config;
using gpumux::test::run_config;

namespace {

constexpr const char* kGpu = "v100-pcie3x16";

nlohmann::json tuning_job(int max_trials = 9) {
  return {{"name", "sha"},
          {"tuner", "successive_halving"},
          {"params", {{"num_samples", 9}, {"eta", 3}, {"min_epochs", 1}, {"max_epochs", 9}}},
          {"search_space", {{"lr", {{"loguniform", {1e-4, 1.0}}}}}},
          {"model", "alexnet"},
          {"batch", 32},
          {"samples_per_epoch", 64},
          {"max_trials", max_trials},
          {"arrival_s", 0.5}};
}

nlohmann::json config(nlohmann::json tuning) {
  return make_config("trial_per_gpu", {{"tuning", nlohmann::json::array({std::move(tuning)})}},
                     {kGpu, kGpu, kGpu});
}

struct EpochReport {
  TimeNs t;
  std::uint32_t job;
  int epoch;
  double metric;
  std::string decision;
};

std::vector<EpochReport> epochs(const ExperimentResult& r) {
  std::vector<EpochReport> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::TrialEpoch) {
      out.push_back({e.t_ns, e.job, trial_epoch_of(e), trial_metric_of(e), std::string(e.label)});
    }
  }
  return out;
}

/// Solo time of one alexnet iteration at batch 32 on the V100: forward + backward + update.
DurationNs iteration_ns() {
  const ModelCatalog catalog(test::source_dir() / "traces" / "models");
  const Model& m = catalog.at("alexnet");
  const DeviceProfile p = load_device_profile(test::source_dir() / "traces" / "devices" /
                                              (std::string(kGpu) + ".json"));
  const CostModel c(p, CostOptions{});
  const LayerRange all{0, m.layer_count()};
  return c.op_kernels(m, all, 32, Pass::Forward, false).solo_ns() +
         c.op_kernels(m, all, 32, Pass::Backward, false).solo_ns() +
         c.update_kernels(m, Optimizer::Momentum).solo_ns();
}

}  // namespace

TEST_CASE("a successive-halving tuning job under trial_per_gpu: 21 epochs, all trials stopped",
          "[tuning]") {
  const ExperimentResult r = run_config(config(tuning_job()));
  const auto reps = epochs(r);
  REQUIRE(reps.size() == 21);
  // 9 trial slots; every one started (9 trials) and ended stopped.
  REQUIRE(r.jobs.size() == 9);
  std::map<std::uint32_t, std::string> ends;
  std::uint64_t iterations = 0;
  std::set<std::uint32_t> arrived;
  TimeNs tuning_end = -1;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::JobEnd) ends[e.job] = std::string(e.label);
    if (e.kind == EventKind::IterationEnd) ++iterations;
    if (e.kind == EventKind::JobArrival) arrived.insert(e.job);
    if (e.kind == EventKind::TuningEnd) tuning_end = e.t_ns;
  }
  CHECK(arrived.size() == 9);
  REQUIRE(ends.size() == 9);
  for (const auto& [job, label] : ends) CHECK(label == "stopped");
  CHECK(iterations == 21 * 2);  // ipe = ceil(64 / 32)
  // Epochs per trial: 6 trials 1 epoch, 2 trials 3, 1 trial 9.
  std::map<std::uint32_t, int> last;
  for (const auto& e : reps) last[e.job] = std::max(last[e.job], e.epoch);
  std::multiset<int> counts;
  for (const auto& [job, n] : last) counts.insert(n);
  CHECK(counts == std::multiset<int>{1, 1, 1, 1, 1, 1, 3, 3, 9});
  CHECK(tuning_end == reps.back().t);
  CHECK(r.run.jobs_unfinished == 0);
  // The summary comes from the events alone: the log summarised again gives the same.
  CHECK(summarize(r.log, r.jobs, 3).dump() == r.summary.dump());

  // An epoch of a trial running on its GPU takes 2 iterations back to back.
  const DurationNs epoch_ns = 2 * iteration_ns();
  std::size_t checked = 0;
  for (std::size_t i = 0; i < reps.size(); ++i) {
    for (std::size_t k = i + 1; k < reps.size(); ++k) {
      if (reps[k].job != reps[i].job) continue;
      if (reps[k].epoch == reps[i].epoch + 1 && reps[i].decision == "continue") {
        CHECK(reps[k].t - reps[i].t == epoch_ns);
        ++checked;
      }
      break;
    }
  }
  CHECK(checked == 3 + 5);  // rung 1: epochs 2 -> 3 of 3 trials; rung 2: 4 -> 9 of one
}

TEST_CASE("a paused trial leaves its GPU to the next waiting trial", "[tuning]") {
  const ExperimentResult r = run_config(config(tuning_job()));
  // Rung 0: 9 trials, 3 GPUs, one epoch each. A trial's pause frees its weights at once.
  std::map<std::uint32_t, TimeNs> paused_at;
  for (const auto& e : epochs(r)) {
    if (e.decision == "pause" && e.epoch == 1) paused_at.emplace(e.job, e.t);
  }
  REQUIRE(paused_at.size() >= 3);
  std::size_t freed = 0;
  for (const Event& e : r.log.events()) {
    if (e.kind != EventKind::Free || e.label != "weights") continue;
    const auto it = paused_at.find(e.job);
    if (it != paused_at.end() && it->second == e.t_ns) ++freed;
  }
  CHECK(freed == paused_at.size());
}

TEST_CASE("tuning runs are deterministic for a seed", "[tuning]") {
  const auto a = test::events_jsonl(run_config(config(tuning_job())));
  const auto b = test::events_jsonl(run_config(config(tuning_job())));
  CHECK(a == b);
  nlohmann::json other = config(tuning_job());
  other["seed"] = 8;
  CHECK(test::events_jsonl(run_config(other)) != a);
}

TEST_CASE("tuning config errors name the file and the key", "[tuning]") {
  nlohmann::json t = tuning_job();
  t.erase("max_trials");
  try {
    (void)run_config(config(t));
    FAIL("no error");
  } catch (const ConfigError& e) {
    CHECK_THAT(e.what(), Catch::Contains("workload.tuning[0].max_trials"));
  }
  t = tuning_job();
  t["params"]["eta"] = 1;
  CHECK_THROWS_AS(run_config(config(t)), ConfigError);
  t = tuning_job();
  t["tuner"] = "nope";
  CHECK_THROWS_WITH(run_config(config(t)), Catch::Contains("workload.tuning[0].tuner"));
  // Too few slots for the 9 trials the tuner starts: a run-time error naming max_trials.
  CHECK_THROWS_WITH(run_config(config(tuning_job(5))), Catch::Contains("max_trials"));
}

TEST_CASE("a target ends the tuning at the first report reaching it: time to target", "[tuning]") {
  // The run without a target gives the reports; a target equal to the 15th report's metric
  // is first reached at the first report >= it, and the targeted run is the same up to there.
  const ExperimentResult free_run = run_config(config(tuning_job()));
  const auto reps = epochs(free_run);
  REQUIRE(reps.size() == 21);
  const double target = reps[14].metric;
  std::size_t first = 0;
  while (reps[first].metric < target) ++first;
  REQUIRE(first <= 14);

  const auto& s0 = free_run.summary["tuning"][0];
  CHECK(s0["epochs"] == 21);
  CHECK(s0["trials_started"] == 9);
  CHECK(s0["target_reached"] == false);
  CHECK(s0["time_to_target_s"].is_null());
  CHECK(free_run.summary["jobs_overall"]["stopped"] == 9);

  nlohmann::json t = tuning_job();
  t["target"] = target;
  const ExperimentResult r = run_config(config(t));
  const auto hit = epochs(r);
  REQUIRE(hit.size() == first + 1);
  CHECK(hit.back().t == reps[first].t);
  CHECK(hit.back().metric == reps[first].metric);
  const auto& s = r.summary["tuning"][0];
  CHECK(s["target_reached"] == true);
  const double expected_s = ns_to_seconds(reps[first].t - seconds_to_ns(0.5));
  CHECK(s["time_to_target_s"].get<double>() == Approx(expected_s).epsilon(1e-12));
  CHECK(s["makespan_s"].get<double>() == Approx(expected_s).epsilon(1e-12));
  CHECK(s["epochs"] == first + 1);
  // Every trial, running, paused or never started, ends stopped with the tuning.
  std::size_t stopped = 0;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::JobEnd) {
      CHECK(e.label == "stopped");
      CHECK(e.t_ns <= reps[first].t);
      ++stopped;
    }
  }
  CHECK(stopped == 9);
}

TEST_CASE("every tuner runs to its end under trial_per_gpu, keeping the invariants", "[tuning]") {
  struct Case {
    const char* tuner;
    nlohmann::json params;
  };
  const std::vector<Case> cases{
      {"grid_search", {{"points_per_dim", 2}, {"max_epochs", 2}}},
      {"random_search", {{"num_samples", 4}, {"max_epochs", 2}}},
      {"successive_halving", {{"num_samples", 4}, {"eta", 2}, {"max_epochs", 4}}},
      {"hyperband", {{"eta", 3}, {"max_epochs", 9}}},
      {"asha", {{"num_samples", 9}, {"eta", 3}, {"max_epochs", 9}, {"max_concurrent", 3}}},
      {"bohb", {{"eta", 3}, {"max_epochs", 9}}},
      {"sync_bohb", {{"eta", 3}, {"max_epochs", 9}}},
      {"pbt", {{"population", 4}, {"perturbation_interval", 2}, {"max_epochs", 6}}}};
  for (const Case& c : cases) {
    INFO(c.tuner);
    nlohmann::json t = tuning_job(60);
    t["tuner"] = c.tuner;
    t["params"] = c.params;
    const ExperimentResult r = run_config(config(t));
    const DeviceProfile p = load_device_profile(test::source_dir() / "traces" / "devices" /
                                                (std::string(kGpu) + ".json"));
    const std::vector<std::uint64_t> capacity(3, p.memory_bytes);
    const auto violations =
        test::check_invariants(r, capacity, std::vector<bool>(3, false), /*virtual_time=*/true);
    for (const auto& v : violations) UNSCOPED_INFO(v);
    CHECK(violations.empty());
    CHECK(r.run.jobs_unfinished == 0);
    std::size_t ends = 0;
    for (const Event& e : r.log.events()) ends += e.kind == EventKind::TuningEnd ? 1 : 0;
    CHECK(ends == 1);
    const auto& s = r.summary["tuning"][0];
    CHECK(s["trials_started"].get<int>() >= 2);
    if (std::string(c.tuner) == "pbt") {
      // An exploited copy starts from its donor's checkpoint: its first report is past epoch 1.
      std::map<std::uint32_t, int> first;
      for (const auto& e : epochs(r)) first.emplace(e.job, e.epoch);
      CHECK(std::any_of(first.begin(), first.end(), [](const auto& f) { return f.second > 1; }));
    }
    CHECK(s["epochs"].get<int>() >= s["trials_started"].get<int>());
  }
}
