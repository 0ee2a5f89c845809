// pipeswitch: PipeSwitch (Bai et al., OSDI'20; artifact netx-repo/PipeSwitch @ f321d399).
// Inference preempts training at the next layer boundary. The inference model is sent over PCIe
// in groups, and each group computes as soon as its bytes have arrived. Memory comes from one
// pool allocated up front. A standby worker takes over while the old one stops.
//
// Requests are served one at a time, in arrival order. When none is pending, the oldest
// unfinished training job resumes. Training runs one leaf layer per op, and each op pays a
// device synchronisation first, as the artifact's terminate hook does. Parameters choose the
// grouping (grouping.hpp), how a group's compute waits for its copy (the artifact's blocking
// event and pipe message, or an event wait), unified or per-tensor memory, pinned or pageable
// host copies, and how workers switch: two warm contexts, one context, or kill and restart.
//
// Left out: more than one GPU; the controller's Event()/record() costs; the size of the
// forwarded input; the artifact's 1 GiB / 11 GiB region split and 512-byte padding; pinning at
// start-up; Fig. 8's GPU-IPC and CUDA-unified-memory variants; tearing down a training graph in
// one process; the new process's allocator mallocs under kill_restart.
//
// The long story, with each default's source: docs/policies/pipeswitch.md.
#include <algorithm>
#include <deque>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/job_runner.hpp"
#include "gpumux/api/errors.hpp"
#include "gpumux/io/policy_registry.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/memory.hpp"
#include "gpumux/model/model.hpp"
#include "pipeswitch/grouping.hpp"
#include "pipeswitch/params.hpp"

namespace gpumux::policies::pipeswitch {
namespace {

/// IPC messages on a switch's critical path once the old task stopped: the stop acknowledgement and
/// the request forwarded to the new worker (pipeswitch/frontend_schedule.py).
constexpr DurationNs kSwitchMessages = 2;
/// Ops of the running training job on the GPU or queued: one in flight, one ready to go.
constexpr std::size_t kTrainingDepth = 2;
/// Timer tag: decide what runs next.
constexpr std::uint64_t kDecideTag = 1;

class PipeSwitch final : public Policy {
 public:
  static const ParamSpecs& param_specs() { return Params::specs(); }

  explicit PipeSwitch(const PolicyArgs& args) : params_(Params::read(args)) {}

  [[nodiscard]] std::string_view name() const noexcept override { return "pipeswitch"; }

  void on_start(Context& ctx) override {
    has_gpu_ = !ctx.gpus().empty();
    if (!has_gpu_) return;
    gpu_ = ctx.gpus().front();
    const DeviceProfile& p = ctx.device(gpu_);
    if (params_.group_sync_ns < 0) params_.group_sync_ns = p.event_ns;
    reap_ns_ = p.process_reap_ns;
    switch_delay_ns_ = kSwitchMessages * params_.ipc_message_ns;
    if (params_.switching == Switching::OneContext) switch_delay_ns_ += p.event_ns + p.free_ns;
    // The standby workers exist before any switch: their start-up is off the critical path.
    if (params_.switching == Switching::ActiveStandby) {
      workers_ = {make_worker(ctx, ContextStart::Warm), make_worker(ctx, ContextStart::Warm)};
    } else if (params_.switching == Switching::OneContext) {
      workers_ = {make_worker(ctx, ContextStart::Warm)};
    }
  }

  void on_job_arrival(Context& ctx, JobId job) override {
    if (!has_gpu_) {
      ctx.reject(job, "pipeswitch needs a GPU device");
      return;
    }
    const std::uint64_t need = ctx.memory().persistent_bytes(job) +
                               ctx.memory().ephemeral_bytes(job) +
                               (ctx.job(job).model().layer_count() + 1) * kAllocationAlignBytes;
    const std::uint64_t capacity = ctx.memory().stats(gpu_).capacity_bytes;
    if (need > capacity) {
      ctx.reject(job, "needs " + std::to_string(need) + " B of GPU memory alone, the GPU has " +
                          std::to_string(capacity) + " B");
      return;
    }
    if (ctx.job(job).training()) {
      trainings_.push_back(job);
      schedule(ctx);
    }
  }

