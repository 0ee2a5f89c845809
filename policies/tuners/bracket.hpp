// Successive-halving brackets, shared by the successive_halving, hyperband, bohb and
// sync_bohb tuners. A bracket starts n_0 trials with a budget of r_0 epochs; when every trial
// of rung k has reached r_k epochs, the best n_{k+1} are promoted to rung k+1 and the rest
// stop. Rung sizes and budgets follow Fluid's fluid/my_bracket.py (SymbioticLab/Fluid):
//     n_k = ceil(n_{k-1} / eta),   r_k = min(r_{k-1} * eta, max_epochs),
// until a rung's budget is max_epochs (the last rung). Hyperband's bracket table follows
// Li et al. JMLR 2018, Algorithm 1: s_max = floor(log_eta(R / r_min)), B = (s_max + 1) R,
// bracket s = s_max..0 has n = ceil(B / R * eta^s / (s + 1)) trials of r = R * eta^-s epochs.
//
// Thread rules: plain values, owned by one tuner.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "gpumux/engine/tuner.hpp"

namespace gpumux::tuners {

struct Rung {
  int trials = 0;  ///< n_k
  int epochs = 0;  ///< r_k, cumulative epochs a member has run at the end of the rung
};

/// The rungs of a bracket of n0 trials starting at r0 epochs.
[[nodiscard]] std::vector<Rung> bracket_rungs(int n0, int r0, int max_epochs, int eta);

struct BracketShape {
  int trials = 0;  ///< n of Li et al.
  int epochs = 0;  ///< r of Li et al. (rung 0's budget)
};
/// Hyperband's brackets, most exploratory first (s = s_max..0).
[[nodiscard]] std::vector<BracketShape> hyperband_brackets(int eta, int min_epochs, int max_epochs);

class Bracket {
 public:
  Bracket(int n0, int r0, int max_epochs, int eta, MetricMode mode);

  [[nodiscard]] const std::vector<Rung>& rungs() const noexcept { return rungs_; }
  /// Adds a rung-0 member (at most rungs()[0].trials).
  void add(TrialId t);
  /// Epochs the member runs up to in its current rung.
  [[nodiscard]] int budget(TrialId t) const { return rungs_[rung_.at(t)].epochs; }
  [[nodiscard]] bool contains(TrialId t) const { return rung_.count(t) != 0; }

  struct Outcome {
    TrialDecision decision = TrialDecision::Pause;  ///< for the reporting member
    std::vector<TrialId> promoted;  ///< to resume up to `next_epochs` (may hold the reporter)
    std::vector<TrialId> stopped;   ///< paused losers (never the reporter)
    int next_epochs = 0;
  };
  /// The member reached its rung's budget with `metric`. In the last rung it stops; else it
  /// pauses, and when it completes the rung the best are promoted (ties: lower id first).
  Outcome rung_end(TrialId t, double metric);
  /// The member failed (Tuner::fail): it leaves the bracket without a result. The rung ends
  /// as with rung_end once every member has reported or failed; only members with a result
  /// are promoted, so the next rung may wait for fewer than n_{k+1} (a rung whose members all
  /// failed ends the bracket). The decision is Stop.
  Outcome fail(TrialId t);
  [[nodiscard]] bool finished() const noexcept { return finished_; }

 private:
  /// A member's end of rung: with its metric, or without (nullopt: it failed).
  Outcome end_member(TrialId t, std::optional<double> metric);

  std::vector<Rung> rungs_;
  MetricMode mode_;
  std::map<TrialId, std::size_t> rung_;  ///< member -> its current rung
  std::vector<std::vector<std::pair<TrialId, std::optional<double>>>> results_;  ///< per rung
  std::vector<std::size_t> expected_;  ///< members each rung waits for (n_k, less failures)
  std::size_t done_in_last_ = 0;
  bool finished_ = false;
};

}  // namespace gpumux::tuners
