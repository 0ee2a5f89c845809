// Event kinds', end reasons' and device notes' names. Reading events.jsonl back is
// core/io/src/events_reader.cpp; the writer (fields in a fixed order, integer times, so
// identical runs give byte-identical files) is core/io/src/event_jsonl_writer.cpp.
#include "gpumux/api/events.hpp"

#include <algorithm>
#include <string>

#include "gpumux/api/errors.hpp"
#include "gpumux/api/event_fields.hpp"

namespace gpumux {

std::string_view to_string(EventKind k) noexcept {
  const auto i = static_cast<std::size_t>(k);
  return i < kEventLayouts.size() ? kEventLayouts[i].name : "?";
}

std::string_view to_string(EndReason r) noexcept {
  return kEndReasonNames.name(r);
}

std::optional<EndReason> parse_end_reason(std::string_view label) noexcept {
  return kEndReasonNames.parse(label.substr(0, label.find(": ")));
}

std::string end_label(EndReason r, std::optional<std::string_view> detail) {
  std::string s(to_string(r));
  if (detail) {
    s += ": ";
    s += *detail;
  }
  return s;
}

std::string_view to_string(DeviceNoteKind k) noexcept {
  return kDeviceNoteNames.name(k);
}

void DepList::add(OpId op) {
  for (std::size_t i = 0; i < size_; ++i) {
    if (ops_[i] == op) return;
  }
  if (size_ == kCapacity) throw std::length_error("DepList is full");
  ops_[size_++] = op;
}

}  // namespace gpumux
