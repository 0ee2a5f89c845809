// fluid: Fluid's executor for tuning jobs (MLSys'21 §4), intra-GPU part. After a lifecycle event
// (a trial arrives, pauses, is stopped or finishes, or a paused trial is resumed), once every
// event of that instant is handled (a zero-delay timer), the waiting trials form a TrialGroup and
// get StaticFluid widths over the GPUs that are idle now (policies/fluid/water_filling.hpp): a
// trial whose water share is below one GPU gets width 1/c and is packed, up to c per GPU, each
// packed trial in its own MPS client context on that GPU, so their interference is the simulated
// GPU's sharing model (sim/kernel_share.hpp), not a constant; a trial of width >= 1 takes a whole
// GPU alone. The shared machinery is policies/tuning/fluid_executor.hpp; the trial lifecycle
// trial_executor.hpp.
//
// Our choices where the paper and the code say nothing (a lone packed trial runs alone until a
// partner joins; with no idle GPU every trial gets 1/c; d from the cost model with model_d;
// contexts opened warm), the rules behind each step (Algorithm 1, SymbioticLab/Fluid
// fluid/fluid_executor.py) and what is left out: docs/policies/fluid.md, "fluid".
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "fluid/water_filling.hpp"
#include "gpumux/io/params.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/model.hpp"
#include "tuning/fluid_executor.hpp"

namespace gpumux::policies {

FluidExecutor::FluidExecutor(const PolicyArgs& args)
    : FluidExecutor(args, param_specs(), [](ParamReader&) {}) {}

ParamSpecs FluidExecutor::knob_specs() {
  return ParamSpecs{
      param::integer("depth", 2, "ops of each trial queued or in flight"),
      param::integer("c", 2, "max trials packed on one GPU (Fluid code's packing)"),
      param::integer("d", 4, "max GPUs per trial, data-parallel beyond 1 (Fluid executor's d = 4)"),
      param::flag("model_d", true,
                  "cap d per model by the cost model's useful GPUs (paper: d from Paleo)")};
}

const ParamSpecs& FluidExecutor::param_specs() {
  static const ParamSpecs specs = knob_specs();
  return specs;
}

void FluidExecutor::read_knobs(ParamReader& p) {
  set_depth(read_depth(p));
  c_ = p.integer_in<std::uint32_t>("c", 1, 16);
  d_ = p.integer_in<std::uint32_t>("d", 1, 64);
  model_d_ = p.flag("model_d");
}

void FluidExecutor::on_start(Context& ctx) {
  for (const DeviceId gpu : ctx.gpus()) {
    Gpu g{gpu, {}, false, {}};
    for (std::uint32_t i = 0; i < c_; ++i) {
      const ContextId mps =
          ctx.streams().create_context(gpu, ContextOptions{true}, ContextStart::Warm);
      g.slots.push_back(Slot{open_streams(ctx, mps, depth()), {}});
    }
    gpus_.push_back(std::move(g));
  }
}

std::size_t FluidExecutor::occupied(const Gpu& g) const {
  return static_cast<std::size_t>(
      std::count_if(g.slots.begin(), g.slots.end(), [](const Slot& s) { return s.job; }));
}

FluidExecutor::Gpu* FluidExecutor::gpu_of(JobId job) {
  for (Gpu& g : gpus_) {
    for (const Slot& s : g.slots) {
      if (s.job && *s.job == job) return &g;
    }
  }
  return nullptr;
}

FluidExecutor::Slot* FluidExecutor::slot_of(JobId job) {
  for (Gpu& g : gpus_) {
    for (Slot& s : g.slots) {
      if (s.job && *s.job == job) return &s;
    }
  }
  return nullptr;
}

std::optional<TrialExecutor::Home> FluidExecutor::home_of(JobId job) {
  for (const Gpu& g : gpus_) {
    for (const Slot& s : g.slots) {
      if (!s.job || *s.job != job) continue;
      // The first GPU holding it is its primary (a data-parallel trial's GPUs are ascending).
      if (const auto r = replica_devices_.find(job); r != replica_devices_.end()) {
        return Home{std::span<const DeviceId>(r->second), s.s.compute};
      }
      return Home{std::span<const DeviceId>(&g.device, 1), s.s.compute};
    }
  }
  return std::nullopt;
}

void FluidExecutor::release(JobId job) {
  // Every GPU it holds is freed together (a data-parallel trial holds one slot of each).
  for (Gpu& g : gpus_) {
    bool held = false;
    for (Slot& s : g.slots) {
      if (s.job && *s.job == job) {
        s.job.reset();
        held = true;
      }
    }
    if (held && occupied(g) == 0) g.whole = false;
  }
  replica_devices_.erase(job);
}

std::vector<std::size_t> FluidExecutor::gpus_held(JobId job) const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    for (const Slot& s : gpus_[i].slots) {
      if (s.job && *s.job == job) {
        out.push_back(i);
        break;
      }
    }
  }
  return out;
}

