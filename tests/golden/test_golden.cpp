// Hand-computed golden cases: the numbers a reader can check with a calculator.
#include <catch2/catch.hpp>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;

namespace {

struct Fixture {
  std::filesystem::path root = test::source_dir();
  ModelCatalog models{root / "traces" / "models"};
  DeviceProfile v100 = find_device_profile(root / "traces" / "devices", "v100-pcie3x16");
};

std::vector<double> request_latencies_ns(const ExperimentResult& r) {
  std::vector<double> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd) out.push_back(static_cast<double>(e.b));
  }
  return out;
}

}  // namespace

TEST_CASE("ready_model: one ResNet-152 batch-8 forward = sum of layer times + launch costs",
          "[golden]") {
  Fixture f;
  const Model& m = f.models.at("resnet152");
  CostModel cost(f.v100, CostOptions{});
  // By hand: every layer's roofline time plus its kernels times the launch cost.
  DurationNs expected = 0;
  for (std::uint32_t i = 0; i < m.layer_count(); ++i) {
    expected += cost.layer_compute_ns(m, i, 8, Pass::Forward);
    expected += static_cast<DurationNs>(cost.layer_kernels(m, i, Pass::Forward)) * f.v100.launch_ns;
  }
  nlohmann::json workload = {{"jobs",
                              {{{"name", "svc"},
                                {"kind", "inference"},
                                {"model", "resnet152"},
                                {"batch", 8},
                                {"arrival_s", 0.0},
                                {"requests", {1.0}}}}}};
  const auto r = test::run_config(test::make_config("ready_model", workload));
  const auto lat = request_latencies_ns(r);
  REQUIRE(lat.size() == 1);
  CHECK(lat[0] == static_cast<double>(expected));
  // The model was loaded at arrival, long before the request: no transfer on the path.
  CHECK(expected < ms_to_ns(1000));
}

TEST_CASE("stop_and_start pays process start + context + whole-model transfer + compute",
          "[golden]") {
  Fixture f;
  const Model& m = f.models.at("resnet152");
  CostModel cost(f.v100, CostOptions{});
  const DurationNs compute = cost.op_ns(m, LayerRange{0, m.layer_count()}, 8, Pass::Forward, true);
  const DurationNs transfer = cost.h2d_ns(m.weight_bytes(), /*pageable=*/false);
  // The new process's context takes the GPU from the killed training context: one context
  // switch (the profile's context_switch_ns) before its first kernel.
  // The killed training process is reaped first (join()), and the new one builds the model.
  const DurationNs expected = f.v100.process_reap_ns + f.v100.process_start_ns +
                              f.v100.context_create_ns + f.v100.model_build_ns(m) + transfer +
                              f.v100.context_switch_ns + compute;
  nlohmann::json workload = {{"jobs",
                              {{{"name", "train"},
                                {"kind", "training"},
                                {"model", "resnet152"},
                                {"batch", 8},
                                {"arrival_s", 0.0},
                                {"iterations", 1000}},
                               {{"name", "svc"},
                                {"kind", "inference"},
                                {"model", "resnet152"},
                                {"batch", 8},
                                {"arrival_s", 0.0},
                                {"requests", {20.0}}}}}};
  auto doc = test::make_config("stop_and_start", workload);
  doc["horizon_s"] = 40.0;
  const auto r = test::run_config(doc);
  const auto lat = request_latencies_ns(r);
  REQUIRE(lat.size() == 1);
  CHECK(lat[0] == static_cast<double>(expected));
  // Seconds, not milliseconds: the process start dominates.
  CHECK(lat[0] > 1e9);
}

TEST_CASE("time_slicing: two identical training jobs each get half the GPU", "[golden]") {
  nlohmann::json job = {{"kind", "training"},
                        {"model", "resnet50"},
                        {"batch", 32},
                        {"arrival_s", 0.0},
                        {"iterations", 100000}};
  auto a = job, b = job;
  a["name"] = "a";
  b["name"] = "b";
  auto doc = test::make_config("time_slicing", {{"jobs", {a, b}}});
  doc["horizon_s"] = 5.0;
  const auto r = test::run_config(doc);
  double it_a = 0, it_b = 0;
  for (const auto& j : r.summary["jobs"]) {
    (j["name"] == "a" ? it_a : it_b) = j["iterations"].get<double>();
  }
  REQUIRE(it_a + it_b > 20);
  const double share_a = it_a / (it_a + it_b);
  CHECK(share_a == Approx(0.5).margin(0.01));

  // Together they get (almost) what one job alone gets: the slices cost only switch time.
  auto solo = test::make_config("time_slicing", {{"jobs", {a}}});
  solo["horizon_s"] = 5.0;
  const auto rs = test::run_config(solo);
  const double it_solo = rs.summary["jobs"][0]["iterations"].get<double>();
  CHECK((it_a + it_b) / it_solo == Approx(1.0).margin(0.06));
}

TEST_CASE("determinism: the default experiment gives byte-identical events", "[golden]") {
  const auto root = test::source_dir();
  for (const char* policy : {"time_slicing", "mps", "stop_and_start"}) {
    const ExperimentConfig cfg =
        load_experiment(root / "experiments" / "configs" / "default.json",
                        {std::string("policy.name=") + policy, "horizon_s=8"}, root);
    const auto r1 = run_experiment(cfg, root, false);
    const auto r2 = run_experiment(cfg, root, false);
    CHECK(test::events_jsonl(r1) == test::events_jsonl(r2));
    CHECK(r1.log.size() > 100);
  }
}
