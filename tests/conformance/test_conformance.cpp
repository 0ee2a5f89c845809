// Policy conformance over the registered platforms: every registered policy runs on every
// registered platform that can run in this test program (sim and emulated everywhere; cuda
// where a GPU or the CUDA test double answers: tests/fakecuda compiles this file too), and the
// same checks hold on each: the invariants, every submitted op ended exactly once, every job
// finished or was rejected. Nothing is downgraded to a warning: a PolicyError, a stall or a
// horizon hit fails the test. Only sim is deterministic, so only sim also checks that two runs
// give identical events, and only sim runs every standard small trace (the others run the short
// workload, in wall-clock time). A new policy is picked up from the registry with no new test
// code; a new platform fails here until it says how it is tested (conformance_case).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/io/platform_registry.hpp"
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

// How a platform is tested: its devices, its params, and whether it runs every standard trace
// (virtual time, cheap) or the short workload only (wall-clock time).
struct PlatformCase {
  std::vector<std::string> devices;
  nlohmann::json params;
  bool virtual_time = false;
};

std::optional<PlatformCase> conformance_case(const std::string& platform) {
  if (platform == "sim") return PlatformCase{kDevices, nullptr, true};
  // Process start-up (2.6 s in the profiles) and every other emulated duration x 0.05: the
  // plumbing is what is under test, not the profile's numbers.
  if (platform == "emulated") {
    return PlatformCase{
        kDevices, {{"time_scale", 0.05}, {"host_arena_mib", 64}, {"host_weights_mib", 16}}, false};
  }
  // One GPU (the cuda platform runs no CPU device); a small arena, enough for the short
  // workload's models. Its start costs are real waits (stop_and_start pays a process start
  // per switch), hence the longer horizon below.
  if (platform == "cuda") return PlatformCase{{"h100-sxm"}, {{"arena_gib", 0.5}}, false};
  return std::nullopt;
}

// Platforms a test registers for itself and runs every policy on there (test_late_abort.cpp).
bool tested_elsewhere(const std::string& platform) {
  return platform == "sim-late-abort";
}

nlohmann::json config_for(const std::string& policy, const std::string& platform,
                          const PlatformCase& how, nlohmann::json workload) {
  auto doc = test::make_config(policy, std::move(workload), how.devices);
  if (platform != "sim") {
    doc["platform"] = platform;
    doc["platform_params"] = how.params;
    doc["horizon_s"] = platform == "cuda" ? 60.0 : 10.0;
  }
  return doc;
}

// The checks every platform passes.
ExperimentResult run_and_check(const nlohmann::json& doc, const PlatformCase& how) {
  std::vector<std::uint64_t> capacity;
  std::vector<bool> is_cpu;
  for (const auto& d : how.devices) {
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
  const auto violations = test::check_invariants(r, capacity, is_cpu, how.virtual_time);
  for (const auto& v : violations) UNSCOPED_INFO(v);
  CHECK(violations.empty());
  CHECK(r.run.jobs_unfinished == 0);
  CHECK(r.run.jobs_finished + r.run.jobs_rejected == r.jobs.size());
  return r;
}

// Whether `platform` can run in this program: sim and emulated always; cuda only with a GPU or
// the CUDA test double (without, creating it throws DeviceUnavailable or NotCompiled).
bool probe_platform(const std::string& platform, const PlatformCase& how) {
  PlatformSetup setup;
  for (const auto& d : how.devices) {
    setup.profiles.push_back(find_device_profile(test::source_dir() / "traces" / "devices", d));
  }
  const ModelCatalog models(test::source_dir() / "traces" / "models");
  setup.models = &models;
  if (!how.params.is_null()) setup.params = how.params;
  try {
    (void)PlatformRegistry::instance().create(platform, setup);
  } catch (const DeviceUnavailable& e) {
    WARN("platform " << platform << " does not run here: " << e.what());
    return false;
  } catch (const NotCompiled& e) {
    WARN("platform " << platform << " does not run here: " << e.what());
    return false;
  }
  return true;
}

// Probed once per platform: Catch2 enters the test case again for every section.
bool runs_here(const std::string& platform, const PlatformCase& how) {
  static std::map<std::string, bool> known;
  const auto it = known.find(platform);
  if (it != known.end()) return it->second;
  return known[platform] = probe_platform(platform, how);
}

}  // namespace

TEST_CASE("every policy keeps the invariants on every platform", "[conformance]") {
  const auto policies = PolicyRegistry::instance().names();
  REQUIRE(policies.size() >= 5);
  const auto platforms = PlatformRegistry::instance().names();
  REQUIRE(platforms.size() >= 2);
  std::vector<nlohmann::json> traces;
  for (const auto& trace : test::standard_traces()) traces.push_back({{"files", {trace}}});
  for (const auto& platform : platforms) {
    if (tested_elsewhere(platform)) continue;
#ifdef GPUMUX_CONFORMANCE_ONLY
    // The fakecuda program runs only the platform it exists for; the others run in
    // tests/conformance's own program.
    if (platform != GPUMUX_CONFORMANCE_ONLY) continue;
#endif
    const auto how = conformance_case(platform);
    INFO("platform " << platform);
    REQUIRE(how.has_value());  // a new platform: say in conformance_case how it is tested
    if (!runs_here(platform, *how)) continue;
    std::vector<nlohmann::json> workloads =
        how->virtual_time ? traces : std::vector<nlohmann::json>{};
    workloads.push_back(short_workload());
    for (const auto& policy : policies) {
      for (std::size_t w = 0; w < workloads.size(); ++w) {
        DYNAMIC_SECTION(policy << " on " << platform << ", workload " << w) {
          const auto doc = config_for(policy, platform, *how, workloads[w]);
          const ExperimentResult first = run_and_check(doc, *how);
          if (how->virtual_time) {
            const ExperimentResult second = test::run_config(doc);
            CHECK(test::events_jsonl(first) == test::events_jsonl(second));
          }
        }
      }
    }
  }
}

// A tuning job whose trials run to their budget and stop (random search never pauses): every
// policy runs its trials as training jobs that arrive at run time and end "stopped". Pausing
// tuners are not here: a policy that holds the GPU until its job finishes (exclusive) would
// wait forever on a paused trial; executors such as trial_per_gpu run those
// (tests/engine/test_tuning_jobs.cpp).
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
      const auto how = conformance_case("sim");
      const ExperimentResult r = run_and_check(config_for(policy, "sim", *how, workload), *how);
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
