// Tuner's bookkeeping shared by every algorithm: trial ids and configs, the running/paused
// state each report is checked against, the best metric so far and the global target
// (Fluid's MetricStopper, SymbioticLab/Fluid workloads/common/__init__.py).
#include "gpumux/engine/tuner.hpp"

#include "gpumux/api/errors.hpp"

namespace gpumux {

Tuner::Tuner(const TunerArgs& args)
    : rng_(args.rng), space_(args.space), mode_(args.mode), target_(args.target) {}

TunerResponse Tuner::report(const TrialReport& r) {
  if (r.trial < 0 || index(r.trial) >= configs_.size()) {
    throw Error("tuner: report for unknown trial " + std::to_string(r.trial));
  }
  const std::size_t i = index(r.trial);
  if (target_reached_) return TunerResponse{TrialDecision::Stop, {}, {}, true};
  if (running_budget_[i] == 0 || r.epoch != last_epoch_[i] + 1 || r.epoch > running_budget_[i]) {
    throw Error("tuner: trial " + std::to_string(r.trial) + " reported epoch " +
                std::to_string(r.epoch) + " but is not running that epoch");
  }
  last_epoch_[i] = r.epoch;
  last_metric_[i] = r.metric;
  if (!best_trial_ || better(r.metric, best_metric_)) {
    best_trial_ = r.trial;
    best_metric_ = r.metric;
  }
  if (target_ && (r.metric == *target_ || better(r.metric, *target_))) {
    target_reached_ = true;
    running_budget_[i] = 0;
    return TunerResponse{TrialDecision::Stop, {}, {}, true};
  }
  const int budget = running_budget_[i];
  TunerResponse out = on_report(r);
  if (out.decision == TrialDecision::Continue && r.epoch >= budget) {
    throw Error("tuner " + std::string(name()) + ": Continue at the budget epoch of trial " +
                std::to_string(r.trial));
  }
  // A trial resumed in this very response keeps the budget make_group gave it.
  if (out.decision != TrialDecision::Continue && running_budget_[i] == budget) {
    running_budget_[i] = 0;
  }
  return out;
}

TunerResponse Tuner::fail(TrialId t) {
  if (t < 0 || index(t) >= configs_.size() || running_budget_[index(t)] == 0) {
    throw Error("tuner: trial " + std::to_string(t) + " failed but is not running");
  }
  running_budget_[index(t)] = 0;
  ++failed_;
  if (target_reached_) return TunerResponse{TrialDecision::Stop, {}, {}, true};
  TunerResponse out = on_failure(t);
  out.decision = TrialDecision::Stop;
  return out;
}

TrialId Tuner::new_trial(nlohmann::json config) {
  configs_.push_back(std::move(config));
  last_epoch_.push_back(0);
  last_metric_.push_back(0.0);
  running_budget_.push_back(0);
  return static_cast<TrialId>(configs_.size() - 1);
}

TrialGroup Tuner::make_group(std::vector<TrialWork> work) {
  for (const TrialWork& w : work) {
    const std::size_t i = index(w.trial);
    if (w.budget_epochs <= w.start_epoch) throw Error("tuner: empty budget in a group");
    if (w.restore_from) last_epoch_[i] = w.start_epoch;  // the copied checkpoint's epoch
    running_budget_[i] = w.budget_epochs;
  }
  return TrialGroup{next_group_++, std::move(work)};
}

TrialWork Tuner::fresh(TrialId t, int budget) const {
  return TrialWork{t, configs_.at(index(t)), 0, budget, std::nullopt};
}

TrialWork Tuner::resume(TrialId t, int budget) const {
  return TrialWork{t, configs_.at(index(t)), last_epoch_.at(index(t)), budget, std::nullopt};
}

}  // namespace gpumux
