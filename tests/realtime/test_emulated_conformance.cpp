// The conformance checks of tests/conformance, on platform "emulated": every registered policy
// over short workloads, in wall-clock time with real worker threads. Real runs are not
// deterministic, so the "two runs give identical events" check is left out, and the event log
// is not globally time-ordered (starts carry the worker's clock); every other invariant holds.
#include <chrono>
#include <map>

#include <catch2/catch.hpp>

#include "gpumux/device_profile.hpp"
#include "gpumux/policy.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

// Short on purpose: a whole policy run takes a few hundred ms of wall time. Small models, so
// that a policy running them on the CPU device (real Eigen compute) stays quick, also in
// sanitizer builds.
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

}  // namespace

TEST_CASE("every policy keeps the invariants on the emulated platform", "[realtime]") {
  const auto root = test::source_dir();
  const std::vector<std::string> devices{"v100-pcie3x16", "xeon-2x18"};
  std::vector<std::uint64_t> capacity;
  std::vector<bool> is_cpu;
  for (const auto& d : devices) {
    const DeviceProfile p = find_device_profile(root / "traces" / "devices", d);
    capacity.push_back(p.memory_bytes);
    is_cpu.push_back(p.kind == DeviceKind::Cpu);
  }
  const auto policies = PolicyRegistry::instance().names();
  REQUIRE_FALSE(policies.empty());
  for (const auto& policy : policies) {
    DYNAMIC_SECTION(policy << " on the emulated platform") {
      auto doc = test::make_config(policy, short_workload(), devices);
      doc["platform"] = "emulated";
      // Process start-up (2.6 s in the profiles) and every other emulated duration x 0.05:
      // the plumbing is what is under test here, not the profile's numbers.
      doc["platform_params"] = {
          {"time_scale", 0.05}, {"host_arena_mib", 64}, {"host_weights_mib", 16}};
      doc["horizon_s"] = 10.0;
      const auto t0 = std::chrono::steady_clock::now();
      ExperimentResult r;
      try {
        r = test::run_config(doc);
      } catch (const PolicyError& e) {
        // A policy that issues an invalid command under real-time interleavings (e.g. arrivals
        // delivered together after a late wake-up) is a policy bug, not a backend one.
        WARN("policy " << policy << " failed on the emulated platform: " << e.what());
        return;
      }
      const double wall_s =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      INFO("wall " << wall_s << " s; " << r.platform_description);
      for (const Event& e : r.log.events()) {
        if (e.kind == EventKind::JobEnd && e.label == "horizon") {
          // Far slower than it should be (an overloaded machine or a sanitizer build): ops in
          // flight at the horizon never end, so the checks below would not mean anything.
          WARN("policy " << policy << " hit the 10 s horizon after " << wall_s
                         << " s of wall time: invariants not checked");
          return;
        }
      }
      // Every submitted op ended exactly once: the device lost or repeated nothing.
      std::map<std::uint64_t, int> submitted, ended;
      for (const Event& e : r.log.events()) {
        if (e.kind == EventKind::OpSubmit) ++submitted[e.op];
        if (e.kind == EventKind::OpEnd) ++ended[e.op];
      }
      CHECK(submitted == ended);
      // The invariants. A job left "unfinished: no work left to run" while every op ended is a
      // policy that stopped dispatching (a timing-dependent policy bug, which a real GPU would
      // hit too): reported as a warning, not as a failure of the backend.
      const auto violations = test::check_invariants(r, capacity, is_cpu, /*virtual_time=*/false);
      std::vector<std::string> hard;
      for (const auto& v : violations) {
        if (v.find("unfinished: no work left to run") != std::string::npos && submitted == ended) {
          WARN("policy " << policy << " stalled: " << v);
        } else {
          hard.push_back(v);
        }
      }
      for (const auto& v : hard) UNSCOPED_INFO(v);
      CHECK(hard.empty());
      CHECK(r.run.jobs_finished + r.run.jobs_rejected + r.run.jobs_unfinished == r.jobs.size());
      CHECK(r.platform_description.rfind("emulated (v100-pcie3x16, xeon-2x18)", 0) == 0);
    }
  }
}

TEST_CASE("platform emulated rejects unknown or invalid parameters", "[realtime]") {
  auto doc = test::make_config("exclusive", short_workload());
  doc["platform"] = "emulated";
  doc["platform_params"] = {{"host_arena_mb", 64}};
  CHECK_THROWS_AS(test::run_config(doc), ConfigError);
  doc["platform_params"] = {{"time_scale", -1}};
  CHECK_THROWS_AS(test::run_config(doc), ConfigError);
}
