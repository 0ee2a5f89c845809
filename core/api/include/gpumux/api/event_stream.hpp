// The Engine's event emission: every event goes, in order, to the in-memory EventLog (when
// kept) and to each attached EventSink (streamed events.jsonl and trace.json, the summary
// accumulator). Labels are interned in one deduplicated LabelPool shared with the log, so
// they stay valid in a log moved out of the Engine and interning does not grow per event.
//
// Thread rules: runtime thread only.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "gpumux/api/events.hpp"

namespace gpumux {

class EventStream {
 public:
  EventStream() : labels_(std::make_shared<LabelPool>()), log_(labels_) {}

  void add(const Event& e) {
    if (keep_) log_.add(e);
    for (EventSink* s : sinks_) s->on_event(e);
  }
  std::string_view intern(std::string_view s) { return labels_->intern(s); }

  /// `sink` must outlive the stream's use; sinks see events in the order they were added.
  void add_sink(EventSink& sink) { sinks_.push_back(&sink); }
  /// Whether events are also kept in memory (default: yes). Off, memory does not grow with
  /// the run's events.
  void keep_log(bool keep) noexcept { keep_ = keep; }
  [[nodiscard]] const EventLog& log() const noexcept { return log_; }
  [[nodiscard]] EventLog take_log() noexcept { return std::move(log_); }

 private:
  std::shared_ptr<LabelPool> labels_;
  EventLog log_;
  std::vector<EventSink*> sinks_;
  bool keep_ = true;
};

}  // namespace gpumux
