// Arrival generators: statistics with a fixed seed, determinism, windows, replay options and
// the closed-loop description.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/workload.hpp"
#include "unit_fixtures.hpp"

namespace fx = gpumux::fixtures;
using Catch::Matchers::Contains;
using Catch::Matchers::Equals;
using gpumux::TimeNs;

namespace {

constexpr const char* kPath = "workload.services[0].arrivals";

std::unique_ptr<gpumux::ArrivalGenerator> make(const std::string& name, nlohmann::json params,
                                               const std::filesystem::path& root = {}) {
  gpumux::GeneratorArgs args{std::move(params), "cfg.json", kPath, root};
  return gpumux::GeneratorRegistry::instance().create(name, args);
}

std::vector<TimeNs> generate(const std::string& name, const nlohmann::json& params,
                             std::uint64_t seed, TimeNs start = 0) {
  std::mt19937_64 rng(seed);
  return make(name, params)->generate(rng, start);
}

struct GapStats {
  double mean, cv;
};

GapStats gap_stats(const std::vector<TimeNs>& t, TimeNs start) {
  std::vector<double> gaps;
  TimeNs prev = start;
  for (TimeNs x : t) {
    gaps.push_back(static_cast<double>(x - prev));
    prev = x;
  }
  const double mean = std::accumulate(gaps.begin(), gaps.end(), 0.0) / gaps.size();
  double var = 0;
  for (double g : gaps) var += (g - mean) * (g - mean);
  var /= gaps.size() - 1;
  return {mean, std::sqrt(var) / mean};
}

}  // namespace

TEST_CASE("All generators are registered", "[generators]") {
  const auto names = gpumux::GeneratorRegistry::instance().names();
  for (const char* n : {"closed_loop", "gamma", "onoff", "periodic", "poisson", "replay"}) {
    CHECK(std::find(names.begin(), names.end(), n) != names.end());
  }
}

