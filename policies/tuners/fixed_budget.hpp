// FixedBudgetTuner: every config runs its full budget, all in one TrialGroup (dossier §2.2:
// "Grid/random search = one group"); the base of grid_search and random_search.
//
// Thread rules: a tuner belongs to one thread.
#pragma once

#include <vector>

#include "gpumux/errors.hpp"
#include "gpumux/tuner.hpp"

namespace gpumux::tuners {

class FixedBudgetTuner : public Tuner {
 public:
  FixedBudgetTuner(const TunerArgs& args, int max_epochs) : Tuner(args), max_epochs_(max_epochs) {
    if (max_epochs_ < 1) throw Error("tuner: max_epochs must be >= 1");
  }

  [[nodiscard]] std::vector<TrialGroup> start() override {
    std::vector<TrialWork> work;
    for (nlohmann::json& c : configs()) work.push_back(fresh(new_trial(std::move(c)), max_epochs_));
    left_ = work.size();
    if (work.empty()) return {};
    return {make_group(std::move(work))};
  }

 protected:
  /// The configs to run, called once by start().
  virtual std::vector<nlohmann::json> configs() = 0;

  TunerResponse on_report(const TrialReport& r) override {
    TunerResponse out;
    if (r.epoch == max_epochs_) {
      out.decision = TrialDecision::Stop;
      --left_;
    }
    return out;
  }
  [[nodiscard]] bool finished() const override { return left_ == 0; }

 private:
  int max_epochs_;
  std::size_t left_ = 0;
};

}  // namespace gpumux::tuners
