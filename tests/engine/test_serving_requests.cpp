// Requests of a service under the serving rules of D38, through the batcher policy
// (serving_batcher.hpp): drop_request (a RequestDrop, never a RequestEnd; refusals change
// nothing; the last request dropped ends the job), deadlines, and the summary's finish, late
// and drop rates and latency CDF, worked by hand.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "gpumux/api/event_fields.hpp"
#include "serving_batcher.hpp"
#include "test_support.hpp"

using namespace gpumux;
using namespace gpumux::test;

namespace {

struct Drop {
  std::uint64_t request = 0;
  TimeNs t_ns = 0;
  DurationNs waited_ns = 0;
  std::string reason;
};

std::vector<Drop> drops(const ExperimentResult& r) {
  std::vector<Drop> out;
  for (const Event& e : r.log.events()) {
    if (e.kind != EventKind::RequestDrop) continue;
    out.push_back({dropped_request_of(e), e.t_ns, drop_waited_ns(e), std::string(e.label)});
  }
  return out;
}

}  // namespace

TEST_CASE("drop_request: a RequestDrop, never a RequestEnd, the last drop ends the job",
          "[serving]") {
  // Three requests at 0.1, 0.2, 0.3 s: the first is served, the other two dropped on arrival.
  g_plan = ServingPlan{};
  g_plan.drop = {false, true, true};
  g_plan.probe_refusals = true;
  const auto result = run_batcher(serving_service("resnet50", 1, {0.1, 0.2, 0.3}));

  const auto ends = request_ends(result);
  REQUIRE(ends.size() == 1);
  CHECK(ends.count(0) == 1);
  const auto d = drops(result);
  REQUIRE(d.size() == 2);
  CHECK(d[0].request == 1);
  CHECK(d[1].request == 2);
  for (const Drop& x : d) {
    CHECK(x.reason == "test: dropped");
    CHECK(x.waited_ns == 0);  // dropped at its arrival
  }
  CHECK(d[1].t_ns == ms_to_ns(300));
  // Refused, each changing nothing: dropping request 0 once dispatched, an unknown request
  // (twice: before each drop) and a dropped one again (twice).
  CHECK(g_seen.refused == 5);
  CHECK(g_seen.refusals_changed_state == 0);
  // The job ends, finished, when its last request is dropped.
  std::size_t job_ends = 0;
  for (const Event& e : result.log.events()) {
    if (e.kind != EventKind::JobEnd) continue;
    ++job_ends;
    CHECK(job_end_of(e).reason == EndReason::Finished);
    CHECK(e.t_ns == ms_to_ns(300));
  }
  CHECK(job_ends == 1);
  const auto& job = result.summary["jobs"][0];
  CHECK(job["requests_dropped"] == 2);
  CHECK(job["drop_rate"].get<double>() == Approx(2.0 / 3.0));
  CHECK(job["requests_unserved"] == 2);
}

TEST_CASE("Finish, late and drop rates and the latency CDF, by hand", "[serving]") {
  // Four requests, SLO 50 ms: the 1st and 4th are served at once (a resnet50 request takes a
  // few ms: on time), the 2nd is held 60 ms first (late), the 3rd is dropped. Finish rate
  // 2/4 = 0.5, late rate 1/4 = 0.25, drop rate 1/4 = 0.25.
  g_plan = ServingPlan{};
  g_plan.drop = {false, false, true, false};
  g_plan.hold_ns = {0, ms_to_ns(60), 0, 0};
  auto svc = serving_service("resnet50", 1, {0.1, 0.2, 0.3, 0.4});
  svc["slo_ms"] = 50;
  const auto result = run_batcher(svc);

  REQUIRE(g_seen.deadlines.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(g_seen.arrivals[i] == ms_to_ns(100 * static_cast<std::int64_t>(i + 1)));
    CHECK(g_seen.deadlines[i] == g_seen.arrivals[i] + ms_to_ns(50));
  }
  std::vector<double> latency_ms;
  for (const Event& e : result.log.events()) {
    if (e.kind != EventKind::RequestEnd) continue;
    const DurationNs lat = request_latency_ns(e);
    const bool late = request_of(e) == 1;
    CHECK((lat > ms_to_ns(50)) == late);
    latency_ms.push_back(static_cast<double>(lat) / 1e6);
  }
  REQUIRE(latency_ms.size() == 3);
  std::sort(latency_ms.begin(), latency_ms.end());

  const auto& job = result.summary["jobs"][0];
  CHECK(job["requests_arrived"] == 4);
  CHECK(job["requests_dropped"] == 1);
  CHECK(job["finish_rate"].get<double>() == 0.5);
  CHECK(job["late_rate"].get<double>() == 0.25);
  CHECK(job["drop_rate"].get<double>() == 0.25);
  const auto& inf = result.summary["inference"];
  CHECK(inf["finish_rate"].get<double>() == 0.5);
  CHECK(inf["late_rate"].get<double>() == 0.25);
  CHECK(inf["drop_rate"].get<double>() == 0.25);
  CHECK(inf["requests_dropped"] == 1);

  // 21 points p0, p5, ..., p100, nearest rank over 3 latencies: rank ceil(3p/100) is 1 up to
  // p30, 2 from p35 to p65, 3 from p70.
  const auto& cdf = job["latency_cdf_ms"];
  REQUIRE(cdf.size() == 21);
  for (std::size_t j = 0; j < 21; ++j) {
    INFO("p" << 5 * j);
    const std::size_t rank = j <= 6 ? 0 : j <= 13 ? 1 : 2;
    CHECK(cdf[j].get<double>() == Approx(latency_ms[rank]).epsilon(1e-12));
  }
  CHECK(cdf[0].get<double>() == Approx(latency_ms.front()).epsilon(1e-12));
  CHECK(cdf[20].get<double>() == Approx(latency_ms.back()).epsilon(1e-12));
}

TEST_CASE("The latency CDF takes exact nearest ranks over 100 latencies", "[serving]") {
  // Request i (of 100, one a second) is held i x 10 us, so the latencies are distinct and in
  // request order. Point j (p = 5j) is the ceil(5j x 100 / 100) = 5j-th smallest: p55 is the
  // 55th (0.55 x 100 computed in floating point is 55.00000000000001, one rank too many).
  g_plan = ServingPlan{};
  g_plan.hold_ns.resize(100);
  std::vector<double> at(100);
  for (std::size_t i = 0; i < 100; ++i) {
    g_plan.hold_ns[i] = static_cast<DurationNs>(i) * 10'000;  // 0 for the first: served at once
    at[i] = 1.0 + static_cast<double>(i);
  }
  const auto result = run_batcher(serving_service("resnet50", 1, at));
  std::vector<double> latency_ms(100);
  for (const Event& e : result.log.events()) {
    if (e.kind == EventKind::RequestEnd) {
      latency_ms.at(request_of(e)) = static_cast<double>(request_latency_ns(e)) / 1e6;
    }
  }
  REQUIRE(std::is_sorted(latency_ms.begin(), latency_ms.end()));
  const auto& cdf = result.summary["jobs"][0]["latency_cdf_ms"];
  REQUIRE(cdf.size() == 21);
  for (std::size_t j = 0; j < 21; ++j) {
    INFO("p" << 5 * j);
    const std::size_t idx = j == 0 ? 0 : 5 * j - 1;
    CHECK(cdf[j].get<double>() == Approx(latency_ms[idx]).epsilon(1e-12));
  }
}
