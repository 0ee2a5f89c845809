// BandTuner (band_tuner.hpp).
#include "tuners/band_tuner.hpp"

#include "gpumux/api/errors.hpp"

namespace gpumux::tuners {

BandTuner::BandTuner(const TunerArgs& args, BandOptions options)
    : Tuner(args), opt_(std::move(options)) {
  if (opt_.brackets.empty() || opt_.max_concurrent < 0 || opt_.rounds < 0) {
    throw Error("band tuner: needs a bracket, max_concurrent >= 0 and rounds >= 0");
  }
}

void BandTuner::open_next_bracket() {
  const BracketShape& shape = opt_.brackets[opened_ % opt_.brackets.size()];
  ++opened_;
  brackets_.emplace_back(shape.trials, shape.epochs, opt_.max_epochs, opt_.eta, mode());
  Bracket& b = brackets_.back();
  for (int i = 0; i < shape.trials; ++i) {
    const TrialId t = new_trial(space_.sample(rng_));
    b.add(t);
    owner_.emplace(t, brackets_.size() - 1);
    pending_.push_back(fresh(t, shape.epochs));
  }
}

std::vector<TrialGroup> BandTuner::release() {
  std::vector<TrialWork> batch;
  while (!pending_.empty() && (opt_.max_concurrent == 0 || running_ < opt_.max_concurrent)) {
    TrialWork w = std::move(pending_.front());
    pending_.pop_front();
    batch.push_back(std::move(w));
    ++running_;
  }
  if (batch.empty()) return {};
  return {make_group(std::move(batch))};
}

std::vector<TrialGroup> BandTuner::start() {
  const std::size_t first_round = opt_.concurrent_brackets ? opt_.brackets.size() : 1;
  for (std::size_t i = 0; i < first_round; ++i) open_next_bracket();
  return release();
}

TunerResponse BandTuner::on_report(const TrialReport& r) {
  Bracket& b = brackets_[owner_.at(r.trial)];
  if (r.epoch < b.budget(r.trial)) return TunerResponse{};  // Continue inside the rung
  --running_;
  return after_rung(b, b.rung_end(r.trial, r.metric));
}

TunerResponse BandTuner::on_failure(TrialId t) {
  Bracket& b = brackets_[owner_.at(t)];
  --running_;
  return after_rung(b, b.fail(t));
}

TunerResponse BandTuner::after_rung(const Bracket& b, const Bracket::Outcome& o) {
  TunerResponse out;
  out.decision = o.decision;
  out.stopped = o.stopped;
  for (const TrialId t : o.promoted) pending_.push_back(resume(t, o.next_epochs));
  const bool round_left =
      opt_.rounds == 0 || opened_ < opt_.brackets.size() * static_cast<std::size_t>(opt_.rounds);
  if (b.finished() && round_left) {
    // Sequential: the next bracket starts when this one ends. Concurrent: a whole round of
    // brackets starts when the last bracket of the previous round ends.
    bool all_done = true;
    for (const Bracket& other : brackets_) all_done = all_done && other.finished();
    if (!opt_.concurrent_brackets) {
      open_next_bracket();
    } else if (all_done) {
      for (std::size_t i = 0; i < opt_.brackets.size(); ++i) open_next_bracket();
    }
  }
  out.groups = release();
  return out;
}

bool BandTuner::finished() const {
  if (opt_.rounds == 0 || !pending_.empty() || running_ > 0) return false;
  if (opened_ < opt_.brackets.size() * static_cast<std::size_t>(opt_.rounds)) return false;
  for (const Bracket& b : brackets_) {
    if (!b.finished()) return false;
  }
  return true;
}

}  // namespace gpumux::tuners