  void on_request_arrival(Context& ctx, JobId job, RequestId) override {
    requests_.push_back(job);
    schedule(ctx);
  }

  void on_op_complete(Context& ctx, const OpRecord& r) override {
    if (watch_startup_ && r.op == first_group_op_) {
      watch_startup_ = false;
      ctx.record("pipeswitch.startup_ms", ns_to_ms(r.started_ns - request_arrival_ns_));
    }
    if (watch_stop_ && r.op == stop_gate_op_) {
      watch_stop_ = false;
      ctx.record("pipeswitch.stop_ms", ns_to_ms(r.started_ns - request_arrival_ns_));
    }
    if (draining_ && r.job == draining_job_) {
      if (ctx.ops_in_flight(draining_job_, gpu_) > 0) return;
      // The preempted job is off the GPU: drop its state (to make room, or one_context's
      // unload of the training model), then switch.
      draining_ = false;
      if (ctx.job(draining_job_).active()) drop_state(ctx, draining_job_);
      schedule(ctx);
      return;
    }
    if (task_ == Task::Training && r.job == current_) pump_training(ctx);
  }

  void on_request_complete(Context& ctx, JobId job, RequestId) override {
    if (task_ != Task::Inference || job != current_) return;
    const JobView j = ctx.job(job);
    // PipeSwitch re-sends the model on every switch: the weights go as the request ends.
    if (!j.done() && j.ops_in_flight(gpu_) == 0) ctx.memory().evict(job, gpu_);
    task_ = Task::None;
    // Decide once this instant's arrivals are in: a closed-loop client's next request arrives
    // at the very time the previous one ends, and training should not start for 0 ns.
    ctx.set_timer(0, kDecideTag);
  }

  void on_timer(Context& ctx, TimerId, std::uint64_t tag) override {
    if (tag == kDecideTag) schedule(ctx);
  }

  void on_job_finish(Context& ctx, JobId job) override {
    std::erase(trainings_, job);
    if (draining_ && job == draining_job_) draining_ = false;  // its memory went with it
    if (task_ != Task::None && job == current_) task_ = Task::None;
    schedule(ctx);
  }

 private:
  enum class Task : std::uint8_t { None, Training, Inference };
  struct Worker {
    StreamId compute{}, copy{};
  };

  Worker make_worker(Context& ctx, ContextStart start, std::optional<JobId> build = {}) {
    const ContextId c = ctx.streams().create_context(gpu_, ContextOptions{}, start, build);
    // One op in flight on each stream: a preempted training job stops after one layer.
    return Worker{ctx.streams().create_stream(c, StreamOptions{0, 1}),
                  ctx.streams().create_stream(c, StreamOptions{0, 1})};
  }

  /// Moves to the worker that runs the next task; returns the old worker's compute stream
  /// (where the old task's last layer runs) for the switch's critical-path delay.
  StreamId take_next_worker(Context& ctx, JobId job) {
    const StreamId old = workers_.empty() ? StreamId{} : workers_[active_].compute;
    switch (params_.switching) {
      case Switching::ActiveStandby:
        active_ = (active_ + 1) % workers_.size();
        break;
      case Switching::OneContext:
        break;
      case Switching::KillRestart:
        // kill_restart.py: the new process imports the task and builds the model.
        workers_.assign(1, make_worker(ctx, ContextStart::ColdProcess, job));
        active_ = 0;
        break;
    }
    return old;
  }

  /// kill_restart: kills the worker process of the previous task (`active_worker.kill();
  /// join()`); the next one is spawned once it is reaped. Returns whether to wait for that.
  bool retire_worker(Context& ctx) {
    if (params_.switching != Switching::KillRestart || workers_.empty()) return false;
    if (task_ == Task::Training && ctx.job(current_).active()) {
      ctx.preempt(current_, PreemptMode::Kill);
    }
    task_ = Task::None;
    training_gate_ = OpHandle{};
    workers_.clear();
    if (reap_ns_ == 0) return false;
    reaped_at_ = ctx.now() + reap_ns_;
    ctx.set_timer(reap_ns_, kDecideTag);
    return true;
  }

