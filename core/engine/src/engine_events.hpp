// The engine's event sink: one typed emitter per thing that happens, each filling the
// positional Event fields (events.hpp documents them per kind) in one place. Events go to
// the EventStream (the kept log and the attached sinks) stamped with the runtime's clock,
// except where a device reports its own time.
//
// Internal to gpumux_engine. Emitters are inline (several run per op). Times in ns.
// Thread rules: runtime thread only.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "gpumux/api/event_stream.hpp"
#include "gpumux/api/events.hpp"
#include "gpumux/api/policy.hpp"
#include "gpumux/api/runtime.hpp"
#include "gpumux/model/memory.hpp"
#include "note_labels.hpp"
#include "op_info.hpp"

namespace gpumux {

class EngineEvents {
 public:
  explicit EngineEvents(const Runtime& runtime) : runtime_(runtime) {}

  [[nodiscard]] EventStream& stream() noexcept { return stream_; }
  [[nodiscard]] const EventStream& stream() const noexcept { return stream_; }

  void run_start(std::size_t jobs, std::size_t devices, std::string_view policy) {
    Event e;
    e.kind = EventKind::RunStart;
    e.a = static_cast<std::int64_t>(jobs);
    e.b = static_cast<std::int64_t>(devices);
    e.label = stream_.intern(policy);
    emit(e);
  }
  void run_end(std::uint64_t runtime_events) {
    Event e;
    e.kind = EventKind::RunEnd;
    e.a = static_cast<std::int64_t>(runtime_events);
    emit(e);
  }
  void job_arrival(JobId job, std::string_view name) {
    Event e;
    e.kind = EventKind::JobArrival;
    e.job = raw(job);
    e.label = stream_.intern(name);
    emit(e);
  }
  /// JobEnd labelled by `reason`; a rejection's label carries the policy's `detail`.
  void job_end(JobId job, EndReason reason, std::string_view detail = {}) {
    Event e;
    e.kind = EventKind::JobEnd;
    e.job = raw(job);
    // A rejection carries the policy's reason; a run that ran out of work says so.
    std::optional<std::string_view> why;
    if (reason == EndReason::Rejected) why = detail;
    if (reason == EndReason::Unfinished) why = "no work left to run";
    e.label = stream_.intern(end_label(reason, why));
    emit(e);
  }
  void request_arrival(JobId job, RequestId request) {
    Event e;
    e.kind = EventKind::RequestArrival;
    e.job = raw(job);
    e.a = static_cast<std::int64_t>(raw(request));
    emit(e);
  }
  void request_end(JobId job, RequestId request, DurationNs latency_ns) {
    Event e;
    e.kind = EventKind::RequestEnd;
    e.job = raw(job);
    e.a = static_cast<std::int64_t>(raw(request));
    e.b = latency_ns;
    emit(e);
  }
  void request_drop(JobId job, RequestId request, DurationNs waited_ns, std::string_view reason) {
    Event e;
    e.kind = EventKind::RequestDrop;
    e.job = raw(job);
    e.a = static_cast<std::int64_t>(raw(request));
    e.b = waited_ns;
    e.label = stream_.intern(reason);
    emit(e);
  }
  void iteration_end(JobId job, std::uint64_t iterations_done) {
    Event e;
    e.kind = EventKind::IterationEnd;
    e.job = raw(job);
    e.a = static_cast<std::int64_t>(iterations_done);
    emit(e);
  }
  void op_submitted(OpId op, const OpInfo& info) { emit(op_event(EventKind::OpSubmit, op, info)); }
  /// At the device's start time `when_ns`.
  void op_started(OpId op, const OpInfo& info, TimeNs when_ns) {
    Event e = op_event(EventKind::OpStart, op, info);
    e.t_ns = when_ns;
    stream_.add(e);
  }
  /// At `end_ns`, the device's end time (which may precede now(): a real GPU reports an op
  /// after it ended).
  void op_ended(OpId op, const OpInfo& info, OpStatus status, TimeNs started_ns, TimeNs end_ns) {
    Event e = op_event(EventKind::OpEnd, op, info);
    e.status = status;
    e.a = started_ns;
    e.t_ns = end_ns;
    stream_.add(e);
  }
  void alloc(JobId job, DeviceId device, const Allocation& a, std::string_view what) {
    emit(memory_event(EventKind::Alloc, job, device, a, what));
  }
  void free(JobId job, DeviceId device, const Allocation& a, std::string_view what) {
    emit(memory_event(EventKind::Free, job, device, a, what));
  }
  void migrate(JobId job, DeviceId from, DeviceId to, std::uint64_t bytes) {
    Event e;
    e.kind = EventKind::Migrate;
    e.job = raw(job);
    e.device = raw(to);
    e.a = static_cast<std::int64_t>(bytes);
    e.b = raw(from);
    emit(e);
  }
  void preempt(JobId job, std::size_t ops_dropped, PreemptMode mode) {
    Event e;
    e.kind = EventKind::Preempt;
    e.job = raw(job);
    e.a = static_cast<std::int64_t>(ops_dropped);
    e.label = stream_.intern(mode == PreemptMode::Kill      ? "kill"
                             : mode == PreemptMode::Discard ? "discard"
                                                            : "drop_queued");
    emit(e);
  }
  /// A resize (ReplicaFacet::resize): widths before and after (as "widths": [from, to]), the
  /// iterations rolled back, the stop + restart the job waits for.
  void job_resize(JobId job, DeviceId primary, std::uint32_t from, std::uint32_t to,
                  std::uint64_t rollback_iterations, DurationNs downtime_ns) {
    Event e;
    e.kind = EventKind::JobResize;
    e.job = raw(job);
    e.device = raw(primary);
    e.first_layer = from;
    e.last_layer = to;
    e.a = static_cast<std::int64_t>(rollback_iterations);
    e.b = downtime_ns;
    emit(e);
  }
  void context_create(DeviceId device, ContextId id, DurationNs start_ns, bool mps) {
    Event e;
    e.kind = EventKind::ContextCreate;
    e.device = raw(device);
    e.a = raw(id);
    e.b = start_ns;
    e.label = stream_.intern(mps ? "mps" : "exclusive");
    emit(e);
  }
  /// At the device's time `when_ns`.
  void device_note(DeviceId device, TimeNs when_ns, std::string_view what, std::int64_t value) {
    Event e;
    e.t_ns = when_ns;
    e.kind = EventKind::DeviceNote;
    e.device = raw(device);
    e.a = value;
    e.label = note_labels_.get(what, [this](std::string_view w) { return stream_.intern(w); });
    stream_.add(e);
  }
  /// Trial `trial` (job `job`) finished epoch `epoch` with `metric`; the tuner said `decision`.
  void trial_epoch(JobId job, std::int64_t trial, int epoch, double metric,
                   std::string_view decision) {
    Event e;
    e.kind = EventKind::TrialEpoch;
    e.job = raw(job);
    e.a = epoch;
    e.b = trial;
    e.value = metric;
    e.label = stream_.intern(decision);
    emit(e);
  }
  /// Trial `trial` (job `job`) failed after `epochs_done` epochs; `reason` says why (and its
  /// config).
  void trial_failed(JobId job, std::int64_t trial, int epochs_done, std::string_view reason) {
    Event e;
    e.kind = EventKind::TrialFailed;
    e.job = raw(job);
    e.a = trial;
    e.b = epochs_done;
    e.label = stream_.intern(reason);
    emit(e);
  }
  void tuning_end(std::size_t tuning, bool target_reached, std::string_view name) {
    Event e;
    e.kind = EventKind::TuningEnd;
    e.a = static_cast<std::int64_t>(tuning);
    e.b = target_reached ? 1 : 0;
    e.label = stream_.intern(name);
    emit(e);
  }
  void policy_metric(std::string_view metric, double value) {
    Event e;
    e.kind = EventKind::PolicyMetric;
    e.label = stream_.intern(metric);
    e.value = value;
    emit(e);
  }

 private:
  void emit(Event e) {
    e.t_ns = runtime_.now();
    stream_.add(e);
  }
  static Event op_event(EventKind kind, OpId id, const OpInfo& info) noexcept {
    Event e;
    e.kind = kind;
    e.op_kind = info.kind;
    e.purpose = info.purpose;
    e.job = raw(info.job);
    e.op = raw(id);
    e.device = raw(info.device);
    e.stream = raw(info.stream);
    e.first_layer = info.layers.first;
    e.last_layer = info.layers.last;
    return e;
  }
  Event memory_event(EventKind kind, JobId job, DeviceId device, const Allocation& a,
                     std::string_view what) {
    Event e;
    e.kind = kind;
    e.job = raw(job);
    e.device = raw(device);
    e.a = static_cast<std::int64_t>(a.bytes);
    e.b = static_cast<std::int64_t>(a.offset);
    e.label = stream_.intern(what);
    return e;
  }

  const Runtime& runtime_;
  EventStream stream_;      // the log (when kept) and the attached sinks
  NoteLabels note_labels_;  // device notes' labels, interned in stream_
};

}  // namespace gpumux
