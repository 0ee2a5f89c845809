// Streamed result files: events.jsonl and trace.json written event by event as the Engine
// emits them, through a bounded OutBuf (byte_sink.hpp), so their memory does not grow with
// the run. Both produce exactly the bytes of the whole-log writers they replace
// (EventLog::write_jsonl, and the nlohmann JSON tree trace.json was built as before).
//
// Thread rules: runtime thread only (they are EventSinks). finish() after the last event.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gpumux/api/events.hpp"
#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux {

/// events.jsonl: one JSON object per event and line, fields in a fixed order.
class JsonlEventWriter final : public EventSink {
 public:
  explicit JsonlEventWriter(ByteSink& sink) : out_(sink) {}
  void on_event(const Event& e) override;
  /// Flushes the buffer and finishes the sink (a compressor's tail).
  void finish();
  [[nodiscard]] std::uint64_t bytes() const noexcept { return out_.bytes(); }

 private:
  OutBuf out_;
};

/// trace.json in Chrome's trace-event format (chrome://tracing, ui.perfetto.dev): pid = device
/// (one track per stream), pid 1000 = jobs (one track per job: requests and iterations). Keys
/// come out sorted, as nlohmann's std::map-backed objects wrote them.
class ChromeTraceWriter final : public EventSink {
 public:
  /// `jobs` (for track names) must outlive the writer.
  ChromeTraceWriter(ByteSink& sink, const std::vector<JobSpec>& jobs);
  void on_event(const Event& e) override;
  /// Closes the JSON document, flushes and finishes the sink.
  void finish();
  [[nodiscard]] std::uint64_t bytes() const noexcept { return out_.bytes(); }

 private:
  void begin_object();
  void name_thread(int pid, std::uint32_t tid, std::string_view kind, std::uint64_t n);
  void name_job_thread(std::uint32_t job);
  void put_job_name(std::uint32_t job);
  void put_us(TimeNs t);

  OutBuf out_;
  const std::vector<JobSpec>& jobs_;
  bool first_ = true;
  std::set<std::pair<int, std::uint32_t>> named_threads_;  ///< O(streams + jobs)
  std::set<int> named_procs_;
  std::vector<TimeNs> last_iteration_end_;  ///< per job
};

}  // namespace gpumux