std::vector<StreamId> FluidExecutor::replica_streams_on(
    JobId job, const std::vector<std::size_t>& gpus) const {
  std::vector<StreamId> out;
  for (const std::size_t i : gpus) {
    const Slot* pick = nullptr;
    for (const Slot& s : gpus_[i].slots) {
      if (s.job && *s.job == job) pick = &s;
    }
    for (const Slot& s : gpus_[i].slots) {
      if (pick == nullptr && !s.job) pick = &s;
    }
    if (pick != nullptr) out.push_back(pick->s.compute);
  }
  return out;
}

std::uint32_t FluidExecutor::d_for(const Context& ctx, JobId job) const {
  const JobView v = ctx.job(job);
  if (!v.training() || gpus_.size() < 2) return 1;
  const auto key = std::make_pair(std::string(v.model().name()), v.spec().batch);
  if (const auto it = d_cache_.find(key); it != d_cache_.end()) return it->second;
  const DeviceId gpu = gpus_.front().device;
  const CostModel& cost = ctx.cost(gpu);
  const LayerRange all{0, v.model().layer_count()};
  const DurationNs update = cost.update_kernels(v.model(), v.spec().optimizer).solo_ns();
  std::vector<DeviceId> devices;
  const auto iteration_ns = [&](std::uint32_t k) {
    const std::uint32_t samples = (v.spec().batch + k - 1) / k;
    return cost.op_ns(v.model(), all, samples, Pass::Forward, false) +
           cost.op_ns(v.model(), all, samples, Pass::Backward, false) + update +
           ctx.replicas().estimate_allreduce_ns(job, devices);
  };
  devices.push_back(gpu);
  DurationNs best = iteration_ns(1);
  std::uint32_t d = 1;
  const auto cap = static_cast<std::uint32_t>(std::min<std::size_t>(d_, gpus_.size()));
  for (std::uint32_t k = 2; k <= cap; ++k) {
    devices.push_back(gpus_[k - 1].device);
    const DurationNs t = iteration_ns(k);
    if (t >= best) break;  // one more worker no longer pays for its all-reduce share
    best = t;
    d = k;
  }
  d_cache_[key] = d;
  return d;
}

std::uint32_t FluidExecutor::plan_d(const Context& ctx, const std::vector<JobId>& jobs) const {
  if (!model_d_) return d_;
  std::uint32_t d = d_;
  for (const JobId j : jobs) {
    if (ctx.job(j).trial()) d = std::min(d, d_for(ctx, j));
  }
  return std::max<std::uint32_t>(d, 1);
}

double FluidExecutor::unit1_ns(const Context& ctx, JobId job) const {
  const JobView v = ctx.job(job);
  const DeviceId gpu = gpus_.front().device;
  // estimate_unit_ns is at the job's current width (samples per GPU and all-reduce of its
  // replicas), so a data-parallel trial's one-GPU time is computed here.
  if (v.width() <= 1) return static_cast<double>(ctx.estimate_unit_ns(job, gpu));
  const CostModel& cost = ctx.cost(gpu);
  const LayerRange all{0, v.model().layer_count()};
  const std::uint32_t batch = v.spec().batch;
  return static_cast<double>(cost.op_ns(v.model(), all, batch, Pass::Forward, false) +
                             cost.op_ns(v.model(), all, batch, Pass::Backward, false) +
                             cost.update_kernels(v.model(), v.spec().optimizer).solo_ns());
}

double FluidExecutor::h1_s(const Context& ctx, JobId job) const {
  const JobView v = ctx.job(job);
  const std::uint64_t left = v.total_units() - std::min(v.units_done(), v.total_units());
  return static_cast<double>(left) * unit1_ns(ctx, job) * 1e-9;
}

namespace {

constexpr std::uint64_t kReplanTag = 0x464c5549;  // "FLUI"

/// StaticFluid widths of `models` on `n_gpus`; with no GPU, 1/c each (our choice).
std::vector<double> water_fill(const std::vector<fluid::TrialModel>& models, std::uint32_t n_gpus,
                               fluid::FluidKnobs knobs) {
  if (n_gpus == 0) return std::vector<double>(models.size(), 1.0 / static_cast<double>(knobs.c));
  return fluid::static_fluid_widths(models, n_gpus, knobs);
}

}  // namespace

