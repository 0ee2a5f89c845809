// Tuner plug-ins driven by a fake executor (fake_executor.hpp): rung sizes and budgets of
// successive halving and Hyperband computed by hand, ASHA's early promotion, PBT's
// exploit/explore, determinism per seed, and the time-to-target stop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_executor.hpp"
#include "gpumux/engine/learning_curve.hpp"
#include "gpumux/engine/tuner.hpp"
#include "tuners/bracket.hpp"

using namespace gpumux;
using gpumux::test::FakeExecutor;

namespace {

SearchSpace space() {
  return SearchSpace::from_json(
      nlohmann::json::parse(R"({"lr": {"loguniform": [1e-4, 1.0]}, "momentum": {"uniform":
        [0.1, 0.9]}, "layers": {"int": [2, 4]}, "cell": {"choice": ["RNN", "LSTM", "GRU"]}})"),
      "test");
}

std::unique_ptr<Tuner> make(const std::string& name, nlohmann::json params, std::uint64_t seed = 1,
                            std::optional<double> target = std::nullopt,
                            MetricMode mode = MetricMode::Max) {
  TunerArgs a;
  a.mode = mode;
  a.params = std::move(params);
  a.file = "test";
  a.path = "tuner.params";
  a.space = space();
  a.target = target;
  a.rng = std::mt19937_64(seed);
  return TunerRegistry::instance().create(name, a);
}

// A metric that depends only on the trial id: a permutation of 0..8 (7 i mod 9), so the
// ranking is known by hand: trial 5 -> 8, 1 -> 7, 6 -> 6, 3 -> 3, ...
double permuted(TrialId t, const nlohmann::json& /*config*/, int /*epoch*/) {
  return static_cast<double>((7 * t) % 9);
}

