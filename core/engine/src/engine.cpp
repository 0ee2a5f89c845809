// The Engine: the run, and the job state machine driven by device notifications. The facade
// class is declared in engine_impl.hpp (which lists the classes it is built from); policy
// commands are in engine_commands.cpp.
#include "gpumux/engine/engine.hpp"
#include "gpumux/model/cost_model.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/request_variability.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine_impl.hpp"
#include "gpumux/api/seed.hpp"

namespace gpumux {

namespace {

/// Every job's initial state: not arrived, weights resident on CPUs only.
std::vector<JobState> make_states(const std::vector<JobSpec>& specs, const ModelSource& models,
                                  const std::vector<Device*>& devices) {
  std::vector<JobState> states(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    JobState& s = states[i];
    s.id = JobId{static_cast<std::uint32_t>(i)};
    s.spec = &specs[i];
    s.model = &models.at(specs[i].model);
    s.layer_count = s.model->layer_count();
    s.arrival_ns = specs[i].arrival_ns;
    s.iterations_target = specs[i].iterations;  // a tuning trial's is set when it starts
    if (specs[i].dynamic) {
      try {
        specs[i].dynamic->resolve(*s.model);
      } catch (const std::invalid_argument& e) {
        throw Error("job '" + specs[i].name + "': dynamic: " + e.what());
      }
    }
    Placement::init_residency(s, devices);
  }
  return states;
}

}  // namespace

EngineImpl::EngineImpl(Platform& platform, Policy& policy, std::vector<JobSpec> jobs,
                       const ModelSource& models, EngineOptions options)
    : Context(*this, *this, *this, *this),
      platform_(platform),
      runtime_(platform.runtime()),
      policy_(policy),
      models_(models),
      options_(options),
      devices_(platform.devices()),
      specs_(std::move(jobs)),
      states_(make_states(specs_, models_, devices_)),
      events_(runtime_),
      hooks_(policy_, *this),
      placement_(devices_, runtime_, events_),
      sources_(runtime_, states_, events_, hooks_, options.seed),
      tuning_(
          runtime_, states_, events_, hooks_, sources_, options.seed,
          [this](JobState& s) { stop_trial(s); }, [this](JobState& s) { abort_job_ops(s); }),
      serving_(specs_.size(), kExecTimeWindow),
      rng_(derive_seed(options.seed, SeedStream::Policy, 0)) {
  costs_.reserve(devices_.size());
  for (Device* d : devices_) {
    costs_.emplace_back(d->profile(), options_.cost);
    d->set_observer(this);
  }
  for (const CostModel& c : costs_) cost_memos_.emplace_back(c);
  // One warm context per device (ContextId == device index).
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    contexts_.push_back({DeviceId{static_cast<std::uint16_t>(d)}, {}, {}, false});
    if (is_gpu(contexts_.back().device)) gpus_.push_back(contexts_.back().device);
    devices_[d]->add_context(ContextId{static_cast<std::uint32_t>(d)}, {});
  }
}

// ---- running ------------------------------------------------------------------------------

RunResult EngineImpl::run() {
  events_.run_start(specs_.size(), devices_.size(), policy_.name());
  hooks_.start();
  hooks_.drain();
  sources_.start();
  tuning_.start();
  runtime_.run(options_.horizon_ns);

  tuning_.run_over();
  RunResult result;
  result.end_ns = runtime_.now();
  for (auto& s : states_) {
    if (s.phase == JobPhase::Finished) {
      ++result.jobs_finished;
    } else if (s.phase == JobPhase::Rejected) {
      ++result.jobs_rejected;
    } else {
      ++result.jobs_unfinished;
      const bool cut = options_.horizon_ns != kTimeNever && runtime_.now() >= options_.horizon_ns;
      events_.job_end(s.id, cut ? EndReason::Horizon : EndReason::Unfinished);
    }
  }
  result.runtime_events = runtime_.events_executed();
  events_.run_end(result.runtime_events);
  return result;
}

// ---- device notifications -------------------------------------------------------------------

void EngineImpl::on_op_started(OpId op, TimeNs when_ns) {
  const OpInfo& info = ops_[index_of(op)];
  events_.op_started(op, info, when_ns);
  if (info.job != kSystemJob) {
    JobState& s = states_[index_of(info.job)];
    if (s.first_start_ns < 0) s.first_start_ns = when_ns;
  }
}