FluidExecutor::Plan FluidExecutor::plan_group(const Context& ctx,
                                              const std::deque<JobId>& waiting) const {
  Plan p;
  p.jobs.assign(waiting.begin(), waiting.end());
  p.waiting = waiting.size();
  std::vector<fluid::TrialModel> models;
  models.reserve(p.jobs.size());
  for (const JobId j : p.jobs) models.push_back(fluid::TrialModel{h1_s(ctx, j)});
  const auto n = static_cast<std::uint32_t>(idle_gpus().size());
  p.widths = water_fill(models, n, fluid::FluidKnobs{c_, plan_d(ctx, p.jobs)});
  p.order = fluid::fluid_order(models);
  return p;
}

FluidExecutor::Plan FluidExecutor::plan_total(const Context& ctx,
                                              const std::deque<JobId>& waiting) const {
  Plan p;
  p.jobs.assign(waiting.begin(), waiting.end());
  p.waiting = waiting.size();
  for (const Gpu& g : gpus_) {
    for (const Slot& s : g.slots) {
      // A data-parallel trial holds a slot on each of its GPUs: planned once.
      if (s.job && std::find(p.jobs.begin(), p.jobs.end(), *s.job) == p.jobs.end()) {
        p.jobs.push_back(*s.job);
      }
    }
  }
  std::vector<fluid::TrialModel> models;
  models.reserve(p.jobs.size());
  for (const JobId j : p.jobs) models.push_back(fluid::TrialModel{h1_s(ctx, j)});
  const auto n = static_cast<std::uint32_t>(gpus_.size());
  p.widths = water_fill(models, n, fluid::FluidKnobs{c_, plan_d(ctx, p.jobs)});
  p.order = fluid::fluid_order(models);
  return p;
}

void FluidExecutor::advance(Context& ctx) {
  if (replan_pending_ || gpus_.empty()) return;
  replan_pending_ = true;
  ctx.set_timer(0, kReplanTag);
}

void FluidExecutor::on_timer(Context& ctx, TimerId /*id*/, std::uint64_t tag) {
  if (tag != kReplanTag) return;
  replan_pending_ = false;
  replan(ctx);
}

void FluidExecutor::replan(Context& ctx) {
  std::deque<JobId> active;
  while (auto j = pop_next_active(ctx, waiting_)) active.push_back(*j);
  if (active.empty() || gpus_.empty()) return;
  place_waiting(ctx, plan_group(ctx, active));
}

void FluidExecutor::place_waiting(Context& ctx, const Plan& p) {
  const std::vector<std::size_t> idle = idle_gpus();
  std::size_t next_idle = 0;       // idle[next_idle..] are not used by this plan yet
  std::vector<std::size_t> shelf;  // idle GPUs this plan opened for packed trials
  const auto is_packed = [&](std::size_t i) {
    return ctx.job(p.jobs[i]).trial() && p.widths[i] < 1.0;
  };
  // A whole trial's GPUs: floor(width), already <= d (Algorithm 1); an ordinary job takes one.
  const auto gpus_wanted = [&](std::size_t i) -> std::size_t {
    if (!ctx.job(p.jobs[i]).trial()) return 1;
    return std::max<std::size_t>(1, static_cast<std::size_t>(std::floor(p.widths[i])));
  };
  std::size_t wholes_left = 0;  // idle GPUs the plan's whole trials still want
  for (std::size_t i = 0; i < p.waiting; ++i) wholes_left += is_packed(i) ? 0 : gpus_wanted(i);
  std::vector<JobId> left;
  for (const std::size_t i : p.order) {
    if (i >= p.waiting) continue;  // already placed
    const JobId job = p.jobs[i];
    if (!is_packed(i)) {
      // Width k >= 1: alone on k idle GPUs, data-parallel when k >= 2 (fewer if fewer are
      // left: the plan's widths sum to at most the idle GPUs, so only a rounding gap).
      const std::size_t want = gpus_wanted(i);
      wholes_left -= std::min(wholes_left, want);
      const std::size_t take = std::min(want, idle.size() - next_idle);
      if (take == 0) {
        left.push_back(job);
        continue;
      }
      occupy_whole(
          ctx,
          std::vector<std::size_t>(idle.begin() + static_cast<std::ptrdiff_t>(next_idle),
                                   idle.begin() + static_cast<std::ptrdiff_t>(next_idle + take)),
          job);
      next_idle += take;
      continue;
    }
    std::optional<std::size_t> gpu;
    if (idle.size() - next_idle > wholes_left) {
      gpu = idle[next_idle++];  // an idle GPU no whole trial of the plan needs: spread
      shelf.push_back(*gpu);
    } else {
      gpu = packable_gpu(shelf);
    }
    if (gpu) {
      occupy(ctx, *gpu, job, /*packed=*/true);
    } else {
      left.push_back(job);
    }
  }
  // Unplaced jobs keep their arrival order.
  for (std::size_t i = 0; i < p.waiting; ++i) {
    if (std::find(left.begin(), left.end(), p.jobs[i]) != left.end()) waiting_.push_back(p.jobs[i]);
  }
}

