// switchflow: SwitchFlow (Wu et al., Middleware'21; TF fork shizukanaskytree/tensorflow).
// Subgraph scheduling with at most one GPU subgraph of any job in flight per GPU (a per-GPU
// token), a version of every subgraph for every device, and priority preemption that drops the
// low-priority job's queued work, lets its issued work drain, and migrates its state to the
// next slower device off the critical path.
//
// A subgraph is the GPU part of one session.run (an iteration or a request; "pass": one pass),
// dispatched at once into the GPU's one compute stream as ops of `layers_per_op` layers. The
// token goes by priority, then least recently served, then arrival; CPU versions need none.
// Devices are ranked by peak FLOP/s (device_ranking.hpp). A job of strictly higher priority
// displaces a job from its GPU down the ranking; "migrate": false keeps it waiting instead, and
// "return_idle_ms" lets it back while the higher jobs are idle.
//
// Left out: the input pipeline, TF's thread pools, graph construction cost, input sharing, and
// the paper's multi-threaded TF baseline (mps and time_slicing stand in). The long story, with
// the paper's and the fork's rule behind each choice: docs/policies/switchflow.md.
#include "switchflow/switchflow.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/model.hpp"
#include "switchflow/device_ranking.hpp"

namespace gpumux::policies::switchflow {

const ParamSpecs& SwitchFlow::param_specs() {
  static const ParamSpecs specs{
      param::choice("subgraph", kSubgraphNames, SubgraphScope::Iteration,
                    "what one subgraph (one token grant) covers"),
      param::integer("layers_per_op", 1, "zoo layers per op (TF node), in [0, 1e6]; 0 = a pass"),
      param::integer("in_flight", 2, "kernels in flight per stream, in [1, 1024]"),
      param::flag("migrate", true, "move a preempted job to the next slower device"),
      param::number("return_idle_ms", "ms", -1.0,
                    "idle time after which a migrated job returns; negative = never")};
  return specs;
}

SwitchFlow::SwitchFlow(const PolicyArgs& args) {
  auto p = policy_params(args, param_specs());
  scope_ = p.choice("subgraph", kSubgraphNames);
  layers_per_op_ = p.integer_in<std::uint32_t>("layers_per_op", 0, 1000000);  // 0 = a pass
  in_flight_ = p.integer_in<std::uint32_t>("in_flight", 1, 1024);
  migrate_ = p.flag("migrate");
  const double idle_ms = p.number("return_idle_ms");
  if (idle_ms > kMaxDurationUnits) p.fail("return_idle_ms", "out of range (more than 1e9 ms)");
  return_idle_ns_ = idle_ms < 0 ? -1 : duration_to_ns(idle_ms, TimeUnit::Milliseconds);
  p.finish();
}

void SwitchFlow::on_start(Context& ctx) {
  ranked_ = rank_devices(ctx);
  gpus_.resize(ctx.device_count());
  for (DeviceId d : ranked_) {
    if (!is_gpu(ctx, d)) continue;
    const ContextId c = ctx.streams().default_context(d);
    Gpu& g = gpus_[index_of(d)];
    g.compute = ctx.streams().create_stream(c, StreamOptions{0, in_flight_});
    g.load = ctx.streams().create_stream(c, StreamOptions{0, 1});
    g.evac = ctx.streams().create_stream(c, StreamOptions{0, 1});
  }
}

void SwitchFlow::on_job_arrival(Context& ctx, JobId) {
  reconcile(ctx);
}

void SwitchFlow::on_request_arrival(Context& ctx, JobId job, RequestId) {
  if (auto it = jobs_.find(job); it != jobs_.end()) it->second.last_busy_ns = ctx.now();
  reconcile(ctx);
}

void SwitchFlow::on_op_complete(Context& ctx, const OpRecord& r) {
  if (auto it = jobs_.find(r.job); it != jobs_.end()) it->second.last_busy_ns = ctx.now();
  reconcile(ctx);
}

void SwitchFlow::on_request_complete(Context& ctx, JobId, RequestId) {
  reconcile(ctx);
}

void SwitchFlow::on_iteration_end(Context& ctx, JobId) {
  reconcile(ctx);
}

void SwitchFlow::on_job_finish(Context& ctx, JobId job) {
  forget(job);
  reconcile(ctx);
}

void SwitchFlow::on_timer(Context& ctx, TimerId, std::uint64_t tag) {
  idle_timers_.erase(static_cast<TimeNs>(tag));
  reconcile(ctx);
}

// ---- reconcile: placement (placement.cpp), tokens, dispatch -------------------------------------

void SwitchFlow::reconcile(Context& ctx) {
  for (JobId j : ctx.arrived_jobs()) {
    // Jobs arriving together are all visible from the first arrival hook on.
    auto [it, fresh] = jobs_.try_emplace(j);
    if (fresh) it->second.seq = jobs_.size();
    if (fresh || (ctx.job(j).active() && busy(ctx, j))) it->second.last_busy_ns = ctx.now();
  }
  settle_moves(ctx);
  // Placement reaches a fixed point: each round either changes nothing, or marks a device
  // a job does not fit on, or rejects a job (both finite).
  for (int round = 0; round < 64 && place_jobs(ctx); ++round) {
  }
  finish_evictions(ctx);
  for (DeviceId d : ranked_) {
    if (is_gpu(ctx, d)) schedule_gpu(ctx, d);
  }
  for (JobId j : ctx.arrived_jobs()) {
    const Info& info = jobs_[j];
    if (ctx.job(j).active() && info.where && !is_gpu(ctx, *info.where)) pump_cpu(ctx, j);
  }
  arm_idle_timers(ctx);
}

bool SwitchFlow::busy(const Context& ctx, JobId j) {
  const JobView s = ctx.job(j);
  return s.has_dispatchable_work() || s.unit_in_progress() || s.ops_in_flight() > 0;
}

// ---- the per-GPU token --------------------------------------------------------------------------

void SwitchFlow::preempt_holder(Context& ctx, Gpu& g) {
  ctx.preempt(*g.holder, PreemptMode::DropQueued);
  g.preempted = true;
  g.preempt_ns = ctx.now();
}

void SwitchFlow::schedule_gpu(Context& ctx, DeviceId d) {
  Gpu& g = gpus_[index_of(d)];
  if (g.holder) {
    const bool drained = ctx.streams().queued(g.compute) + ctx.streams().in_flight(g.compute) == 0;
    if (drained || !ctx.job(*g.holder).active()) {
      if (g.preempted) {
        ctx.record("switchflow.preemption_drain_ms",
                   static_cast<double>(ctx.now() - g.preempt_ns) * 1e-6);
      }
      g.holder.reset();
      g.preempted = false;
    }
  }
  const std::vector<JobId> waiting = waiting_jobs(ctx, d);
  if (g.holder) {
    // A higher class with work preempts the subgraph in flight, even while its own state is
    // still being copied in: the preemptee's drain overlaps that copy (as graph
    // construction overlaps the abort in the paper).
    const int held = ctx.job(*g.holder).spec().priority;
    const bool higher = std::any_of(waiting.begin(), waiting.end(),
                                    [&](JobId j) { return ctx.job(j).spec().priority > held; });
    if (higher && !g.preempted) preempt_holder(ctx, g);
    return;
  }
  std::vector<JobId> no_room;
  for (JobId j : waiting) {
    // A job whose state is still being copied in gets the token only once the copy has
    // ended (its completion hook runs reconcile again); until then the GPU is kept for it:
    // nothing after it in token order (lower classes, or its class's jobs also being copied
    // in) is granted. Its subgraph is never queued behind the copy: a preemption
    // (DropQueued) may drop a copy that is still queued on its copy stream, and the
    // subgraph's ops already issued to the GPU would then wait for it forever.
    if (!resident_here(ctx, j, d)) return;
    try {
      dispatch_subgraph(ctx, j, g.compute);
      g.holder = j;
      jobs_[j].last_grant_ns = ctx.now();
      return;
    } catch (const OutOfMemory&) {
      no_room.push_back(j);  // its activations do not fit now; let another go
    }
  }
  if (!no_room.empty()) break_memory_deadlock(ctx, d, no_room);
}

bool SwitchFlow::resident_here(const Context& ctx, JobId j, DeviceId d) {
  return ctx.job(j).resident(d, {0, ctx.job(j).model().layer_count()});
}

std::vector<JobId> SwitchFlow::waiting_jobs(const Context& ctx, DeviceId d) {
  std::vector<JobId> waiting;
  for (JobId j : ctx.arrived_jobs()) {
    const JobView s = ctx.job(j);
    if (!s.active() || jobs_[j].where != d || !s.has_dispatchable_work()) continue;
    if (!s.resident_or_loading(d, {0, s.model().layer_count()})) continue;
    waiting.push_back(j);
  }
  const auto here = [&](JobId j) { return resident_here(ctx, j, d); };
  std::stable_sort(waiting.begin(), waiting.end(), [&](JobId a, JobId b) {
    const int pa = ctx.job(a).spec().priority, pb = ctx.job(b).spec().priority;
    if (pa != pb) return pa > pb;
    if (here(a) != here(b)) return here(a);
    if (jobs_[a].last_grant_ns != jobs_[b].last_grant_ns) {
      return jobs_[a].last_grant_ns < jobs_[b].last_grant_ns;
    }
    return jobs_[a].seq < jobs_[b].seq;
  });
  return waiting;
}

void SwitchFlow::dispatch_subgraph(Context& ctx, JobId j, StreamId stream) {
  const JobView s = ctx.job(j);
  const Cursor start = s.dispatched();
  do {
    ctx.dispatch(j, stream, DispatchOptions{layers_per_op_, {}});
    jobs_[j].engine_knows = true;
  } while (s.active() && s.has_dispatchable_work() && s.dispatched().unit == start.unit &&
           (scope_ == SubgraphScope::Iteration || s.dispatched().pass == start.pass));
}

void SwitchFlow::break_memory_deadlock(Context& ctx, DeviceId d,
                                       const std::vector<JobId>& no_room) {
  const Gpu& g = gpus_[index_of(d)];
  const auto idle = [&](StreamId s) {
    return ctx.streams().queued(s) + ctx.streams().in_flight(s) == 0;
  };
  if (!idle(g.compute) || !idle(g.load) || !idle(g.evac)) return;
  const JobId victim = no_room.back();
  Info& info = jobs_[victim];
  const bool elsewhere = std::any_of(ranked_.begin(), ranked_.end(),
                                     [&](DeviceId x) { return x != d && !info.no_fit.count(x); });
  if (!elsewhere) {
    // Others on `d` that are idle (a service between requests) will free memory later.
    const bool others_will_free =
        std::any_of(ctx.arrived_jobs().begin(), ctx.arrived_jobs().end(), [&](JobId j) {
          return ctx.job(j).active() && jobs_[j].where == d &&
                 std::find(no_room.begin(), no_room.end(), j) == no_room.end();
        });
    if (others_will_free) return;
    reject(ctx, victim,
           "out of memory: its activations (" +
               std::to_string(ctx.memory().ephemeral_bytes(victim)) +
               " B) do not fit in the free memory of device " + std::to_string(raw(d)) +
               " (largest free block " + std::to_string(ctx.memory().stats(d).largest_free_bytes) +
               " B) and no other device can hold it");
    return;
  }
  info.no_fit.insert(d);
  for (int round = 0; round < 64 && place_jobs(ctx); ++round) {
  }
}

// ---- CPU versions (no token) --------------------------------------------------------------------

void SwitchFlow::pump_cpu(Context& ctx, JobId j) {
  Info& info = jobs_[j];
  const DeviceId d = *info.where;
  auto it = info.cpu_streams.find(d);
  if (it == info.cpu_streams.end()) {
    const StreamId s =
        ctx.streams().create_stream(ctx.streams().default_context(d), StreamOptions{0, in_flight_});
    it = info.cpu_streams.emplace(d, s).first;
  }
  if (keep_busy(ctx, j, it->second, in_flight_, layers_per_op_) > 0) info.engine_knows = true;
}

// ---- bookkeeping --------------------------------------------------------------------------------

void SwitchFlow::arm_idle_timers(Context& ctx) {
  if (return_idle_ns_ < 0) return;
  for (JobId j : ctx.arrived_jobs()) {
    if (!ctx.job(j).active() || busy(ctx, j)) continue;
    const TimeNs expiry = jobs_[j].last_busy_ns + return_idle_ns_;
    if (expiry <= ctx.now() || idle_timers_.count(expiry)) continue;
    idle_timers_.insert(expiry);
    ctx.set_timer(expiry - ctx.now(), static_cast<std::uint64_t>(expiry));
  }
}

void SwitchFlow::memory_freed(DeviceId d) {
  for (auto& [j, info] : jobs_) info.no_fit.erase(d);
}

void SwitchFlow::forget(JobId j) {
  auto it = jobs_.find(j);
  if (it == jobs_.end()) return;
  if (it->second.where) memory_freed(*it->second.where);
  it->second.where.reset();
  it->second.moving = false;
  it->second.evict_from.reset();
}

void SwitchFlow::reject(Context& ctx, JobId j, const std::string& reason) {
  ctx.reject(j, reason);
  forget(j);
}

GPUMUX_REGISTER_POLICY("switchflow", SwitchFlow,
                       "SwitchFlow: one GPU subgraph per GPU, priority preemption with "
                       "migration to a slower device");

}  // namespace gpumux::policies::switchflow