  /// Drops a stopped task's device state and unfinished iteration: a killed process's in
  /// kill_restart, at once in a worker that lives on (the shared pool is overwritten).
  void drop_state(Context& ctx, JobId job) {
    ctx.preempt(job, params_.switching == Switching::KillRestart ? PreemptMode::Kill
                                                                 : PreemptMode::Discard);
  }

  /// The old task stopped, then the switch's messages: a host delay on the old worker's
  /// compute stream (behind the old task's last layer), accounted to the incoming job.
  OpHandle switch_gate(Context& ctx, JobId incoming, StreamId old_compute, DurationNs extra_ns) {
    if (params_.switching == Switching::KillRestart) return OpHandle{};
    return ctx.delay(incoming, old_compute, switch_delay_ns_ + extra_ns);
  }

  // ---- deciding what runs ---------------------------------------------------------------

  void schedule(Context& ctx) {
    if (!has_gpu_ || draining_ || task_ == Task::Inference) return;
    if (ctx.now() < reaped_at_) return;  // a killed worker is being reaped; a timer resumes
    while (!requests_.empty() && !ctx.job(requests_.front()).has_dispatchable_work()) {
      requests_.pop_front();  // a rejected service
    }
    if (!requests_.empty()) {
      if (retire_worker(ctx)) return;
      switch_to_request(ctx);
    } else if (task_ == Task::None) {
      const bool training_left = std::any_of(trainings_.begin(), trainings_.end(),
                                             [&](JobId t) { return ctx.job(t).active(); });
      if (training_left && retire_worker(ctx)) return;
      start_training(ctx);
    }
  }

  void switch_to_request(Context& ctx) {
    const JobId job = requests_.front();
    request_arrival_ns_ = ctx.serving().request_arrival(ctx.job(job).pending_requests().front());
    const bool stopping_training = task_ == Task::Training;
    const JobId stopped = current_;
    if (stopping_training) {
      ctx.preempt(stopped, PreemptMode::DropQueued);
      training_gate_ = OpHandle{};
      task_ = Task::None;
      if (params_.switching == Switching::OneContext) {
        // One process: the training model is unloaded (after its in-flight layer) before the
        // new model is loaded.
        if (ctx.ops_in_flight(stopped, gpu_) > 0) {
          draining_ = true;
          draining_job_ = stopped;
          stop_pending_ = true;
          return;
        }
        drop_state(ctx, stopped);
      }
    }
    if (!make_room(ctx, job)) {
      const bool in_flight = stopping_training && ctx.ops_in_flight(stopped, gpu_) > 0;
      if (in_flight) {  // wait for its last layer, then drop its state (on_op_complete)
        draining_ = true;
        draining_job_ = stopped;
        return;
      }
      for (JobId t : trainings_) {
        if (ctx.job(t).active() && ctx.ops_in_flight(t, gpu_) == 0) {
          drop_state(ctx, t);  // frees its activations too
        }
      }
      if (!make_room(ctx, job)) {
        requests_.pop_front();
        ctx.reject(job, "its model does not fit in GPU memory next to the work in flight");
        schedule(ctx);
        return;
      }
    }
    requests_.pop_front();
    const StreamId old_compute = take_next_worker(ctx, job);
    const OpHandle gate = switch_gate(ctx, job, old_compute, params_.first_issue_ns());
    if ((stopping_training || stop_pending_) && gate.valid()) {
      stop_gate_op_ = gate.op;
      watch_stop_ = true;
    }
    stop_pending_ = false;
    task_ = Task::Inference;
    current_ = job;
    send_and_run(ctx, job, gate);
  }

