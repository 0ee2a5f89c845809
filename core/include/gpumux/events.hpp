// The canonical record of a run. Every platform emits the same event kinds; events.jsonl is
// this log serialised, and every summary number is computed from it (metrics never come from
// policies or devices directly). Runtime thread only.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <iosfwd>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpumux/ids.hpp"
#include "gpumux/op.hpp"
#include "gpumux/time.hpp"

namespace gpumux {

enum class EventKind : std::uint8_t {
  RunStart,        ///< a = number of jobs
  JobArrival,      ///< job
  RequestArrival,  ///< job, a = request id
  OpSubmit,        ///< op fields
  OpStart,         ///< op fields
  OpEnd,           ///< op fields, status; a = started_ns
  RequestEnd,      ///< job, a = request id, b = latency ns
  IterationEnd,    ///< job, a = iteration ordinal (1-based)
  JobEnd,          ///< job, label = "finished" | "rejected: <reason>" | "horizon"
  Alloc,           ///< device, job, a = bytes, b = offset, label = purpose
  Free,            ///< device, job, a = bytes, b = offset
  ContextCreate,   ///< device, a = context id, b = start cost ns, label = "mps" | "exclusive"
  Preempt,         ///< job, a = ops dropped, label = mode
  Migrate,         ///< job, device = destination, a = bytes
  PolicyMetric,    ///< label = metric name, value = sample
  DeviceNote,      ///< device, label = what (e.g. "timeslice"), a = value
  RunEnd           ///< a = events executed by the runtime
};
[[nodiscard]] std::string_view to_string(EventKind k) noexcept;

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

/// Parses events.jsonl back (for offline summaries of real runs). Throws TraceError.
[[nodiscard]] EventLog read_events_jsonl(const std::string& file);

}  // namespace gpumux