void EngineImpl::on_op_finished(const OpRecord& r) {
  if (index_of(r.op) < ops_.base() || ops_[index_of(r.op)].finished) {
    throw Error("device reported op " + std::to_string(raw(r.op)) + " twice");
  }
  OpInfo& slot = ops_[index_of(r.op)];
  // An op that took no time: a cycle of them, with no input consumed, never ends the run.
  if (r.status == OpStatus::Ok && r.finished_ns == r.started_ns &&
      stall_guard_.zero_length_op(runtime_.now(), sources_.inputs_consumed())) [[unlikely]] {
    fail_stalled_clock(slot);
  }
  // A copy: an op submitted from here on may release this one from the table. Taken before
  // the flags are stored (copied right after them, it would stall on store forwarding).
  OpInfo info = slot;
  slot.finished = info.finished = true;
  slot.complete = info.complete = r.status == OpStatus::Ok;

  // The device's own end time (as OpStart uses its start time): a real GPU reports an op
  // some microseconds after it ended, when the next op of the stream may already have
  // started. In the simulator the two are equal.
  events_.op_ended(r.op, info, r.status, r.started_ns, std::min(runtime_.now(), r.finished_ns));

  if (info.job != kSystemJob) {
    JobState& s = states_[index_of(info.job)];
    if (info.counts_in_flight) {
      --s.ops_in_flight;
      --s.residency[index_of(info.device)].ops_in_flight;
    }
    DeviceResidency& res = s.residency[index_of(info.device)];
    if (r.status == OpStatus::Ok) {
      ++s.ops_completed;
      switch (info.purpose) {
        case OpPurpose::LoadWeights:
          Placement::mark_loaded(s, info.device, info.layers, r.op);
          hooks_.op_complete(info.job, r);
          break;
        case OpPurpose::MigrateState: {
          // Source state is released; the destination becomes resident.
          placement_.release_weights(s, info.migrate_from);
          placement_.release_activations(s, info.migrate_from);
          Placement::mark_loaded(s, info.migrate_to, LayerRange{0, s.layer_count}, r.op);
          hooks_.op_complete(info.job, r);
          break;
        }
        case OpPurpose::Forward:
        case OpPurpose::Backward:
        case OpPurpose::Update:
          s.attained_ns += r.finished_ns - r.started_ns;
          s.unit_device_ns += r.finished_ns - r.started_ns;
          // A replica's op ends in any order with the others': only the primary's moves the
          // cursor, and an iteration on several GPUs ends at its barrier.
          if (!info.replica) s.completed = info.after;
          // The op's own hook comes first, then the unit's and the job's.
          hooks_.op_complete(info.job, r);
          if (info.ends_unit) complete_unit(s, r, info.batch_requests);
          break;
        case OpPurpose::Barrier:
          if (info.ends_unit) s.completed = info.after;
          hooks_.op_complete(info.job, r);
          if (info.ends_unit) complete_unit(s, r, 1);
          break;
        default:
          hooks_.op_complete(info.job, r);
          break;
      }
    } else {
      if (r.status == OpStatus::Aborted && !in_abort_) {
        // A late abort report: the kill already rewound the job; the device let go of the
        // op's memory now (device.hpp, abort semantics).
        placement_.unpark(info.job, info.device);
        if (s.done() && res.ops_in_flight == 0) placement_.release_weights(s, info.device);
      } else {
        rewind(s, info, r.status == OpStatus::Aborted);
      }
      if (!s.done()) hooks_.op_complete(info.job, r);
    }
  }
  for (Device* d : devices_) d->dependencies_changed();
  hooks_.drain();
}

void EngineImpl::complete_unit(JobState& s, const OpRecord& r, std::uint32_t requests) {
  const DurationNs unit_ns = s.unit_device_ns;
  s.unit_device_ns = 0;
  if (s.training()) {
    ++s.iterations_done;
    events_.iteration_end(s.id, s.iterations_done);
    if (s.spec->trial) {
      // A trial's tuner decides at each epoch's end; at its budget it is paused or stopped,
      // never finished here.
      // Its stops abort ops, whose reports drain the hook queue: no hook may run before the
      // tuner's whole answer is applied (a policy would dispatch a job about to be stopped).
      const HookQueue::Hold hold(hooks_);
      tuning_.iteration_done(s);
      if (!s.done()) hooks_.iteration_end(s.id, r);
    } else if (s.iterations_done >= s.iterations_target) {
      finish_job(s, EndReason::Finished);
    } else {
      hooks_.iteration_end(s.id, r);
    }
  } else {
    // The batch's time and each member's own work feed the online estimates (D38).
    const std::size_t job = index_of(s.id);
    serving_.add_batch(job, requests, unit_ns);
    RequestSources::Completed done{};
    for (std::uint32_t i = 0; i < requests; ++i) {
      const RequestId req = s.pending_requests.front();
      serving_.add_request(job, request_solo_ns(s, sources_.work_of(req), r.device));
      done = sources_.complete_request(s);
      hooks_.request_complete(s.id, done.request, r);
    }
    if (!done.more) finish_job(s, EndReason::Finished);
  }
  // Activations are released when nothing further of the job is dispatched (on every
  // replica of a job on several GPUs).
  if (!s.done() && s.dispatched == s.completed) {
    if (s.replica_devices.empty()) {
      placement_.release_activations(s, r.device);
    } else {
      for (const DeviceId d : s.replica_devices) placement_.release_activations(s, d);
    }
  }
}