  void start_training(Context& ctx) {
    const auto it = std::find_if(trainings_.begin(), trainings_.end(),
                                 [&](JobId t) { return ctx.job(t).active(); });
    if (it == trainings_.end()) return;
    const JobId job = *it;
    const StreamId old_compute = take_next_worker(ctx, job);
    const Worker& w = workers_[active_];
    const OpHandle gate = switch_gate(ctx, job, old_compute, 0);
    const JobView t = ctx.job(job);
    const LayerRange all{0, t.model().layer_count()};
    if (!t.resident_or_loading(gpu_, all)) {
      make_room(ctx, job);
      LoadOptions lo;
      lo.pageable = params_.load_pageable();
      lo.per_tensor_malloc = params_.per_allocation;
      if (gate.valid()) lo.after.push_back(gate);
      try {
        ctx.memory().load(job, w.copy, all, lo);
      } catch (const OutOfMemory& e) {
        std::erase(trainings_, job);
        ctx.reject(job, std::string("out of memory loading its state: ") + e.what());
        schedule(ctx);
        return;
      }
    }
    task_ = Task::Training;
    current_ = job;
    training_gate_ = gate;
    pump_training(ctx);
  }

  /// Keeps the running training job's next layers queued behind the one on the GPU.
  void pump_training(Context& ctx) {
    const Worker& w = workers_[active_];
    const JobView t = ctx.job(current_);
    while (task_ == Task::Training && t.active() && t.has_dispatchable_work() &&
           ctx.streams().queued(w.compute) + ctx.streams().in_flight(w.compute) < kTrainingDepth) {
      DispatchOptions o;
      o.layers = params_.train_layers_per_op;
      o.setup_ns = params_.train_sync_ns;
      if (training_gate_.valid()) o.after.push_back(training_gate_);
      try {
        ctx.dispatch(current_, w.compute, o);
      } catch (const OutOfMemory& e) {
        if (t.ops_in_flight() == 0) {
          std::erase(trainings_, current_);
          task_ = Task::None;
          ctx.reject(current_, std::string("out of memory: ") + e.what());
          schedule(ctx);
        }
        return;
      }
      training_gate_ = OpHandle{};
    }
  }

  // ---- the switch itself --------------------------------------------------------------------

  /// Loads the model group by group on the copy stream and queues one compute op per group
  /// on the compute stream (each waits for its own group's copy). In the artifact's form
  /// (`group_transfer: artifact`) the copy stream also carries the controller's host work:
  /// after each copy an event synchronize and the pipe message to the worker (the group may
  /// compute once it arrived), then the Python issue of the next copy; the first issue is in
  /// the switch's gate. one_context and kill_restart move the whole model with one copy and
  /// compute after it (`model.cuda()` in one process, `model.to('cuda')` in a new one).
  void send_and_run(Context& ctx, JobId job, OpHandle gate) {
    const Worker& w = workers_[active_];
    const JobView j = ctx.job(job);
    const auto n = j.model().layer_count();
    const bool whole_unpipelined = params_.switching != Switching::ActiveStandby;
    const GroupStarts& starts = whole_unpipelined ? whole_starts_ : grouping_for(ctx, j);
    const bool messages = params_.artifact_groups();
    LoadOptions base;
    base.pageable = params_.load_pageable();
    base.per_tensor_malloc = params_.per_allocation;
    try {
      std::vector<OpHandle> ready(starts.size());  // what group g's compute waits for
      for (std::size_t g = 0; g < starts.size(); ++g) {
        LoadOptions lo = base;
        if (g == 0 && gate.valid()) lo.after.push_back(gate);
        if (g > 0 && messages && params_.python_copy_ns > 0) {
          ctx.delay(job, w.copy, params_.python_copy_ns);  // the next copy's issue
        }
        const LayerRange range{starts[g], g + 1 < starts.size() ? starts[g + 1] : n};
        ready[g] = ctx.memory().load(job, w.copy, range, lo);
        if (messages) {
          ready[g] = ctx.delay(job, w.copy, params_.event_sync_ns + params_.pipe_message_ns);
        }
      }
      for (std::size_t g = 0; g < starts.size(); ++g) {
        DispatchOptions d;
        d.layers = (g + 1 < starts.size() ? starts[g + 1] : n) - starts[g];
        d.setup_ns = params_.group_setup_ns();
        // Without pipelining, the first group waits for the last copy (and its message).
        if (g == 0 && (params_.grouping == GroupingMode::NoPipeline || whole_unpipelined)) {
          d.after.push_back(ready.back());
        } else if (messages) {
          d.after.push_back(ready[g]);
        }
        const OpHandle h = ctx.dispatch(job, w.compute, d);
        if (g == 0) {
          first_group_op_ = h.op;
          watch_startup_ = true;
        }
      }
    } catch (const OutOfMemory& e) {
      task_ = Task::None;
      ctx.reject(job, std::string("out of memory: ") + e.what());
      schedule(ctx);
    }
  }

