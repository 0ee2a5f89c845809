// dynamic_fluid: Fluid's executor with DynamicFluid (MLSys'21 Algorithm 2) on top
// of StaticFluid (the `fluid` executor, fluid_executor.hpp). After lifecycle events (a trial
// arrives, pauses, is stopped, finishes or is resumed), once the instant's events are handled
// (the `fluid` executor's zero-delay re-plan), it plans StaticFluid widths over the
// waiting and placed jobs on all GPUs (Algorithm 2's view) and asks fluid::resize_decision, for
// every placed trial, whether moving from its current width to the planned one pays for the
// restart cost eps:
//   scale down (whole -> 1/c), applied first and in place: the trial stays in its MPS context,
//     its GPU becomes packable; the waiting trials are then placed as the `fluid` executor
//     does (Algorithm 1 over the idle GPUs, the idle-GPU rule of fluid.cpp), so they join it
//     only when no idle GPU is left for them;
//   across whole GPUs (k -> k', data parallel), at the trial's next iteration boundary: a
//     scale-down keeps its first k' GPUs, a scale-up (only when no job waits) takes empty
//     GPUs (kept reserved meanwhile); applied by ctx.resize (stop, restart, back to the last
//     epoch), then the checkpoint is loaded on each new GPU after the returned restart op;
//     metric "resize_gpus" (sample: the new GPU count);
//   scale up (1/c -> whole), applied only when no job waits (the paper runs DynamicFluid once
//     no pending trial is left, paper §3.3): in place if the trial is alone on its GPU, else it is
//     moved to an empty GPU (kept reserved meanwhile): it stops dispatching, finishes its
//     current iteration one op at a time, then at the iteration boundary its weights are
//     evicted and loaded on the new GPU (the reload is the simulated copy) and it resumes.
// Each applied resize is recorded: metric "resize_in_place" (sample: the new width) or
// "resize_move" (sample: the GPU moved to).
//
// alpha and beta are measured from the trial's own iterations (1, the paper's ideal, until
// measured); eps is what the resize costs here (ctx.resize's price, the checkpoint reload, the work
// back to the last epoch). Sources, our choices and what is left out: docs/policies/fluid.md,
// "dynamic_fluid".
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "fluid/water_filling.hpp"
#include "gpumux/engine/tuning_spec.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"
#include "gpumux/model/resize_cost.hpp"
#include "tuning/fluid_executor.hpp"

namespace gpumux::policies {
namespace {

class DynamicFluid final : public FluidExecutor {
 public:
  explicit DynamicFluid(const PolicyArgs& args)
      : FluidExecutor(args, param_specs(), [](ParamReader&) {}) {}

  static const ParamSpecs& param_specs() {
    static const ParamSpecs specs = knob_specs();
    return specs;
  }
  [[nodiscard]] std::string_view name() const noexcept override { return "dynamic_fluid"; }

 private:
  /// The last iteration end of a placed trial, for measuring alpha.
  struct Mark {
    TimeNs t = 0;
    std::size_t gpu = 0;
    std::size_t sharing = 0;  ///< trials on its GPU at that moment
    std::size_t width = 1;    ///< GPUs it trains on (data-parallel when > 1)
  };

  std::size_t index_of(const Gpu* g) const { return static_cast<std::size_t>(g - gpus_.data()); }

  void replan(Context& ctx) override {
    std::deque<JobId> active;
    while (auto j = pop_next_active(ctx, waiting_)) active.push_back(*j);
    if (gpus_.empty()) return;
    const Plan p = plan_total(ctx, active);
    if (p.jobs.empty()) return;
    std::vector<JobId> up;
    std::vector<std::pair<JobId, std::size_t>> grow;  // whole trials to widen: job, GPUs
    for (const std::size_t i : p.order) {
      if (i < p.waiting) continue;
      const JobId job = p.jobs[i];
      if (!ctx.job(job).trial() || moves_.contains(job) || resizes_.contains(job)) continue;
      const Gpu* g = gpu_of(job);
      const auto k = static_cast<double>(gpus_held(job).size());
      const double w = g->whole ? k : 1.0 / c_;
      // A packed trial first becomes whole (1/c -> 1, the move below); a whole one resizes
      // across whole GPUs (k -> k', data parallel) or, alone on one GPU, goes packed.
      const double target = g->whole && k > 1.0 ? std::max(1.0, p.widths[i])
                            : g->whole          ? p.widths[i]
                                                : std::min(1.0, p.widths[i]);
      const fluid::RunningTrial t{{h1_s(ctx, job), alpha(job), beta(job)}, w};
      // eps: what this resize really costs: across whole GPUs the engine's stop + restart +
      // reload + rollback; 1/c <-> 1 only the reload of a move (or nothing, in place).
      const bool across = w >= 1.0 && target >= 1.0;
      const double eps = across ? resize_eps_s(ctx, job) : move_eps_s(ctx, job);
      const fluid::DynamicDecision d = fluid::resize_decision(t, target, eps);
      if (d.action == fluid::Resize::keep) continue;
      if (w >= 1.0 && d.width >= 1.0) {
        const auto to = static_cast<std::size_t>(std::floor(d.width));
        if (d.action == fluid::Resize::scale_down) {
          std::vector<std::size_t> keep_gpus = gpus_held(job);
          keep_gpus.resize(to);
          resizes_[job] = keep_gpus;  // at its next iteration boundary
        } else {
          grow.emplace_back(job, to);
        }
      } else if (d.action == fluid::Resize::scale_down) {
        gpu_of(job)->whole = false;  // in place: its GPU takes packed trials again
        ctx.record("resize_in_place", d.width);
      } else {
        up.push_back(job);
      }
    }
    place_waiting(ctx, plan_group(ctx, active));
    if (!waiting_.empty()) return;
    for (const JobId job : up) scale_up(ctx, job);
    for (const auto& [job, to] : grow) widen(ctx, job, to);
  }