void EngineImpl::finish_job(JobState& s, EndReason how, std::string_view detail) {
  // A stopped trial is done, not rejected (its memory goes as a finished job's).
  s.phase = how == EndReason::Rejected ? JobPhase::Rejected : JobPhase::Finished;
  s.finish_ns = runtime_.now();
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const DeviceId dev{static_cast<std::uint16_t>(d)};
    placement_.release_activations(s, dev);
    if (s.residency[d].ops_in_flight == 0) placement_.release_weights(s, dev);
  }
  ++done_jobs_;
  events_.job_end(s.id, how, detail);
  if (s.phase == JobPhase::Finished) hooks_.job_finish(s.id);
}

void EngineImpl::abort_job_ops(JobState& s) {
  in_abort_ = true;
  for (Device* d : devices_) d->abort(s.id);
  in_abort_ = false;
  forget_last_ops(s);
}

void EngineImpl::forget_last_ops(JobState& s) noexcept {
  s.has_last_op = false;
  std::fill(s.replica_has_last.begin(), s.replica_has_last.end(), false);
}

void EngineImpl::stop_trial(JobState& s) {
  if (s.phase == JobPhase::NotArrived) {
    s.phase = JobPhase::Finished;
    s.finish_ns = runtime_.now();
    ++done_jobs_;
    events_.job_end(s.id, EndReason::Stopped);
    return;
  }
  abort_job_ops(s);
  finish_job(s, EndReason::Stopped);
}

void EngineImpl::rewind(JobState& s, const OpInfo& info, bool lose_unit) {
  switch (info.purpose) {
    case OpPurpose::Forward:
    case OpPurpose::Backward:
    case OpPurpose::Update:
    case OpPurpose::AllReduce:
    case OpPurpose::Barrier:
      if (info.before < s.dispatched) {
        s.dispatched = info.before;
        s.open_batch = info.batch_requests;  // the unit at the cursor keeps its batch
      }
      if (lose_unit) {
        s.dispatched = progress::unit_start(s.completed);
        s.completed = s.dispatched;
        s.unit_device_ns = 0;
      }
      break;
    case OpPurpose::LoadWeights:
      Placement::mark_load_failed(s, info.device, info.layers);
      placement_.release_load(s, info.device, info.load_allocation);
      break;
    case OpPurpose::MigrateState: {
      // The copy never happened: the state stays where it was.
      const DeviceId dst = info.migrate_to;
      placement_.mark_migration_failed(s, dst);
      if (is_gpu(dst)) placement_.release_weights(s, dst);
      if (s.device == dst) s.device = info.migrate_from;
      break;
    }
    default:
      break;
  }
}

void EngineImpl::fail_stalled_clock(const OpInfo& info) const {
  const DeviceProfile& profile = devices_[index_of(info.device)]->profile();
  std::string op = "a " + std::string(to_string(info.purpose)) + " op";
  if (info.layers.last > info.layers.first) {
    op += " over layers " + std::to_string(info.layers.first) + "-" +
          std::to_string(info.layers.last - 1);
  }
  const std::string where = info.job == kSystemJob
                                ? std::string("device start-up")
                                : "job '" + states_[index_of(info.job)].spec->name + "'";
  const std::string problem =
      op + " takes 0 ns on device " + std::to_string(raw(info.device)) + " (profile '" +
      profile.name + "'), and " + std::to_string(ClockStallGuard::kMaxZeroLengthOps) +
      " ops of zero length completed at " + std::to_string(runtime_.now()) +
      " ns with no job or request arriving: the simulated clock cannot advance, so the run "
      "would never reach its horizon. The costs of this model on this profile are all zero; "
      "give the model FLOPs or bytes, or the profile a kernel launch cost (kernels.launch_ns)";
  if (info.job == kSystemJob)
    throw TraceError("device profile '" + profile.name + "'", where, problem);
  const std::string& model = states_[index_of(info.job)].spec->model;
  throw TraceError(models_.origin(model), where + " (model '" + model + "')", problem);
}

// ------------------------------------------------------------------------------------------

Engine::Engine(Platform& platform, Policy& policy, std::vector<JobSpec> jobs,
               const ModelSource& models, EngineOptions options)
    : impl_(std::make_unique<EngineImpl>(platform, policy, std::move(jobs), models, options)) {}
Engine::~Engine() = default;
RunResult Engine::run() {
  return impl_->run();
}
const EventLog& Engine::log() const noexcept {
  return impl_->log();
}
EventLog Engine::take_log() noexcept {
  return impl_->take_log();
}
void Engine::add_sink(EventSink& sink) {
  impl_->events().add_sink(sink);
}
void Engine::keep_log(bool keep) noexcept {
  impl_->events().keep_log(keep);
}
const std::vector<JobSpec>& Engine::jobs() const noexcept {
  return impl_->jobs();
}

}  // namespace gpumux
