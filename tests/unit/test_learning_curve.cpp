// Parametric pow3 learning curves (learning_curve.hpp) and the search space they read.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/engine/learning_curve.hpp"
#include "gpumux/engine/search_space.hpp"

using namespace gpumux;

namespace {

SearchSpace two_dims() {
  return SearchSpace::from_json(
      nlohmann::json::parse(R"({"lr": {"loguniform": [1e-3, 1e-1]}, "m": {"uniform": [0, 1]}})"),
      "test");
}

}  // namespace

TEST_CASE("search space: grid, unit coordinates, bad input", "[learning_curve]") {
  const SearchSpace s = two_dims();
  const auto g = s.grid(3);
  REQUIRE(g.size() == 9);
  // First dimension slowest; log-spaced lr: 1e-3, 1e-2, 1e-1.
  CHECK(g[0]["lr"].get<double>() == Approx(1e-3));
  CHECK(g[3]["lr"].get<double>() == Approx(1e-2));
  CHECK(g[8]["lr"].get<double>() == Approx(1e-1));
  CHECK(g[1]["m"].get<double>() == Approx(0.5));
  const auto u = s.unit({{"lr", 1e-2}, {"m", 0.25}});
  CHECK(u[0] == Approx(0.5));
  CHECK(u[1] == Approx(0.25));
  CHECK_THROWS_AS(SearchSpace::from_json({{"lr", {{"loguniform", {0, 1}}}}}, "f"), ConfigError);
  CHECK_THROWS_AS(SearchSpace::from_json({{"lr", {{"normal", {0, 1}}}}}, "f"), ConfigError);
  std::mt19937_64 rng(1);
  for (int i = 0; i < 100; ++i) {
    const auto p = s.sample(rng);
    CHECK(p["lr"].get<double>() >= 1e-3);
    CHECK(p["lr"].get<double>() <= 1e-1);
  }
}

TEST_CASE("pow3 curves: start value, asymptote, power-law approach", "[learning_curve]") {
  LearningCurveParams p;
  p.noise = 0.0;
  const LearningCurve lc(two_dims(), 42, p);
  const nlohmann::json cfg{{"lr", 3e-3}, {"m", 0.7}};
  const double c = lc.asymptote(cfg);
  CHECK(c > p.y_start);
  CHECK(c <= p.y_best);
  // y(1) = y_start; the remaining gap shrinks as t^-alpha: gap(4)/gap(1) = (gap(2)/gap(1))^2.
  CHECK(lc.metric(cfg, 1) == Approx(p.y_start));
  const double g1 = c - lc.metric(cfg, 1);
  const double g2 = c - lc.metric(cfg, 2);
  const double g4 = c - lc.metric(cfg, 4);
  CHECK(g4 / g1 == Approx((g2 / g1) * (g2 / g1)));
  const double alpha = -std::log2(g2 / g1);
  CHECK(alpha >= p.alpha_lo);
  CHECK(alpha <= p.alpha_hi);
  for (int e = 1; e < 50; ++e) CHECK(lc.metric(cfg, e + 1) > lc.metric(cfg, e));
  // The config at the seed's optimum reaches y_best: lr = 1e-3 * 100^o0, m = o1.
  const auto& o = lc.optimum();
  const nlohmann::json best{{"lr", 1e-3 * std::pow(100.0, o[0])}, {"m", o[1]}};
  CHECK(lc.asymptote(best) == Approx(p.y_best));
}

TEST_CASE("curves are pure functions of (config, epoch, seed)", "[learning_curve]") {
  const LearningCurve a(two_dims(), 1);
  const LearningCurve b(two_dims(), 1);
  const LearningCurve other(two_dims(), 2);
  const nlohmann::json cfg{{"lr", 1e-2}, {"m", 0.5}};
  CHECK(a.metric(cfg, 10) == b.metric(cfg, 10));
  CHECK(a.metric(cfg, 10) != other.metric(cfg, 10));
  CHECK(a.optimum() != other.optimum());
  CHECK_THROWS_AS(a.metric(cfg, 0), Error);
}