  /// Reserves up to `to` - k empty GPUs for a whole trial of k GPUs; it resizes onto them at
  /// its next iteration boundary (none empty: it keeps its width until the next re-plan).
  void widen(Context& ctx, JobId job, std::size_t to) {
    std::vector<std::size_t> gpus = gpus_held(job);
    for (std::size_t i = 0; i < gpus_.size() && gpus.size() < to; ++i) {
      Gpu& g = gpus_[i];
      if (occupied(g) > 0 || g.whole || g.reserved_for) continue;
      g.reserved_for = job;
      gpus.push_back(i);
    }
    if (gpus.size() == gpus_held(job).size()) return;
    std::sort(gpus.begin(), gpus.end());
    resizes_[job] = gpus;
    if (!ctx.job(job).unit_in_progress() && ctx.job(job).ops_in_flight() == 0)
      apply_resize(ctx, job);
  }

  /// Applies a planned resize across whole GPUs: ctx.resize (stop, restart, back to the last
  /// epoch) onto the new GPUs, then the checkpoint reloaded on each after the restart op.
  void apply_resize(Context& ctx, JobId job) {
    const auto r = resizes_.find(job);
    if (r == resizes_.end()) return;
    const std::vector<std::size_t> to = r->second;
    resizes_.erase(r);
    for (const std::size_t i : to) {
      if (gpus_[i].reserved_for == job) gpus_[i].reserved_for.reset();
    }
    const std::vector<StreamId> streams = replica_streams_on(job, to);
    const OpHandle restart = ctx.replicas().resize(job, streams);
    // Its slots on GPUs it leaves are freed; its new GPUs get its slots there.
    for (const std::size_t i : gpus_held(job)) {
      if (std::find(to.begin(), to.end(), i) != to.end()) continue;
      for (Slot& s : gpus_[i].slots) {
        if (s.job == job) s.job.reset();
      }
      if (occupied(gpus_[i]) == 0) gpus_[i].whole = false;
    }
    marks_.erase(job);
    occupy_whole(ctx, to, job, {restart}, /*resized=*/true);
    ctx.record("resize_gpus", static_cast<double>(to.size()));
    advance(ctx);  // GPUs it left are idle
  }

  void scale_up(Context& ctx, JobId job) {
    Gpu* g = gpu_of(job);
    if (g == nullptr) return;
    if (occupied(*g) == 1 && !g->reserved_for) {
      g->whole = true;
      ctx.record("resize_in_place", 1.0);
      return;
    }
    for (std::size_t i = 0; i < gpus_.size(); ++i) {
      Gpu& to = gpus_[i];
      if (occupied(to) > 0 || to.whole || to.reserved_for) continue;
      to.reserved_for = job;
      moves_[job] = i;
      return;  // moves at its next iteration boundary (keep)
    }
  }

  /// A moving trial finishes its current iteration one op at a time, then moves.
  void keep(Context& ctx, JobId job) override {
    const auto m = moves_.find(job);
    if (m == moves_.end()) {
      FluidExecutor::keep(ctx, job);
      return;
    }
    const JobView v = ctx.job(job);
    const std::optional<Home> home = home_of(job);
    if (!home || v.done() || v.paused()) return;  // the lifecycle hooks release it
    if (ctx.ops_in_flight(job, home->gpus.front()) > 0) return;
    if (v.unit_in_progress()) {
      keep_busy(ctx, job, home->compute, 1);
      return;
    }
    const std::size_t to = m->second;
    ctx.memory().evict(job, home->gpus.front());
    moves_.erase(m);
    gpus_[to].reserved_for.reset();
    marks_.erase(job);
    FluidExecutor::release(job);
    occupy(ctx, to, job, /*packed=*/false);
    ctx.record("resize_move", static_cast<double>(to));
    advance(ctx);  // its old slot is free
  }

  void release(JobId job) override {
    if (const auto m = moves_.find(job); m != moves_.end()) {
      gpus_[m->second].reserved_for.reset();
      moves_.erase(m);
    }
    if (const auto r = resizes_.find(job); r != resizes_.end()) {
      for (const std::size_t i : r->second) {
        if (gpus_[i].reserved_for == job) gpus_[i].reserved_for.reset();
      }
      resizes_.erase(r);
    }
    marks_.erase(job);
    FluidExecutor::release(job);
  }

