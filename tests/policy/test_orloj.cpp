// The orloj policy (policies/serving/orloj.cpp) on hand-built situations whose outcome follows
// from the cost model's times: hopeless requests are dropped, batches grow when the SLO
// allows, and a batch that would miss is not formed.
#include <catch2/catch.hpp>

#include <map>
#include <string>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

namespace gpumux {
namespace {

constexpr const char* kDevice = "v100-pcie3x16";

/// The cost model's solo time of a full resnet50 forward pass at `batch` on the V100 profile:
/// what ServingFacet::estimate_batch_ns answers for a batch of `batch` one-sample requests.
DurationNs solo_ns(std::uint32_t batch) {
  const auto root = test::source_dir();
  const DeviceProfile p = find_device_profile(root / "traces" / "devices", kDevice);
  const ModelCatalog catalog(root / "traces" / "models");
  const Model& m = catalog.at("resnet50");
  const CostModel cm(p, CostOptions{});
  return cm.op_kernels(m, LayerRange{0, m.layer_count()}, batch, Pass::Forward, true).solo_ns();
}

nlohmann::json service(double slo_ms, nlohmann::json requests) {
  return {{"jobs",
           {{{"name", "svc"},
             {"kind", "inference"},
             {"model", "resnet50"},
             {"slo_ms", slo_ms},
             {"requests", std::move(requests)}}}}};
}

/// Requests served per batch: the number of request_end events at each end time.
std::map<TimeNs, int> batch_sizes(const ExperimentResult& r) {
  std::map<TimeNs, int> at;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd) ++at[e.t_ns];
  }
  return at;
}

TEST_CASE("orloj drops a request that cannot finish even alone, and runs the other on time") {
  const double solo_ms = static_cast<double>(solo_ns(1)) * 1e-6;
  // Two requests at once, SLO 1.1 solo. A batch of 2 costs g(2) = solo(2) / solo(1) > 1.1
  // times one request, so CDF_B(1.1 solo / g(2)) = 0 and it scores nothing; one request alone
  // scores 1. When it ends (after solo), the other has 0.1 solo left: hopeless, dropped.
  REQUIRE(static_cast<double>(solo_ns(2)) > 1.1 * static_cast<double>(solo_ns(1)));
  auto doc = test::make_config("orloj", service(1.1 * solo_ms, {0.1, 0.1}), {kDevice});
  const ExperimentResult r = test::run_config(doc);
  const auto& job = r.summary["jobs"][0];
  CHECK(job["requests"] == 1);
  CHECK(job["requests_dropped"] == 1);
  CHECK(job["finish_rate"].get<double>() == Approx(0.5));
  CHECK(job["drop_rate"].get<double>() == Approx(0.5));
  CHECK(job["late_rate"].get<double>() == Approx(0.0));
  int drops = 0;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestDrop) {
      ++drops;
      CHECK(std::string(e.label) == "orloj: cannot finish even alone");
    }
  }
  CHECK(drops == 1);
}

TEST_CASE("orloj with drop = false runs the hopeless request late") {
  const double solo_ms = static_cast<double>(solo_ns(1)) * 1e-6;
  auto doc = test::make_config("orloj", service(1.1 * solo_ms, {0.1, 0.1}), {kDevice});
  doc["policy"]["params"] = {{"drop", false}};
  const ExperimentResult r = test::run_config(doc);
  const auto& job = r.summary["jobs"][0];
  CHECK(job["requests"] == 2);
  CHECK(job["requests_dropped"] == 0);
  CHECK(job["finish_rate"].get<double>() == Approx(0.5));
  CHECK(job["late_rate"].get<double>() == Approx(0.5));
}

TEST_CASE("orloj batches everything waiting when the SLO leaves room") {
  // Eight requests at once and an SLO of 100 solo times: every candidate finishes all its
  // members (score b), so value = b / (g(b) solo) grows with b while batching is sublinear:
  // the batch of 8 wins (candidates 1, 2, 4, 8 up to max_batch 16).
  REQUIRE(static_cast<double>(solo_ns(8)) < 8.0 * static_cast<double>(solo_ns(1)));
  const double solo_ms = static_cast<double>(solo_ns(1)) * 1e-6;
  auto doc = test::make_config(
      "orloj", service(100 * solo_ms, {0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1}), {kDevice});
  const ExperimentResult r = test::run_config(doc);
  const auto sizes = batch_sizes(r);
  REQUIRE(sizes.size() == 1);
  CHECK(sizes.begin()->second == 8);
  CHECK(r.summary["jobs"][0]["finish_rate"].get<double>() == Approx(1.0));
  int computes = 0;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::OpEnd && e.op_kind == OpKind::Compute) ++computes;
  }
  CHECK(computes == 1);
}

TEST_CASE("orloj's parameters are checked") {
  auto doc = test::make_config("orloj", service(10, {0.1}), {kDevice});
  doc["policy"]["params"] = {{"drop_quantile", 101}};
  CHECK_THROWS_WITH(test::run_config(doc), Catch::Contains("drop_quantile"));
  doc["policy"]["params"] = {{"max_batch", 0}};
  CHECK_THROWS_WITH(test::run_config(doc), Catch::Contains("max_batch"));
  doc["policy"]["params"] = {{"score", "best"}};
  CHECK_THROWS_WITH(test::run_config(doc), Catch::Contains("score"));
}

}  // namespace
}  // namespace gpumux
