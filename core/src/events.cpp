// Event kinds' names and reading events.jsonl back. The writer (fields in a fixed order,
// integer times, so identical runs give byte-identical files) is event_jsonl_writer.cpp.
#include "gpumux/events.hpp"

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
