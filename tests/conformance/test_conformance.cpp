// Every registered policy, over every standard small trace: the invariants hold and two runs
// of the same config and seed give byte-identical events. A new policy is picked up from the
// registry with no new test code.
#include <catch2/catch.hpp>

#include "gpumux/device_profile.hpp"
#include "gpumux/policy.hpp"
#include "test_support.hpp"

using namespace gpumux;

TEST_CASE("every policy keeps the invariants on the standard traces", "[conformance]") {
  const auto root = test::source_dir();
  // A GPU plus a CPU device, so policies that migrate to the CPU can.
  const std::vector<std::string> devices{"v100-pcie3x16", "xeon-2x18"};
  std::vector<std::uint64_t> capacity;
  std::vector<bool> is_cpu;
  for (const auto& d : devices) {
    const DeviceProfile p = find_device_profile(root / "traces" / "devices", d);
    capacity.push_back(p.memory_bytes);
    is_cpu.push_back(p.kind == DeviceKind::Cpu);
  }
  const auto policies = PolicyRegistry::instance().names();
  REQUIRE(policies.size() >= 5);
  for (const auto& policy : policies) {
    for (const auto& trace : test::standard_traces()) {
      DYNAMIC_SECTION(policy << " on " << trace) {
        const auto doc = test::make_config(policy, {{"files", {trace}}}, devices);
        const ExperimentResult first = test::run_config(doc);
        const auto violations = test::check_invariants(first, capacity, is_cpu, true);
        for (const auto& v : violations) UNSCOPED_INFO(v);
        CHECK(violations.empty());
        CHECK(first.run.jobs_unfinished == 0);
        CHECK(first.run.jobs_finished + first.run.jobs_rejected == first.jobs.size());
        const ExperimentResult second = test::run_config(doc);
        CHECK(test::events_jsonl(first) == test::events_jsonl(second));
      }
    }
  }
}
