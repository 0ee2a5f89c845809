// Tuning algorithms (grid, random, successive halving, Hyperband, ASHA, BOHB, SyncBOHB, PBT) as
// plug-ins, driven by trial reports and independent of the engine (D41; settings as in
// SymbioticLab/Fluid workloads/tune_*.py). A tuner creates trials, a trial being a config (a point
// of the SearchSpace) and an epoch budget, and hands them over in TrialGroups, Fluid's scheduling
// unit ("a group of training trials with a training budget associated to each trial", Fluid paper
// §3.2). The executor runs each trial's epochs and reports after every finished epoch; per report
// the tuner answers Continue, Pause (keep the checkpoint, wait for a promotion) or Stop, and may
// hand over new groups (new trials, or paused trials resumed with a larger budget).
//
// Protocol (executor side):
//   groups = tuner.start();
//   for every finished epoch e of trial t with metric m:
//     TunerResponse r = tuner.report({t, e, m});
//     apply r.decision to t; run r.groups; stop r.stopped (paused trials that lost);
//     if r.stop_all or tuner.done(): stop everything (tuning is over).
//   for every running trial t that cannot run (out of memory, refused by the executor):
//     TunerResponse r = tuner.fail(t);   // then as for a report, less r.decision
// A TrialWork says "run trial `trial` with `config` from its checkpoint at `start_epoch`
// (0: from scratch; or from trial `restore_from`'s checkpoint at that epoch, PBT's exploit) up
// to epoch `budget_epochs`". Epochs are 1-based; a report for epoch e means e epochs are done.
// The tuner answers Pause or Stop at the latest at the budget epoch; a Continue there is
// never given. The metric's direction is TunerArgs::mode (accuracy: Max; perplexity: Min).
//
// Thread rules: a Tuner belongs to one thread; it keeps its own std::mt19937_64 (copied from
// TunerArgs), so the same seed and the same report sequence give the same decisions.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/registry.hpp"
#include "gpumux/engine/search_space.hpp"

namespace gpumux {

using TrialId = std::int64_t;

enum class MetricMode : std::uint8_t { Max, Min };
inline constexpr EnumNames<MetricMode, 2> kMetricModeNames{
    {{MetricMode::Max, "max"}, {MetricMode::Min, "min"}}};

enum class TrialDecision : std::uint8_t { Continue, Pause, Stop };
inline constexpr EnumNames<TrialDecision, 3> kTrialDecisionNames{
    {{TrialDecision::Continue, "continue"},
     {TrialDecision::Pause, "pause"},
     {TrialDecision::Stop, "stop"}}};

/// One unit of work handed to the executor (see the protocol above).
struct TrialWork {
  TrialId trial = 0;
  nlohmann::json config;
  int start_epoch = 0;                  ///< epochs already done (0: a fresh trial)
  int budget_epochs = 0;                ///< run up to this epoch (> start_epoch)
  std::optional<TrialId> restore_from;  ///< start from this trial's checkpoint (PBT exploit)
};

/// Trials handed over at once; Fluid schedules each group to minimise its makespan.
struct TrialGroup {
  int id = 0;  ///< 0, 1, 2... in emission order
  std::vector<TrialWork> trials;
};

struct TrialReport {
  TrialId trial = 0;
  int epoch = 0;  ///< epochs finished (1-based)
  double metric = 0.0;
};

struct TunerResponse {
  TrialDecision decision = TrialDecision::Continue;  ///< for the reporting trial
  std::vector<TrialGroup> groups;                    ///< new or resumed work
  std::vector<TrialId> stopped;                      ///< paused trials that will never resume
  bool stop_all = false;                             ///< the target was reached: the tuning is over
};

struct TunerArgs {
  nlohmann::json params = nlohmann::json::object();
  std::string file;  ///< for error messages
  std::string path;  ///< JSON path of params, for error messages
  SearchSpace space;
  MetricMode mode = MetricMode::Max;
  std::optional<double> target;  ///< end the tuning when a report reaches it (MetricStopper)
  std::mt19937_64 rng;           ///< copied: the tuner's only source of randomness
};

class Tuner {
 public:
  virtual ~Tuner() = default;
  Tuner(const Tuner&) = delete;
  Tuner& operator=(const Tuner&) = delete;
  Tuner(Tuner&&) = delete;
  Tuner& operator=(Tuner&&) = delete;

