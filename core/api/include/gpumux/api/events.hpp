// The canonical record of a run. Every platform emits the same event kinds; events.jsonl is
// this log serialised, and every summary number is computed from it (metrics never come from
// policies or devices directly). Runtime thread only.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpumux/api/enum_names.hpp"
#include "gpumux/api/ids.hpp"
#include "gpumux/api/op.hpp"
#include "gpumux/api/time.hpp"

namespace gpumux {

/// What happened. What Event's members hold for each kind, and their keys in events.jsonl, is
/// the kind's field table (kEventLayouts, event_fields.hpp); read them through its accessors.
enum class EventKind : std::uint8_t {
  RunStart,        ///< the run begins
  JobArrival,      ///< a job arrives
  RequestArrival,  ///< a request of a service arrives
  OpSubmit,        ///< an op is handed to its device
  OpStart,         ///< an op starts on its device
  OpEnd,           ///< an op ends: ran, dropped or aborted
  RequestEnd,      ///< a request is served
  RequestDrop,     ///< a request is dropped by the policy, unserved (D38)
  IterationEnd,    ///< a training iteration completes
  JobEnd,          ///< a job ends (EndReason)
  Alloc,           ///< device memory is placed for a job
  Free,            ///< device memory of a job is released
  ContextCreate,   ///< a device context is created
  Preempt,         ///< a job's queued or running ops are dropped
  Migrate,         ///< a job's state moves to another device
  PolicyMetric,    ///< a policy records a sample
  DeviceNote,      ///< a device reports something (DeviceNoteKind)
  TrialEpoch,      ///< a tuning trial finished an epoch: its metric and the tuner's decision
  TrialFailed,     ///< a tuning trial could not run (it was rejected, e.g. out of memory)
  TuningEnd,       ///< a tuning job is over (its target reached or its budget spent)
  JobResize,       ///< a training job is resized: stopped, rolled back, restarted (Context)
  RunEnd           ///< the run ends
};
inline constexpr std::size_t kEventKindCount = static_cast<std::size_t>(EventKind::RunEnd) + 1;
/// The kind's name in events.jsonl ("ev"), from the field table (event_fields.hpp).
[[nodiscard]] std::string_view to_string(EventKind k) noexcept;

/// Why a job ended. A JobEnd event's label is the reason's name, followed for a rejection or
/// an unfinished job by ": <detail>" ("rejected: out of memory").
enum class EndReason : std::uint8_t {
  Finished,    ///< all its work done
  Rejected,    ///< the policy rejected it (Context::reject)
  Horizon,     ///< the run's horizon cut it off
  Unfinished,  ///< the run ran out of events with work of it left
  Stopped,     ///< a tuning trial its tuner stopped, or left when its tuning ended: done, not
               ///< rejected
};
/// One name table serves to_string and parsing.
inline constexpr EnumNames<EndReason, 5> kEndReasonNames{{
    {EndReason::Finished, "finished"},
    {EndReason::Rejected, "rejected"},
    {EndReason::Horizon, "horizon"},
    {EndReason::Unfinished, "unfinished"},
    {EndReason::Stopped, "stopped"},
}};
[[nodiscard]] std::string_view to_string(EndReason r) noexcept;
/// The reason named by a JobEnd label ("<reason>" or "<reason>: <detail>"); nullopt if the
/// label names none.
[[nodiscard]] std::optional<EndReason> parse_end_reason(std::string_view label) noexcept;
/// The JobEnd label: the reason's name, then ": <detail>" when a detail is given (even an
/// empty one: a rejection without a reason is "rejected: ").
[[nodiscard]] std::string end_label(EndReason r, std::optional<std::string_view> detail = {});

/// What a DeviceNote says. Devices pass the note's name as text (device.hpp); these are the
/// notes the summary counts.
enum class DeviceNoteKind : std::uint8_t {
  Timeslice,      ///< a TSG got the GPU (a = TSG index)
  ContextSwitch,  ///< a paid context switch began (a = target TSG)
};
inline constexpr EnumNames<DeviceNoteKind, 2> kDeviceNoteNames{{
    {DeviceNoteKind::Timeslice, "timeslice"},
    {DeviceNoteKind::ContextSwitch, "context_switch"},
}};
[[nodiscard]] std::string_view to_string(DeviceNoteKind k) noexcept;

inline constexpr std::uint32_t kNoJob = 0xffffffffu;

struct Event {
  TimeNs t_ns = 0;
  EventKind kind = EventKind::RunStart;
  OpKind op_kind = OpKind::Compute;
  OpPurpose purpose = OpPurpose::Other;
  OpStatus status = OpStatus::Ok;
  std::uint32_t job = kNoJob;
  std::uint64_t op = 0;
  std::uint16_t device = 0;
  std::uint32_t stream = 0;
  std::uint32_t first_layer = 0, last_layer = 0;
  std::int64_t a = 0, b = 0;
  double value = 0;
  std::string_view label;  ///< interned in a LabelPool; stable while the pool lives

