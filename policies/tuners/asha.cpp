// asha: Asynchronous Successive Halving (Li et al., MLSys 2020, Algorithm 2). Rung k ends at
// r_k = min(min_epochs * eta^k, max_epochs) epochs. A trial reaching its rung's end is
// recorded there and pauses (stops in the top rung); every freed worker slot then takes a job
// as the paper's get_job(): the highest rung that holds a paused trial in the top
// floor(|rung|/eta) not yet promoted promotes it (resumed up to the next rung's end);
// otherwise a new random config starts at rung 0. So a trial is promoted as soon as it ranks
// in the top 1/eta of its rung and a worker is free, without waiting for the rung to fill.
// Each response's jobs form one TrialGroup (often of one trial).
//
// Faithfulness notes: promotion rule and get_job order as Li et al. Algorithm 2; eta 3 and
// max_epochs 1000 as the Fluid scripts' ASHAScheduler (max_t 1000, 1e10 for WLM; SymbioticLab/Fluid
// workloads/tune_asha_*.py); min_epochs 1 = Ray's grace_period default (ray-project/ray
// python/ray/tune/schedulers/async_hyperband.py: max_t 100, grace_period 1, reduction_factor 4,
// brackets 1). Workers: max_concurrent (default 8, the GPUs of Fluid's macrobenchmarks, Fluid §6.1;
// the "para" variant, tune_asha_para_*.py, caps at 4 CIFAR / 8 MNIST). Ray Tune's
// AsyncHyperBandScheduler differs: at a milestone a trial below the (1 - 1/rf) percentile of the
// results recorded before it is stopped at once and the others continue, nobody pauses or is
// promoted later (_Bracket.on_result); this follows the paper. num_samples 0 keeps drawing configs
// until the target is reached (Fluid's num_samples = 1e10, workloads/common/__init__.py).
#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "gpumux/engine/tuner.hpp"
#include "gpumux/io/params.hpp"
#include "tuners/tuner_params.hpp"

namespace gpumux::tuners {
namespace {

class Asha final : public Tuner {
 public:
  explicit Asha(const TunerArgs& args) : Tuner(args) {
    EpochRange epochs;
    read_tuner_params(args, param_specs(), [&](ParamReader& p) {
      eta_ = read_eta(p);
      epochs = read_epoch_range(p);
      slots_ = read_count(p, "max_concurrent", 1);
      samples_ = read_count(p, "num_samples", 0);
    });
    for (std::int64_t r = epochs.min_epochs;; r *= eta_) {
      rung_epochs_.push_back(static_cast<int>(std::min<std::int64_t>(r, epochs.max_epochs)));
      if (r >= epochs.max_epochs) break;
    }
    rungs_.resize(rung_epochs_.size());
    promoted_.resize(rung_epochs_.size());
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "asha"; }

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs{
        eta_param("reduction factor: the top 1/eta of a rung is promoted"),
        min_epochs_param("end of rung 0, epochs (Ray's grace_period)"),
        max_epochs_param(1000, "end of the top rung, epochs (Ray's max_t)"),
        param::integer("max_concurrent", 8, "worker slots: trials running at once"),
        param::integer("num_samples", 0, "configs drawn at most (0: until the target)")};
    return specs;
  }

  [[nodiscard]] std::vector<TrialGroup> start() override { return fill_slots(); }

 protected:
  TunerResponse on_report(const TrialReport& r) override {
    TunerResponse out;
    const std::size_t k = rung_of_.at(r.trial);
    if (r.epoch < rung_epochs_[k]) return out;
    --running_;
    if (k + 1 == rung_epochs_.size()) {
      out.decision = TrialDecision::Stop;
    } else {
      out.decision = TrialDecision::Pause;
      rungs_[k].emplace_back(r.trial, r.metric);
    }
    out.groups = fill_slots();
    return out;
  }

  /// A failed trial frees its worker slot and is never recorded in a rung (Li et al.'s
  /// get_job then fills the slot as after any finished job).
  TunerResponse on_failure(TrialId /*t*/) override {
    --running_;
    TunerResponse out;
    out.groups = fill_slots();
    return out;
  }

  [[nodiscard]] bool finished() const override {
    return running_ == 0 && !samples_left() && !promotable().has_value();
  }

 private:
  struct Candidate {
    TrialId trial;
    std::size_t rung;
  };

  [[nodiscard]] bool samples_left() const {
    return samples_ == 0 || static_cast<std::int64_t>(trial_count()) < samples_;
  }

  /// get_job's promotion: the highest rung with a paused top-1/eta trial not yet promoted.
  [[nodiscard]] std::optional<Candidate> promotable() const {
    for (std::size_t k = rungs_.size() - 1; k-- > 0;) {
      auto ranked = rungs_[k];
      std::sort(ranked.begin(), ranked.end(), [this](const auto& a, const auto& b) {
        if (a.second != b.second) return better(a.second, b.second);
        return a.first < b.first;
      });
      const std::size_t top = ranked.size() / static_cast<std::size_t>(eta_);
      for (std::size_t i = 0; i < top; ++i) {
        if (promoted_[k].count(ranked[i].first) == 0) return Candidate{ranked[i].first, k};
      }
    }
    return std::nullopt;
  }

  std::vector<TrialGroup> fill_slots() {
    std::vector<TrialWork> jobs;
    while (running_ < slots_) {
      if (const auto c = promotable()) {
        promoted_[c->rung].insert(c->trial);
        rung_of_[c->trial] = c->rung + 1;
        jobs.push_back(resume(c->trial, rung_epochs_[c->rung + 1]));
      } else if (samples_left()) {
        const TrialId t = new_trial(space_.sample(rng_));
        rung_of_[t] = 0;
        jobs.push_back(fresh(t, rung_epochs_[0]));
      } else {
        break;
      }
      ++running_;
    }
    if (jobs.empty()) return {};
    return {make_group(std::move(jobs))};
  }

  int eta_ = 3;
  int slots_ = 1;
  std::int64_t samples_ = 0;
  int running_ = 0;
  std::vector<int> rung_epochs_;
  std::vector<std::vector<std::pair<TrialId, double>>> rungs_;  ///< (trial, metric) per rung
  std::vector<std::set<TrialId>> promoted_;                     ///< promoted out of rung k
  std::map<TrialId, std::size_t> rung_of_;
};

GPUMUX_REGISTER_TUNER("asha", Asha, "asynchronous successive halving (Li et al. MLSys'20)");

}  // namespace
}  // namespace gpumux::tuners
