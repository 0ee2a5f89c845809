// The benchmark reference (experiments/bench/reference) must compute exactly what gpumux
// computes on the default experiment: the same request latencies to the ns, the same training
// iterations, the same end time, and the same number of runtime events (so events/s compare
// like with like). gpumux's side is read from its events.jsonl, the format that must not change.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/io/config.hpp"
#include "gpumux/io/experiment.hpp"
#include "reference_sim.hpp"
#include "test_support.hpp"

namespace {

using gpumux::DurationNs;

struct Observed {
  std::vector<DurationNs> latency_ns;  // by request id, -1 = not finished
  std::vector<std::uint64_t> iterations;
  gpumux::TimeNs end_ns = 0;
  std::uint64_t events = 0;
};

Observed run_gpumux(const gpumux::ExperimentConfig& cfg, std::size_t requests, std::size_t jobs) {
  const auto result = gpumux::run_experiment(cfg, gpumux::test::source_dir(), false);
  Observed o;
  o.latency_ns.assign(requests, -1);
  o.iterations.assign(jobs, 0);
  o.end_ns = result.run.end_ns;
  o.events = result.run.runtime_events;
  std::istringstream lines(gpumux::test::events_jsonl(result));
  for (std::string line; std::getline(lines, line);) {
    const auto e = nlohmann::json::parse(line);
    const std::string ev = e.at("ev");
    if (ev == "request_end") {
      o.latency_ns.at(e.at("a").get<std::size_t>()) = e.at("b").get<DurationNs>();
    } else if (ev == "iteration_end") {
      auto& n = o.iterations.at(e.at("job").get<std::size_t>());
      n = std::max(n, e.at("a").get<std::uint64_t>());
    }
  }
  return o;
}

void check_equal(const std::vector<std::string>& overrides) {
  const auto root = gpumux::test::source_dir();
  const gpumux::ExperimentConfig cfg =
      gpumux::load_experiment(root / "experiments" / "configs" / "default.json", overrides, root);
  const gpumux::bench::RefInputs in = gpumux::bench::resolve_reference_inputs(cfg, root);
  const gpumux::bench::RefResult ref = gpumux::bench::run_reference(in);
  const Observed sim = run_gpumux(cfg, ref.latency_ns.size(), in.jobs.size());

  std::size_t finished = 0;
  for (const DurationNs l : ref.latency_ns) finished += l >= 0 ? 1 : 0;
  INFO("requests finished " << finished << ", iterations " << ref.iterations.at(0));
  REQUIRE(finished > 0);
  REQUIRE(ref.iterations.at(0) > 0);
  CHECK(ref.latency_ns == sim.latency_ns);
  CHECK(ref.iterations == sim.iterations);
  CHECK(ref.end_ns == sim.end_ns);
  CHECK(ref.events == sim.events);
}

}  // namespace

TEST_CASE("reference simulation equals gpumux on the default experiment (30 s)", "[bench]") {
  check_equal({"trace=false"});
}

TEST_CASE("reference simulation equals gpumux at 300 s with arrivals throughout", "[bench]") {
  // Requests over the whole horizon keep the two contexts time-slicing all along.
  check_equal({"trace=false", "horizon_s=300", "workload.services.0.arrivals.duration_s=298"});
}

TEST_CASE("reference simulation equals gpumux with a shallower queue and a short run", "[bench]") {
  // depth 1: each job holds one op at a time; the training job ends before the horizon.
  check_equal({"trace=false", "policy.params.depth=1", "horizon_s=10",
               "workload.jobs.0.iterations=40", "workload.services.0.arrivals.rate_per_s=20",
               "workload.services.0.arrivals.start_s=0.05"});
}

TEST_CASE("reference simulation rejects configs it does not model", "[bench]") {
  const auto root = gpumux::test::source_dir();
  const auto cfg = gpumux::load_experiment(root / "experiments" / "configs" / "default.json",
                                           {"policy.name=mps"}, root);
  CHECK_THROWS_AS(gpumux::bench::resolve_reference_inputs(cfg, root), std::invalid_argument);
}
