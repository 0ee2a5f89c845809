// One field table per event kind: what Event's positional members (a, b, value, label, ...)
// mean for that kind, and the JSON key events.jsonl writes each under, in the file's order.
// The JSONL writer and reader, the Chrome trace writer and the summary all decode through it:
// the typed accessors below find their member in the table at compile time, so a kind's
// layout is written down once (kEventLayouts) and a wrong accessor does not compile.
// Everything here is constexpr data and inline functions; any thread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "gpumux/api/events.hpp"

namespace gpumux {

/// The Event member a field lives in.
enum class Slot : std::uint8_t {
  Job,
  Op,
  Device,
  Stream,
  OpKind,
  Purpose,
  Layers,  ///< first_layer and last_layer, written as [first, last]
  Status,
  A,
  B,
  Value,
  Label
};

/// A field is written always, or left out when absent (job == kNoJob, empty label).
enum class Presence : std::uint8_t { Always, Optional };

struct EventField {
  Slot slot = Slot::A;
  std::string_view key;   ///< the JSON key in events.jsonl
  std::string_view name;  ///< what it holds for this kind ("unused": always 0)
  Presence presence = Presence::Always;
};

inline constexpr std::size_t kMaxEventFields = 10;

/// One kind: its name ("ev") and its fields after "t" and "ev", in the file's order.
struct EventLayout {
  EventKind kind = EventKind::RunStart;
  std::string_view name;
  std::array<EventField, kMaxEventFields> fields{};
  std::size_t count = 0;
};

namespace event_fields_detail {

constexpr EventLayout layout(EventKind k, std::string_view name,
                             std::initializer_list<EventField> fields) {
  EventLayout l{k, name, {}, 0};
  for (const EventField& f : fields) l.fields[l.count++] = f;
  return l;
}

constexpr EventField job{Slot::Job, "job", "job", Presence::Optional};
constexpr EventField label(std::string_view name) {
  return {Slot::Label, "label", name, Presence::Optional};
}
constexpr EventField a(std::string_view name) {
  return {Slot::A, "a", name};
}
constexpr EventField b(std::string_view name) {
  return {Slot::B, "b", name};
}
constexpr EventField dev(std::string_view name) {
  return {Slot::Device, "dev", name};
}
constexpr EventField unused_a = a("unused");
constexpr EventField unused_b = b("unused");

// Op events: the op's identity, where it ran and what it did.
constexpr EventField op{Slot::Op, "op", "op"};
constexpr EventField stream{Slot::Stream, "stream", "stream"};
constexpr EventField op_kind{Slot::OpKind, "kind", "op_kind"};
constexpr EventField purpose{Slot::Purpose, "purpose", "purpose"};
constexpr EventField layers{Slot::Layers, "layers", "layers"};

}  // namespace event_fields_detail

/// Indexed by EventKind. Keys and order are those of events.jsonl since its first version.
inline constexpr std::array<EventLayout, kEventKindCount> kEventLayouts = [] {
  namespace d = event_fields_detail;
  using K = EventKind;
  return std::array<EventLayout, kEventKindCount>{
      d::layout(K::RunStart, "run_start",
                {d::a("job_count"), d::b("device_count"), d::label("policy")}),
      d::layout(K::JobArrival, "job_arrival",
                {d::job, d::unused_a, d::unused_b, d::label("job_name")}),
      d::layout(K::RequestArrival, "request_arrival", {d::job, d::a("request"), d::unused_b}),
      d::layout(K::OpSubmit, "op_submit",
                {d::job, d::op, d::dev("device"), d::stream, d::op_kind, d::purpose, d::layers}),
      d::layout(K::OpStart, "op_start",
                {d::job, d::op, d::dev("device"), d::stream, d::op_kind, d::purpose, d::layers}),
      d::layout(K::OpEnd, "op_end",
                {d::job,
                 d::op,
                 d::dev("device"),
                 d::stream,
                 d::op_kind,
                 d::purpose,
                 d::layers,
                 {Slot::Status, "status", "status"},
                 {Slot::A, "start", "started_ns"}}),
      d::layout(K::RequestEnd, "request_end", {d::job, d::a("request"), d::b("latency_ns")}),
      d::layout(K::RequestDrop, "request_drop",
                {d::job, d::a("request"), d::b("waited_ns"), d::label("reason")}),
      d::layout(K::IterationEnd, "iteration_end", {d::job, d::a("iteration"), d::unused_b}),
      d::layout(K::JobEnd, "job_end", {d::job, d::unused_a, d::unused_b, d::label("end")}),
      d::layout(K::Alloc, "alloc",
                {d::job, d::dev("device"), d::a("bytes"), d::b("offset"), d::label("what")}),
      d::layout(K::Free, "free",
                {d::job, d::dev("device"), d::a("bytes"), d::b("offset"), d::label("what")}),
      d::layout(K::ContextCreate, "context_create",
                {d::dev("device"), d::a("context"), d::b("start_cost_ns"), d::label("mode")}),
      d::layout(K::Preempt, "preempt",
                {d::job, d::a("ops_dropped"), d::unused_b, d::label("mode")}),
      d::layout(K::Migrate, "migrate", {d::job, d::dev("to"), d::a("bytes"), d::b("from")}),
      d::layout(K::PolicyMetric, "metric",
                {d::unused_a, d::unused_b, {Slot::Value, "value", "sample"}, d::label("metric")}),
      d::layout(K::DeviceNote, "device_note",
                {d::dev("device"), d::a("value"), d::unused_b, d::label("note")}),
      d::layout(K::TrialEpoch, "trial_epoch",
                {d::job,
                 d::a("epoch"),
                 d::b("trial"),
                 {Slot::Value, "value", "metric"},
                 d::label("decision")}),
      d::layout(K::TrialFailed, "trial_failed",
                {d::job, d::a("trial"), d::b("epochs_done"), d::label("reason")}),
      d::layout(K::TuningEnd, "tuning_end",
                {d::a("tuning"), d::b("target_reached"), d::label("tuning_name")}),
      d::layout(K::JobResize, "job_resize",
                {d::job,
                 d::dev("primary"),
                 {Slot::Layers, "widths", "widths"},
                 d::a("rollback_iterations"),
                 d::b("downtime_ns")}),
      d::layout(K::RunEnd, "run_end", {d::a("runtime_events"), d::unused_b}),
  };
}();

constexpr const EventLayout& layout_of(EventKind k) {
  return kEventLayouts[static_cast<std::size_t>(k)];
}

namespace event_fields_detail {

constexpr bool layouts_in_kind_order() {
  for (std::size_t i = 0; i < kEventLayouts.size(); ++i) {
    if (static_cast<std::size_t>(kEventLayouts[i].kind) != i) return false;
  }
  return true;
}
static_assert(layouts_in_kind_order(), "kEventLayouts must be indexed by EventKind");

/// The slot holding `name` in kind k's table; not constant (so not compiling) when absent.
consteval Slot slot_of(EventKind k, std::string_view name) {
  const EventLayout& l = layout_of(k);
  for (std::size_t i = 0; i < l.count; ++i) {
    if (l.fields[i].name == name) return l.fields[i].slot;
  }
  throw "event field not in the kind's table";
}

template <Slot S>
constexpr std::int64_t get_int(const Event& e) {
  static_assert(S == Slot::A || S == Slot::B, "an integer field lives in a or b");
  if constexpr (S == Slot::A) {
    return e.a;
  } else {
    return e.b;
  }
}

}  // namespace event_fields_detail

// ---- typed accessors (each names its kind; the caller has checked e.kind) ----------------

#define GPUMUX_EVENT_INT(fn, type, kind, field)                                                 \
  [[nodiscard]] constexpr type fn(const Event& e) {                                             \
    return static_cast<type>(                                                                   \
        event_fields_detail::get_int<event_fields_detail::slot_of(EventKind::kind, field)>(e)); \
  }

GPUMUX_EVENT_INT(run_job_count, std::uint64_t, RunStart, "job_count")
GPUMUX_EVENT_INT(request_of, std::uint64_t, RequestEnd, "request")
GPUMUX_EVENT_INT(request_latency_ns, DurationNs, RequestEnd, "latency_ns")
GPUMUX_EVENT_INT(dropped_request_of, std::uint64_t, RequestDrop, "request")
GPUMUX_EVENT_INT(drop_waited_ns, DurationNs, RequestDrop, "waited_ns")
GPUMUX_EVENT_INT(op_started_ns, TimeNs, OpEnd, "started_ns")
GPUMUX_EVENT_INT(iteration_of, std::uint64_t, IterationEnd, "iteration")
GPUMUX_EVENT_INT(alloc_bytes, std::int64_t, Alloc, "bytes")
GPUMUX_EVENT_INT(free_bytes, std::int64_t, Free, "bytes")
GPUMUX_EVENT_INT(context_start_cost_ns, DurationNs, ContextCreate, "start_cost_ns")
GPUMUX_EVENT_INT(trial_epoch_of, int, TrialEpoch, "epoch")
GPUMUX_EVENT_INT(trial_id_of, std::int64_t, TrialEpoch, "trial")
GPUMUX_EVENT_INT(failed_trial_of, std::int64_t, TrialFailed, "trial")
GPUMUX_EVENT_INT(tuning_index_of, std::size_t, TuningEnd, "tuning")
GPUMUX_EVENT_INT(tuning_target_reached, bool, TuningEnd, "target_reached")
GPUMUX_EVENT_INT(resize_rollback_iterations, std::uint64_t, JobResize, "rollback_iterations")
GPUMUX_EVENT_INT(resize_downtime_ns, DurationNs, JobResize, "downtime_ns")
GPUMUX_EVENT_INT(runtime_events_of, std::uint64_t, RunEnd, "runtime_events")
#undef GPUMUX_EVENT_INT

/// A JobEnd event, typed: why the job ended and the label it was written with.
struct JobEndView {
  std::uint32_t job = kNoJob;
  std::optional<EndReason> reason;  ///< nullopt: a label no EndReason names
  std::string_view label;
};
[[nodiscard]] inline JobEndView job_end_of(const Event& e) {
  static_assert(event_fields_detail::slot_of(EventKind::JobEnd, "end") == Slot::Label);
  return {e.job, parse_end_reason(e.label), e.label};
}

/// The note a DeviceNote event carries, if it is one the table names.
[[nodiscard]] inline std::optional<DeviceNoteKind> device_note_of(const Event& e) noexcept {
  static_assert(event_fields_detail::slot_of(EventKind::DeviceNote, "note") == Slot::Label);
  return kDeviceNoteNames.parse(e.label);
}

/// A TrialEpoch event's metric.
[[nodiscard]] inline double trial_metric_of(const Event& e) {
  static_assert(event_fields_detail::slot_of(EventKind::TrialEpoch, "metric") == Slot::Value);
  return e.value;
}

/// A PolicyMetric event's metric name and sample.
[[nodiscard]] inline std::string_view metric_name_of(const Event& e) {
  static_assert(event_fields_detail::slot_of(EventKind::PolicyMetric, "metric") == Slot::Label);
  return e.label;
}
[[nodiscard]] inline double metric_sample_of(const Event& e) {
  static_assert(event_fields_detail::slot_of(EventKind::PolicyMetric, "sample") == Slot::Value);
  return e.value;
}

}  // namespace gpumux
