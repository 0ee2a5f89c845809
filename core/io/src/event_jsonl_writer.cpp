// events.jsonl, formatted event by event into a bounded buffer with std::to_chars (no
// iostreams, no per-event allocation). EventLog::write_jsonl goes through the same code, so
// a streamed file and one written from a kept log are the same bytes.
//
// Each kind's fields come from its table (event_fields.hpp), expanded at compile time into
// one function per kind: the table is the format, and the writer pays no table walk per event.
//
// JSON has no NaN or infinity. The engine refuses such a metric (a policy's record(), a
// learning curve's value), so none should arrive here; one that does is written as
// `"value":null,"value_not_finite":"nan"` ("inf", "-inf"), never as a bare `nan`
// (docs/outputs.md).
#include <cmath>
#include <ostream>
#include <utility>

#include "gpumux/api/event_fields.hpp"
#include "gpumux/io/event_writers.hpp"

namespace gpumux {

namespace {

using namespace std::string_view_literals;

/// `,"key":` (and the opening quote of a string value), built once per field at compile time.
struct KeyPrefix {
  std::array<char, 32> text{};
  std::size_t size = 0;
  [[nodiscard]] constexpr std::string_view view() const { return {text.data(), size}; }
};

constexpr bool quoted(Slot s) {
  return s == Slot::OpKind || s == Slot::Purpose || s == Slot::Status || s == Slot::Label;
}

constexpr KeyPrefix key_prefix(const EventField& f) {
  KeyPrefix p;
  auto put = [&p](char c) { p.text[p.size++] = c; };
  put(',');
  put('"');
  for (const char c : f.key) put(c);
  put('"');
  put(':');
  if (quoted(f.slot)) put('"');
  if (f.slot == Slot::Layers) put('[');
  return p;
}

/// `,"<key>_not_finite":"`: the sibling key that says why a number field is null.
constexpr KeyPrefix not_finite_prefix(const EventField& f) {
  KeyPrefix p;
  auto put = [&p](char c) { p.text[p.size++] = c; };
  put(',');
  put('"');
  for (const char c : f.key) put(c);
  for (const char c : std::string_view("_not_finite")) put(c);
  put('"');
  put(':');
  put('"');
  return p;
}

/// A double as JSON: its shortest round-trip text, or null plus the sibling key naming the
/// value it could not write.
void put_number(OutBuf& out, double v, std::string_view sibling) {
  if (std::isfinite(v)) [[likely]] {
    out.put_shortest(v);
    return;
  }
  out.put("null"sv);
  out.put(sibling);
  out.put(std::isnan(v) ? "nan"sv : v > 0 ? "inf"sv : "-inf"sv);
  out.put('"');
}

template <std::size_t K, std::size_t I>
void put_field(OutBuf& out, const Event& e) {
  static constexpr EventField f = kEventLayouts[K].fields[I];
  static constexpr KeyPrefix prefix = key_prefix(f);
  if constexpr (f.slot == Slot::Job) {
    if (e.job == kNoJob) return;
  } else if constexpr (f.slot == Slot::Label) {
    if (e.label.empty()) return;
  } else {
    static_assert(f.presence == Presence::Always, "only job and label may be left out");
  }
  out.put(prefix.view());
  if constexpr (f.slot == Slot::Job) {
    out.put_int(e.job);
  } else if constexpr (f.slot == Slot::Op) {
    out.put_int(e.op);
  } else if constexpr (f.slot == Slot::Device) {
    out.put_int(e.device);
  } else if constexpr (f.slot == Slot::Stream) {
    out.put_int(e.stream);
  } else if constexpr (f.slot == Slot::OpKind) {
    out.put(to_string(e.op_kind));
    out.put('"');
  } else if constexpr (f.slot == Slot::Purpose) {
    out.put(to_string(e.purpose));
    out.put('"');
  } else if constexpr (f.slot == Slot::Status) {
    out.put(to_string(e.status));
    out.put('"');
  } else if constexpr (f.slot == Slot::Layers) {
    out.put_int(e.first_layer);
    out.put(',');
    out.put_int(e.last_layer);
    out.put(']');
  } else if constexpr (f.slot == Slot::A) {
    out.put_int(e.a);
  } else if constexpr (f.slot == Slot::B) {
    out.put_int(e.b);
  } else if constexpr (f.slot == Slot::Value) {
    static constexpr KeyPrefix sibling = not_finite_prefix(f);
    put_number(out, e.value, sibling.view());
  } else if constexpr (f.slot == Slot::Label) {
    out.put_json_chars(e.label);
    out.put('"');
  }
}

/// `{"t":<t>,"ev":"<name>"` then the kind's fields.
template <std::size_t K>
void put_event(OutBuf& out, const Event& e) {
  static constexpr std::string_view name = kEventLayouts[K].name;
  out.put("{\"t\":"sv);
  out.put_int(e.t_ns);
  out.put(",\"ev\":\""sv);
  out.put(name);
  out.put('"');
  [&]<std::size_t... I>(std::index_sequence<I...>) {
    (put_field<K, I>(out, e), ...);
  }
  (std::make_index_sequence<kEventLayouts[K].count>{});
  out.put("}\n"sv);
}

using PutEvent = void (*)(OutBuf&, const Event&);

constexpr auto kPutEvent = []<std::size_t... K>(std::index_sequence<K...>) {
  return std::array<PutEvent, sizeof...(K)>{&put_event<K>...};
}
(std::make_index_sequence<kEventKindCount>{});

}  // namespace

void JsonlEventWriter::on_event(const Event& e) {
  const auto k = static_cast<std::size_t>(e.kind);
  if (k >= kPutEvent.size()) throw std::logic_error("JsonlEventWriter: unknown event kind");
  kPutEvent[k](out_, e);
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
