// FixedBudgetTuner: every config runs its full budget, all in one TrialGroup (Fluid, MLSys'21,
// §3.2: grid and random search form one TrialGroup); the base of grid_search and random_search.
// Both declare two parameters, built by fixed_budget_specs: how many configs (in the tuner's own
// terms: grid points per dimension, samples) and max_epochs.
//
// Thread rules: a tuner belongs to one thread.
#pragma once

#include <string>
#include <vector>

#include "gpumux/engine/tuner.hpp"
#include "gpumux/io/params.hpp"
#include "tuners/tuner_params.hpp"

namespace gpumux::tuners {

class FixedBudgetTuner : public Tuner {
 public:
  [[nodiscard]] std::vector<TrialGroup> start() override {
    std::vector<TrialWork> work;
    for (nlohmann::json& c : configs()) work.push_back(fresh(new_trial(std::move(c)), max_epochs_));
    left_ = work.size();
    if (work.empty()) return {};
    return {make_group(std::move(work))};
  }

  /// `count` (an Int, read as >= 1 by the constructor) and max_epochs (81: the Hyperband
  /// settings' R, our choice; see grid_search.cpp and random_search.cpp).
  [[nodiscard]] static ParamSpecs fixed_budget_specs(ParamSpec count) {
    return ParamSpecs{std::move(count), max_epochs_param(81, "epochs every trial runs")};
  }

 protected:
  /// Reads `specs` (fixed_budget_specs): the Int `count_name` and max_epochs, each >= 1.
  FixedBudgetTuner(const TunerArgs& args, const ParamSpecs& specs, const std::string& count_name)
      : Tuner(args) {
    read_tuner_params(args, specs, [&](ParamReader& p) {
      count_ = read_count(p, count_name, 1);
      max_epochs_ = read_max_epochs(p);
    });
  }

  /// The configs to run, called once by start().
  virtual std::vector<nlohmann::json> configs() = 0;
  /// The declared count parameter's value.
  [[nodiscard]] int count() const noexcept { return count_; }

  TunerResponse on_report(const TrialReport& r) override {
    TunerResponse out;
    if (r.epoch == max_epochs_) {
      out.decision = TrialDecision::Stop;
      --left_;
    }
    return out;
  }
  /// A failed trial will never run its budget: one fewer to wait for.
  TunerResponse on_failure(TrialId /*t*/) override {
    --left_;
    return {};
  }
  [[nodiscard]] bool finished() const override { return left_ == 0; }

 private:
  int count_ = 1;
  int max_epochs_ = 1;
  std::size_t left_ = 0;
};

}  // namespace gpumux::tuners