TEST_CASE("poisson: mean gap 1/rate, deterministic per seed", "[generators]") {
  const auto params = nlohmann::json{{"rate_per_s", 100}, {"count", 20000}};
  const auto a = generate("poisson", params, 42, 1'000'000'000);
  REQUIRE(a.size() == 20000);
  CHECK(std::is_sorted(a.begin(), a.end()));
  CHECK(a.front() > 1'000'000'000);  // the default start is the service's arrival
  const auto s = gap_stats(a, 1'000'000'000);
  CHECK(s.mean == Approx(1e7).epsilon(0.05));  // 10 ms
  CHECK(s.cv == Approx(1.0).epsilon(0.05));    // exponential gaps
  CHECK(generate("poisson", params, 42, 1'000'000'000) == a);
  CHECK(generate("poisson", params, 43, 1'000'000'000) != a);
}

TEST_CASE("poisson: duration and count, whichever ends first", "[generators]") {
  const auto by_time =
      generate("poisson", {{"rate_per_s", 1000}, {"duration_s", 2}, {"start_s", 5}}, 1);
  CHECK(by_time.size() == Approx(2000).epsilon(0.1));
  CHECK(by_time.front() >= 5'000'000'000);
  CHECK(by_time.back() < 7'000'000'000);
  const auto both =
      generate("poisson", {{"rate_per_s", 1000}, {"duration_s", 2}, {"count", 10}}, 1);
  CHECK(both.size() == 10);
  const auto short_window =
      generate("poisson", {{"rate_per_s", 10}, {"duration_s", 1}, {"count", 1000}}, 1);
  CHECK(short_window.size() < 100);
  CHECK_THROWS_WITH(
      make("poisson", {{"rate_per_s", 10}}),
      Equals(std::string("cfg.json: ") + kPath + ": needs duration_s or count (or both)"));
  CHECK_THROWS_WITH(make("poisson", {{"rate_per_s", 10}, {"count", 5}, {"burst", 1}}),
                    Equals(std::string("cfg.json: ") + kPath + ".burst: unknown key"));
  CHECK_THROWS_WITH(make("poisson", {{"rate_per_s", 0}, {"count", 5}}),
                    Contains("rate_per_s: must be > 0"));
  CHECK_THROWS_AS(make("poisson", {{"rate_per_s", "10"}, {"count", 5}}), gpumux::ConfigError);
}

TEST_CASE("gamma: mean 1/rate and the requested coefficient of variation", "[generators]") {
  for (double cv : {0.5, 2.0}) {
    INFO("cv " << cv);
    const auto t = generate("gamma", {{"rate_per_s", 100}, {"cv", cv}, {"count", 50000}}, 7);
    REQUIRE(t.size() == 50000);
    const auto s = gap_stats(t, 0);
    CHECK(s.mean == Approx(1e7).epsilon(0.05));
    CHECK(s.cv == Approx(cv).epsilon(0.1));
  }
  const auto p = nlohmann::json{{"rate_per_s", 100}, {"cv", 3}, {"count", 100}};
  CHECK(generate("gamma", p, 9) == generate("gamma", p, 9));
  CHECK_THROWS_WITH(make("gamma", {{"rate_per_s", 100}, {"count", 5}}), Contains(".cv: missing"));
}

TEST_CASE("periodic: exact times", "[generators]") {
  CHECK(generate("periodic", {{"interval_s", 0.5}, {"count", 4}, {"start_s", 1}}, 0) ==
        std::vector<TimeNs>{1'000'000'000, 1'500'000'000, 2'000'000'000, 2'500'000'000});
  // duration 1.2 s from 1 s: 1.0, 1.5, 2.0 (2.5 is past 2.2)
  CHECK(
      generate("periodic", {{"interval_s", 0.5}, {"duration_s", 1.2}, {"start_s", 1}}, 0).size() ==
      3);
  // start defaults to the service's arrival
  CHECK(generate("periodic", {{"interval_s", 1}, {"count", 2}}, 0, 7) ==
        std::vector<TimeNs>{7, 1'000'000'007});
}

TEST_CASE("onoff: arrivals only inside on phases", "[generators]") {
  const auto t = generate(
      "onoff",
      {{"rate_per_s", 1000}, {"on_s", 0.1}, {"off_s", 0.4}, {"start_s", 2}, {"duration_s", 5}}, 3);
  // 10 on phases of 0.1 s at 1000/s: about 1000 arrivals
  CHECK(t.size() == Approx(1000).epsilon(0.15));
  for (TimeNs x : t) {
    REQUIRE(x >= 2'000'000'000);
    REQUIRE(x < 7'000'000'000);
    REQUIRE((x - 2'000'000'000) % 500'000'000 < 100'000'000);
  }
  // every on phase got some requests
  std::set<TimeNs> phases;
  for (TimeNs x : t) phases.insert((x - 2'000'000'000) / 500'000'000);
  CHECK(phases.size() == 10);
}

TEST_CASE("replay: offset, time scale and limit", "[generators]") {
  const auto root = fx::make_temp_dir("replay");
  fx::write_file(root / "traces/arrivals/r.csv", "arrival_s,x\n0,1\n0.5,1\n1.5,1\n3.0,1\n");
  std::mt19937_64 rng(1);
  const auto g = make(
      "replay",
      {{"file", "traces/arrivals/r.csv"}, {"offset_s", 10}, {"time_scale", 2}, {"limit", 3}}, root);
  CHECK(g->generate(rng, 0) == std::vector<TimeNs>{10'000'000'000, 11'000'000'000, 13'000'000'000});
  // offset defaults to the service's arrival
  const auto all = make("replay", {{"file", "traces/arrivals/r.csv"}}, root);
  CHECK(all->generate(rng, 4) == std::vector<TimeNs>{4, 500'000'004, 1'500'000'004, 3'000'000'004});
  CHECK_THROWS_WITH(make("replay", {{"file", "traces/arrivals/none.csv"}}, root),
                    Contains(std::string(kPath) + ".file: "));
  CHECK_THROWS_WITH(make("replay", {{"file", "traces/arrivals/r.csv"}, {"limit", 0}}, root),
                    Contains(".limit: must be >= 1"));
}

TEST_CASE("closed_loop: a description, no open-loop times", "[generators]") {
  const auto g = make("closed_loop", {{"count", 50},
                                      {"think_ms", 2.5},
                                      {"start_s", 1},
                                      {"on_s", 2},
                                      {"off_s", 3},
                                      {"duration_s", 30}});
  std::mt19937_64 rng(1);
  CHECK(g->generate(rng, 0).empty());
  const auto c = g->closed_loop(0);
  REQUIRE(c.has_value());
  CHECK(c->enabled);
  CHECK(c->count == 50);
  CHECK(c->think_ns == 2'500'000);
  CHECK(c->start_ns == 1'000'000'000);
  CHECK(c->end_ns == 31'000'000'000);
  CHECK(c->on_ns == 2'000'000'000);
  CHECK(c->off_ns == 3'000'000'000);
  CHECK(c->next_send_time(3'500'000'000) == 6'000'000'000);

  const auto d = make("closed_loop", {{"count", 5}})->closed_loop(7);
  CHECK(d->start_ns == 7);  // the service's arrival
  CHECK(d->end_ns == gpumux::kTimeNever);
  CHECK(d->on_ns == 0);
  CHECK(d->next_send_time(100) == 100);
  CHECK_THROWS_WITH(make("closed_loop", {{"think_ms", 1}}), Contains("needs count or duration_s"));
  CHECK_THROWS_WITH(make("closed_loop", {{"count", 1}, {"off_s", 1}}),
                    Contains("off_s: an off phase needs on_s > 0"));
  CHECK_FALSE(make("poisson", {{"rate_per_s", 1}, {"count", 1}})->closed_loop(0).has_value());
}
