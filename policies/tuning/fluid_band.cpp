// fluid_band: the released Fluid code's band scheduler (SymbioticLab/Fluid fluid/scheduler.py
// FluidBandScheduler with fluid/executor.py), the path the experiment scripts
// run. Per group of new trials, three stages:
//   Stage 0 (profiling): each new trial runs alone on an empty GPU for one iteration, its ops
//     one at a time; its iteration time is the summed device time of that iteration's compute
//     ops; then it is parked (evicted, as the code PAUSEs it).
//   Stage 1 (offline packing): once no trial is profiling or waiting to, the profiled trials
//     are placed by fluid::band_stage1_packing (policies/fluid/band_packing.hpp) over all GPUs:
//     each gets a GPU and a share (0.6 / 0.4 when packed, 1 otherwise) and waits in that GPU's
//     queue until the shares running there leave room for its own (capacity 1). A trial given
//     several GPUs (the distributed and even branches, at most d) waits in its first GPU's
//     queue until all of them are empty, then trains data-parallel on them (set_replicas).
//   Stage 2 (online): promotions and stops are the tuner's (gpumux's successive halving /
//     Hyperband tuners); a promoted trial returns to its GPU's queue with its share. Elastic
//     scale-up: when a GPU holds no trial and has no queue, the running trial with the largest
//     remaining time (iteration time x iterations left in its rung) is chosen if that is >=
//     scale_up_s and it has fewer than 3 extra GPUs (and fewer than d in all); it is given
//     that GPU (metric "band_scale_up", sample: its remaining seconds), applied at the trial's
//     next restart as the code does (scheduler.py): when it is next placed (promoted after a
//     pause) it trains data-parallel on its GPU plus its extra GPUs that are empty then.
// Packed trials run in their own MPS client contexts (c per GPU), so their interference comes
// from the simulated GPU's sharing model.
//
// Stage 1's quirks are the code's (band_packing.hpp). Where the code runs Hyperband brackets only,
// a group here is the trials that arrive before Stage 1 runs, so an asynchronous tuner (ASHA) pays
// Stage 0 for every new trial. Sources, our choices and what is left out: docs/policies/fluid.md,
// "fluid_band".
#include <algorithm>
#include <map>
#include <vector>

#include "fluid/band_packing.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "tuning/fluid_executor.hpp"

namespace gpumux::policies {
namespace {

class FluidBand final : public FluidExecutor {
 public:
  explicit FluidBand(const PolicyArgs& args) : FluidBand(args, Extra{}) {}

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs = [] {
      ParamSpecs s = knob_specs();
      s.push_back(param::number("scale_up_s", "s", 10.0,
                                "elastic scale-up threshold on remaining time (scheduler.py)"));
      s.push_back(param::flag("intended_small_sum", false,
                              "distributed branch sums the shortest trials (q1, our reading)"));
      return s;
    }();
    return specs;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "fluid_band"; }

  void on_op_complete(Context& ctx, const OpRecord& r) override {
    const bool compute = r.purpose == OpPurpose::Forward || r.purpose == OpPurpose::Backward ||
                         r.purpose == OpPurpose::Update;
    if (compute && r.status == OpStatus::Ok) {
      if (const auto p = profiling_.find(r.job); p != profiling_.end()) {
        p->second.device_ns += r.duration_ns();
      }
    }
    FluidExecutor::on_op_complete(ctx, r);
  }

 private:
  /// The band's own params, read with the common knobs before the members exist.
  struct Extra {
    double scale_up_s = 10.0;
    bool intended_small_sum = false;
  };
  FluidBand(const PolicyArgs& args, Extra e)
      : FluidExecutor(args, param_specs(),
                      [&e](ParamReader& p) {
                        e.scale_up_s = p.number("scale_up_s");
                        if (!(e.scale_up_s >= 0.0)) p.fail("scale_up_s", "must be >= 0");
                        e.intended_small_sum = p.flag("intended_small_sum");
                      }),
        scale_up_s_(e.scale_up_s) {
    knobs_.max_worker = d_;
    knobs_.intended_small_sum = e.intended_small_sum;
  }