std::vector<TrialId> ids(const TrialGroup& g) {
  std::vector<TrialId> out;
  for (const TrialWork& w : g.trials) out.push_back(w.trial);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST_CASE("every tuner is registered with its declared parameters", "[tuners]") {
  for (const char* name : {"grid_search", "random_search", "successive_halving", "hyperband",
                           "asha", "bohb", "sync_bohb", "pbt"}) {
    INFO(name);
    CHECK(TunerRegistry::instance().contains(name));
    CHECK_FALSE(TunerRegistry::instance().params(name).empty());
  }
  CHECK_THROWS_AS(make("hyperband", {{"eta", 1}}), ConfigError);
  CHECK_THROWS_AS(make("pbt", {{"populaton", 4}}), ConfigError);  // misspelt key refused
}

TEST_CASE("successive halving, eta 3, 9 trials, 9 epochs: 9@1 -> 3@3 -> 1@9", "[tuners]") {
  auto tuner = make("successive_halving",
                    {{"num_samples", 9}, {"eta", 3}, {"min_epochs", 1}, {"max_epochs", 9}});
  FakeExecutor ex(*tuner, permuted);
  const double makespan = ex.run();
  REQUIRE(ex.groups.size() == 3);
  // Rung 0: 9 fresh trials, budget 1 epoch.
  CHECK(ex.groups[0].trials.size() == 9);
  for (const TrialWork& w : ex.groups[0].trials) {
    CHECK(w.start_epoch == 0);
    CHECK(w.budget_epochs == 1);
  }
  // Rung 1: ceil(9/3) = 3, the best by hand (trials 5, 1, 6), from epoch 1 to 3.
  CHECK(ids(ex.groups[1]) == std::vector<TrialId>{1, 5, 6});
  for (const TrialWork& w : ex.groups[1].trials) {
    CHECK(w.start_epoch == 1);
    CHECK(w.budget_epochs == 3);
  }
  // Rung 2: ceil(3/3) = 1, trial 5, from epoch 3 to 9.
  CHECK(ids(ex.groups[2]) == std::vector<TrialId>{5});
  CHECK(ex.groups[2].trials[0].start_epoch == 3);
  CHECK(ex.groups[2].trials[0].budget_epochs == 9);
  // Epochs run: 9*1 + 3*2 + 1*6 = 21; with every trial in parallel, 1 + 2 + 6 = 9 s.
  CHECK(ex.log.size() == 21);
  CHECK(makespan == 9.0);
  CHECK(tuner->done());
  CHECK(tuner->trial_count() == 9);
  CHECK(tuner->best_trial() == TrialId{5});
  // The 6 rung-0 losers stop: 5 paused ones in a response's `stopped`, the last reporter
  // (trial 8, metric 2) by its own decision.
  std::size_t stopped = 0;
  for (const auto& e : ex.log) {
    if (e.report.epoch != 1) continue;
    stopped += e.response.stopped.size();
    if (e.response.decision == TrialDecision::Stop) ++stopped;
  }
  CHECK(stopped == 6);
  // Rung 1's losers, trials 1 (7) and 6 (6): trial 6 reports last and stops itself.
  CHECK(ex.log[9 + 5].report.trial == 6);
  CHECK(ex.log[9 + 5].response.decision == TrialDecision::Stop);
  CHECK(ex.log[9 + 5].response.stopped == std::vector<TrialId>{1});
}

TEST_CASE("a Min metric promotes the lowest values", "[tuners]") {
  auto tuner = make("successive_halving",
                    {{"num_samples", 9}, {"eta", 3}, {"min_epochs", 1}, {"max_epochs", 9}}, 1,
                    std::nullopt, MetricMode::Min);
  FakeExecutor ex(*tuner, permuted);
  ex.run();
  REQUIRE(ex.groups.size() == 3);
  CHECK(ids(ex.groups[1]) == std::vector<TrialId>{0, 4, 8});  // values 0, 1, 2
  CHECK(ids(ex.groups[2]) == std::vector<TrialId>{0});
  CHECK(tuner->best_trial() == TrialId{0});
}

TEST_CASE("Hyperband's brackets for eta 3, R 81 match Li et al.'s table", "[tuners]") {
  const auto b = tuners::hyperband_brackets(3, 1, 81);
  REQUIRE(b.size() == 5);
  const int n[] = {81, 34, 15, 8, 5};
  const int r[] = {1, 3, 9, 27, 81};
  for (std::size_t s = 0; s < 5; ++s) {
    CHECK(b[s].trials == n[s]);
    CHECK(b[s].epochs == r[s]);
  }
  // Rungs of the second bracket, ceil(n/eta) as Fluid's my_bracket: 34@3, 12@9, 4@27, 2@81.
  const auto rungs = tuners::bracket_rungs(34, 3, 81, 3);
  REQUIRE(rungs.size() == 4);
  CHECK(rungs[1].trials == 12);
  CHECK(rungs[2].trials == 4);
  CHECK(rungs[3].trials == 2);
  CHECK(rungs[3].epochs == 81);
  // R 243 (the WLM setting): s_max = 5, bracket 0 = 243 trials of 1 epoch.
  CHECK(tuners::hyperband_brackets(3, 1, 243).front().trials == 243);
}

TEST_CASE("hyperband runs its brackets one after another, bohb opens them all", "[tuners]") {
  auto curve = [](TrialId t, const nlohmann::json&, int e) { return 0.01 * e + 1e-4 * t; };
  auto hb = make("hyperband", {{"max_epochs", 9}});  // brackets 9@1, 5@3 (ceil(3*3/2)), 3@9
  FakeExecutor ex(*hb, curve);
  ex.run();
  CHECK(hb->done());
  CHECK(hb->trial_count() == 9 + 5 + 3);
  CHECK(ex.groups.front().trials.size() == 9);  // only bracket 0's rung 0 at start
  auto bohb = make("bohb", {{"max_epochs", 9}});
  CHECK(bohb->start().front().trials.size() == 9 + 5 + 3);
}

TEST_CASE("sync_bohb never runs more than max_concurrent trials", "[tuners]") {
  auto tuner = make("sync_bohb", {{"max_epochs", 27}, {"max_concurrent", 4}});
  FakeExecutor ex(*tuner, permuted);
  ex.run();
  CHECK(tuner->done());
  CHECK(ex.groups.front().trials.size() == 4);
  CHECK(ex.max_running == 4);
  // Brackets for R 27: 27@1, 12@3, 6@9, 4@27 -> 49 trials.
  CHECK(tuner->trial_count() == 27 + 12 + 6 + 4);
}

TEST_CASE("ASHA promotes a trial as soon as it is in the top 1/eta of its rung", "[tuners]") {
  // One worker, eta 3, rungs end at 1, 3, 9 epochs. Trials 0, 1, 2 score 0.5, 0.3, 0.4.
  auto tuner = make("asha", {{"eta", 3},
                             {"min_epochs", 1},
                             {"max_epochs", 9},
                             {"max_concurrent", 1},
                             {"num_samples", 6}});
  const double score[] = {0.5, 0.3, 0.4, 0.1, 0.2, 0.6};
  FakeExecutor ex(*tuner, [&](TrialId t, const nlohmann::json&, int) { return score[t]; });
  ex.run();
  // Reports 1 and 2 (trials 0, 1 at epoch 1): rung 0 holds 1 then 2 results, floor(n/3) = 0,
  // so each pauses and a new trial starts. Report 3 (trial 2): 3 results, the top 1 is trial 0
  // (0.5): promoted at once, from epoch 1 to 3, while 3 of the 6 configs exist.
  REQUIRE(ex.log.size() >= 3);
  CHECK(ex.log[0].response.decision == TrialDecision::Pause);
  CHECK(ex.log[0].response.groups.at(0).trials.at(0).trial == 1);
  CHECK(ex.log[1].response.groups.at(0).trials.at(0).trial == 2);
  const TunerResponse& third = ex.log[2].response;
  CHECK(third.decision == TrialDecision::Pause);
  REQUIRE(third.groups.size() == 1);
  const TrialWork& promoted = third.groups[0].trials.at(0);
  CHECK(promoted.trial == 0);
  CHECK(promoted.start_epoch == 1);
  CHECK(promoted.budget_epochs == 3);
  CHECK(ex.max_running == 1);
  CHECK(tuner->done());
  CHECK(tuner->trial_count() == 6);
}

TEST_CASE("PBT replaces the bottom quantile with perturbed copies of the top", "[tuners]") {
  // Population 4, quantile 0.25 -> ceil(4 * 0.25) = 1 trial at each end; interval 2 epochs.
  auto tuner = make("pbt", {{"population", 4},
                            {"perturbation_interval", 2},
                            {"max_epochs", 6},
                            {"resample_probability", 0.0}});
  const double score[] = {0.1, 0.4, 0.3, 0.2};
  FakeExecutor ex(*tuner, [&](TrialId t, const nlohmann::json&, int) {
    return t < 4 ? score[t] : 0.4;  // copies score as their donor, trial 1
  });
  ex.run();
  // At t = 2 s trial 0 (0.1, the bottom) reports first and is replaced by a copy of trial 1
  // (the top) at trial 1's epoch 1; then trial 3 (bottom of 1, 2, 3) by a copy at epoch 2.
  std::vector<TrialWork> copies;
  for (const TrialGroup& g : ex.groups) {
    for (const TrialWork& w : g.trials) {
      if (w.restore_from) copies.push_back(w);
    }
  }
  REQUIRE(copies.size() >= 2);
  CHECK(copies[0].trial == 4);
  CHECK(*copies[0].restore_from == 1);
  CHECK(copies[0].start_epoch == 1);
  CHECK(copies[1].trial == 5);
  CHECK(*copies[1].restore_from == 1);
  CHECK(copies[1].start_epoch == 2);
  // Explore without resampling: each number is the donor's x0.8 or x1.2 (or a bound), each
  // choice the donor's neighbour.
  const nlohmann::json& donor = tuner->config(1);
  for (const TrialWork& c : copies) {
    const double lr = c.config["lr"].get<double>();
    const double d = donor["lr"].get<double>();
    const bool factor =
        std::abs(lr - 0.8 * d) < 1e-12 || std::abs(lr - 1.2 * d) < 1e-12 || lr == 1e-4 || lr == 1.0;
    CHECK(factor);
    CHECK(c.config["cell"] != nullptr);
  }
  // The two replaced trials stopped at epoch 2.
  std::set<TrialId> stopped_at_2;
  for (const auto& e : ex.log) {
    if (e.response.decision == TrialDecision::Stop && e.report.epoch == 2) {
      stopped_at_2.insert(e.report.trial);
    }
  }
  CHECK(stopped_at_2 == std::set<TrialId>{0, 3});
  CHECK(tuner->done());
}

TEST_CASE("same seed, same decisions, another seed, other configs", "[tuners]") {
  const LearningCurve curve(space(), 7);
  auto run = [&](const std::string& name, std::uint64_t seed) {
    auto tuner = make(name,
                      name == "asha" ? nlohmann::json{{"max_epochs", 27}, {"num_samples", 30}}
                                     : nlohmann::json{{"max_epochs", 27}},
                      seed);
    FakeExecutor ex(*tuner,
                    [&](TrialId, const nlohmann::json& c, int e) { return curve.metric(c, e); });
    ex.run();
    std::vector<std::string> trace;
    for (const auto& e : ex.log) {
      trace.push_back(std::to_string(e.report.trial) + "@" + std::to_string(e.report.epoch) +
                      std::string(kTrialDecisionNames.name(e.response.decision)));
    }
    for (std::size_t t = 0; t < tuner->trial_count(); ++t) trace.push_back(tuner->config(t).dump());
    return trace;
  };
  for (const char* name : {"hyperband", "asha", "pbt", "random_search"}) {
    INFO(name);
    const auto a = run(name, 11);
    CHECK(a == run(name, 11));
    CHECK(a != run(name, 12));
  }
}

TEST_CASE("time to target: the tuning ends when a trial reaches the target", "[tuners]") {
  // Trial i scores epoch * (i + 1) / 100: trial 8 reaches 0.5 first, at epoch 6 (0.54);
  // trial 7 would need epoch 7 (0.56).
  auto tuner = make("random_search", {{"num_samples", 9}, {"max_epochs", 20}}, 3, 0.5);
  FakeExecutor ex(*tuner, [](TrialId t, const nlohmann::json&, int e) {
    return static_cast<double>(e * (t + 1)) / 100.0;
  });
  const double makespan = ex.run();
  CHECK(makespan == 6.0);
  CHECK(ex.log.back().response.stop_all);
  CHECK(ex.log.back().report.trial == 8);
  CHECK(tuner->done());
  CHECK(tuner->target_reached());
  CHECK(tuner->best_trial() == TrialId{8});
  CHECK(tuner->best_metric() == Approx(0.54));
}

TEST_CASE("grid search runs every grid point in one group", "[tuners]") {
  auto tuner = make("grid_search", {{"points_per_dim", 2}, {"max_epochs", 3}});
  FakeExecutor ex(*tuner, permuted);
  ex.run();
  // lr 2 x momentum 2 x layers 2 (2, 4) x cell 3 choices = 24 configs, 3 epochs each.
  REQUIRE(ex.groups.size() == 1);
  CHECK(ex.groups[0].trials.size() == 24);
  CHECK(ex.log.size() == 24 * 3);
  CHECK(tuner->done());
}

TEST_CASE("a report out of protocol is refused", "[tuners]") {
  auto tuner = make("random_search", {{"num_samples", 2}, {"max_epochs", 3}});
  (void)tuner->start();
  CHECK_THROWS_AS(tuner->report({0, 2, 0.1}), Error);  // epoch 1 comes first
  CHECK_THROWS_AS(tuner->report({5, 1, 0.1}), Error);  // no such trial
  CHECK(tuner->report({0, 1, 0.1}).decision == TrialDecision::Continue);
}
