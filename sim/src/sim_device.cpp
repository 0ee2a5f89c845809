#include "gpumux/sim/sim_device.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpumux/api/events.hpp"
#include "gpumux/model/device_profile.hpp"
#include "gpumux/model/host_link.hpp"
#include "gpumux/sim/kernel_share.hpp"
#include "sim_device_util.hpp"

namespace gpumux {

using sim_device_detail::add_saturated;
using sim_device_detail::positive_finite;

// ---- set-up ----

SimDevice::SimDevice(DeviceId id, DeviceProfile profile, Runtime& runtime)
    : QueuedDevice(id, std::move(profile), "SimDevice"),
      runtime_(runtime),
      last_update_(runtime.now()) {
  // A CPU has no link and no MPS: only the fields the device will use must make sense.
  const bool ok = positive_finite(profile_.concurrent_efficiency) &&
                  (!is_gpu() || (positive_finite(profile_.mps_efficiency) &&
                                 positive_finite(profile_.pageable_factor)));
  if (!ok) {
    throw std::invalid_argument("device profile '" + profile_.name +
                                "': concurrent_efficiency (and for a GPU, mps_efficiency and "
                                "pageable_factor) must be positive");
  }
  h2d_link_gbps_ = copy_link(profile_, OpKind::CopyH2D, false).link_gbps;
  d2h_link_gbps_ = copy_link(profile_, OpKind::CopyD2H, false).link_gbps;
  sim_runtime_ = dynamic_cast<SimRuntime*>(&runtime_);
  if (sim_runtime_ != nullptr) rearmable_ = sim_runtime_->add_timer([this] { on_timer(); });
}

SimDevice::~SimDevice() {
  if (sim_runtime_ != nullptr) {
    sim_runtime_->remove_timer(rearmable_);
  } else if (timer_ns_ != kTimeNever) {
    runtime_.cancel(timer_);
  }
}

void SimDevice::add_context(ContextId ctx, ContextOptions options) {
  QueuedDevice::add_context(ctx, options);  // throws for a duplicate
  std::uint32_t tsg;
  if (options.mps && mps_tsg_ >= 0) {
    tsg = static_cast<std::uint32_t>(mps_tsg_);
  } else {
    tsg = static_cast<std::uint32_t>(tsg_mps_.size());
    tsg_mps_.push_back(options.mps);
    runnable_.push_back(0);
    if (options.mps) mps_tsg_ = tsg;
  }
  context_tsg_.emplace(ctx, tsg);
}

void SimDevice::add_stream(StreamId stream, ContextId ctx, StreamOptions options) {
  check_new_stream(stream, ctx, options);
  StreamState s;
  s.tsg = context_tsg_.at(ctx);
  queues_.add_stream(stream, options, std::move(s));
}

// ---- commands ----

void SimDevice::submit(const OpSpec& op) {
  const std::uint32_t si = queues_.check_submit(op, id_, profile_, observer_, /*models_link=*/true);
  const TimeNs now = runtime_.now();
  // An op on an idle stream becomes its head at once; behind a head it changes no head.
  const bool new_head = queues_.stream(si).issued.empty();
  queues_.enqueue_with(si, [&](OpState& st) {
    st.spec = op;
    st.submitted_ns = now;
    st.started_ns = 0;
    st.phase_end_ns = 0;
    st.finish_ns = 0;
    st.remaining = 0;
    st.rate = 0;
    st.cap = 0;
    st.stream = si;
    st.phase = Phase::Queued;
    st.resource = Resource::None;
  });
  issue(queues_.stream(si));  // so queued()/in_flight() are right at once
  active_.add(si);
  if (new_head) heads_changed_ = true;
  request_evaluate();
}

void SimDevice::dependencies_changed() {
  // Only a head waiting for its dependencies can be unblocked; the engine calls this on every
  // completion anywhere, so skip the evaluation event when nothing waits. waiting_heads_ counts
  // the waiting heads as the last pass left them; every later change of the heads (submit,
  // drop, abort) requested an evaluation, which then either is due now (a request is a no-op)
  // or, inside an evaluation, set dirty_ (so is a request).
  if (!in_evaluate_ && timer_ns_ <= runtime_.now()) return;  // an evaluation is due anyway
  if (waiting_heads_ > 0) {
    heads_changed_ = true;
    request_evaluate();
  }
}

std::size_t SimDevice::remove_job(JobId job, bool issued_too) {
  const TimeNs now = runtime_.now();
  if (issued_too) advance(now);  // bank progress at the old rates before the set changes
  const auto take = [&](std::uint32_t o, OpStatus status) -> std::optional<OpRecord> {
    const OpState& op = queues_.op(o);
    if (op.phase != Phase::Queued) {
      // A start not yet reported (same evaluation) is withdrawn: the op never started.
      for (std::size_t i = delivering_ + 1; i < notices_.size(); ++i) {
        Notice& n = notices_[i];
        if (n.kind == Notice::Kind::Started && n.op == op.spec.id) {
          n.kind = Notice::Kind::Void;
        }
      }
    }
    OpRecord r = make_record(op, status, now);  // every op stops at once: reported now
    queues_.release(o);
    return r;
  };
  return remove_and_report(
      job, issued_too, take, [](OpState& op) { op.phase = Phase::Waiting; },
      [this] {
        heads_changed_ = true;
        request_evaluate();
      });
}

void SimDevice::issue(StreamState& s) {
  queues_.issue(s, [](OpState& op) { op.phase = Phase::Waiting; });
}

void SimDevice::issue_after_completion(StreamState& s, TimeNs now) {
  const TimeNs ready = add_saturated(now, profile_.host_round_trip_ns);
  queues_.issue(s, [ready](OpState& op) {
    op.phase = Phase::Waiting;
    op.phase_end_ns = ready;
  });
}

bool SimDevice::dependencies_met(const OpState& op) const {
  for (const OpId dep : op.spec.after) {
    if (!observer_->is_complete(dep)) return false;
  }
  return true;
}

OpRecord SimDevice::make_record(const OpState& op, OpStatus status, TimeNs now) const {
  const bool started = op.phase == Phase::Latency || op.phase == Phase::Running;
  return op_record(op.spec, status, op.submitted_ns, started ? op.started_ns : now, now);
}

// ---- evaluation ----

void SimDevice::request_evaluate() {
  if (in_evaluate_) {
    dirty_ = true;
    return;
  }
  const TimeNs now = runtime_.now();
  if (timer_ns_ <= now) return;  // already due
  set_timer(now);
}

void SimDevice::on_timer() {
  timer_ns_ = kTimeNever;
  evaluate();
}

void SimDevice::evaluate() {
  if (in_evaluate_) {
    dirty_ = true;
    heads_changed_ = true;
    return;
  }
  in_evaluate_ = true;
  struct Reset {
    SimDevice& d;
    ~Reset() {
      d.in_evaluate_ = false;
      d.notices_.clear();
      d.finished_.clear();
      d.delivering_ = 0;
    }
  } reset{*this};
  const TimeNs now = runtime_.now();
  do {
    dirty_ = false;
    heads_changed_ = false;
    const TimeNs elapsed = now - last_update_;
    last_update_ = now;
    step_streams(now, elapsed > 0 ? static_cast<double>(elapsed) : 0.0);
    if (is_gpu()) update_timeslice(now);
    recompute_rates(now);
    deliver_notices();  // the observer may re-enter: that sets dirty_
    // Another pass at this instant repeats this one exactly (so is skipped) unless a head may
    // change (heads_changed_), an op is due now, or the rates are not a pure function of the
    // running set (the kernel-wait solver's warm start moves on every solve). Ops submitted
    // behind a head, the common re-entry, change nothing a pass reads; the time slice is
    // settled by the pass (update_timeslice is idempotent at one instant).
  } while (dirty_ && (heads_changed_ || !rates_idempotent_ || next_finish_ns_ <= now));
  schedule_next();
}

void SimDevice::advance(TimeNs now) noexcept {
  const TimeNs elapsed = now - last_update_;
  last_update_ = now;
  if (elapsed <= 0) return;
  const double dt = static_cast<double>(elapsed);
  for (const std::uint32_t si : active_.items()) {
    const StreamState& s = queues_.stream(si);
    if (s.issued.empty()) continue;
    OpState& op = queues_.op(s.issued.front());
    if (op.phase != Phase::Running || op.resource == Resource::None || op.rate <= 0.0) continue;
    op.remaining -= dt * op.rate;
    if (op.remaining < 0.0) op.remaining = 0.0;
  }
}

void SimDevice::step_streams(TimeNs now, double dt) {
  // A stream with nothing issued has nothing queued either (issue() runs on every submit and
  // removal), so only the active streams can change. One walk advances each stream's head
  // (what advance() does), steps it, and records what the rest of the pass and
  // schedule_next() need from the new head: the running lists, the earliest phase end, the
  // waiting heads. Stream order throughout, as separate walks had it.
  running_compute_.clear();
  running_h2d_.clear();
  running_d2h_.clear();
  next_phase_end_ = kTimeNever;
  waiting_heads_ = 0;
  for (const std::uint32_t t : runnable_list_) runnable_[t] = 0;
  runnable_list_.clear();
  // One walk: the streams left with nothing issued leave the active set as it goes (nothing
  // in the walk adds a stream: notices are delivered after it).
  active_.retain([&](const std::uint32_t si) {
    StreamState& s = queues_.stream(si);
    if (dt > 0.0 && !s.issued.empty()) {
      OpState& op = queues_.op(s.issued.front());
      if (op.phase == Phase::Running && op.resource != Resource::None && op.rate > 0.0) {
        op.remaining -= dt * op.rate;
        if (op.remaining < 0.0) op.remaining = 0.0;
      }
    }
    step_stream(s, now);
    if (s.issued.empty()) return false;
    const std::uint32_t o = s.issued.front();
    const OpState& op = queues_.op(o);
    switch (op.phase) {
      case Phase::Waiting:
        ++waiting_heads_;
        break;
      case Phase::Setup:
      case Phase::Latency:
        next_phase_end_ = std::min(next_phase_end_, op.phase_end_ns);
        break;
      case Phase::Running:
        switch (op.resource) {
          case Resource::None:
            next_phase_end_ = std::min(next_phase_end_, op.phase_end_ns);
            break;
          case Resource::Compute:
            running_compute_.push_back(Running{o, si});
            if (runnable_[s.tsg] == 0) {  // its TSG has runnable compute (time slicing)
              runnable_[s.tsg] = 1;
              runnable_list_.push_back(s.tsg);
            }
            break;
          case Resource::H2D:
            running_h2d_.push_back(Running{o, si});
            break;
          case Resource::D2H:
            running_d2h_.push_back(Running{o, si});
            break;
        }
        break;
      case Phase::Queued:
        break;
    }
    return true;
  });
}

// Inlined into its one caller: called per stream per pass, its frame cost was ~10% of it.
[[gnu::always_inline]] inline void SimDevice::step_stream(StreamState& s, TimeNs now) {
  // submit() and the removals issue at once, so the issued list is full on entry; only a
  // finished head makes room (issue() after the pop below).
  for (;;) {
    if (s.issued.empty()) return;
    const std::uint32_t o = s.issued.front();
    OpState& op = queues_.op(o);
    if (op.phase == Phase::Waiting) {
      if (!dependencies_met(op)) return;
      op.phase = Phase::Setup;
      // Not before the host could have launched it (issue_after_completion).
      op.phase_end_ns = add_saturated(std::max(now, op.phase_end_ns), op.spec.setup_ns);
    }
    if (op.phase == Phase::Setup) {
      if (op.phase_end_ns > now) return;
      op.started_ns = now;
      notices_.push_back({Notice::Kind::Started, op.spec.id, 0, now, {}});
      switch (op.spec.kind) {
        case OpKind::Host:
          op.phase = Phase::Running;
          op.resource = Resource::None;
          op.phase_end_ns = add_saturated(now, op.spec.solo_ns);
          break;
        case OpKind::Compute:
          op.phase = Phase::Running;
          op.resource = Resource::Compute;
          op.remaining = static_cast<double>(op.spec.solo_ns);
          op.cap = op.spec.demand;
          op.rate = 0.0;
          op.finish_ns = kTimeNever;
          break;
        case OpKind::CopyH2D:
          op.phase = Phase::Latency;
          op.phase_end_ns = add_saturated(now, profile_.h2d_latency_ns);
          break;
        case OpKind::CopyD2H:
        case OpKind::CopyD2D:
          op.phase = Phase::Latency;
          op.phase_end_ns = add_saturated(now, profile_.d2h_latency_ns);
          break;
      }
    }
    if (op.phase == Phase::Latency) {
      if (op.phase_end_ns > now) return;
      op.phase = Phase::Running;
      op.remaining = static_cast<double>(op.spec.bytes);
      op.rate = 0.0;
      op.finish_ns = kTimeNever;
      // H2D has its direction; D2H and D2D (to a peer, through the host side) share D2H.
      op.resource = op.spec.kind == OpKind::CopyH2D ? Resource::H2D : Resource::D2H;
      op.cap = copy_link(profile_, op.spec.kind, op.spec.pageable).own_gbps;
    }
    // Running
    const bool done = op.resource == Resource::None ? op.phase_end_ns <= now
                                                    : (op.remaining <= 0.0 || op.finish_ns <= now);
    if (!done) return;
    notices_.push_back(
        {Notice::Kind::Finished, op.spec.id, static_cast<std::int64_t>(finished_.size()), now, {}});
    // Filled in place: a record built on the stack and copied in 16-byte pieces stalls on
    // store forwarding (its fields were just stored narrower), ~10 % of this walk's time.
    OpRecord& r = finished_.emplace_back();
    r.op = op.spec.id;
    r.job = op.spec.job;
    r.device = op.spec.device;
    r.stream = op.spec.stream;
    r.kind = op.spec.kind;
    r.purpose = op.spec.purpose;
    r.status = OpStatus::Ok;
    r.layers = op.spec.layers;
    r.submitted_ns = op.submitted_ns;
    r.started_ns = op.started_ns;  // make_record's: a running op has started
    r.finished_ns = now;
    s.issued.pop_front();
    queues_.release(o);
    issue_after_completion(s, now);
  }
}

void SimDevice::update_timeslice(TimeNs now) {
  // runnable_ / runnable_list_: marked by step_streams from the running compute heads.
  const bool any = !runnable_list_.empty();
  if (switching_) {
    if (switch_end_ns_ > now) return;
    switching_ = false;
    give_gpu(switch_target_, now);
  }
  if (!any) return;
  if (loaded_ < 0) {  // the first activation is free: the lowest runnable TSG
    give_gpu(*std::min_element(runnable_list_.begin(), runnable_list_.end()), now);
    return;
  }
  // Round robin: the first runnable TSG after the current one, in registration order.
  const std::size_t n = runnable_.size();
  const auto cur = static_cast<std::size_t>(loaded_);
  std::int64_t next = -1;
  std::size_t best = n;  // distance after cur, 1..n-1
  for (const std::uint32_t t : runnable_list_) {
    const std::size_t k = t >= cur ? t - cur : t + n - cur;  // (t + n - cur) % n, no division
    if (k != 0 && k < best) {
      best = k;
      next = t;
    }
  }
  if (next < 0) return;  // nobody else wants the GPU
  const bool expired =
      profile_.timeslice_ns > 0 && now >= add_saturated(slice_start_ns_, profile_.timeslice_ns);
  if (runnable_[cur] == 0 || expired) begin_switch(static_cast<std::uint32_t>(next), now);
}

void SimDevice::begin_switch(std::uint32_t target, TimeNs now) {
  ++context_switches_;
  if (profile_.context_switch_ns <= 0) {
    give_gpu(target, now);
    return;
  }
  switching_ = true;
  switch_target_ = target;
  switch_end_ns_ = add_saturated(now, profile_.context_switch_ns);
  notices_.push_back(
      {Notice::Kind::Note, OpId{}, target, now, to_string(DeviceNoteKind::ContextSwitch)});
}

void SimDevice::give_gpu(std::uint32_t tsg, TimeNs now) {
  loaded_ = tsg;
  slice_start_ns_ = now;
  notices_.push_back({Notice::Kind::Note, OpId{}, tsg, now, to_string(DeviceNoteKind::Timeslice)});
}

void SimDevice::deliver_notices() {
  if (observer_ == nullptr) {  // detached mid-run: nobody to tell
    notices_.clear();
    finished_.clear();
    return;
  }
  bool finished_any = false;
  for (delivering_ = 0; delivering_ < notices_.size(); ++delivering_) {
    // A reference: observers may abort() (which edits later entries only) or submit (which
    // only marks the device dirty); nothing appends to notices_ while they are delivered.
    const Notice& n = notices_[delivering_];
    switch (n.kind) {
      case Notice::Kind::Started:
        observer_->on_op_started(n.op, n.when_ns);
        break;
      case Notice::Kind::Finished:
        finished_any = true;
        observer_->on_op_finished(finished_[static_cast<std::size_t>(n.value)]);
        break;
      case Notice::Kind::Note:
        observer_->on_device_note(id_, n.when_ns, n.what, n.value);
        break;
      case Notice::Kind::Void:
        break;
    }
  }
  notices_.clear();
  finished_.clear();
  delivering_ = 0;
  // An op of this device may wait for one that just finished here. The heads are as the pass
  // left them unless an observer changed them, and a change already set dirty_.
  if (finished_any && waiting_heads_ > 0) {
    dirty_ = true;
    heads_changed_ = true;
  }
}

void SimDevice::schedule_next() {
  // The last pass's heads (no change since, or there would have been another pass): phase
  // ends from step_streams, the earliest completion from recompute_rates.
  TimeNs next = std::min(next_phase_end_, next_finish_ns_);
  if (is_gpu()) {
    if (switching_) {
      next = std::min(next, switch_end_ns_);
    } else if (profile_.timeslice_ns > 0 && loaded_ >= 0 &&
               runnable_[static_cast<std::size_t>(loaded_)] != 0) {
      bool contended = false;
      for (const std::uint32_t t : runnable_list_) {
        contended = contended || static_cast<std::int64_t>(t) != loaded_;
      }
      if (contended) next = std::min(next, add_saturated(slice_start_ns_, profile_.timeslice_ns));
    }
  }
  set_timer(next);
}

void SimDevice::set_timer(TimeNs when_ns) {
  if (when_ns == timer_ns_) return;
  if (sim_runtime_ != nullptr) {  // the same order and count of events as below, no heap work
    timer_ns_ = when_ns;
    if (when_ns != kTimeNever) {
      sim_runtime_->arm_timer(rearmable_, when_ns);
    } else {
      sim_runtime_->disarm_timer(rearmable_);
    }
    return;
  }
  if (timer_ns_ != kTimeNever) runtime_.cancel(timer_);
  timer_ns_ = when_ns;
  if (when_ns != kTimeNever) timer_ = runtime_.schedule_at(when_ns, [this] { on_timer(); });
}

}  // namespace gpumux