  struct Profile {
    std::uint64_t start_units = 0;  ///< iterations done when Stage 0 placed it
    DurationNs device_ns = 0;       ///< its compute ops' device time since
  };
  struct Assigned {
    std::size_t gpu = 0;
    double share = 1.0;
    std::vector<std::size_t> gpus;  ///< Stage 1's GPUs (the first is `gpu`), then scale-ups
    std::size_t stage1_gpus = 1;    ///< how many of `gpus` Stage 1 gave
  };

  void advance(Context& ctx) override {
    while (auto j = pop_next_active(ctx, waiting_)) {
      if (assigned_.contains(*j)) {
        queues_[assigned_[*j].gpu].push_back(*j);  // promoted: back to its GPU
      } else if (iter_s_.contains(*j)) {
        to_pack_.push_back(*j);  // profiled, then paused before Stage 1
      } else {
        to_profile_.push_back(*j);
      }
    }
    if (gpus_.empty()) return;
    if (queues_.empty()) queues_.resize(gpus_.size());
    stage1(ctx);
    start_queued(ctx);
    stage0(ctx);
    stage2(ctx);
  }

  void stage0(Context& ctx) {
    for (std::size_t g = 0; g < gpus_.size() && !to_profile_.empty(); ++g) {
      if (occupied(gpus_[g]) > 0 || !queues_[g].empty()) continue;
      const auto job = pop_next_active(ctx, to_profile_);
      if (!job) return;
      shares_[*job] = 1.0;
      if (ctx.job(*job).trial()) profiling_[*job] = Profile{ctx.job(*job).iterations_done(), 0};
      occupy(ctx, g, *job, /*packed=*/false);
    }
  }

  void stage1(Context& ctx) {
    if (!profiling_.empty() || !to_profile_.empty() || to_pack_.empty()) return;
    std::vector<JobId> jobs;
    std::vector<double> times;
    for (const JobId j : to_pack_) {
      if (!ctx.job(j).active()) continue;
      jobs.push_back(j);
      times.push_back(std::max(iter_s_[j], 1e-9));  // the packer needs times > 0
    }
    to_pack_.clear();
    if (jobs.empty()) return;
    const fluid::BandPacking p =
        fluid::band_stage1_packing(times, static_cast<std::uint32_t>(gpus_.size()), knobs_);
    for (const std::size_t i : p.order) {
      const auto& slots = p.slots[i];
      std::vector<std::size_t> gpus;
      for (const auto& sl : slots) {
        if (gpus.size() < d_ && std::find(gpus.begin(), gpus.end(), sl.gpu) == gpus.end()) {
          gpus.push_back(sl.gpu);
        }
      }
      if (gpus.size() > 1) ctx.record("band_gpus", static_cast<double>(gpus.size()));
      assigned_[jobs[i]] = Assigned{slots.front().gpu, slots.front().share, gpus, gpus.size()};
      queues_[slots.front().gpu].push_back(jobs[i]);
    }
  }

  [[nodiscard]] double used_share(const Gpu& g) const {
    double used = 0.0;
    for (const Slot& s : g.slots) {
      if (s.job) used += shares_.at(*s.job);
    }
    return used;
  }

  void start_queued(Context& ctx) {
    constexpr double kSlack = 1e-9;  // 0.6 + 0.4 == 1 in doubles
    for (std::size_t g = 0; g < gpus_.size(); ++g) {
      auto& q = queues_[g];
      while (!q.empty()) {
        const JobId job = q.front();
        if (!ctx.job(job).active()) {
          q.pop_front();
          continue;
        }
        const Assigned& a = assigned_[job];
        const double share = a.share;
        Gpu& gpu = gpus_[g];
        if (gpu.whole || occupied(gpu) == gpu.slots.size() ||
            used_share(gpu) + share > 1.0 + kSlack) {
          break;
        }
        // Several GPUs (Stage 1's, Stage 2's extra ones): the others must be empty (our choice); a
        // scale-up GPU busy now is skipped, Stage 1's are waited for.
        std::vector<std::size_t> on{g};
        bool ready = true;
        for (std::size_t k = 1; k < a.gpus.size(); ++k) {
          const std::size_t o = a.gpus[k];
          const bool empty = occupied(gpus_[o]) == 0 && !gpus_[o].reserved_for;
          if (empty) {
            on.push_back(o);
          } else if (k < a.stage1_gpus) {
            ready = false;
          }
        }
        if (!ready) break;
        q.pop_front();
        shares_[job] = share;
        if (on.size() > 1) {
          std::sort(on.begin(), on.end());
          occupy_whole(ctx, on, job);
        } else {
          occupy(ctx, g, job, /*packed=*/share < 1.0);
        }
      }
    }
  }