  [[nodiscard]] virtual std::string_view name() const noexcept = 0;
  /// The first groups; called once, before any report.
  [[nodiscard]] virtual std::vector<TrialGroup> start() = 0;
  /// One report per finished epoch of a running trial. Throws Error on a report for a trial
  /// that is not running or an epoch that is not the next one.
  TunerResponse report(const TrialReport& r);
  /// Running trial t failed: it cannot run (its executor ran out of memory placing it, or
  /// refused it). The tuner goes on without it, as Ray Tune's schedulers on a trial error
  /// (ray-project/ray, python/ray/tune/schedulers: FIFOScheduler.on_trial_error does nothing,
  /// HyperBandScheduler.on_trial_error removes the trial from its bracket): it is never
  /// reported, ranked or promoted again. The response's decision is meaningless (the trial is
  /// over); its groups and stopped trials are applied as a report's. Throws Error for a trial
  /// that is not running.
  TunerResponse fail(TrialId t);
  /// Whether trial t has work handed over and not yet answered with Pause or Stop.
  [[nodiscard]] bool running(TrialId t) const { return running_budget_.at(index(t)) > 0; }
  /// Trials that failed so far.
  [[nodiscard]] std::size_t failed_trials() const noexcept { return failed_; }
  /// No trial will run any more (all finished, or the target was reached).
  [[nodiscard]] bool done() const { return target_reached_ || finished(); }
  [[nodiscard]] bool target_reached() const noexcept { return target_reached_; }
  [[nodiscard]] MetricMode mode() const noexcept { return mode_; }
  /// Best metric reported so far and its trial (nullopt before the first report).
  [[nodiscard]] std::optional<TrialId> best_trial() const noexcept { return best_trial_; }
  [[nodiscard]] double best_metric() const noexcept { return best_metric_; }
  /// Every trial's config, by id (trials are numbered 0, 1, 2... in creation order).
  [[nodiscard]] const nlohmann::json& config(TrialId t) const { return configs_.at(index(t)); }
  [[nodiscard]] std::size_t trial_count() const noexcept { return configs_.size(); }

 protected:
  explicit Tuner(const TunerArgs& args);
  virtual TunerResponse on_report(const TrialReport& r) = 0;
  /// The algorithm's answer to running trial t's failure (Tuner::fail); t no longer counts
  /// as running when this is called.
  virtual TunerResponse on_failure(TrialId t) = 0;
  [[nodiscard]] virtual bool finished() const = 0;

  /// True when metric a is strictly better than b in this tuner's mode.
  [[nodiscard]] bool better(double a, double b) const {
    return mode_ == MetricMode::Max ? a > b : a < b;
  }
  /// Registers a new trial with `config`; returns its id.
  TrialId new_trial(nlohmann::json config);
  /// Wraps work into the next numbered group and marks its trials running.
  TrialGroup make_group(std::vector<TrialWork> work);
  /// Work that starts trial t from scratch up to `budget`.
  [[nodiscard]] TrialWork fresh(TrialId t, int budget) const;
  /// Work that resumes paused trial t (at its last reported epoch) up to `budget`.
  [[nodiscard]] TrialWork resume(TrialId t, int budget) const;
  [[nodiscard]] int last_epoch(TrialId t) const { return last_epoch_.at(index(t)); }
  [[nodiscard]] double last_metric(TrialId t) const { return last_metric_.at(index(t)); }

  std::mt19937_64 rng_;
  const SearchSpace space_;

 private:
  [[nodiscard]] static std::size_t index(TrialId t) { return static_cast<std::size_t>(t); }

  MetricMode mode_;
  std::optional<double> target_;
  bool target_reached_ = false;
  std::optional<TrialId> best_trial_;
  double best_metric_ = 0.0;
  int next_group_ = 0;
  std::vector<nlohmann::json> configs_;
  std::vector<int> last_epoch_;
  std::vector<double> last_metric_;
  std::vector<int> running_budget_;  ///< 0 when not running
  std::size_t failed_ = 0;
};

using TunerRegistry = Registry<Tuner, const TunerArgs&>;

/// Registers tuner TYPE under NAME, with the parameters TYPE::param_specs() declares.
#define GPUMUX_REGISTER_TUNER(NAME, TYPE, SUMMARY)                                               \
  [[maybe_unused]] static const bool gpumux_tuner_registered_##TYPE =                            \
      ::gpumux::TunerRegistry::instance().add(                                                   \
          NAME, SUMMARY, [](const ::gpumux::TunerArgs& a) { return std::make_unique<TYPE>(a); }, \
          ::gpumux::plugin_param_specs<TYPE>())

}  // namespace gpumux
