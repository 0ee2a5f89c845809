// trace.json streamed: each trace event is written as its event arrives, with the keys in the
// order nlohmann's sorted objects gave them and nlohmann's number format, so the file is the
// one the in-memory JSON tree produced (that tree cost 82% of a PipeSwitch run's instructions
// and GBs of memory).
#include <string>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/event_writers.hpp"

namespace gpumux {

namespace {

constexpr int kJobsPid = 1000;

using namespace std::string_view_literals;

void put_json_string(OutBuf& out, std::string_view s) {
  out.put('"');
  out.put_json_chars(s);
  out.put('"');
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(ByteSink& sink, const std::vector<JobSpec>& jobs)
    : out_(sink), jobs_(jobs), last_iteration_end_(jobs.size(), -1) {
  // The document's keys sorted: "displayTimeUnit" before "traceEvents".
  out_.put("{\"displayTimeUnit\":\"ms\",\"traceEvents\":["sv);
}

void ChromeTraceWriter::begin_object() {
  if (!first_) out_.put(',');
  first_ = false;
}

void ChromeTraceWriter::put_us(TimeNs t) {
  out_.put_json_double(static_cast<double>(t) / 1000.0);
}

void ChromeTraceWriter::put_job_name(std::uint32_t job) {
  if (job < jobs_.size()) {
    put_json_string(out_, jobs_[job].name);
  } else {
    out_.put("\"system\""sv);
  }
}

// Metadata naming a track (once), then its process (once): thread first, as before.
void ChromeTraceWriter::name_thread(int pid, std::uint32_t tid, std::string_view kind,
                                    std::uint64_t n) {
  if (named_threads_.emplace(pid, tid).second) {
    begin_object();
    out_.put("{\"args\":{\"name\":"sv);
    if (pid == kJobsPid) {
      put_job_name(tid);
    } else {
      out_.put('"');
      out_.put(kind);
      out_.put_int(n);
      out_.put('"');
    }
    out_.put("},\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":"sv);
    out_.put_int(pid);
    out_.put(",\"tid\":"sv);
    out_.put_int(tid);
    out_.put('}');
  }
  if (named_procs_.insert(pid).second) {
    begin_object();
    out_.put("{\"args\":{\"name\":\""sv);
    if (pid == kJobsPid) {
      out_.put("jobs"sv);
    } else {
      out_.put("device "sv);
      out_.put_int(pid);
    }
    out_.put("\"},\"name\":\"process_name\",\"ph\":\"M\",\"pid\":"sv);
    out_.put_int(pid);
    out_.put('}');
  }
}

void ChromeTraceWriter::name_job_thread(std::uint32_t job) {
  name_thread(kJobsPid, job, {}, 0);
}

void ChromeTraceWriter::on_event(const Event& e) {
  switch (e.kind) {
    case EventKind::OpEnd: {
      const TimeNs started = op_started_ns(e);
      if (started >= e.t_ns && e.status != OpStatus::Ok) break;
      name_thread(e.device, e.stream, "stream "sv, e.stream);
      begin_object();
      out_.put("{\"args\":{\"layers\":["sv);
      out_.put_int(e.first_layer);
      out_.put(',');
      out_.put_int(e.last_layer);
      out_.put("],\"op\":"sv);
      out_.put_int(e.op);
      out_.put(",\"status\":\""sv);
      out_.put(to_string(e.status));
      out_.put("\"},\"cat\":\""sv);
      out_.put(to_string(e.op_kind));
      out_.put("\",\"dur\":"sv);
      put_us(e.t_ns - started);
      out_.put(",\"name\":"sv);
      // "<job> <purpose>": the job's name escaped, then the (plain) purpose.
      out_.put('"');
      out_.put_json_chars(e.job < jobs_.size() ? std::string_view(jobs_[e.job].name) : "system"sv);
      out_.put(' ');
      out_.put(to_string(e.purpose));
      out_.put('"');
      out_.put(",\"ph\":\"X\",\"pid\":"sv);
      out_.put_int(e.device);
      out_.put(",\"tid\":"sv);
      out_.put_int(e.stream);
      out_.put(",\"ts\":"sv);
      put_us(started);
      out_.put('}');
      break;
    }
    case EventKind::RequestEnd:
      if (e.job < jobs_.size()) {
        name_job_thread(e.job);
        begin_object();
        out_.put("{\"cat\":\"request\",\"dur\":"sv);
        put_us(request_latency_ns(e));
        out_.put(",\"name\":\"request "sv);
        out_.put_int(request_of(e));
        out_.put("\",\"ph\":\"X\",\"pid\":1000,\"tid\":"sv);
        out_.put_int(e.job);
        out_.put(",\"ts\":"sv);
        put_us(e.t_ns - request_latency_ns(e));
        out_.put('}');
      }
      break;
    case EventKind::IterationEnd:
      if (e.job < jobs_.size()) {
        name_job_thread(e.job);
        const TimeNs start = last_iteration_end_[e.job];
        if (start >= 0) {
          begin_object();
          out_.put("{\"cat\":\"iteration\",\"dur\":"sv);
          put_us(e.t_ns - start);
          out_.put(",\"name\":\"iteration "sv);
          out_.put_int(iteration_of(e));
          out_.put("\",\"ph\":\"X\",\"pid\":1000,\"tid\":"sv);
          out_.put_int(e.job);
          out_.put(",\"ts\":"sv);
          put_us(start);
          out_.put('}');
        }
        last_iteration_end_[e.job] = e.t_ns;
      }
      break;
    case EventKind::Preempt:
    case EventKind::Migrate:
    case EventKind::DeviceNote: {
      begin_object();
      out_.put("{\"name\":\""sv);
      out_.put(to_string(e.kind));
      out_.put(' ');
      out_.put_json_chars(e.label);
      out_.put('"');
      out_.put(",\"ph\":\"i\",\"pid\":"sv);
      out_.put_int(e.kind == EventKind::DeviceNote ? static_cast<int>(e.device) : kJobsPid);
      out_.put(",\"s\":\"t\",\"tid\":"sv);
      out_.put_int(e.job == kNoJob ? 0u : e.job);
      out_.put(",\"ts\":"sv);
      put_us(e.t_ns);
      out_.put('}');
      break;
    }
    default:
      break;
  }
}

void ChromeTraceWriter::finish() {
  out_.put("]}"sv);
  out_.flush();
  out_.sink().finish();
}

}  // namespace gpumux
