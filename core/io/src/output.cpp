// A run's result files, written through a ResultWriter (result_dir.hpp).
#include "gpumux/io/output.hpp"

#include <ostream>

#include "gpumux/api/errors.hpp"
#include "gpumux/io/summary.hpp"
#include "gpumux/io/summary_csv.hpp"

namespace gpumux {

nlohmann::json build_info() {
  return {
      {"version", GPUMUX_VERSION},         {"git_revision", GPUMUX_GIT_REVISION},
      {"build_type", GPUMUX_BUILD_TYPE},   {"compiler", GPUMUX_CXX_COMPILER},
      {"sanitize", GPUMUX_SANITIZE_FLAGS}, {"cuda_compiled", static_cast<bool>(GPUMUX_CUDA_BUILT)}};
}

void write_chrome_trace(const EventLog& log, const std::vector<JobSpec>& jobs, std::ostream& out) {
  OstreamSink sink(out);
  ChromeTraceWriter writer(sink, jobs);
  for (const Event& e : log.events()) writer.on_event(e);
  writer.finish();
}

StreamedOutputs::File StreamedOutputs::open(ResultWriter& writer, const std::string& name,
                                            Compression compression) {
  File f;
  ByteSink& file = writer.open_stream(name + std::string(file_suffix(compression)));
  f.compressor = make_compressor(compression, file);
  f.sink = f.compressor ? f.compressor.get() : &file;
  return f;
}

StreamedOutputs::StreamedOutputs(ResultWriter& writer, const std::vector<JobSpec>& jobs,
                                 bool events, bool trace, Compression compression) {
  if (events) {
    events_file_ = open(writer, "events.jsonl", compression);
    events_.emplace(*events_file_.sink);
  }
  if (trace) {
    trace_file_ = open(writer, "trace.json", compression);
    trace_.emplace(*trace_file_.sink, jobs);
  }
}

std::vector<EventSink*> StreamedOutputs::sinks() {
  std::vector<EventSink*> out;
  if (events_) out.push_back(&*events_);
  if (trace_) out.push_back(&*trace_);
  return out;
}

void StreamedOutputs::finish() {
  if (events_) events_->finish();
  if (trace_) trace_->finish();
}

nlohmann::json write_run_outputs(ResultWriter& writer, const RunOutputs& o) {
  writer.write("summary.json", o.summary.dump(2) + "\n");
  const CsvColumns identity = run_identity_columns(o.run_info);
  writer.write("summary.csv",
               [&](std::ostream& out) { write_summary_csv(o.summary, identity, out); });
  writer.write("summary_run.csv",
               [&](std::ostream& out) { write_summary_run_csv(o.summary, identity, out); });
  writer.write("run.json", o.run_info.dump(2) + "\n");
  // The marker last: only now does the folder appear under its final name.
  writer.commit(o.identity);
  return o.summary;
}

}  // namespace gpumux
