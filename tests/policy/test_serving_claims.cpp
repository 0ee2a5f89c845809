// Acceptance checks across the serving policies (D38): a request whose deadline cannot be
// met is dropped by orloj and clockwork and never by clipper; with zero variance (a static
// model) orloj and clockwork reach the same finish rate within 2 points, the Orloj abstract's
// "comparable on static DNNs".
#include <catch2/catch.hpp>

#include <cmath>
#include <string>

#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

namespace gpumux {
namespace {

constexpr const char* kDevice = "v100-pcie3x16";

/// The cost model's solo time (ms) of a full forward pass of `model` at `batch` on the V100
/// profile (ServingFacet::estimate_batch_ns for one-sample requests).
double solo_ms(const std::string& model, std::uint32_t batch) {
  const auto root = test::source_dir();
  const DeviceProfile p = find_device_profile(root / "traces" / "devices", kDevice);
  const ModelCatalog catalog(root / "traces" / "models");
  const Model& m = catalog.at(model);
  const CostModel cm(p, CostOptions{});
  return static_cast<double>(
             cm.op_kernels(m, LayerRange{0, m.layer_count()}, batch, Pass::Forward, true)
                 .solo_ns()) *
         1e-6;
}

TEST_CASE("a request that cannot meet its deadline: orloj and clockwork drop it, clipper never") {
  // Two requests at once with an SLO of 1.1 solo times: a batch of both takes longer than that
  // (checked), so one runs alone; when it ends the other has 0.1 solo left and cannot finish.
  const double solo = solo_ms("resnet50", 1);
  REQUIRE(solo_ms("resnet50", 2) > 1.1 * solo);
  const nlohmann::json workload = {{"jobs",
                                    {{{"name", "svc"},
                                      {"kind", "inference"},
                                      {"model", "resnet50"},
                                      {"slo_ms", 1.1 * solo},
                                      {"requests", {0.1, 0.1}}}}}};
  for (const char* policy : {"orloj", "clockwork", "clipper"}) {
    INFO(policy);
    const ExperimentResult r = test::run_config(test::make_config(policy, workload, {kDevice}));
    const auto& job = r.summary["jobs"][0];
    CHECK(job["finish_rate"].get<double>() == Approx(0.5));
    if (std::string(policy) == "clipper") {
      CHECK(job["requests_dropped"] == 0);
      CHECK(job["requests"] == 2);
      CHECK(job["late_rate"].get<double>() == Approx(0.5));
    } else {
      CHECK(job["requests_dropped"] == 1);
      CHECK(job["requests"] == 1);
      CHECK(job["late_rate"].get<double>() == Approx(0.0));
    }
  }
}

TEST_CASE("with zero variance orloj and clockwork reach the same finish rate (within 2 points)") {
  // A static ResNet-50 service (every request the same), Poisson arrivals at about 70 % of the
  // GPU's one-at-a-time capacity, SLOs from tight to relaxed.
  const double solo = solo_ms("resnet50", 1);
  const double rate = 0.7 * 1000.0 / solo;
  for (const double k : {1.5, 3.0, 10.0}) {
    double finish[2] = {0, 0};
    int i = 0;
    for (const char* policy : {"orloj", "clockwork"}) {
      const nlohmann::json workload = {
          {"services",
           {{{"name", "svc"},
             {"model", "resnet50"},
             {"slo_ms", k * solo},
             {"arrivals", {{"generator", "poisson"}, {"rate_per_s", rate}, {"count", 3000}}}}}}};
      const ExperimentResult r = test::run_config(test::make_config(policy, workload, {kDevice}));
      finish[i++] = r.summary["inference"]["finish_rate"].get<double>();
    }
    INFO("SLO " << k << " x solo: orloj " << finish[0] << ", clockwork " << finish[1]);
    CHECK(std::abs(finish[0] - finish[1]) <= 0.02);
  }
}

}  // namespace
}  // namespace gpumux
