// The serving baselines (policies/serving, docs/policies/serving.md: clockwork, clipper, nexus) on
// one static ResNet-50 service (batch 1) on a V100, requests at known times: the expected batch
// sizes, drops and latencies are computed by hand from the cost model's solo batch times T(n) (the
// profile's numbers, as estimate_batch_ns gives them), written out in each case.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/device_profile_files.hpp"
#include "gpumux/io/model_files.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/model.hpp"
#include "test_support.hpp"

using namespace gpumux;
using nlohmann::json;

namespace {

constexpr double kAt = 0.5;  // s: requests arrive well after ResNet-50's weights are loaded

/// T(n): the profiled solo time of a ResNet-50 batch of n requests at service batch 1, ns.
DurationNs batch_ns(std::uint32_t n) {
  static const ModelCatalog zoo(test::source_dir() / "traces" / "models");
  static const DeviceProfile v100 =
      find_device_profile(test::source_dir() / "traces" / "devices", "v100-pcie3x16");
  static const CostModel cost(v100, CostOptions{});  // keeps a reference to the profile
  const Model& m = zoo.at("resnet50");
  return cost.op_ns(m, LayerRange{0, m.layer_count()}, n, Pass::Forward, true);
}

/// One ResNet-50 service; slo_ns 0 = no SLO.
json service(std::vector<double> requests, DurationNs slo_ns) {
  json s = {{"name", "svc"}, {"kind", "inference"}, {"model", "resnet50"},
            {"batch", 1},    {"arrival_s", 0.0},    {"requests", std::move(requests)}};
  if (slo_ns > 0) s["slo_ms"] = static_cast<double>(slo_ns) / 1e6;
  return s;
}

ExperimentResult run(const std::string& policy, json job, json params = json::object()) {
  json doc = test::make_config(policy, {{"jobs", json::array({std::move(job)})}});
  doc["policy"]["params"] = std::move(params);
  return test::run_config(doc);
}

std::vector<double> metric(const ExperimentResult& r, const std::string& name) {
  std::vector<double> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::PolicyMetric && metric_name_of(e) == name) {
      out.push_back(metric_sample_of(e));
    }
  }
  return out;
}

std::vector<std::uint64_t> dropped(const ExperimentResult& r) {
  std::vector<std::uint64_t> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestDrop) out.push_back(dropped_request_of(e));
  }
  return out;
}

std::vector<DurationNs> latencies(const ExperimentResult& r) {
  std::vector<DurationNs> out;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd) out.push_back(request_latency_ns(e));
  }
  return out;
}

std::uint64_t summary_dropped(const ExperimentResult& r) {
  return r.summary["inference"]["requests_dropped"].get<std::uint64_t>();
}

std::vector<double> at(std::size_t n, double t) {
  return std::vector<double>(n, t);
}

}  // namespace

// ---- clockwork -------------------------------------------------------------------------------

