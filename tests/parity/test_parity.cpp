// Simulation against hardware (label `gpu`): the same short PipeSwitch-style scenario (a
// ResNet-152 inference service switching in while a ResNet-50 trains) on platform "sim" with a
// calibrated profile and on platform "cuda", comparing per-op durations and request latency.
//
// Needs a calibrated profile of the GPU it runs on: run
//   ./build-cuda/experiments/gpumux calibrate --device h100-sxm --quick
// first (it writes traces/devices/h100-sxm.calibrated.json), or name another profile with
// GPUMUX_PARITY_PROFILE. Real runs are not deterministic and policies may take different
// decisions, so ops are matched by (job, kind, purpose, layer range) in order of occurrence,
// and the tolerance is generous: the median relative error of op durations (ops >= 50 us) must
// be below 50%. The per-key table is printed (-s) for docs/fidelity.md.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <tuple>
#include <vector>

#include <catch2/catch.hpp>

#include "gpumux/api/policy.hpp"
#include "gpumux/backend/cuda/cuda_platform.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

using Key = std::tuple<std::uint32_t, int, int, std::uint32_t, std::uint32_t>;

std::map<Key, std::vector<DurationNs>> op_durations(const ExperimentResult& r) {
  std::map<Key, std::vector<DurationNs>> out;
  for (const Event& e : r.log.events()) {
    if (e.kind != EventKind::OpEnd || e.status != OpStatus::Ok) continue;
    const Key k{e.job, static_cast<int>(e.op_kind), static_cast<int>(e.purpose), e.first_layer,
                e.last_layer};
    out[k].push_back(e.t_ns - e.a);
  }
  return out;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

}  // namespace

TEST_CASE("parity: sim and cuda agree on a PipeSwitch-style switch scenario", "[gpu][parity]") {
  if (cuda_device_count() == 0) {
    // Label `gpu`: CI leaves it out. Run by hand without a GPU, it fails rather than pass
    // having compared nothing.
    FAIL("no usable GPU: the parity test needs one (`ctest -L gpu -R parity` on a GPU machine)");
  }
  const char* env = std::getenv("GPUMUX_PARITY_PROFILE");
  const std::string profile = env != nullptr ? env : "h100-sxm.calibrated";
  const auto devices_dir = test::source_dir() / "traces" / "devices";
  if (!std::filesystem::exists(devices_dir / (profile + ".json"))) {
    FAIL("no calibrated profile " << profile
                                  << ".json in traces/devices: run `gpumux calibrate "
                                     "--device h100-sxm --quick` on this GPU first");
  }
  const std::string policy =
      PolicyRegistry::instance().contains("pipeswitch") ? "pipeswitch" : "ready_model";
  nlohmann::json workload = {{"jobs",
                              {{{"name", "train"},
                                {"kind", "training"},
                                {"model", "resnet50"},
                                {"batch", 32},
                                {"arrival_s", 0.0},
                                {"iterations", 20}},
                               {{"name", "svc"},
                                {"kind", "inference"},
                                {"model", "resnet152"},
                                {"batch", 8},
                                {"arrival_s", 0.0},
                                {"requests", {0.5, 1.0, 1.5, 2.0}},
                                {"slo_ms", 100},
                                {"priority", 10}}}}};
  auto doc = test::make_config(policy, workload, {profile});
  doc["horizon_s"] = 30.0;
  const ExperimentResult sim = test::run_config(doc);
  doc["platform"] = "cuda";
  doc["platform_params"] = {{"preload", {"resnet50", "resnet152"}}};
  const ExperimentResult real = test::run_config(doc);

  const auto s = op_durations(sim), c = op_durations(real);
  std::vector<double> errors;
  std::cout << "parity (" << policy << ", " << profile
            << "): job kind purpose layers  sim_us  cuda_us  rel_err\n";
  for (const auto& [key, real_d] : c) {
    const auto it = s.find(key);
    if (it == s.end()) continue;
    const std::size_t n = std::min(real_d.size(), it->second.size());
    std::vector<double> rs, ss;
    for (std::size_t i = 0; i < n; ++i) {
      rs.push_back(static_cast<double>(real_d[i]));
      ss.push_back(static_cast<double>(it->second[i]));
    }
    const double mr = median(rs), ms = median(ss);
    if (mr < 50'000) continue;  // too short to compare meaningfully
    const double err = std::abs(ms - mr) / mr;
    errors.push_back(err);
    std::cout << "  " << std::get<0>(key) << ' ' << std::get<1>(key) << ' ' << std::get<2>(key)
              << " [" << std::get<3>(key) << ',' << std::get<4>(key) << ")  " << ms / 1e3 << "  "
              << mr / 1e3 << "  " << err << '\n';
  }
  REQUIRE_FALSE(errors.empty());
  const double med = median(errors);
  std::cout << "median relative error of op durations: " << med << " over " << errors.size()
            << " op kinds\n";
  std::cout << "sim summary: " << sim.summary.dump() << "\ncuda summary: " << real.summary.dump()
            << '\n';
  CHECK(med < 0.5);
  CHECK(real.run.jobs_finished == sim.run.jobs_finished);
}
