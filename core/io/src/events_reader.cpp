// Reading events.jsonl back through the kinds' field tables (events_reader.hpp).
#include "gpumux/io/events_reader.hpp"

#include <algorithm>
#include <fstream>
#include <limits>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/json_reader.hpp"

namespace gpumux {

namespace {

template <class Enum, std::size_t N>
Enum parse_enum(const std::string& text, const EnumNames<Enum, N>& names, const std::string& file,
                const std::string& where) {
  if (const auto v = names.parse(text)) return *v;
  throw TraceError(file, where, "unknown value '" + text + "'");
}

const EventLayout* layout_named(std::string_view name) {
  for (const EventLayout& l : kEventLayouts) {
    if (l.name == name) return &l;
  }
  return nullptr;
}

/// Decodes one field of a line into its slot (nlohmann throws on a wrong type or range).
void read_field(const EventField& f, const nlohmann::json& v, Event& e, EventLog& log,
                const std::string& file, const std::string& where) {
  switch (f.slot) {
    case Slot::Job:
      e.job = v.get<std::uint32_t>();
      break;
    case Slot::Op:
      e.op = v.get<std::uint64_t>();
      break;
    case Slot::Device:
      e.device = v.get<std::uint16_t>();
      break;
    case Slot::Stream:
      e.stream = v.get<std::uint32_t>();
      break;
    case Slot::OpKind:
      e.op_kind = parse_enum(v.get<std::string>(), kOpKindNames, file, where);
      break;
    case Slot::Purpose:
      e.purpose = parse_enum(v.get<std::string>(), kOpPurposeNames, file, where);
      break;
    case Slot::Status:
      e.status = parse_enum(v.get<std::string>(), kOpStatusNames, file, where);
      break;
    case Slot::Layers:
      if (!v.is_array() || v.size() != 2) throw TraceError(file, where, "expected [first, last]");
      e.first_layer = v[0].get<std::uint32_t>();
      e.last_layer = v[1].get<std::uint32_t>();
      break;
    case Slot::A:
      e.a = v.get<std::int64_t>();
      break;
    case Slot::B:
      e.b = v.get<std::int64_t>();
      break;
    case Slot::Value:
      e.value = v.get<double>();
      break;
    case Slot::Label:
      e.label = log.intern(v.get<std::string>());
      break;
  }
}

/// The suffix of the key that says why a number field is null (event_jsonl_writer.cpp).
constexpr std::string_view kNotFinite = "_not_finite";

/// A number field written as null: the value its `<key>_not_finite` sibling names.
double not_finite_value(const nlohmann::json& j, const std::string& key, const std::string& file,
                        const std::string& where) {
  const auto it = j.find(key + std::string(kNotFinite));
  const std::string text = it != j.end() && it->is_string() ? it->get<std::string>() : "";
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf") return std::numeric_limits<double>::infinity();
  if (text == "-inf") return -std::numeric_limits<double>::infinity();
  throw TraceError(
      file, where,
      "null without \"" + key + std::string(kNotFinite) + "\": \"nan\", \"inf\" or \"-inf\"");
}

/// One line's event: "t", "ev", then exactly the keys of its kind's table.
Event read_event(const nlohmann::json& j, EventLog& log, const std::string& file,
                 const std::string& at) {
  if (!j.is_object()) throw TraceError(file, at, "expected a JSON object");
  if (!j.contains("t")) throw TraceError(file, at, "missing key 't'");
  if (!j.contains("ev")) throw TraceError(file, at, "missing key 'ev'");
  Event e;
  e.t_ns = j["t"].get<std::int64_t>();
  const std::string ev = j["ev"].get<std::string>();
  const EventLayout* l = layout_named(ev);
  if (l == nullptr) throw TraceError(file, at + ": ev", "unknown event kind '" + ev + "'");
  e.kind = l->kind;
  const auto fields = std::span(l->fields).first(l->count);
  for (const auto& item : j.items()) {
    // Named copies: C++20 lambdas may not capture structured bindings (clang refuses).
    const std::string& key = item.key();
    const nlohmann::json& value = item.value();
    if (key == "t" || key == "ev") continue;
    const auto f = std::find_if(fields.begin(), fields.end(),
                                [&](const EventField& x) { return x.key == key; });
    if (f == fields.end()) {
      // "<key>_not_finite" beside a null number field: read with that field.
      const std::string_view base = std::string_view(key).substr(
          0, key.size() >= kNotFinite.size() ? key.size() - kNotFinite.size() : 0);
      const bool sibling =
          key.ends_with(kNotFinite) &&
          std::any_of(fields.begin(), fields.end(), [&](const EventField& x) {
            const auto v = j.find(std::string(x.key));
            return x.slot == Slot::Value && x.key == base && v != j.end() && v->is_null();
          });
      if (sibling) continue;
      throw TraceError(file, at, "key '" + key + "' is not a field of " + ev);
    }
    if (f->slot == Slot::Value && value.is_null()) {
      e.value = not_finite_value(j, key, file, at + ": " + key);
      continue;
    }
    try {
      read_field(*f, value, e, log, file, at + ": " + key);
    } catch (const nlohmann::json::exception& ex) {
      throw TraceError(file, at + ": " + key, ex.what());
    }
  }
  for (const EventField& f : fields) {
    if (f.presence == Presence::Always && !j.contains(f.key)) {
      throw TraceError(file, at, "missing key '" + std::string(f.key) + "' of " + ev);
    }
  }
  if (e.kind == EventKind::JobEnd && !parse_end_reason(e.label)) {
    throw TraceError(
        file, at + ": label",
        "'" + std::string(e.label) + "' names no end reason (finished, rejected, ...)");
  }
  return e;
}

}  // namespace

EventLog read_events_jsonl(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw TraceError(file, "", "cannot open file");
  EventLog log;
  std::string line;
  std::size_t line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.empty()) continue;
    const std::string at = "line " + std::to_string(line_no);
    try {
      const nlohmann::json j = parse_json_text(line, file, at, InputKind::Trace);
      log.add(read_event(j, log, file, at));
    } catch (const nlohmann::json::exception& ex) {
      throw TraceError(file, at, ex.what());
    }
  }
  return log;
}

}  // namespace gpumux
