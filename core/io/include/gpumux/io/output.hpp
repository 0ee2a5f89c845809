// A run's result files: config.resolved.json, events.jsonl, summary.json, summary.csv,
// trace.json and run.json, written through a ResultWriter (result_dir.hpp), which makes the
// folder appear under its final name only when complete and never replaces a user's files.
// events.jsonl and trace.json are streamed while the run goes (StreamedOutputs); the rest is
// written after it.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpumux/api/events.hpp"
#include "gpumux/io/byte_sink.hpp"
#include "gpumux/io/event_writers.hpp"
#include "gpumux/io/result_writer.hpp"
#include "gpumux/io/workload.hpp"

namespace gpumux {

struct RunOutputs {
  nlohmann::json run_info;  ///< git revision, platform description, seed, build flags
  nlohmann::json summary;   ///< summary.json's content (SummaryAccumulator)
  nlohmann::json identity;  ///< merged into the folder's marker (config fingerprint, version)
};

/// events.jsonl and trace.json (each optional, each optionally compressed: events.jsonl.gz,
/// trace.json.zst, ...) written into the writer's temporary folder as the events arrive. Attach
/// sinks() to the Engine before it runs and call finish() after; memory is bounded (one buffer
/// and one compressor per file). Runtime thread only.
class StreamedOutputs {
 public:
  /// `writer` and `jobs` must outlive this object.
  StreamedOutputs(ResultWriter& writer, const std::vector<JobSpec>& jobs, bool events, bool trace,
                  Compression compression);
  [[nodiscard]] std::vector<EventSink*> sinks();
  /// Writes what is buffered and the compressors' tails (ResultWriter::commit syncs the files).
  void finish();

 private:
  struct File {
    std::unique_ptr<ByteSink> compressor;  ///< in front of the writer's file; may be null
    ByteSink* sink = nullptr;              ///< what the event writer writes to
  };
  File open(ResultWriter& writer, const std::string& name, Compression compression);

  File events_file_, trace_file_;
  std::optional<JsonlEventWriter> events_;
  std::optional<ChromeTraceWriter> trace_;
};

/// Writes summary.json, summary.csv and run.json through `writer` and commits the folder
/// (config.resolved.json and the streamed files were written before). Returns the summary.
/// Throws gpumux::Error on a write failure (nothing appears under the final name).
nlohmann::json write_run_outputs(ResultWriter& writer, const RunOutputs& outputs);

/// Writes the Chrome/Perfetto trace of a whole log (the streamed writer, fed the log).
void write_chrome_trace(const EventLog& log, const std::vector<JobSpec>& jobs, std::ostream& out);

/// Build and source provenance compiled into the binary.
[[nodiscard]] nlohmann::json build_info();

}  // namespace gpumux
