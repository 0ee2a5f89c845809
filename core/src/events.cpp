// Event log storage and its JSONL form. The writer emits fields in a fixed order with
// integer times, so identical runs give byte-identical files.
#include "gpumux/events.hpp"

#include <charconv>
#include <fstream>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/errors.hpp"
#include "gpumux/json_reader.hpp"

namespace gpumux {

std::string_view to_string(EventKind k) noexcept {
  switch (k) {
    case EventKind::RunStart:
      return "run_start";
    case EventKind::JobArrival:
      return "job_arrival";
    case EventKind::RequestArrival:
      return "request_arrival";
    case EventKind::OpSubmit:
      return "op_submit";
    case EventKind::OpStart:
      return "op_start";
    case EventKind::OpEnd:
      return "op_end";
    case EventKind::RequestEnd:
      return "request_end";
    case EventKind::IterationEnd:
      return "iteration_end";
    case EventKind::JobEnd:
      return "job_end";
    case EventKind::Alloc:
      return "alloc";
    case EventKind::Free:
      return "free";
    case EventKind::ContextCreate:
      return "context_create";
    case EventKind::Preempt:
      return "preempt";
    case EventKind::Migrate:
      return "migrate";
    case EventKind::PolicyMetric:
      return "metric";
    case EventKind::DeviceNote:
      return "device_note";
    case EventKind::RunEnd:
      return "run_end";
  }
  return "?";
}

std::string_view to_string(OpKind k) noexcept {
  switch (k) {
    case OpKind::Compute:
      return "compute";
    case OpKind::CopyH2D:
      return "h2d";
    case OpKind::CopyD2H:
      return "d2h";
    case OpKind::CopyD2D:
      return "d2d";
    case OpKind::Host:
      return "host";
  }
  return "?";
}

std::string_view to_string(OpPurpose p) noexcept {
  switch (p) {
    case OpPurpose::Forward:
      return "forward";
    case OpPurpose::Backward:
      return "backward";
    case OpPurpose::Update:
      return "update";
    case OpPurpose::LoadWeights:
      return "load_weights";
    case OpPurpose::MigrateState:
      return "migrate_state";
    case OpPurpose::StartContext:
      return "start_context";
    case OpPurpose::Allocate:
      return "allocate";
    case OpPurpose::Other:
      return "other";
  }
  return "?";
}

std::string_view to_string(OpStatus s) noexcept {
  switch (s) {
    case OpStatus::Ok:
      return "ok";
    case OpStatus::Dropped:
      return "dropped";
    case OpStatus::Aborted:
      return "aborted";
  }
  return "?";
}

void DepList::add(OpId op) {
  for (std::size_t i = 0; i < size_; ++i) {
    if (ops_[i] == op) return;
  }
  if (size_ == kCapacity) throw std::length_error("DepList is full");
  ops_[size_++] = op;
}

std::string_view EventLog::intern(std::string_view s) {
  // Linear search over recent strings keeps repeated labels (metric names) shared.
  for (auto it = strings_.rbegin(); it != strings_.rend() && it - strings_.rbegin() < 64; ++it) {
    if (*it == s) return *it;
  }
  strings_.emplace_back(s);
  return strings_.back();
}

namespace {

bool is_op_event(EventKind k) {
  return k == EventKind::OpSubmit || k == EventKind::OpStart || k == EventKind::OpEnd;
}

void append_escaped(std::string& out, std::string_view s) {
  out += '"';
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

template <class T>
void append_int(std::string& out, T v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

void append_double(std::string& out, double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

}  // namespace

void EventLog::write_jsonl(std::ostream& out) const {
  std::string line;
  for (const Event& e : events_) {
    line.clear();
    line += "{\"t\":";
    append_int(line, e.t_ns);
    line += ",\"ev\":\"";
    line += to_string(e.kind);
    line += '"';
    if (e.job != kNoJob) {
      line += ",\"job\":";
      append_int(line, e.job);
    }
    if (is_op_event(e.kind)) {
      line += ",\"op\":";
      append_int(line, e.op);
      line += ",\"dev\":";
      append_int(line, e.device);
      line += ",\"stream\":";
      append_int(line, e.stream);
      line += ",\"kind\":\"";
      line += to_string(e.op_kind);
      line += "\",\"purpose\":\"";
      line += to_string(e.purpose);
      line += "\",\"layers\":[";
      append_int(line, e.first_layer);
      line += ',';
      append_int(line, e.last_layer);
      line += ']';
      if (e.kind == EventKind::OpEnd) {
        line += ",\"status\":\"";
        line += to_string(e.status);
        line += "\",\"start\":";
        append_int(line, e.a);
      }
    } else {
      if (e.kind == EventKind::Alloc || e.kind == EventKind::Free ||
          e.kind == EventKind::ContextCreate || e.kind == EventKind::Migrate ||
          e.kind == EventKind::DeviceNote) {
        line += ",\"dev\":";
        append_int(line, e.device);
      }
      line += ",\"a\":";
      append_int(line, e.a);
      line += ",\"b\":";
      append_int(line, e.b);
      if (e.kind == EventKind::PolicyMetric) {
        line += ",\"value\":";
        append_double(line, e.value);
      }
    }
    if (!e.label.empty()) {
      line += ",\"label\":";
      append_escaped(line, e.label);
    }
    line += "}\n";
    out << line;
  }
}

namespace {

template <class Enum, std::size_t N>
Enum parse_enum(const std::string& text, const std::array<Enum, N>& values, const std::string& file,
                std::size_t line_no, const char* key) {
  for (Enum v : values) {
    if (to_string(v) == text) return v;
  }
  throw TraceError(file, "line " + std::to_string(line_no) + ": " + key,
                   "unknown value '" + text + "'");
}

}  // namespace

EventLog read_events_jsonl(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw TraceError(file, "", "cannot open file");
  EventLog log;
  std::string line;
  std::size_t line_no = 0;
  static constexpr std::array kinds{
      EventKind::RunStart,   EventKind::JobArrival,   EventKind::RequestArrival,
      EventKind::OpSubmit,   EventKind::OpStart,      EventKind::OpEnd,
      EventKind::RequestEnd, EventKind::IterationEnd, EventKind::JobEnd,
      EventKind::Alloc,      EventKind::Free,         EventKind::ContextCreate,
      EventKind::Preempt,    EventKind::Migrate,      EventKind::PolicyMetric,
      EventKind::DeviceNote, EventKind::RunEnd};
  static constexpr std::array op_kinds{OpKind::Compute, OpKind::CopyH2D, OpKind::CopyD2H,
                                       OpKind::CopyD2D, OpKind::Host};
  static constexpr std::array purposes{
      OpPurpose::Forward,      OpPurpose::Backward,     OpPurpose::Update,   OpPurpose::LoadWeights,
      OpPurpose::MigrateState, OpPurpose::StartContext, OpPurpose::Allocate, OpPurpose::Other};
  static constexpr std::array statuses{OpStatus::Ok, OpStatus::Dropped, OpStatus::Aborted};
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    nlohmann::json j;
    try {
      j = parse_json_text(line, file, "line " + std::to_string(line_no), InputKind::Trace);
      Event e;
      e.t_ns = j.at("t").get<std::int64_t>();
      e.kind = parse_enum(j.at("ev").get<std::string>(), kinds, file, line_no, "ev");
      e.job = j.value("job", kNoJob);
      e.op = j.value("op", std::uint64_t{0});
      e.device = j.value("dev", std::uint16_t{0});
      e.stream = j.value("stream", std::uint32_t{0});
      if (j.contains("kind"))
        e.op_kind = parse_enum(j["kind"].get<std::string>(), op_kinds, file, line_no, "kind");
      if (j.contains("purpose"))
        e.purpose = parse_enum(j["purpose"].get<std::string>(), purposes, file, line_no, "purpose");
      if (j.contains("status"))
        e.status = parse_enum(j["status"].get<std::string>(), statuses, file, line_no, "status");
      if (j.contains("layers")) {
        e.first_layer = j["layers"].at(0).get<std::uint32_t>();
        e.last_layer = j["layers"].at(1).get<std::uint32_t>();
      }
      e.a = j.contains("start") ? j["start"].get<std::int64_t>() : j.value("a", std::int64_t{0});
      e.b = j.value("b", std::int64_t{0});
      e.value = j.value("value", 0.0);
      if (j.contains("label")) e.label = log.intern(j["label"].get<std::string>());
      log.add(e);
    } catch (const nlohmann::json::exception& ex) {
      throw TraceError(file, "line " + std::to_string(line_no), ex.what());
    }
  }
  return log;
}

}  // namespace gpumux