  /// Frees room for `job`'s weights and activations by evicting training states that are idle
  /// on the GPU. Returns whether it fits now.
  bool make_room(Context& ctx, JobId job) {
    const auto fits = [&] { return ctx.memory().fits(job, gpu_); };  // placement's own answer
    for (JobId t : trainings_) {
      if (fits()) return true;
      const JobView s = ctx.job(t);
      if (t != job && s.ops_in_flight(gpu_) == 0 && s.resident_bytes(gpu_) > 0) {
        ctx.memory().evict(t, gpu_);  // reloaded when it runs again
      }
    }
    return fits();
  }

  const GroupStarts& grouping_for(Context& ctx, JobView j) {
    const auto key = std::make_pair(j.model().name(), j.spec().batch);
    if (auto it = groupings_.find(key); it != groupings_.end()) return it->second;
    const Model& m = j.model();
    const CostModel& cost = ctx.cost(gpu_);
    const auto layers = inference_layer_costs(m, cost, j.spec().batch);
    const GroupOverheads o =
        group_overheads(cost, params_.group_setup_ns(), params_.group_gap_ns());
    GroupStarts starts;
    switch (params_.grouping) {
      case GroupingMode::PerLayer:
      case GroupingMode::NoPipeline:
        starts = per_layer_starts(layers.size());
        break;
      case GroupingMode::Whole:
        starts = whole_model_starts(layers.size());
        break;
      case GroupingMode::Artifact:
        if (m.has_grouping("pipeswitch")) {
          starts = m.grouping("pipeswitch").starts;
          break;
        }
        [[fallthrough]];
      case GroupingMode::Optimal:
        starts = optimal_grouping(layers, o).starts;
        break;
    }
    ctx.record("pipeswitch.groups", static_cast<double>(starts.size()));
    const DurationNs predicted = params_.grouping == GroupingMode::NoPipeline
                                     ? predicted_sequential_time(layers, starts, o)
                                     : predicted_time(layers, starts, o);
    ctx.record("pipeswitch.predicted_ms", ns_to_ms(predicted));
    return groupings_.emplace(key, std::move(starts)).first->second;
  }

  Params params_;  // group_sync_ns resolved by on_start

  // set-up
  DeviceId gpu_{};
  bool has_gpu_ = false;
  DurationNs switch_delay_ns_ = 0;
  DurationNs reap_ns_ = 0;
  TimeNs reaped_at_ = 0;  // kill_restart: no new worker before the old one is reaped
  const GroupStarts whole_starts_{0};
  std::vector<Worker> workers_;
  std::size_t active_ = 0;
  std::map<std::pair<std::string, std::uint32_t>, GroupStarts> groupings_;

  // what runs
  Task task_ = Task::None;
  JobId current_{};
  OpHandle training_gate_;        // the first training op after a switch waits for it
  std::deque<JobId> requests_;    // one entry per pending request, arrival order
  std::vector<JobId> trainings_;  // arrival order; the first active one runs
  bool draining_ = false;         // a switch waits for draining_job_ to leave the GPU
  JobId draining_job_{};

  // metrics of the switch in progress
  TimeNs request_arrival_ns_ = 0;
  OpId first_group_op_{}, stop_gate_op_{};
  bool watch_startup_ = false, watch_stop_ = false;
  bool stop_pending_ = false;  // a switch waits for the stopped training's last layer
};

GPUMUX_REGISTER_POLICY("pipeswitch", PipeSwitch,
                       "inference preempts training at layer boundaries; pipelined model "
                       "transmission with optimal grouping, unified memory, standby workers");

}  // namespace
}  // namespace gpumux::policies::pipeswitch
