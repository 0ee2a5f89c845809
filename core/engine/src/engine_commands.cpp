// The Engine's policy commands (Context, declared in engine_impl.hpp): each checks what the
// policy asks, updates the job's state and placement, and submits ops to the devices.
// Every check comes before the first side effect (D21): a refused command (PolicyError)
// leaves memory, residency, job state and the event log as they were. Only OutOfMemory comes
// after the checks, from the command's one allocation, before anything else is changed (but
// migrate, which first drops the destination's stale partial copies to make room).
#include <algorithm>
#include <cmath>
#include <string>

#include "command_helpers.hpp"
#include "engine_impl.hpp"
#include "gpumux/model/device_profile.hpp"

namespace gpumux {

JobState& EngineImpl::active_job(JobId id, const char* command) {
  check_job(id, command);
  JobState& s = states_[index_of(id)];
  if (s.phase == JobPhase::NotArrived)
    fail(command, "job " + job_label(*s.spec) + " has not arrived");
  if (s.done())
    fail(command, "job " + job_label(*s.spec) + " is " + std::string(to_string(s.phase)));
  return s;
}

OpId EngineImpl::new_op(OpSpec& spec, const OpInfo& info) {
  spec.id = OpId{ops_.size()};
  ops_.push_back(info);
  OpInfo& slot = ops_[index_of(spec.id)];
  slot.submitted_ns = runtime_.now();
  events_.op_submitted(spec.id, slot);
  if (info.job != kSystemJob && info.counts_in_flight) {
    JobState& s = states_[index_of(info.job)];
    ++s.ops_in_flight;
    ++s.residency[index_of(info.device)].ops_in_flight;
    if (s.phase == JobPhase::Waiting) s.phase = JobPhase::Running;
  }
  devices_[index_of(info.device)]->submit(spec);
  return spec.id;
}

void EngineImpl::add_dep(OpSpec& spec, OpId dep, const char* command) const {
  if (is_complete(dep)) return;
  for (OpId d : spec.after) {
    if (d == dep) return;
  }
  if (spec.after.size() >= DepList::kCapacity) {
    fail(command, "an op may wait for at most " + std::to_string(DepList::kCapacity) +
                      " unfinished ops; dispatch fewer layers at a time");
  }
  spec.after.add(dep);
}

void EngineImpl::check_issued(const std::vector<OpHandle>& after, const char* command) const {
  for (const OpHandle& h : after) {
    if (h.valid() && index_of(h.op) >= ops_.size()) [[unlikely]]
      fail(command, "waits for op " + std::to_string(raw(h.op)) + ", which was never issued (" +
                        std::to_string(ops_.size()) + " ops issued so far)");
  }
}

void EngineImpl::add_context_dep(OpSpec& spec, StreamId stream, const char* command) const {
  const ContextInfo& ctx = contexts_[index_of(streams_[index_of(stream)].context)];
  if (ctx.has_start_op) add_dep(spec, ctx.start_op, command);
}

OpHandle EngineImpl::load(JobId job, StreamId copy_stream, LayerRange range, LoadOptions options) {
  JobState& s = active_job(job, "load");
  check_stream(copy_stream, "load");
  const DeviceId device = streams_[index_of(copy_stream)].device;
  if (!is_gpu(device)) fail("load", "device " + std::to_string(raw(device)) + " is not a GPU");
  if (range.empty() || range.last > s.model->layer_count()) {
    fail("load", "bad layer range [" + std::to_string(range.first) + ", " +
                     std::to_string(range.last) + ") for job " + job_label(*s.spec));
  }
  auto& res = s.residency[index_of(device)];
  for (std::uint32_t i = range.first; i < range.last; ++i) {
    if (res.layers[i] != Residency::Absent) {
      fail("load", "layer " + std::to_string(i) + " of job " + job_label(*s.spec) +
                       " is already on device " + std::to_string(raw(device)));
    }
  }
  check_issued(options.after, "load");

  OpSpec spec = op_spec(job, device, copy_stream, OpKind::CopyH2D, OpPurpose::LoadWeights);
  spec.model = s.model;
  spec.layers = range;
  spec.bytes = progress::load_bytes(s, range);
  spec.pageable = options.pageable;
  add_context_dep(spec, copy_stream, "load");
  for (const OpHandle& h : options.after) {
    if (h.valid()) add_dep(spec, h.op, "load");
  }

  // Every check passed: only now allocate the weights (may throw OutOfMemory).
  const std::size_t allocation = placement_.place_weights(s, device, range);
  const Allocation a = res.allocations[allocation];
  spec.weight_offset = a.offset;
  spec.layer_offsets = res.offsets.data();
  if (options.per_tensor_malloc) {
    const std::uint64_t tensors = std::max<std::uint64_t>(1, s.model->tensors(range));
    spec.setup_ns =
        saturating_mul(static_cast<std::int64_t>(tensors),
                       devices_[index_of(device)]->profile().malloc_ns(a.bytes / tensors));
  }
  OpInfo info = OpInfo::of(spec);
  info.counts_in_flight = true;
  info.load_allocation = allocation;
  const OpId id{ops_.size()};
  Placement::mark_loading(s, device, range, id);
  if (s.phase == JobPhase::Waiting) s.phase = JobPhase::Running;
  new_op(spec, info);
  return OpHandle{id, true};
}

void EngineImpl::evict(JobId job, DeviceId device) {
  // A finished job's memory is the engine's to free; nothing is placed before arrival.
  JobState& s = active_job(job, "evict");
  check_device(device, "evict");
  if (!is_gpu(device)) {
    fail("evict", "device " + std::to_string(raw(device)) +
                      " is not a GPU (a job's state in host memory is never evicted)");
  }
  auto& res = s.residency[index_of(device)];
  if (res.ops_in_flight > 0) {
    fail("evict", "job " + job_label(*s.spec) + " still has " + std::to_string(res.ops_in_flight) +
                      " ops in flight on device " + std::to_string(raw(device)));
  }
  placement_.release_weights(s, device);  // nothing held there: a no-op (policy.hpp)
}

OpHandle EngineImpl::migrate(JobId job, DeviceId to, StreamId copy_stream) {
  JobState& s = active_job(job, "migrate");
  check_device(to, "migrate");
  check_stream(copy_stream, "migrate");
  const DeviceId from = s.device;
  if (s.width() > 1) {
    fail("migrate", "job " + job_label(*s.spec) + " trains on " + std::to_string(s.width()) +
                        " GPUs (resize it instead)");
  }
  if (to == from) fail("migrate", "job " + job_label(*s.spec) + " is already on that device");
  const LayerRange all{0, s.model->layer_count()};
  if (!s.resident_or_loading(from, all)) {
    fail("migrate",
         "job " + job_label(*s.spec) + " has no state on device " + std::to_string(raw(from)));
  }
  const DeviceId stream_dev = streams_[index_of(copy_stream)].device;
  OpKind kind;
  if (is_gpu(from) && is_gpu(to)) {
    kind = OpKind::CopyD2D;
  } else if (is_gpu(from)) {
    kind = OpKind::CopyD2H;
  } else if (is_gpu(to)) {
    kind = OpKind::CopyH2D;
  } else {
    fail("migrate", "CPU to CPU migration is not supported");
  }
  const DeviceId expected = kind == OpKind::CopyH2D ? to : from;
  if (stream_dev != expected) {
    fail("migrate", "the copy stream must be on device " + std::to_string(raw(expected)));
  }
  auto& dst = s.residency[index_of(to)];
  const auto& src = s.residency[index_of(from)];
  OpSpec spec = op_spec(job, stream_dev, copy_stream, kind, OpPurpose::MigrateState);
  spec.model = s.model;
  spec.layers = all;
  spec.bytes = progress::load_bytes(s, all);
  spec.peer = to;
  add_context_dep(spec, copy_stream, "migrate");
  if (s.has_last_op) add_dep(spec, s.last_op, "migrate");
  for (std::uint32_t i = 0; i < all.last; ++i) {
    if (src.layers[i] == Residency::Loading) add_dep(spec, src.loading_op[i], "migrate");
  }

  // Every check passed: only now place the state (drops stale partial copies first; the
  // allocation may throw OutOfMemory).
  if (is_gpu(to)) placement_.place_state(s, to);
  spec.layer_offsets = dst.offsets.data();
  if (is_gpu(to)) spec.weight_offset = dst.offsets[0];
  if (is_gpu(from)) spec.source_offset = src.offsets[0];
  OpInfo info = OpInfo::of(spec);
  info.counts_in_flight = true;
  info.migrate_from = from;
  info.migrate_to = to;
  const OpId id{ops_.size()};
  Placement::mark_loading(s, to, all, id);
  s.device = to;
  events_.migrate(job, from, to, spec.bytes);
  new_op(spec, info);
  s.last_op = id;
  s.has_last_op = true;
  return OpHandle{id, true};
}

std::size_t EngineImpl::preempt(JobId job, PreemptMode mode) {
  JobState& s = active_job(job, "preempt");
  const bool aborting = mode != PreemptMode::DropQueued;
  if (!aborting && s.width() > 1) {
    fail("preempt", "job " + job_label(*s.spec) + " trains on " + std::to_string(s.width()) +
                        " GPUs: dropping its queued ops would put its replicas out of step "
                        "(kill it, or resize it)");
  }
  std::size_t n = 0;
  in_abort_ = aborting;
  for (Device* d : devices_) n += aborting ? d->abort(job) : d->drop_pending(job);
  in_abort_ = false;
  if (aborting) {
    // The task is gone: its device memory and the unit in progress are lost. A killed
    // process's memory stays allocated until the process is reaped (the driver frees it when
    // the dying process closes its /dev/nvidia* files, sgl-project/sglang PR 36589): the
    // job's layers are absent at once, the pool gets the memory back later.
    for (std::size_t d = 0; d < devices_.size(); ++d) {
      const DeviceId dev{static_cast<std::uint16_t>(d)};
      const DurationNs reap =
          mode == PreemptMode::Kill && is_gpu(dev) ? devices_[d]->profile().process_reap_ns : 0;
      // Ops the device reported aborted inside abort() are out of the count; the rest are
      // still running there and hold the memory until their late report.
      placement_.abandon(s, dev, reap, s.residency[d].ops_in_flight);
    }
    s.dispatched = progress::unit_start(s.completed);
    s.completed = s.dispatched;
    forget_last_ops(s);
  }
  // The chain continues from the last op that was not dropped.
  if (s.has_last_op && ops_.finished(index_of(s.last_op)) && !ops_.complete(index_of(s.last_op))) {
    const auto before = ops_.last_chain_op_before(index_of(s.last_op), job);
    s.has_last_op = before.has_value();
    if (before) s.last_op = OpId{*before};
  }
  events_.preempt(job, n, mode);
  return n;
}

OpHandle EngineImpl::delay(JobId job, StreamId stream, DurationNs duration_ns) {
  JobState& s = active_job(job, "delay");
  check_stream(stream, "delay");
  if (duration_ns < 0) fail("delay", "negative duration");
  OpSpec spec =
      op_spec(job, streams_[index_of(stream)].device, stream, OpKind::Host, OpPurpose::Other);
  spec.solo_ns = duration_ns;
  if (s.has_last_op) add_dep(spec, s.last_op, "delay");
  OpInfo info = OpInfo::of(spec);
  info.counts_in_flight = true;
  const OpId id = new_op(spec, info);
  return OpHandle{id, true};
}

ContextId EngineImpl::create_context(DeviceId device, ContextOptions options, ContextStart start,
                                     std::optional<JobId> build) {
  check_device(device, "create_context");
  if (build) {
    check_job(*build, "create_context");
    if (start != ContextStart::ColdProcess) {
      fail("create_context",
           "only a cold process builds a job's model (ContextStart::ColdProcess)");
    }
  }
  const ContextId id{static_cast<std::uint32_t>(contexts_.size())};
  contexts_.push_back({device, options, {}, false});
  devices_[index_of(device)]->add_context(id, options);
  const DeviceProfile& p = devices_[index_of(device)]->profile();
  DurationNs cost = 0;
  if (start == ContextStart::NewContext) cost = p.context_create_ns;
  if (start == ContextStart::ColdProcess) {
    // Interpreter + framework import + library init, the context, then the job's model.
    cost = saturating_add(p.process_start_ns, p.context_create_ns);
    if (build) cost = saturating_add(cost, p.model_build_ns(*states_[index_of(*build)].model));
  }
  events_.context_create(device, id, cost, options.mps);
  if (cost > 0) {
    // Start-up runs on a private stream of the new context; its streams wait for it.
    const StreamId setup{static_cast<std::uint32_t>(streams_.size())};
    streams_.push_back({device, id});
    devices_[index_of(device)]->add_stream(setup, id, StreamOptions{0, 1});
    OpSpec spec = op_spec(kSystemJob, device, setup, OpKind::Host, OpPurpose::StartContext);
    spec.solo_ns = cost;
    contexts_.back().start_op = new_op(spec, OpInfo::of(spec));
    contexts_.back().has_start_op = true;
  }
  return id;
}

StreamId EngineImpl::create_stream(ContextId ctx, StreamOptions options) {
  if (index_of(ctx) >= contexts_.size()) fail("create_stream", "unknown context");
  if (options.max_in_flight == 0) fail("create_stream", "max_in_flight must be at least 1");
  const StreamId id{static_cast<std::uint32_t>(streams_.size())};
  const DeviceId device = contexts_[index_of(ctx)].device;
  streams_.push_back({device, ctx});
  devices_[index_of(device)]->add_stream(id, ctx, options);
  return id;
}

TimerId EngineImpl::set_timer(DurationNs delay_ns, std::uint64_t tag) {
  if (delay_ns < 0) fail("set_timer", "negative delay");
  const TimerId id{timers_.size()};
  timer_live_.push_back(true);
  timers_.push_back(runtime_.schedule_after(delay_ns, [this, id, tag] {
    if (!timer_live_[index_of(id)]) return;
    timer_live_[index_of(id)] = false;
    hooks_.timer(id, tag);
    hooks_.drain();
  }));
  return id;
}

void EngineImpl::cancel_timer(TimerId id) {
  if (index_of(id) >= timers_.size()) fail("cancel_timer", "unknown timer");
  if (!timer_live_[index_of(id)]) return;
  timer_live_[index_of(id)] = false;
  runtime_.cancel(timers_[index_of(id)]);
}

void EngineImpl::record(std::string_view metric, double value) {
  // JSON has no NaN or infinity: such a value would make events.jsonl unreadable.
  if (!std::isfinite(value)) [[unlikely]] {
    fail("record", "metric '" + std::string(metric) + "' has a non-finite value (" +
                       (std::isnan(value) ? "NaN"
                        : value > 0       ? "+infinity"
                                          : "-infinity") +
                       ")");
  }
  events_.policy_metric(metric, value);
}

void EngineImpl::reject(JobId job, std::string_view reason) {
  JobState& s = active_job(job, "reject");
  abort_job_ops(s);
  finish_job(s, EndReason::Rejected, reason);
  // A rejected tuning trial has failed: its tuner goes on without it.
  if (s.spec->trial) tuning_.trial_rejected(s, reason);
}

}  // namespace gpumux