  /// The code's elastic scale-up: the idle GPU goes to the running trial with the most
  /// remaining time, taken at its next restart.
  void stage2(Context& ctx) {
    std::optional<std::size_t> idle;
    for (std::size_t g = 0; g < gpus_.size() && !idle; ++g) {
      if (occupied(gpus_[g]) == 0 && queues_[g].empty() && !gpus_[g].reserved_for) idle = g;
    }
    if (!idle) return;
    std::optional<JobId> best;
    double best_s = -1.0;
    for (const Gpu& g : gpus_) {
      for (const Slot& s : g.slots) {
        if (!s.job || !iter_s_.contains(*s.job) || profiling_.contains(*s.job)) continue;
        const JobView v = ctx.job(*s.job);
        const auto left = v.total_units() - std::min(v.units_done(), v.total_units());
        const double rem = iter_s_.at(*s.job) * static_cast<double>(left);
        if (rem > best_s) {
          best_s = rem;
          best = *s.job;
        }
      }
    }
    constexpr int kMaxExtraGpus = 3;  // Fluid's scheduler.py: fewer than 3 extra GPUs
    if (!best || best_s < scale_up_s_ || extra_[*best] >= kMaxExtraGpus) return;
    const auto a = assigned_.find(*best);
    if (a == assigned_.end() || a->second.gpus.size() >= d_) return;
    auto& gpus = a->second.gpus;
    if (std::find(gpus.begin(), gpus.end(), *idle) != gpus.end()) return;
    gpus.push_back(*idle);  // taken at its next restart (placement), if empty then
    ++extra_[*best];
    ctx.record("band_scale_up", best_s);
  }

  /// Stage 0: one op at a time; after its first iteration the trial is measured and parked.
  void keep(Context& ctx, JobId job) override {
    const auto p = profiling_.find(job);
    if (p == profiling_.end()) {
      FluidExecutor::keep(ctx, job);
      return;
    }
    const JobView v = ctx.job(job);
    const std::optional<Home> home = home_of(job);
    if (!home) return;
    if (v.iterations_done() > p->second.start_units) {
      iter_s_[job] = static_cast<double>(p->second.device_ns) * 1e-9;
      if (v.done() || v.paused() || ctx.ops_in_flight(job, home->gpus.front()) > 0) return;
      ctx.memory().evict(job, home->gpus.front());  // PAUSE after one iteration (the code's Stage0)
      release(job);
      to_pack_.push_back(job);
      advance(ctx);
      return;
    }
    keep_busy(ctx, job, home->compute, 1);
  }

  void release(JobId job) override {
    profiling_.erase(job);
    shares_.erase(job);
    FluidExecutor::release(job);
  }

  fluid::BandKnobs knobs_;
  double scale_up_s_ = 10.0;
  std::map<JobId, Profile> profiling_;
  std::map<JobId, double> iter_s_;  ///< Stage 0's measured iteration time, seconds
  std::map<JobId, Assigned> assigned_;
  std::map<JobId, double> shares_;  ///< share of each placed job (1 = whole)
  std::map<JobId, int> extra_;      ///< extra GPUs given by Stage 2
  std::deque<JobId> to_profile_;
  std::vector<JobId> to_pack_;
  std::vector<std::deque<JobId>> queues_;  ///< per GPU, Stage 1 order
};

GPUMUX_REGISTER_POLICY("fluid_band", FluidBand,
                       "Fluid's released band scheduler: profile, band-pack 0.6/0.4, online");

}  // namespace
}  // namespace gpumux::policies
