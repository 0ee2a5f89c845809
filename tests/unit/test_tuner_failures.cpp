// Tuner::fail: a trial that cannot run leaves its tuner, which goes on without it (Ray Tune's
// schedulers on a trial error). Driven by the fake executor with trials that fail whenever they
// are handed over; rankings computed by hand from the permuted metric 7 t mod 9:
//   trial   0 1 2 3 4 5 6 7 8
//   metric  0 7 5 3 1 8 6 4 2
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <vector>

#include <nlohmann/json.hpp>

#include "fake_executor.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/engine/tuner.hpp"

using namespace gpumux;
using gpumux::test::FakeExecutor;

namespace {

std::unique_ptr<Tuner> make(const std::string& name, nlohmann::json params) {
  TunerArgs a;
  a.params = std::move(params);
  a.file = "test";
  a.path = "tuner.params";
  a.space = SearchSpace::from_json(nlohmann::json::parse(R"({"lr": {"loguniform": [1e-4, 1.0]}})"),
                                   "test");
  a.rng = std::mt19937_64(1);
  return TunerRegistry::instance().create(name, a);
}

double permuted(TrialId t, const nlohmann::json& /*config*/, int /*epoch*/) {
  return static_cast<double>((7 * t) % 9);
}

/// Trials that reported epoch `epoch`, in report order.
std::vector<TrialId> reported_at(const FakeExecutor& x, int epoch) {
  std::vector<TrialId> out;
  for (const auto& e : x.log) {
    if (e.report.epoch == epoch) out.push_back(e.report.trial);
  }
  return out;
}

std::set<TrialId> as_set(const std::vector<TrialId>& v) {
  return {v.begin(), v.end()};
}

}  // namespace

TEST_CASE("random search: a failed trial is one fewer to wait for", "[tuners][failures]") {
  auto tuner = make("random_search", {{"num_samples", 4}, {"max_epochs", 3}});
  FakeExecutor x(*tuner, permuted);
  x.failing = {1};
  x.run();
  CHECK(tuner->done());
  CHECK(tuner->failed_trials() == 1);
  CHECK(x.failures == std::vector<TrialId>{1});
  CHECK(as_set(reported_at(x, 3)) == std::set<TrialId>{0, 2, 3});
  CHECK(*tuner->best_trial() == 2);  // metrics 0, 5, 3 of trials 0, 2, 3
}

TEST_CASE("successive halving: a failed member is never promoted, the rung ends without it",
          "[tuners][failures]") {
  // 9 trials at 1 epoch, the best 3 at 3 epochs, the best 1 at 9. Trial 5 (the best, 8) fails:
  // rung 0 ends with 8 results and promotes 1 (7), 6 (6) and 2 (5); rung 1 promotes 1.
  auto tuner = make("successive_halving",
                    {{"num_samples", 9}, {"eta", 3}, {"min_epochs", 1}, {"max_epochs", 9}});
  FakeExecutor x(*tuner, permuted);
  x.failing = {5};
  x.run();
  CHECK(tuner->done());
  CHECK(tuner->failed_trials() == 1);
  CHECK(as_set(reported_at(x, 1)) == std::set<TrialId>{0, 1, 2, 3, 4, 6, 7, 8});
  CHECK(as_set(reported_at(x, 3)) == std::set<TrialId>{1, 2, 6});
  CHECK(reported_at(x, 9) == std::vector<TrialId>{1});
}

TEST_CASE("successive halving: with its two best members failed, the next three go on",
          "[tuners][failures]") {
  // Trials 5 (8) and 6 (6) fail: rung 0 promotes 1 (7), 2 (5) and 7 (4); rung 1 promotes 1.
  auto tuner = make("successive_halving",
                    {{"num_samples", 9}, {"eta", 3}, {"min_epochs", 1}, {"max_epochs", 9}});
  FakeExecutor x(*tuner, permuted);
  x.failing = {5, 6};
  x.run();
  CHECK(tuner->done());
  CHECK(tuner->failed_trials() == 2);
  CHECK(as_set(reported_at(x, 3)) == std::set<TrialId>{1, 2, 7});
  CHECK(reported_at(x, 9) == std::vector<TrialId>{1});
}

TEST_CASE("successive halving: a rung whose members all fail ends the bracket",
          "[tuners][failures]") {
  auto tuner = make("successive_halving",
                    {{"num_samples", 3}, {"eta", 3}, {"min_epochs", 1}, {"max_epochs", 3}});
  FakeExecutor x(*tuner, permuted);
  x.failing = {0, 1, 2};
  x.run();
  CHECK(tuner->done());
  CHECK(tuner->failed_trials() == 3);
  CHECK(x.log.empty());
}

TEST_CASE("hyperband: failures in one bracket do not stall the next", "[tuners][failures]") {
  // eta 3, R = 3, r_min = 1: brackets of 3 trials at 1 epoch (best 1 -> 3 epochs) and of
  // 2 trials at 3 epochs, one after the other. Every trial of the first bracket fails.
  auto tuner = make("hyperband", {{"eta", 3}, {"min_epochs", 1}, {"max_epochs", 3}});
  FakeExecutor x(*tuner, permuted);
  x.failing = {0, 1, 2};
  x.run();
  CHECK(tuner->done());
  CHECK(tuner->failed_trials() == 3);
  CHECK(as_set(reported_at(x, 3)) == std::set<TrialId>{3, 4});
}

TEST_CASE("asha: a failed trial frees its worker slot for a new config", "[tuners][failures]") {
  auto tuner = make("asha", {{"eta", 3},
                             {"min_epochs", 1},
                             {"max_epochs", 1},
                             {"max_concurrent", 2},
                             {"num_samples", 4}});
  FakeExecutor x(*tuner, permuted);
  x.failing = {0};
  x.run();
  CHECK(tuner->done());
  CHECK(tuner->trial_count() == 4);
  CHECK(tuner->failed_trials() == 1);
  CHECK(as_set(reported_at(x, 1)) == std::set<TrialId>{1, 2, 3});
  // Trials 0 and 1 were handed over first; 0's failure started 2 at once, not after 1.
  REQUIRE(x.groups.size() >= 2);
  CHECK(x.groups[1].trials.front().trial == 2);
}

TEST_CASE("pbt: a failed trial leaves the population", "[tuners][failures]") {
  auto tuner = make("pbt", {{"population", 3}, {"perturbation_interval", 100}, {"max_epochs", 2}});
  FakeExecutor x(*tuner, permuted);
  x.failing = {1};
  x.run();
  CHECK(tuner->done());
  CHECK(tuner->failed_trials() == 1);
  CHECK(as_set(reported_at(x, 2)) == std::set<TrialId>{0, 2});
}

TEST_CASE("Tuner::fail refuses a trial that is not running", "[tuners][failures]") {
  auto tuner = make("random_search", {{"num_samples", 1}, {"max_epochs", 1}});
  (void)tuner->start();
  CHECK(tuner->running(0));
  CHECK_THROWS_AS(tuner->fail(5), Error);
  (void)tuner->report({0, 1, 0.5});
  CHECK_FALSE(tuner->running(0));
  CHECK_THROWS_AS(tuner->fail(0), Error);
  CHECK(tuner->failed_trials() == 0);
}