std::vector<std::size_t> FluidExecutor::idle_gpus() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (occupied(gpus_[i]) == 0 && !gpus_[i].reserved_for) out.push_back(i);
  }
  return out;
}

std::optional<std::size_t> FluidExecutor::packable_gpu(
    const std::vector<std::size_t>& shelf) const {
  const auto joinable = [&](std::size_t i) {
    const Gpu& g = gpus_[i];
    const std::size_t n = occupied(g);
    return !g.whole && !g.reserved_for && n > 0 && n < g.slots.size();
  };
  // The plan's own shelf, last opened first: the shortest packed trial gets the next partner
  // (serpentine, as the band scheduler's mirrored rounds in Fluid's scheduler.py).
  for (auto it = shelf.rbegin(); it != shelf.rend(); ++it) {
    if (joinable(*it)) return *it;
  }
  for (std::size_t i = 0; i < gpus_.size(); ++i) {
    if (joinable(i)) return i;
  }
  return std::nullopt;
}

void FluidExecutor::occupy(Context& ctx, std::size_t gpu, JobId job, bool packed) {
  Gpu& g = gpus_[gpu];
  for (Slot& s : g.slots) {
    if (s.job) continue;
    s.job = job;
    g.whole = !packed;
    // Back from several GPUs (paused, now placed on one): its single replica is this slot.
    const StreamId copy = s.s.copy, compute = s.s.compute;  // `s` is freed if it fails
    if (!run_or_fail(ctx, job, [&] {
          if (ctx.job(job).width() > 1)
            ctx.replicas().set_replicas(job, std::span<const StreamId>(&compute, 1));
          load_whole(ctx, job, copy);
          keep(ctx, job);  // the executor's own dispatch rule (Stage 0: one op at a time)
        })) {
      advance(ctx);  // a failed trial's slot is free again
    }
    return;
  }
}

void FluidExecutor::occupy_whole(Context& ctx, const std::vector<std::size_t>& gpus, JobId job,
                                 const std::vector<OpHandle>& after, bool resized) {
  if (gpus.size() == 1 && !resized && gpus_held(job).empty()) {
    occupy(ctx, gpus.front(), job, /*packed=*/false);
    return;
  }
  const std::vector<StreamId> streams = replica_streams_on(job, gpus);
  std::vector<DeviceId> devices;
  std::vector<StreamId> copies;
  for (const std::size_t i : gpus) {
    Gpu& g = gpus_[i];
    Slot* pick = nullptr;
    for (Slot& s : g.slots) {
      if (s.job && *s.job == job) pick = &s;
    }
    for (Slot& s : g.slots) {
      if (pick == nullptr && !s.job) pick = &s;
    }
    pick->job = job;
    g.whole = true;
    devices.push_back(g.device);
    copies.push_back(pick->s.copy);
  }
  if (devices.size() > 1) {
    replica_devices_[job] = devices;
  } else {
    replica_devices_.erase(job);
  }
  const bool placed = run_or_fail(ctx, job, [&] {
    if (!resized && (streams.size() > 1 || ctx.job(job).width() > 1)) {
      ctx.replicas().set_replicas(job, streams);
    }
    // Each replica holds the whole state (weights + optimizer state), loaded over its link.
    for (const StreamId copy : copies) load_whole(ctx, job, copy, LoadOptions{false, false, after});
    keep(ctx, job);
  });
  if (!placed) advance(ctx);  // its GPUs are free again
}

namespace {
GPUMUX_REGISTER_POLICY("fluid", FluidExecutor,
                       "Fluid: trials water-filled over GPUs, packed up to c per GPU under MPS");
}  // namespace

}  // namespace gpumux::policies
