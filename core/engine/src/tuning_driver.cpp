// The TuningDriver (tuning_driver.hpp): tuners, trial slots and the tuners' decisions.
#include "tuning_driver.hpp"

#include <limits>
#include <string>
#include <utility>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/seed.hpp"

namespace gpumux {

TuningDriver::TuningDriver(Runtime& runtime, std::span<JobState> jobs, EngineEvents& events,
                           HookQueue& hooks, RequestSources& sources, std::uint64_t seed,
                           StopJob stop_job, AbortOps abort_ops)
    : runtime_(runtime),
      jobs_(jobs),
      events_(events),
      hooks_(hooks),
      sources_(sources),
      seed_(seed),
      stop_job_(std::move(stop_job)),
      abort_ops_(std::move(abort_ops)),
      tuning_of_(jobs.size(), 0),
      trial_of_(jobs.size()) {
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    const auto& slot = jobs_[j].spec->trial;
    if (!slot) continue;
    const std::size_t idx = slot->tuning->index;
    if (tunings_.size() <= idx) tunings_.resize(idx + 1);
    Tuning& t = tunings_[idx];
    if (!t.spec) {
      t.spec = slot->tuning;
      t.slots.resize(t.spec->max_trials);
    }
    t.slots.at(slot->slot) = jobs_[j].id;
    tuning_of_[j] = idx;
  }
}

TuningDriver::~TuningDriver() = default;

void TuningDriver::start() {
  for (Tuning& t : tunings_) {
    if (!t.spec) continue;
    runtime_.schedule_at(t.spec->arrival_ns, [this, &t] {
      begin(t);
      hooks_.drain();
    });
  }
}

void TuningDriver::begin(Tuning& t) {
  const TuningSpec& spec = *t.spec;
  // The tuner and the learning curves each draw from their own stream (seed.hpp), member
  // spec.index: adding a tuning job leaves the earlier ones' draws unchanged.
  TunerArgs args;
  args.params = spec.params;
  args.file = spec.file;
  args.path = spec.path + ".params";
  args.space = spec.space;
  args.mode = spec.mode;
  args.target = spec.target;
  args.rng = std::mt19937_64(derive_seed(seed_, SeedStream::Tuner, spec.index));
  t.tuner = TunerRegistry::instance().create(spec.tuner, args);
  t.curve = std::make_unique<LearningCurve>(
      spec.space, derive_seed(seed_, SeedStream::LearningCurve, spec.index), spec.curve);
  for (const TrialGroup& g : t.tuner->start()) run_group(t, g);
  if (t.tuner->done()) end(t);
}

namespace {

/// epochs x iterations per epoch, saturating: a target beyond 2^64 iterations is never
/// reached, as the exact one would not be.
std::uint64_t epoch_iterations(int epochs, std::uint64_t per_epoch) {
  const auto e = static_cast<std::uint64_t>(epochs);
  if (per_epoch != 0 && e > std::numeric_limits<std::uint64_t>::max() / per_epoch) {
    return std::numeric_limits<std::uint64_t>::max();
  }
  return e * per_epoch;
}

}  // namespace

void TuningDriver::run_group(Tuning& t, const TrialGroup& g) {
  for (const TrialWork& w : g.trials) {
    if (t.over) return;  // a failure ended the tuning while its group was handed over
    const auto it = t.job_of.find(w.trial);
    if (it == t.job_of.end()) {
      activate(t, w);
    } else if (t.failed.count(w.trial) != 0) {
      fail(t, w.trial);  // a failed trial cannot run later either
    } else {
      resume(t, jobs_[index_of(it->second)], w);
    }
  }
}

void TuningDriver::activate(Tuning& t, const TrialWork& w) {
  const TuningSpec& spec = *t.spec;
  if (t.next_slot >= t.slots.size()) {
    if (!t.failed.empty()) {
      // Failed trials spent slots: the tuning ends with what ran, rather than the run.
      end(t);
      return;
    }
    throw Error("tuning job '" + spec.name + "': its tuner starts trial " +
                std::to_string(w.trial) + " but all " + std::to_string(spec.max_trials) +
                " trial slots are used; raise " + spec.path + ".max_trials");
  }
  JobState& s = jobs_[index_of(t.slots[t.next_slot++])];
  const std::uint64_t ipe = spec.iterations_per_epoch();
  s.iterations_done = epoch_iterations(w.start_epoch, ipe);
  s.dispatched = s.completed = Cursor{s.iterations_done, Pass::Forward, 0};
  s.iterations_target = epoch_iterations(w.budget_epochs, ipe);
  s.arrival_ns = runtime_.now();
  trial_of_[index_of(s.id)] = w.trial;
  t.job_of.emplace(w.trial, s.id);
  sources_.arrive_now(s);
}

