// pbt: Population Based Training (Jaderberg et al. 2017), asynchronous as Ray Tune's
// PopulationBasedTraining. `population` random configs start together (one TrialGroup), each
// with a budget of max_epochs. When a trial reports perturbation_interval epochs after its
// last perturbation, the live trials that have reported are ranked by their latest metric;
// a trial in the bottom quantile is replaced (exploit): it stops, and a new trial starts from
// the checkpoint of a trial drawn uniformly from the top quantile, at that trial's epoch, with
// that trial's config perturbed (explore: each value resampled with resample_probability,
// else x0.8 or x1.2, SearchSpace::perturb). The copy is a one-trial TrialGroup.
//
// Faithfulness notes: exploit/explore and the 0.8/1.2 factors: Jaderberg et al. §3-4, and Ray's
// defaults quantile_fraction 0.25, resample_probability 0.25, perturbation_factors (1.2, 0.8)
// (ray-project/ray python/ray/tune/schedulers/pbt.py, PopulationBasedTraining.__init__; its
// perturbation_interval default is 60 s of time_total_s); the quantiles hold ceil(n * fraction) of
// the live trials with a score, at most floor(n / 2) (_quantiles). Population 8 and interval 80
// epochs as the Fluid CIFAR scripts (10 / 5 for MNIST, 200 for WLM; SymbioticLab/Fluid
// workloads/tune_pbt_*.py). Ray restores the bottom trial in place (same trial id); here the copy
// is a new trial id with restore_from set (our choice), so each id has one config. max_epochs 1000
// (our choice: the ASHA scripts' max_t; Fluid's PBT runs end at the target).
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "gpumux/engine/tuner.hpp"
#include "gpumux/io/params.hpp"
#include "tuners/tuner_params.hpp"

namespace gpumux::tuners {
namespace {

class Pbt final : public Tuner {
 public:
  explicit Pbt(const TunerArgs& args) : Tuner(args) {
    read_tuner_params(args, param_specs(), [this](ParamReader& p) {
      population_ = read_count(p, "population", 2);
      interval_ = p.integer_in<int>("perturbation_interval", 1, kMaxTunerEpochs);
      max_epochs_ = read_max_epochs(p);
      quantile_ = p.number_in("quantile_fraction", 0.0, 0.5, Ends::OpenLow);
      resample_ = p.number_in("resample_probability", 0.0, 1.0);
    });
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "pbt"; }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        param::integer("population", 8, "trials alive at once"),
        param::integer("perturbation_interval", 80, "epochs between exploit/explore steps"),
        max_epochs_param(1000, "epochs a lineage trains at most"),
        param::number("quantile_fraction", "", 0.25, "top/bottom fraction for exploit"),
        param::number("resample_probability", "", 0.25, "explore: resample instead of x0.8/x1.2")};
    return specs;
  }

  [[nodiscard]] std::vector<TrialGroup> start() override {
    std::vector<TrialWork> work;
    for (int i = 0; i < population_; ++i) {
      const TrialId t = new_trial(space_.sample(rng_));
      live_.emplace(t, 0);
      work.push_back(fresh(t, max_epochs_));
    }
    return {make_group(std::move(work))};
  }

 protected:
  TunerResponse on_report(const TrialReport& r) override {
    TunerResponse out;
    reported_.insert(r.trial);
    if (r.epoch >= max_epochs_) {
      out.decision = TrialDecision::Stop;
      live_.erase(r.trial);
      return out;
    }
    int& last_perturbation = live_.at(r.trial);
    if (r.epoch - last_perturbation < interval_) return out;
    last_perturbation = r.epoch;
    // Rank the live trials that have reported, best first (ties: lower id first).
    std::vector<TrialId> ranked;
    for (const auto& [t, since] : live_) {
      if (reported_.count(t) != 0) ranked.push_back(t);
    }
    std::sort(ranked.begin(), ranked.end(), [this](TrialId a, TrialId b) {
      if (last_metric(a) != last_metric(b)) return better(last_metric(a), last_metric(b));
      return a < b;
    });
    const std::size_t n = ranked.size();
    auto q = static_cast<std::size_t>(std::ceil(static_cast<double>(n) * quantile_));
    q = std::min(q, n / 2);
    const bool bottom = q > 0 && std::find(ranked.end() - static_cast<std::ptrdiff_t>(q),
                                           ranked.end(), r.trial) != ranked.end();
    if (!bottom) return out;
    const std::size_t pick = std::uniform_int_distribution<std::size_t>(0, q - 1)(rng_);
    const TrialId donor = ranked[pick];
    out.decision = TrialDecision::Stop;
    live_.erase(r.trial);
    const TrialId copy = new_trial(space_.perturb(config(donor), resample_, rng_));
    const int at = last_epoch(donor);
    live_.emplace(copy, at);
    out.groups.push_back(make_group({TrialWork{copy, config(copy), at, max_epochs_, donor}}));
    return out;
  }

  /// A failed trial leaves the population (Ray's PopulationBasedTraining.on_trial_remove
  /// drops its state): it is never ranked nor exploited again.
  TunerResponse on_failure(TrialId t) override {
    live_.erase(t);
    return {};
  }

  [[nodiscard]] bool finished() const override { return live_.empty(); }

 private:
  int population_ = 8;
  int interval_ = 80;
  int max_epochs_ = 1000;
  double quantile_ = 0.25;
  double resample_ = 0.25;
  std::map<TrialId, int> live_;  ///< live trial -> epoch of its last perturbation
  std::set<TrialId> reported_;   ///< trials with a metric of their own (copies have none yet)
};

GPUMUX_REGISTER_TUNER("pbt", Pbt, "population based training, exploit + explore (Jaderberg 2017)");

}  // namespace
}  // namespace gpumux::tuners
