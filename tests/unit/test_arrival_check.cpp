// arrival_check.hpp: per-service counts, spans and rates, and the warnings for requests after
// the horizon and for a likely unit mistake.
#include <catch2/catch.hpp>

#include "gpumux/io/arrival_check.hpp"

using namespace gpumux;

namespace {

JobSpec service(const std::string& name, std::vector<TimeNs> times) {
  JobSpec j;
  j.name = name;
  j.kind = JobKind::Inference;
  j.requests_ns = std::move(times);
  return j;
}

}  // namespace

TEST_CASE("the report counts, spans and rates each open-loop service", "[arrival_check]") {
  ExperimentConfig c;
  JobSpec train;
  train.name = "train";
  c.jobs = {train, service("svc", {seconds_to_ns(1), seconds_to_ns(2), seconds_to_ns(5)})};
  const ArrivalReport r = check_arrivals(c);
  REQUIRE(r.services.size() == 1);
  CHECK(r.services[0].count == 3);
  CHECK(r.services[0].rate_per_s == Approx(0.75));  // 3 requests over 4 s
  CHECK(r.warnings.empty());
  CHECK(describe(r.services[0]) ==
        "service 'svc': 3 requests, 1.000-5.000 s (span 4.000 s), 0.75 req/s");
}

TEST_CASE("milliseconds read as seconds: after the horizon and 1000x its length",
          "[arrival_check]") {
  // A trace of 12 requests 250 ms apart whose times were written in ms under arrival_s:
  // 0, 250, ..., 2750 "seconds", replayed for a 60 s horizon.
  std::vector<TimeNs> t;
  for (int k = 0; k < 12; ++k) t.push_back(seconds_to_ns(250.0 * k));
  ExperimentConfig c;
  c.jobs = {service("svc-llm", t)};
  c.horizon_ns = seconds_to_ns(60);
  ArrivalReport r = check_arrivals(c);
  REQUIRE(r.warnings.size() == 1);  // 2750 s is 45.8x the horizon: no unit warning yet
  CHECK(r.warnings[0] ==
        "service 'svc-llm': 11 of 12 requests arrive after the horizon (requests span "
        "0.000-2750.000 s, horizon_s 60.000 s)");
  c.horizon_ns = seconds_to_ns(2.5);  // 2750 s > 1000 x 2.5 s
  r = check_arrivals(c);
  REQUIRE(r.warnings.size() == 2);
  CHECK(r.warnings[1] ==
        "service 'svc-llm': requests span 0.000-2750.000 s, more than 1000 x the horizon "
        "(2.500 s): are the times in milliseconds? (requests.time_scale 0.001, or gpumux trace "
        "import --time-unit ms)");
  c.horizon_ns = kTimeNever;
  c.jobs = {service("long", {0, seconds_to_ns(2e6)})};
  r = check_arrivals(c);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("more than 1000000 s (11.6 days)") != std::string::npos);
  c.jobs = {service("fast", {0, 1, 2, 3})};  // 4 requests in 3 ns
  r = check_arrivals(c);
  REQUIRE(r.warnings.size() == 1);
  CHECK(r.warnings[0].find("more than one request per microsecond") != std::string::npos);
}
