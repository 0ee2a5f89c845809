// events.jsonl, formatted event by event into a bounded buffer with std::to_chars (no
// iostreams, no per-event allocation). EventLog::write_jsonl goes through the same code, so
// a streamed file and one written from a kept log are the same bytes.
#include <ostream>

#include "gpumux/event_writers.hpp"

namespace gpumux {

namespace {

bool is_op_event(EventKind k) {
  return k == EventKind::OpSubmit || k == EventKind::OpStart || k == EventKind::OpEnd;
}

void put_escaped(OutBuf& out, std::string_view s) {
  out.put('"');
  out.put_json_chars(s);
  out.put('"');
}

}  // namespace

void JsonlEventWriter::on_event(const Event& e) {
  using namespace std::string_view_literals;
  out_.put("{\"t\":"sv);
  out_.put_int(e.t_ns);
  out_.put(",\"ev\":\""sv);
  out_.put(to_string(e.kind));
  out_.put('"');
  if (e.job != kNoJob) {
    out_.put(",\"job\":"sv);
    out_.put_int(e.job);
  }
  if (is_op_event(e.kind)) {
    out_.put(",\"op\":"sv);
    out_.put_int(e.op);
    out_.put(",\"dev\":"sv);
    out_.put_int(e.device);
    out_.put(",\"stream\":"sv);
    out_.put_int(e.stream);
    out_.put(",\"kind\":\""sv);
    out_.put(to_string(e.op_kind));
    out_.put("\",\"purpose\":\""sv);
    out_.put(to_string(e.purpose));
    out_.put("\",\"layers\":["sv);
    out_.put_int(e.first_layer);
    out_.put(',');
    out_.put_int(e.last_layer);
    out_.put(']');
    if (e.kind == EventKind::OpEnd) {
      out_.put(",\"status\":\""sv);
      out_.put(to_string(e.status));
      out_.put("\",\"start\":"sv);
      out_.put_int(e.a);
    }
  } else {
    if (e.kind == EventKind::Alloc || e.kind == EventKind::Free ||
        e.kind == EventKind::ContextCreate || e.kind == EventKind::Migrate ||
        e.kind == EventKind::DeviceNote) {
      out_.put(",\"dev\":"sv);
      out_.put_int(e.device);
    }
    out_.put(",\"a\":"sv);
    out_.put_int(e.a);
    out_.put(",\"b\":"sv);
    out_.put_int(e.b);
    if (e.kind == EventKind::PolicyMetric) {
      out_.put(",\"value\":"sv);
      out_.put_shortest(e.value);
    }
  }
  if (!e.label.empty()) {
    out_.put(",\"label\":"sv);
    put_escaped(out_, e.label);
  }
  out_.put("}\n"sv);
}

void JsonlEventWriter::finish() {
  out_.flush();
  out_.sink().finish();
}

void EventLog::write_jsonl(std::ostream& out) const {
  OstreamSink sink(out);
  JsonlEventWriter writer(sink);
  for (const Event& e : events_) writer.on_event(e);
  writer.finish();
}

}  // namespace gpumux