  /// Field by field (the label by content): a log read back equals the one written.
  friend bool operator==(const Event&, const Event&) = default;
};

/// Where the Engine's events go as they happen (event_stream.hpp fans them out): the in-memory
/// EventLog, the streamed events.jsonl and trace.json writers, the summary accumulator. A sink
/// sees every event once, in emission order, on the runtime thread; it may throw (a write
/// error), which ends the run.
class EventSink {
 public:
  virtual ~EventSink() = default;
  virtual void on_event(const Event& e) = 0;
};

/// Deduplicated label strings: each distinct label is stored once, so interning the same
/// label per event does not grow memory. Views stay valid while the pool lives (set nodes
/// never move). Shared by an EventLog and the Engine that fills it.
class LabelPool {
 public:
  std::string_view intern(std::string_view s) {
    // Devices intern the same few note labels over and over ("timeslice", "context_switch"
    // alternate): the last few labels answer that without a tree walk; any other is looked up
    // by view, and a string is built only for a new one.
    for (const std::string_view r : recent_) {
      if (r.size() == s.size() && r.data() != nullptr && r == s) return r;
    }
    const auto it = strings_.find(s);
    const std::string_view v =
        it != strings_.end() ? std::string_view(*it) : *strings_.emplace(s).first;
    recent_[next_recent_] = v;
    next_recent_ = (next_recent_ + 1) % recent_.size();
    return v;
  }
  [[nodiscard]] std::size_t size() const noexcept { return strings_.size(); }

 private:
  std::set<std::string, std::less<>> strings_;
  std::array<std::string_view, 4> recent_{};  ///< views into strings_ (null: unused)
  std::size_t next_recent_ = 0;
};

/// Append-only in-memory log.
class EventLog final : public EventSink {
 public:
  // Labels are views into the pool, which the log shares (an Engine's stream interns into the
  // same pool); a copy is not needed, so the log is move-only (moving a deque keeps its
  // elements in place).
  EventLog() : labels_(std::make_shared<LabelPool>()) {}
  explicit EventLog(std::shared_ptr<LabelPool> labels) : labels_(std::move(labels)) {}
  EventLog(EventLog&&) noexcept = default;
  EventLog& operator=(EventLog&&) noexcept = default;
  EventLog(const EventLog&) = delete;
  EventLog& operator=(const EventLog&) = delete;

  void add(const Event& e) { events_.push_back(e); }
  void on_event(const Event& e) override { events_.push_back(e); }
  /// Returns a view of a copy of `s` that lives as long as the log.
  std::string_view intern(std::string_view s) { return labels_->intern(s); }
  /// Events in emission order. A deque: appending never moves the events already logged
  /// (a vector's regrowth copies and page-faults its way through millions of them).
  [[nodiscard]] const std::deque<Event>& events() const noexcept { return events_; }
  [[nodiscard]] std::size_t size() const noexcept { return events_.size(); }

  /// One JSON object per line, fields in a fixed order (byte-identical for identical logs).
  void write_jsonl(std::ostream& out) const;

 private:
  std::deque<Event> events_;
  std::shared_ptr<LabelPool> labels_;
};

}  // namespace gpumux