TEST_CASE("clockwork drops a request whose deadline the GPU can no longer meet", "[serving]") {
  // SLO S = 1.5 T(1). Request 0 at 0.5 s runs alone (ends at 0.5 s + T(1)); request 1, 1 us
  // later, could start only then and end at 0.5 s + 2 T(1) > its deadline 0.5 s + 1 us + S
  // (2 T(1) > 1.5 T(1) + 1 us): dropped. Request 2 at 0.6 s finds the GPU free: served in T(1).
  const DurationNs t1 = batch_ns(1);
  const DurationNs slo = 3 * t1 / 2;
  REQUIRE(2 * t1 > slo + 1'000);
  const auto r = run("clockwork", service({kAt, kAt + 1e-6, 0.6}, slo));
  CHECK(dropped(r) == std::vector<std::uint64_t>{1});
  CHECK(summary_dropped(r) == 1);
  CHECK(latencies(r) == std::vector<DurationNs>{t1, t1});
  CHECK(metric(r, "clockwork.batch") == std::vector<double>{1, 1});
}

TEST_CASE("clockwork picks the largest batch that meets the head's deadline", "[serving]") {
  // Eight requests at once, SLO S halfway between T(4) and T(8): 8 misses, 4 fits (the
  // sizes are powers of two). The head of the rest then has S - T(4) left: the largest b in
  // {1, 2, 4} with T(b) <= S - T(4), else it and the rest are dropped. Every served request
  // ends within its SLO.
  const DurationNs t4 = batch_ns(4), t8 = batch_ns(8);
  const DurationNs slo = (t4 + t8) / 2;
  const auto r = run("clockwork", service(at(8, kAt), slo));
  const auto batches = metric(r, "clockwork.batch");
  REQUIRE(!batches.empty());
  CHECK(batches[0] == 4);
  std::vector<double> expected{4};
  DurationNs used = t4;
  std::uint32_t left = 4;
  while (left > 0) {  // the rule, by hand, for the second half (all arrived at kAt)
    std::uint32_t b = 0;
    for (std::uint32_t c = 1; c <= left; c *= 2) {
      if (used + batch_ns(c) <= slo) b = c;
    }
    if (b == 0) break;  // the rest cannot finish in time: dropped
    expected.push_back(b);
    used += batch_ns(b);
    left -= b;
  }
  CHECK(batches == expected);
  CHECK(summary_dropped(r) == left);
  for (DurationNs l : latencies(r)) CHECK(l <= slo);
  CHECK(latencies(r).size() + dropped(r).size() == 8);
}

TEST_CASE("clockwork serves a service without an SLO in large batches and drops nothing",
          "[serving]") {
  const auto r = run("clockwork", service(at(8, kAt), 0), {{"max_batch", 8}});
  CHECK(metric(r, "clockwork.batch") == std::vector<double>{8});
  CHECK(summary_dropped(r) == 0);
  CHECK(latencies(r) == std::vector<DurationNs>(8, batch_ns(8)));
}

TEST_CASE("clockwork's buffer makes a just-feasible request infeasible", "[serving]") {
  // SLO = T(1) + 1 ms: one lone request fits with no buffer, not with a 2 ms buffer.
  const DurationNs slo = batch_ns(1) + 1'000'000;
  CHECK(summary_dropped(run("clockwork", service({kAt}, slo))) == 0);
  CHECK(summary_dropped(run("clockwork", service({kAt}, slo), {{"buffer_ms", 2}})) == 1);
}

TEST_CASE("clockwork estimates from measured batches once a size has run", "[serving]") {
  // Every request exits early (after layer2.1.bn3), so a batch of 1 takes E < T(1) / 2, the
  // profiled full-model time being T(1). E is measured on a lone request first. Then request 0
  // at 0.5 s and request 1 at 0.5 s + 1 us, SLO S = T(1) + 100 ns: request 0 is feasible by
  // the profile and runs in E; for request 1, p99 of the one measurement, E, gives
  // 0.5 s + 2 E <= its deadline (2 E <= S + 1 us): served, where the profile alone
  // (E + T(1) > S + 1 us) would have dropped it.
  const json early = {
      {"kind", "early_exit"},
      {"source", "test: every request exits after layer2.1.bn3 (hand-set)"},
      {"exits", {{{"after", "layer2.1.bn3"}, {"weight", 1}}, {{"after", "fc"}, {"weight", 0}}}}};
  json lone = service({kAt}, 0);
  lone["dynamic"] = early;
  const auto probe = latencies(run("clockwork", lone));
  REQUIRE(probe.size() == 1);
  const DurationNs e = probe[0], t1 = batch_ns(1);
  REQUIRE(2 * e <= t1);
  const DurationNs slo = t1 + 100;
  json svc = service({kAt, kAt + 1e-6}, slo);
  svc["dynamic"] = early;
  const auto r = run("clockwork", svc);
  CHECK(dropped(r).empty());
  CHECK(latencies(r) == std::vector<DurationNs>{e, 2 * e - 1'000});
  REQUIRE(e + t1 > slo + 1'000);  // the profile alone would have dropped request 1
}

// ---- clipper ---------------------------------------------------------------------------------

TEST_CASE("clipper's batch limit grows additively and shrinks by 10%, and it never drops",
          "[serving]") {
  // 24 requests at once. The k-th batch's oldest member has waited for every batch before it,
  // so its latency is the sum of the batch times so far. SLO S between T(1)+T(2)+T(3) and
  // that plus T(4): batches 1, 2, 3 are on time (limit 1 -> 2 -> 3 -> 4), batch 4 is late and
  // so is every later one: 4 x 0.9 = 3.6, 3.24, 2.916, 2.6244, 2.36196, 2.125764, 1.91...
  // Batch sizes (the floor): 1, 2, 3, 4, 3, 3, 2, 2, 2, 2 = 24 requests.
  const DurationNs on_time = batch_ns(1) + batch_ns(2) + batch_ns(3);
  const DurationNs slo = on_time + batch_ns(4) / 2;
  const auto r = run("clipper", service(at(24, kAt), slo));
  CHECK(metric(r, "clipper.batch") == std::vector<double>{1, 2, 3, 4, 3, 3, 2, 2, 2, 2});
  const std::vector<double> limits{2, 3, 4, 3.6, 3.24, 2.916, 2.6244, 2.36196, 2.125764, 1.9131876};
  const auto got = metric(r, "clipper.limit");
  REQUIRE(got.size() == limits.size());
  for (std::size_t i = 0; i < limits.size(); ++i) CHECK(got[i] == Approx(limits[i]));
  // Never drops, although most requests end late.
  CHECK(dropped(r).empty());
  CHECK(summary_dropped(r) == 0);
  const auto l = latencies(r);
  REQUIRE(l.size() == 24);
  CHECK(l.front() == batch_ns(1));
  CHECK(l.back() > slo);
}

TEST_CASE("clipper's limit is capped by max_batch without an SLO", "[serving]") {
  // No SLO: every batch is on time; the limit grows 1, 2, 3 and stays at max_batch 3.
  const auto r = run("clipper", service(at(12, kAt), 0), {{"max_batch", 3}});
  CHECK(metric(r, "clipper.batch") == std::vector<double>{1, 2, 3, 3, 3});
}

// ---- nexus -----------------------------------------------------------------------------------

TEST_CASE("nexus profiles the largest batch whose time fits half the SLO", "[serving]") {
  const DurationNs slo = 20'000'000;  // 20 ms
  std::uint32_t expected = 1;
  for (std::uint32_t b = 1; b <= 64; ++b) {
    if (2 * batch_ns(b) <= slo) expected = b;
  }
  REQUIRE(expected > 1);
  REQUIRE(expected < 64);
  const auto r = run("nexus", service(at(2 * expected + 1, kAt), slo));
  CHECK(metric(r, "nexus.profiled_batch") == std::vector<double>{static_cast<double>(expected)});
  const auto batches = metric(r, "nexus.batch");
  REQUIRE(batches.size() >= 2);
  CHECK(batches[0] == expected);
  CHECK(batches[1] == expected);
}

TEST_CASE("nexus drops early the requests its next batch cannot finish in time", "[serving]") {
  // SLO S = 2.002 T(4) with T(5) > S/2: the profiled batch is 4. Twelve requests at once:
  // batches of 4 end at T(4) and 2 T(4) <= S; at 2 T(4) the last four would need
  // 2 T(4) + T(w) > S for any w >= 1 left: all four are dropped, one by one.
  const DurationNs slo = 2 * batch_ns(4) + batch_ns(4) / 500;
  REQUIRE(2 * batch_ns(5) > slo);
  REQUIRE(batch_ns(1) > batch_ns(4) / 500);
  const auto r = run("nexus", service(at(12, kAt), slo));
  CHECK(metric(r, "nexus.profiled_batch") == std::vector<double>{4});
  CHECK(metric(r, "nexus.batch") == std::vector<double>{4, 4});
  CHECK(dropped(r) == std::vector<std::uint64_t>{8, 9, 10, 11});
  CHECK(summary_dropped(r) == 4);
  for (DurationNs l : latencies(r)) CHECK(l <= slo);
}

TEST_CASE("nexus serves its services round-robin", "[serving]") {
  // Two services without an SLO (profiled batch = max_batch = 2), four requests each at once:
  // batches alternate a, b, a, b (FIFO or EDF would serve a's four first).
  json a = service(at(4, kAt), 0), b = service(at(4, kAt), 0);
  a["name"] = "a";
  b["name"] = "b";
  json doc = test::make_config("nexus", {{"jobs", json::array({a, b})}});
  doc["policy"]["params"] = {{"max_batch", 2}};
  const auto r = test::run_config(doc);
  std::vector<std::uint32_t> order;
  for (const Event& e : r.log.events()) {
    if (e.kind == EventKind::RequestEnd) order.push_back(e.job);
  }
  CHECK(order == std::vector<std::uint32_t>{0, 0, 1, 1, 0, 0, 1, 1});
  CHECK(metric(r, "nexus.batch") == std::vector<double>{2, 2, 2, 2});
}
