// Policy conformance, parameterised over platforms: every registered policy runs on "sim"
// (every standard small trace, plus the short workload) and on "emulated" (the short
// workload, in wall-clock time with real worker threads), and the same checks hold on both:
// the invariants, every submitted op ended exactly once, every job finished or was rejected.
// Nothing is downgraded to a warning: a PolicyError, a stall or a horizon hit fails the test.
// Only sim is deterministic, so only sim also checks that two runs give identical events.
// A new policy is picked up from the registry with no new test code.
#include <map>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/api/policy.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/device_profile.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

// A GPU plus a CPU device, so policies that migrate to the CPU can.
const std::vector<std::string> kDevices{"v100-pcie3x16", "xeon-2x18"};

// Short on purpose: a whole policy run takes a few hundred ms of wall time on "emulated".
// Small models, so that a policy running them on the CPU device (real Eigen compute) stays
// quick, also in sanitizer builds.
nlohmann::json short_workload() {
  return {{"jobs",
           {{{"name", "train-vae"},
             {"kind", "training"},
             {"model", "vae"},
             {"batch", 4},
             {"arrival_s", 0.0},
             {"iterations", 3}},
            {{"name", "svc-mobilenet"},
             {"kind", "inference"},
             {"model", "mobilenet_v2"},
             {"batch", 1},
             {"arrival_s", 0.0},
             {"requests", {0.005, 0.02, 0.04}},
             {"slo_ms", 50},
             {"priority", 10}},
            {{"name", "svc-seq2seq"},
             {"kind", "inference"},
             {"model", "seq2seq"},
             {"batch", 2},
             {"arrival_s", 0.01},
             {"requests", {0.012, 0.03}}}}}};
}

nlohmann::json config_for(const std::string& policy, const std::string& platform,
                          nlohmann::json workload) {
  auto doc = test::make_config(policy, std::move(workload), kDevices);
  if (platform == "emulated") {
    doc["platform"] = "emulated";
    // Process start-up (2.6 s in the profiles) and every other emulated duration x 0.05: the
    // plumbing is what is under test, not the profile's numbers.
    doc["platform_params"] = {
        {"time_scale", 0.05}, {"host_arena_mib", 64}, {"host_weights_mib", 16}};
    doc["horizon_s"] = 10.0;
  }
  return doc;
}

// The checks every platform passes.
ExperimentResult run_and_check(const nlohmann::json& doc, bool virtual_time) {
  std::vector<std::uint64_t> capacity;
  std::vector<bool> is_cpu;
  for (const auto& d : kDevices) {
    const DeviceProfile p = find_device_profile(test::source_dir() / "traces" / "devices", d);
    capacity.push_back(p.memory_bytes);
    is_cpu.push_back(p.kind == DeviceKind::Cpu);
  }
  ExperimentResult r = test::run_config(doc);  // a PolicyError fails the test here
  INFO(r.platform_description);
  std::map<std::uint64_t, int> submitted, ended;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::OpSubmit) ++submitted[e.op];
    if (e.kind == EventKind::OpEnd) ++ended[e.op];
  }
  CHECK(submitted == ended);  // the device lost or repeated nothing
  const auto violations = test::check_invariants(r, capacity, is_cpu, virtual_time);
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
  CHECK(r.run.jobs_unfinished == 0);
  CHECK(r.run.jobs_finished + r.run.jobs_rejected == r.jobs.size());
  return r;
}

}  // namespace

TEST_CASE("every policy keeps the invariants on sim", "[conformance]") {
  const auto policies = PolicyRegistry::instance().names();
  REQUIRE(policies.size() >= 5);
  std::vector<nlohmann::json> workloads;
  for (const auto& trace : test::standard_traces()) workloads.push_back({{"files", {trace}}});
  workloads.push_back(short_workload());
  for (const auto& policy : policies) {
    for (std::size_t w = 0; w < workloads.size(); ++w) {
      DYNAMIC_SECTION(policy << " on sim, workload " << w) {
        const auto doc = config_for(policy, "sim", workloads[w]);
        const ExperimentResult first = run_and_check(doc, /*virtual_time=*/true);
        const ExperimentResult second = test::run_config(doc);
        CHECK(test::events_jsonl(first) == test::events_jsonl(second));
      }
    }
  }
}

TEST_CASE("every policy keeps the invariants on emulated", "[conformance]") {
  const auto policies = PolicyRegistry::instance().names();
  REQUIRE(policies.size() >= 5);
  for (const auto& policy : policies) {
    DYNAMIC_SECTION(policy << " on emulated") {
      (void)run_and_check(config_for(policy, "emulated", short_workload()),
                          /*virtual_time=*/false);
    }
  }
}

// A tuning job whose trials run to their budget and stop (random search never pauses): every
// policy runs its trials as training jobs that arrive at run time and end "stopped". Pausing
// tuners are not here: a policy that holds the GPU until its job finishes (exclusive) would
// wait forever on a paused trial; executors such as trial_per_gpu run those
// (tests/policy/test_tuning_jobs.cpp).
TEST_CASE("every policy runs a tuning job whose trials stop", "[conformance]") {
  const nlohmann::json tuning = {{"name", "rs"},
                                 {"tuner", "random_search"},
                                 {"params", {{"num_samples", 3}, {"max_epochs", 2}}},
                                 {"search_space", {{"lr", {{"loguniform", {1e-4, 1.0}}}}}},
                                 {"model", "alexnet"},
                                 {"batch", 16},
                                 {"samples_per_epoch", 32},
                                 {"max_trials", 4},
                                 {"arrival_s", 0.01}};
  const nlohmann::json workload = {{"jobs",
                                    {{{"name", "train"},
                                      {"kind", "training"},
                                      {"model", "resnet18"},
                                      {"batch", 16},
                                      {"iterations", 3}}}},
                                   {"tuning", {tuning}}};
  for (const auto& policy : PolicyRegistry::instance().names()) {
    DYNAMIC_SECTION(policy << " with a tuning job") {
      const ExperimentResult r = run_and_check(config_for(policy, "sim", workload), true);
      const auto& s = r.summary["tuning"][0];
      CHECK(s["trials_started"] == 3);
      // A policy that rejects training jobs (a serving system) fails every trial: the tuner
      // goes on without them and the tuning ends (before format 6 it waited forever for
      // their reports); its unused slot ends stopped.
      const bool rejected = r.summary["jobs_overall"]["rejected"].get<int>() > 0;
      CHECK(s["trials_failed"] == (rejected ? 3 : 0));
      CHECK(s["makespan_s"].is_number());
    }
  }
}
