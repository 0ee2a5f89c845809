// A tiny executor for tuner tests: runs every handed-over trial at once (unlimited workers),
// each epoch taking `epoch_s` seconds, and reports the metric `curve(trial, config, epoch)`.
// Reports due at the same time are delivered in trial-id order. Records every report with the
// tuner's response, the groups, and the largest number of trials running at once. A trial in
// `failing` fails whenever it is handed over (Tuner::fail, as an executor that cannot place
// it); `failures` lists them in order.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "gpumux/engine/tuner.hpp"

namespace gpumux::test {

class FakeExecutor {
 public:
  using Curve = std::function<double(TrialId, const nlohmann::json&, int epoch)>;
  struct Entry {
    double time;
    TrialReport report;
    TunerResponse response;
  };

  FakeExecutor(Tuner& tuner, Curve curve, double epoch_s = 1.0)
      : tuner_(tuner), curve_(std::move(curve)), epoch_s_(epoch_s) {}

  /// Runs the tuning to its end; returns the time it ended (the makespan).
  double run() {
    for (const TrialGroup& g : tuner_.start()) launch(g);
    while (!due_.empty() && !over_) {
      const auto it = due_.begin();
      const auto [time, trial] = it->first;
      const int epoch = it->second;
      due_.erase(it);
      running_.erase(trial);
      now_ = time;
      const TrialReport r{trial, epoch, curve_(trial, tuner_.config(trial), epoch)};
      TunerResponse resp = tuner_.report(r);
      log.push_back(Entry{now_, r, resp});
      if (resp.decision == TrialDecision::Continue) schedule(trial, epoch + 1);
      if (resp.decision == TrialDecision::Pause) paused_.insert(trial);
      for (const TrialId t : resp.stopped) {
        if (paused_.erase(t) == 0) throw std::logic_error("stopped a trial that is not paused");
      }
      for (const TrialGroup& g : resp.groups) launch(g);
      if (resp.stop_all) over_ = true;
    }
    return now_;
  }

  std::vector<Entry> log;
  std::vector<TrialGroup> groups;
  std::size_t max_running = 0;
  std::set<TrialId> failing;
  std::vector<TrialId> failures;

 private:
  void schedule(TrialId t, int epoch) {
    due_.emplace(std::make_pair(now_ + epoch_s_, t), epoch);
    running_.insert(t);
    max_running = std::max(max_running, running_.size());
  }
  void launch(const TrialGroup& g) {
    groups.push_back(g);
    for (const TrialWork& w : g.trials) {
      paused_.erase(w.trial);
      if (failing.count(w.trial) == 0) {
        schedule(w.trial, w.start_epoch + 1);
        continue;
      }
      failures.push_back(w.trial);
      const TunerResponse resp = tuner_.fail(w.trial);
      for (const TrialId t : resp.stopped) {
        if (paused_.erase(t) == 0) throw std::logic_error("stopped a trial that is not paused");
      }
      for (const TrialGroup& more : resp.groups) launch(more);
      if (resp.stop_all) over_ = true;
    }
  }

  Tuner& tuner_;
  Curve curve_;
  double epoch_s_;
  double now_ = 0.0;
  bool over_ = false;
  std::map<std::pair<double, TrialId>, int> due_;  ///< (time, trial) -> epoch it finishes
  std::set<TrialId> running_;
  std::set<TrialId> paused_;
};

}  // namespace gpumux::test
