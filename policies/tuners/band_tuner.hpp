// BandTuner: successive-halving brackets run as a tuner; the common engine of the
// successive_halving, hyperband, bohb and sync_bohb plug-ins (they differ in their bracket list, in
// whether brackets run one after another or all at once, and in a concurrency cap). Each bracket's
// rung is one TrialGroup (our model; Fluid's band scheduler plans per bracket), unless a
// concurrency cap releases the rung's trials a few at a time (each release is a group). New configs
// are drawn uniformly from the search space.
//
// Thread rules: a tuner belongs to one thread.
#pragma once

#include <deque>
#include <map>
#include <vector>

#include "gpumux/engine/tuner.hpp"
#include "tuners/bracket.hpp"

namespace gpumux::tuners {

struct BandOptions {
  std::vector<BracketShape> brackets;  ///< one round, in order
  int max_epochs = 0;
  int eta = 3;
  bool concurrent_brackets = false;  ///< open every bracket of a round at start
  int max_concurrent = 0;            ///< running trials at most (0: no cap)
  int rounds = 1;                    ///< rounds of the bracket list (0: until the target)
};

class BandTuner : public Tuner {
 public:
  BandTuner(const TunerArgs& args, BandOptions options);
  [[nodiscard]] std::vector<TrialGroup> start() override;

 protected:
  TunerResponse on_report(const TrialReport& r) override;
  /// The trial leaves its bracket (Bracket::fail); as HyperBandScheduler.on_trial_error in
  /// Ray Tune, the bracket's rung then ends if it waited only for this trial.
  TunerResponse on_failure(TrialId t) override;
  [[nodiscard]] bool finished() const override;

 private:
  void open_next_bracket();
  /// A member of bracket `b` left its rung (`o`): promotions queued, the next bracket or
  /// round opened when `b` is done, and the work the concurrency cap now allows.
  TunerResponse after_rung(const Bracket& b, const Bracket::Outcome& o);
  std::vector<TrialGroup> release();

  BandOptions opt_;
  std::vector<Bracket> brackets_;         ///< opened so far
  std::map<TrialId, std::size_t> owner_;  ///< trial -> its bracket
  std::deque<TrialWork> pending_;         ///< work waiting for the concurrency cap
  std::size_t opened_ = 0;                ///< brackets opened, over all rounds
  int running_ = 0;
};

}  // namespace gpumux::tuners
