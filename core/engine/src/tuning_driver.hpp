// The TuningDriver runs tuning jobs (workload.tuning, gpumux/engine/tuning_spec.hpp) inside the
// engine: one Tuner per tuning job (TunerRegistry; its rng and learning curves seeded by
// the Tuner and LearningCurve seed streams, gpumux/api/seed.hpp), started at the tuning's arrival.
// It maps the tuner's TrialWork to the tuning's trial slots (TrialId -> JobId, in order of first
// hand-over) and activates a slot: the job arrives now with an iterations target of budget_epochs x
// iterations per epoch, from start_epoch x iterations per epoch done (a PBT copy restored
// from another trial's checkpoint: the same). After each iteration that completes an epoch of
// a trial, the metric comes from the trial's LearningCurve; a TrialEpoch event records it
// with the tuner's decision, which is applied: Continue (nothing), Pause (the job is paused:
// nothing to dispatch), Stop (the job ends, EndReason::Stopped), new or resumed groups
// (a resumed trial's target grows, its pause clears, Policy::on_job_resumed), `stopped`
// (paused trials end), and at stop_all or the tuner's done() every trial of the tuning still
// alive or never activated ends, stopped, and a TuningEnd event records the tuning's end.
// A trial that finds no free slot is an error naming max_trials, unless trials of the tuning
// have failed (their slots are spent): then the tuning ends.
//
// A trial the policy rejects (Context::reject: it does not fit in memory, or the policy cannot
// run it) has failed, as a trial that errors in Ray Tune (Trial.ERROR): a TrialFailed event
// names it, its epochs done, the reason and its config; the tuner is told (Tuner::fail) and
// its answer applied as a report's; the run goes on. A failed trial that its tuner resumes
// later (a paused one promoted) fails again at once.
//
// Internal to gpumux_engine. Times in ns. Thread rules: runtime thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string_view>
#include <vector>

#include "engine_events.hpp"
#include "gpumux/api/job_state.hpp"
#include "gpumux/api/runtime.hpp"
#include "gpumux/engine/learning_curve.hpp"
#include "gpumux/engine/tuner.hpp"
#include "gpumux/engine/tuning_spec.hpp"
#include "hook_queue.hpp"
#include "request_sources.hpp"

namespace gpumux {

class TuningDriver {
 public:
  /// Ends job `s` (a trial) as stopped: its ops aborted, its memory released as a finished
  /// job's; a slot that never arrived ends without a hook.
  using StopJob = std::function<void(JobState&)>;
  /// Aborts job `s`'s ops in flight (it loses its unfinished iteration; its weights stay).
  using AbortOps = std::function<void(JobState&)>;

  /// `jobs` (indexed by job id) must outlive this and stay in place.
  TuningDriver(Runtime& runtime, std::span<JobState> jobs, EngineEvents& events, HookQueue& hooks,
               RequestSources& sources, std::uint64_t seed, StopJob stop_job, AbortOps abort_ops);
  ~TuningDriver();
  TuningDriver(const TuningDriver&) = delete;
  TuningDriver& operator=(const TuningDriver&) = delete;
  TuningDriver(TuningDriver&&) = delete;
  TuningDriver& operator=(TuningDriver&&) = delete;

  /// Schedules each tuning job's start at its arrival (call once, when the run starts).
  void start();
  /// The run is over with tunings still going (the horizon cut them, or the run ran out of
  /// events): their slots never activated end, stopped (they are no work the run left
  /// undone); trials that arrived end as the run decides.
  void run_over();
  /// Trial job `s` completed an iteration (s.iterations_done counts it): at an epoch's end,
  /// reports it to the tuner and applies the answer.
  void iteration_done(JobState& s);
  /// Trial job `s` was rejected (it has ended, EndReason::Rejected) because `reason`: the
  /// trial has failed (see above). A job that is not an activated trial is ignored.
  void trial_rejected(JobState& s, std::string_view reason);

 private:
  struct Tuning {
    std::shared_ptr<const TuningSpec> spec;
    std::unique_ptr<Tuner> tuner;
    std::unique_ptr<LearningCurve> curve;
    std::vector<JobId> slots;  // by slot index
    std::size_t next_slot = 0;
    std::map<TrialId, JobId> job_of;
    std::set<TrialId> failed;  ///< trials that could not run
    bool over = false;
  };

  void begin(Tuning& t);
  void run_group(Tuning& t, const TrialGroup& g);
  void activate(Tuning& t, const TrialWork& w);
  void resume(Tuning& t, JobState& s, const TrialWork& w);
  /// Applies a tuner's response but its decision: groups, stopped trials, the tuning's end.
  void apply(Tuning& t, const TunerResponse& r);
  /// Tells the tuner that running trial `trial` failed and applies its answer.
  void fail(Tuning& t, TrialId trial);
  void stop(JobState& s);
  void end(Tuning& t);

  Runtime& runtime_;
  std::span<JobState> jobs_;
  EngineEvents& events_;
  HookQueue& hooks_;
  RequestSources& sources_;
  std::uint64_t seed_;
  StopJob stop_job_;
  AbortOps abort_ops_;
  std::vector<Tuning> tunings_;                   // by TuningSpec::index
  std::vector<std::size_t> tuning_of_;            // by job index (trial slots only)
  std::vector<std::optional<TrialId>> trial_of_;  // by job index, once activated
};

}  // namespace gpumux