  /// Measures alpha between two iteration ends on the same GPU, both shared.
  void on_running_iteration_end(Context& ctx, JobId job) override {
    if (const auto r = resizes_.find(job); r != resizes_.end()) {
      const JobView v = ctx.job(job);
      if (v.done() || !v.has_dispatchable_work()) {  // its last iteration: nothing to resize
        for (const std::size_t i : r->second) {
          if (gpus_[i].reserved_for == job) gpus_[i].reserved_for.reset();
        }
        resizes_.erase(r);
        return;
      }
      apply_resize(ctx, job);  // Algorithm 2: a change takes effect at the iteration's end
      return;
    }
    const Gpu* g = gpu_of(job);
    const Mark now{ctx.now(), index_of(g), occupied(*g), gpus_held(job).size()};
    const auto it = marks_.find(job);
    if (it != marks_.end() && it->second.gpu == now.gpu && it->second.sharing > 1 &&
        now.sharing > 1 && c_ > 1) {
      const auto solo = static_cast<double>(ctx.estimate_unit_ns(job, g->device));
      const auto took = static_cast<double>(now.t - it->second.t);
      if (solo > 0.0) {
        alphas_[job] = std::pow(std::max(1.0, took / solo), 1.0 / static_cast<double>(c_ - 1));
      }
    }
    // beta from an iteration on k > 1 GPUs: h_{i,k} = h_{i,1} / k x beta^(k - 1) (Fluid §4.1), so
    // beta = (iteration x k / one-GPU iteration)^(1 / (k - 1)).
    if (it != marks_.end() && it->second.gpu == now.gpu && it->second.width == now.width &&
        now.width > 1) {
      const double solo = unit1_ns(ctx, job);
      const auto took = static_cast<double>(now.t - it->second.t);
      const auto k = static_cast<double>(now.width);
      if (solo > 0.0) betas_[job] = std::pow(std::max(1.0, took * k / solo), 1.0 / (k - 1.0));
    }
    marks_[job] = now;
  }

  /// The trial's measured beta, else 1 (the paper's ideal).
  [[nodiscard]] double beta(JobId job) const {
    if (const auto it = betas_.find(job); it != betas_.end()) return it->second;
    return 1.0;
  }

  [[nodiscard]] double alpha(JobId job) const {
    const auto it = alphas_.find(job);
    return it == alphas_.end() ? 1.0 : it->second;
  }
  /// eps, seconds: a resize's real price as the engine charges it (resize_cost.hpp): stop
  /// (reap) + restart (process start, context, model build) on the device profile, + the
  /// reload of the checkpoint (load_bytes over the host link, h2d_ns) + the work lost back
  /// to the last epoch boundary (iterations since it x the solo iteration time).
  [[nodiscard]] double resize_eps_s(const Context& ctx, JobId job) const {
    const DeviceId gpu = gpus_.front().device;
    const JobView v = ctx.job(job);
    const LayerRange all{0, v.model().layer_count()};
    const std::uint64_t per_epoch =
        v.trial() ? std::max<std::uint64_t>(1, v.spec().trial->tuning->iterations_per_epoch()) : 1;
    const ResizeCost c =
        resize_cost(ctx.cost(gpu).profile(), v.model(), v.spec().optimizer, Precision::Fp32,
                    ResizeProgress{v.iterations_done(), per_epoch, ctx.estimate_unit_ns(job, gpu)});
    const DurationNs reload = ctx.cost(gpu).h2d_ns(ctx.memory().load_bytes(job, all), false);
    return static_cast<double>(c.stop_ns + c.restart_ns + reload + c.lost_work_ns) * 1e-9;
  }
  /// The reload a move pays, seconds: the trial's weights and state copied host -> device.
  [[nodiscard]] double move_eps_s(const Context& ctx, JobId job) const {
    const DeviceId gpu = gpus_.front().device;
    const LayerRange all{0, ctx.job(job).model().layer_count()};
    return static_cast<double>(ctx.cost(gpu).h2d_ns(ctx.memory().load_bytes(job, all), false)) *
           1e-9;
  }

  std::map<JobId, std::size_t> moves_;  ///< trial -> the GPU it moves to
  /// Whole trials resizing across GPUs at their next iteration boundary -> their new GPUs.
  std::map<JobId, std::vector<std::size_t>> resizes_;
  std::map<JobId, double> betas_;  ///< measured beta per trial (data-parallel iterations)
  std::map<JobId, Mark> marks_;
  std::map<JobId, double> alphas_;
};

GPUMUX_REGISTER_POLICY(
    "dynamic_fluid", DynamicFluid,
    "Fluid with DynamicFluid: re-planned widths, packed <-> whole <-> k-GPU resizes");

}  // namespace
}  // namespace gpumux::policies