void TuningDriver::resume(Tuning& t, JobState& s, const TrialWork& w) {
  const std::uint64_t ipe = t.spec->iterations_per_epoch();
  if (s.done() || !s.paused || s.iterations_done != epoch_iterations(w.start_epoch, ipe)) {
    throw Error("tuning job '" + t.spec->name + "': trial " + std::to_string(w.trial) +
                " is resumed at epoch " + std::to_string(w.start_epoch) +
                " but is not paused there");
  }
  s.paused = false;
  s.iterations_target = epoch_iterations(w.budget_epochs, ipe);
  hooks_.job_resumed(s.id);
}

void TuningDriver::iteration_done(JobState& s) {
  const std::size_t j = index_of(s.id);
  Tuning& t = tunings_[tuning_of_[j]];
  const std::uint64_t ipe = t.spec->iterations_per_epoch();
  if (t.over || s.iterations_done % ipe != 0) return;
  const TrialId trial = *trial_of_[j];
  const int epoch = static_cast<int>(s.iterations_done / ipe);
  const double metric = t.curve->metric(t.tuner->config(trial), epoch);
  const TunerResponse r = t.tuner->report({trial, epoch, metric});
  events_.trial_epoch(s.id, trial, epoch, metric, kTrialDecisionNames.name(r.decision));
  switch (r.decision) {
    case TrialDecision::Continue:
      break;
    case TrialDecision::Pause:
      s.paused = true;
      // Before its budget a trial may have work of the next epoch in flight: it is lost.
      s.iterations_target = s.iterations_done;
      if (s.dispatched != s.completed) abort_ops_(s);
      break;
    case TrialDecision::Stop:
      stop(s);
      break;
  }
  apply(t, r);
}

void TuningDriver::apply(Tuning& t, const TunerResponse& r) {
  for (const TrialGroup& g : r.groups) run_group(t, g);
  for (const TrialId lost : r.stopped) {
    const auto it = t.job_of.find(lost);
    if (it != t.job_of.end()) stop(jobs_[index_of(it->second)]);
  }
  if (r.stop_all || t.tuner->done()) end(t);
}

void TuningDriver::trial_rejected(JobState& s, std::string_view reason) {
  const std::size_t j = index_of(s.id);
  if (!trial_of_[j]) return;
  Tuning& t = tunings_[tuning_of_[j]];
  const TrialId trial = *trial_of_[j];
  if (!t.failed.insert(trial).second) return;
  const auto epochs = static_cast<int>(s.iterations_done / t.spec->iterations_per_epoch());
  events_.trial_failed(s.id, trial, epochs,
                       std::string(reason) + "; config " + t.tuner->config(trial).dump());
  // A paused trial is not running for its tuner: its result stands until it is resumed.
  if (t.over || !t.tuner->running(trial)) return;
  // As at an epoch's end: the answer's stops abort ops, and no hook may run before it is all
  // applied.
  const HookQueue::Hold hold(hooks_);
  fail(t, trial);
}

void TuningDriver::fail(Tuning& t, TrialId trial) {
  if (t.over) return;
  apply(t, t.tuner->fail(trial));
}

void TuningDriver::run_over() {
  for (Tuning& t : tunings_) {
    if (!t.spec || t.over) continue;
    for (const JobId j : t.slots) {
      JobState& s = jobs_[index_of(j)];
      if (s.phase == JobPhase::NotArrived) stop(s);
    }
  }
}

void TuningDriver::stop(JobState& s) {
  if (!s.done()) stop_job_(s);
}

void TuningDriver::end(Tuning& t) {
  if (t.over) return;
  t.over = true;
  for (const JobId j : t.slots) stop(jobs_[index_of(j)]);
  events_.tuning_end(t.spec->index, t.tuner->target_reached(), t.spec->name);
}

}  // namespace gpumux
